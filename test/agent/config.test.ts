/** `npm run agent` flags and ATTESTATION_* environment variables. */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startAgentProcess } from "./helpers.ts";

const run = promisify(execFile);
const MAIN = path.join(ROOT, "attestation-agent/main.ts");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-config-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fails(args: string[], env: NodeJS.ProcessEnv = {}) {
  const e = await run(process.execPath, [MAIN, "--socket", path.join(dir, "x.sock"), ...args], { env: { ...process.env, ...env }, timeout: 20_000 }).catch((err) => err);
  return { code: e.code as number, stderr: e.stderr as string };
}

describe("agent configuration", () => {
  it("an unknown --platform exits 2 and lists the allowed values", async () => {
    const r = await fails(["--platform", "sgx"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--platform must be one of auto\|snp\|tdx\|vtpm\|snp-vtpm\|none/);
  });

  it("an unknown flag exits 2 with usage", async () => {
    const r = await fails(["--tpmm", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/usage: npm run agent/);
  });

  it("a GCP launcher without an audience cannot start (exit 1)", async () => {
    const r = await fails(["--platform", "none", "--gcp-launcher-socket", path.join(dir, "l.sock")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot start: .*audience/);
  });

  it("--socket-mode must be an octal mode 0-0777, optionally with a 0o prefix: anything else exits 2 naming the flag", async () => {
    for (const bad of ["77777", "660abc", "0o", "8", "-1", "1000", "0x1ff", ""]) {
      const r = await fails(["--platform", "none", `--socket-mode=${bad}`]);
      expect([bad, r.code, r.stderr]).toEqual([bad, 2, expect.stringContaining("--socket-mode must be an octal mode 0-0777")]);
    }
    const r = await fails(["--platform", "none"], { ATTESTATION_SOCKET_MODE: "4777" });
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining("--socket-mode must be an octal mode 0-0777")]);
  });

  it("--socket-mode 0o640 and 0640 are the octal mode 640", async () => {
    for (const mode of ["0o640", "0640"]) {
      const sock = path.join(dir, "mode.sock");
      const a = await startAgentProcess(sock, ["--platform", "none", "--socket-mode", mode]);
      try {
        const { stdout } = await run("stat", ["-c", "%a", sock]);
        expect([mode, stdout.trim()]).toEqual([mode, "640"]);
      } finally {
        await a.stop();
      }
    }
  });

  it("--tpm-timeout-ms and --call-timeout-ms must be positive integers; no integer flag takes trailing junk or a value past 2^31 - 1 (Node's timer limit): exit 2 naming the flag", async () => {
    for (const [flag, value] of [["--tpm-timeout-ms", "0"], ["--call-timeout-ms", "0"], ["--tpm-timeout-ms", "1.5"], ["--call-timeout-ms", "10s"], ["--max-queued-calls", "5x"], ["--azure-hcl-wait-ms", "-1"], ["--snp-vmpl", "1e0"], ["--idle-timeout-ms", "2147483648"], ["--azure-hcl-wait-ms", "9999999999"]] as const) {
      const r = await fails(["--platform", "none", `${flag}=${value}`]);
      expect([flag, value, r.code, r.stderr]).toEqual([flag, value, 2, expect.stringMatching(new RegExp(`attestation-agent: ${flag} must be a`))]);
    }
  });

  it("environment variables configure the agent and flags win over them", async () => {
    const sock = path.join(dir, "env.sock");
    const a = await startAgentProcess(sock, ["--platform", "none"], { ATTESTATION_PLATFORM: "vtpm", ATTESTATION_SOCKET_MODE: "640" });
    try {
      expect(a.stderr()).toMatch(/platform none \(forced with --platform\)/);
      const { stdout } = await run("stat", ["-c", "%a", sock]);
      expect(stdout.trim()).toBe("640");
    } finally {
      await a.stop();
    }
  });
});
