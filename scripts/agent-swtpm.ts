/**
 * Starts a throwaway swtpm (Debian `swtpm`, `swtpm-tools`) with the data channel on a unix
 * socket in a temp dir, manufactured with the SHA-1 and SHA-256 banks. Used by the agent tests
 * and `npm run bench:agent`; run directly it prints the `--tpm` value and waits for SIGINT/SIGTERM.
 */
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, access } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface Swtpm {
  dir: string;
  /** Data channel socket path. */
  sock: string;
  /** `--tpm` argument for the agent. */
  tpm: string;
  /** TCTI string for tpm2-tools (`-T`). */
  tcti: string;
  stop(): Promise<void>;
}

async function waitConnectable(sock: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`swtpm exited early with code ${child.exitCode}`);
    const ok = await access(sock)
      .then(() => new Promise<boolean>((r) => {
        const s = net.connect(sock);
        s.once("connect", () => { s.destroy(); r(true); });
        s.once("error", () => r(false));
      }))
      .catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`swtpm socket ${sock} not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Manufactures a TPM state (`swtpm_setup`) and starts `swtpm socket` on it. */
export async function startSwtpm(opts: { banks?: string } = {}): Promise<Swtpm> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-swtpm-"));
  await run("swtpm_setup", ["--tpm2", "--tpmstate", dir, "--pcr-banks", opts.banks ?? "sha1,sha256", "--overwrite"]);
  const sock = path.join(dir, "tpm.sock");
  const child = spawn(
    "swtpm",
    ["socket", "--tpm2", "--tpmstate", `dir=${dir}`, "--server", `type=unixio,path=${sock}`, "--ctrl", `type=unixio,path=${sock}.ctrl`, "--flags", "not-need-init,startup-clear"],
    { detached: true, stdio: "ignore" },
  );
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  try {
    await waitConnectable(sock, child, 10_000);
  } catch (e) {
    if (child.pid) process.kill(-child.pid, "SIGKILL");
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    dir,
    sock,
    tpm: `unix:${sock}`,
    tcti: `swtpm:path=${sock}`,
    async stop() {
      if (child.exitCode === null && child.pid) {
        process.kill(-child.pid, "SIGTERM");
        const t = setTimeout(() => child.pid && child.exitCode === null && process.kill(-child.pid, "SIGKILL"), 3000);
        await exited;
        clearTimeout(t);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t = await startSwtpm();
  console.log(t.tpm);
  const stop = () => void t.stop().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
