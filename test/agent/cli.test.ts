/**
 * `npm run attest -- fetch|token|verify`: the Connect-ES client CLI against the agent (a process,
 * swtpm behind it), piped into `verify`, and its errors: a missing socket, a refused permission,
 * and the agent's status codes.
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationSchema } from "../../attestation-agent/gen/attest/attest_pb.ts";
import { describeCallError } from "../../attestation-agent/verify/cli.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { ROOT, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
const CLI = path.join(ROOT, "attestation-agent/verify/cli.ts");
let dir: string;
let tpm: Swtpm;
let agent: AgentProcess;
let launcher: http.Server;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-cli-"));
  await chmod(dir, 0o755); // the permission test runs the CLI as another user
  const launcherSock = path.join(dir, "teeserver.sock");
  launcher = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => res.writeHead(200, { "content-type": "text/html" }).end(`header.${Buffer.from(JSON.parse(body).nonces[0]).toString("base64url")}.sig`));
  });
  await new Promise<void>((r) => launcher.listen(launcherSock, r));
  tpm = await startSwtpm();
  agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--platform", "vtpm", "--tpm", tpm.tpm, "--event-log", path.join(dir, "none")], {
    ATTESTATION_GCP_LAUNCHER_SOCKET: launcherSock,
    ATTESTATION_GCP_AUDIENCE: "https://relying-party.test",
  });
});

afterAll(async () => {
  await agent?.stop();
  await tpm?.stop();
  await new Promise((r) => launcher?.close(r));
  await rm(dir, { recursive: true, force: true });
});

async function cli(args: string[], opts: { uid?: number; gid?: number } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, ...opts });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("attest CLI (Connect-ES client)", () => {
  it("`npm run attest -- fetch … | npm run attest -- verify …` verifies the quote (npm's banner lines are skipped)", async () => {
    const nonce = randomBytes(32).toString("hex");
    const sh = `npm run attest -- fetch --socket '${agent.socket}' --platform vtpm --nonce ${nonce} | npm run attest -- verify --type vtpm --nonce ${nonce}`;
    const { stdout } = await run("bash", ["-o", "pipefail", "-c", sh], { cwd: ROOT });
    const summary = JSON.parse(stdout.slice(stdout.indexOf("{")));
    expect(summary.ok).toBe(true);
    expect(summary.quotes.map((q: { bank: string }) => q.bank)).toEqual(["sha1", "sha256"]);
    // A wrong nonce fails the pipeline at verify, exit 1.
    const bad = await run("bash", ["-o", "pipefail", "-c", sh.replace(/--type vtpm --nonce \w+/, `--type vtpm --nonce ${"00".repeat(32)}`)], { cwd: ROOT }).catch((e) => e);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout.slice(bad.stdout.indexOf("{")))).toMatchObject({ ok: false, check: "nonce" });
  });

  it("verify --type vtpm says whether the AK is pinned: --ak-sha256 pins it (another AK fails, check ak); without it the answer says akPinned false and warns; a quote bank the evidence lacks (--banks, default sha256) fails", async () => {
    const nonce = randomBytes(32).toString("hex");
    const file = path.join(dir, "pin.bin");
    expect((await cli(["fetch", "--socket", agent.socket, "--platform", "vtpm", "--nonce", nonce, "--out", file])).code).toBe(0);
    const plain = await cli(["verify", "--type", "vtpm", "--in", file, "--nonce", nonce]);
    const summary = JSON.parse(plain.stdout);
    expect([plain.code, summary.ok, summary.akPinned]).toEqual([0, true, false]);
    expect(plain.stderr).toMatch(/not pinned/);
    const pinned = await cli(["verify", "--type", "vtpm", "--in", file, "--nonce", nonce, "--ak-sha256", summary.ak]);
    expect([pinned.code, JSON.parse(pinned.stdout).akPinned, pinned.stderr]).toEqual([0, true, ""]);
    const other = await cli(["verify", "--type", "vtpm", "--in", file, "--nonce", nonce, "--ak-sha256", "00".repeat(32)]);
    expect([other.code, JSON.parse(other.stdout)]).toEqual([1, expect.objectContaining({ ok: false, check: "ak" })]);
    // the evidence with its sha256 quote removed: only sha1 is left
    const att = fromBinary(AttestationSchema, await readFile(file));
    att.quotes = att.quotes.filter((q) => q.pcrs?.hash !== 0x000b);
    const sha1Only = path.join(dir, "sha1-only.bin");
    await writeFile(sha1Only, toBinary(AttestationSchema, att));
    const dropped = await cli(["verify", "--type", "vtpm", "--in", sha1Only, "--nonce", nonce]);
    expect([dropped.code, JSON.parse(dropped.stdout)]).toEqual([1, expect.objectContaining({ ok: false, check: "quotes" })]);
    expect((await cli(["verify", "--type", "vtpm", "--in", sha1Only, "--nonce", nonce, "--banks", "sha1"])).code).toBe(0);
  });

  it("fetch --out, verify --in --tpm2-dir: tpm2_checkquote accepts the files it writes", async () => {
    const nonce = randomBytes(32).toString("hex");
    const file = path.join(dir, "ev.bin");
    expect((await cli(["fetch", "--socket", agent.socket, "--platform", "vtpm", "--nonce", nonce, "--out", file])).code).toBe(0);
    const v = await cli(["verify", "--type", "vtpm", "--in", file, "--nonce", nonce, "--tpm2-dir", path.join(dir, "tpm2")]);
    expect(v.code).toBe(0);
    for (const bank of ["sha1", "sha256"])
      await run("tpm2_checkquote", ["-u", path.join(dir, "tpm2/ak.pem"), "-m", path.join(dir, `tpm2/quote-${bank}.msg`), "-s", path.join(dir, `tpm2/quote-${bank}.sig`), "-g", "sha256", "-q", nonce]);
  });

  it("token prints the cloud provider's token", async () => {
    const r = await cli(["token", "--socket", agent.socket, "--nonce", "0011223344556677"]);
    expect([r.code, r.stdout]).toEqual([0, `header.${Buffer.from("0011223344556677").toString("base64url")}.sig\n`]);
  });

  it("the agent's status codes: one line on stderr with code, message and hint; exit 3", async () => {
    const long = await cli(["fetch", "--socket", agent.socket, "--platform", "vtpm", "--nonce", "00".repeat(33)]);
    expect([long.code, long.stdout, long.stderr]).toEqual([3, "", "attest: agent answered INVALID_ARGUMENT (3): nonce is 33 bytes; at most 32 are allowed — the request is malformed (report data ≤ 64 bytes, nonce ≤ 32 bytes, a platform type with evidence)\n"]);
    const snp = await cli(["fetch", "--socket", agent.socket, "--platform", "snp"]);
    expect([snp.code, snp.stderr]).toEqual([3, expect.stringMatching(/^attest: agent answered FAILED_PRECONDITION \(9\): PLATFORM_TYPE_SNP is not available on this machine \(platform vtpm\) — this machine cannot produce/)]);
    const shortToken = await cli(["token", "--socket", agent.socket, "--nonce", "00"]);
    expect([shortToken.code, shortToken.stderr]).toEqual([3, expect.stringMatching(/^attest: agent answered INVALID_ARGUMENT \(3\): /)]);
  });

  it("UNAVAILABLE from an agent whose TPM is missing", async () => {
    const a = await startAgentProcess(path.join(dir, "no-tpm.sock"), ["--platform", "vtpm", "--tpm", path.join(dir, "no-tpmrm0")]);
    try {
      const r = await cli(["fetch", "--socket", a.socket, "--platform", "vtpm"]);
      expect([r.code, r.stderr]).toEqual([3, expect.stringMatching(/^attest: agent answered UNAVAILABLE \(14\): TPM device: open ENOENT — the TPM, TSM or cloud provider is unreachable or busy; retry later\n$/)]);
    } finally {
      await a.stop();
    }
  });

  it("a missing socket and a socket nobody listens on", async () => {
    const missing = await cli(["fetch", "--socket", path.join(dir, "absent.sock"), "--platform", "vtpm"]);
    expect([missing.code, missing.stderr]).toEqual([3, `attest: no agent socket at ${path.join(dir, "absent.sock")}: is the agent running? (--socket, ATTESTATION_SOCKET)\n`]);
    // A stale socket file (its server gone): bind one, then close the listener without unlinking.
    const stale = path.join(dir, "stale.sock");
    await run(process.execPath, ["-e", `require("node:net").createServer().listen(${JSON.stringify(stale)}, () => process.exit(0))`]);
    const refused = await cli(["fetch", "--socket", stale, "--platform", "vtpm"]);
    expect([refused.code, refused.stderr]).toEqual([3, `attest: nothing listens on ${stale}: a socket file left by an agent that is gone?\n`]);
    const notSock = await cli(["fetch", "--socket", CLI, "--platform", "vtpm"]);
    expect([notSock.code, notSock.stderr]).toEqual([3, `attest: ${CLI} is not a unix socket\n`]);
  });

  it("a refused permission on the socket (mode 0660, caller outside its group)", async () => {
    // The agent's socket is root-or-test-user owned, mode 0660. As root, the CLI runs as `nobody`;
    // otherwise the socket's mode is taken to 000 for the call (root would bypass it).
    const asRoot = process.getuid?.() === 0;
    if (!asRoot) await chmod(agent.socket, 0o000);
    try {
      const r = await cli(["fetch", "--socket", agent.socket, "--platform", "vtpm"], asRoot ? { uid: 65534, gid: 65534 } : {});
      expect([r.code, r.stderr]).toEqual([3, `attest: permission denied on ${agent.socket}: run as a member of the socket's group (agent --socket-group) or as its owner\n`]);
    } finally {
      if (!asRoot) await chmod(agent.socket, 0o660);
    }
  });

  it("every status code has its own hint line", () => {
    const lines = new Set<string>();
    for (const code of Object.values(Code).filter((c): c is Code => typeof c === "number")) {
      const line = describeCallError(new ConnectError("m", code), "/s");
      expect(line).toMatch(new RegExp(`^agent answered [A-Z_]+ \\(${code}\\): m — \\S`));
      lines.add(line);
    }
    expect(lines.size).toBe(16);
  });
});
