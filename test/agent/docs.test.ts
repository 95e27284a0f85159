/**
 * The examples in docs/attestation-agent.md, run as written against the agent on swtpm: the curl
 * session (verified by our verifier and tpm2_checkquote), the Python standard-library client and
 * the Go net/http client (built offline, GOPATH mode, standard library only).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { DEFAULTS } from "../../attestation-agent/agent.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { ROOT, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
let dir: string;
let tpm: Swtpm;
let agent: AgentProcess;
let doc: string;

/** The body of the first fenced block with this info string that contains `marker`. */
function block(lang: string, marker: string): string {
  const re = new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g");
  for (const m of doc.matchAll(re)) if (m[1]!.includes(marker)) return m[1]!;
  throw new Error(`no \`\`\`${lang} block with ${marker} in docs/attestation-agent.md`);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-docs-"));
  doc = await readFile(path.join(ROOT, "docs/attestation-agent.md"), "utf8");
  tpm = await startSwtpm();
  agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--platform", "vtpm", "--tpm", tpm.tpm, "--event-log", path.join(dir, "none")]);
});

afterAll(async () => {
  await agent?.stop();
  await tpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("docs/attestation-agent.md examples", () => {
  it("the curl session: fetch over Connect JSON/HTTP/1.1, verify, tpm2_checkquote", async () => {
    const sh = block("sh", "curl -sS");
    expect(sh).toContain(`SOCK=${DEFAULTS.socket}`);
    const work = await mkdtemp(path.join(dir, "curl-"));
    // Only the socket differs from the documented session; npm runs the checkout's script from here.
    const script = `set -euo pipefail\nnpm() { command npm --prefix '${ROOT}' "$@"; }\n${sh.replace(`SOCK=${DEFAULTS.socket}`, `SOCK='${agent.socket}'`)}`;
    const { stdout } = await run("bash", ["-c", script], { cwd: work });
    const summary = JSON.parse(stdout.slice(stdout.indexOf("{"), stdout.lastIndexOf("}") + 1));
    expect(summary.ok).toBe(true);
    expect(summary.quotes.map((q: { bank: string }) => q.bank)).toEqual(["sha1", "sha256"]);
    // tpm2_checkquote (the session's last line) exited 0 under `set -e`; with another nonce it fails.
    const tpm2 = (f: string) => path.join(work, "tpm2", f);
    await expect(run("tpm2_checkquote", ["-u", tpm2("ak.pem"), "-m", tpm2("quote-sha256.msg"), "-s", tpm2("quote-sha256.sig"), "-g", "sha256", "-q", randomBytes(32).toString("hex")])).rejects.toThrow();
    const nonce = await readFile(path.join(work, "nonce.bin"));
    const quote = Buffer.from(JSON.parse(await readFile(path.join(work, "answer.json"), "utf8")).quote, "base64");
    verifyVtpmAttestation(quote, nonce);
  });

  it("the Python example (standard library only) fetches a quote that verifies, and reports a Connect error", async () => {
    const file = path.join(dir, "fetch_quote.py");
    await writeFile(file, block("python", "http.client"));
    const nonce = randomBytes(32);
    const { stdout } = await run("python3", [file, agent.socket, nonce.toString("hex")], { encoding: "buffer" });
    expect(verifyVtpmAttestation(new Uint8Array(stdout), nonce).quotes).toHaveLength(2);
    const bad = await run("python3", [file, agent.socket, "00".repeat(33)]).catch((e) => e);
    expect([bad.code, bad.stderr]).toEqual([1, "agent error 400 invalid_argument: nonce is 33 bytes; at most 32 are allowed\n"]);
  });

  it("the Go example (net/http over a unix socket) fetches a quote that verifies, and reports a Connect error", async () => {
    const work = await mkdtemp(path.join(dir, "go-"));
    await writeFile(path.join(work, "fetch_quote.go"), block("go", "net/http"));
    const env = { ...process.env, GO111MODULE: "off", GOPATH: path.join(work, "gopath"), GOFLAGS: "", GOPROXY: "off", GOCACHE: process.env.GOCACHE ?? path.join(os.homedir(), ".cache/go-build") };
    await run("go", ["build", "-o", path.join(work, "fetch_quote"), "fetch_quote.go"], { cwd: work, env });
    const nonce = randomBytes(32);
    const { stdout } = await run(path.join(work, "fetch_quote"), [agent.socket, nonce.toString("hex")], { encoding: "buffer" });
    expect(verifyVtpmAttestation(new Uint8Array(stdout), nonce).quotes).toHaveLength(2);
    const bad = await run(path.join(work, "fetch_quote"), [agent.socket, "00".repeat(33)]).catch((e) => e);
    expect([bad.code, bad.stderr]).toEqual([1, "agent error 400 invalid_argument: nonce is 33 bytes; at most 32 are allowed\n"]);
  });
});
