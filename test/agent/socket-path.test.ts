/**
 * Rule: the agent binds its socket path only when nothing else holds it. A crash's leftover (a
 * socket nobody listens on) is removed; a live agent's socket, a regular file or any other thing
 * at the path stops start-up with a message, and is left as it was.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { leftoverSocket, startAgentProcess, type AgentProcess } from "./helpers.ts";

const dir = mkdtempSync(path.join(tmpdir(), "agent-socket-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** An agent that needs no device to start (its TPM is missing: calls answer UNAVAILABLE). */
const start = async (socket: string) => {
  const a = await startAgentProcess(socket, ["--platform", "vtpm", "--tpm", path.join(dir, "no-tpm")]);
  running.push(a);
  return a;
};
const refusedStart = (socket: string) => start(socket).then(
  () => "started",
  (e: Error) => e.message,
);
const connects = (socket: string) =>
  new Promise<boolean>((resolve) => {
    const c = net.connect(socket, () => {
      c.end();
      resolve(true);
    });
    c.on("error", () => resolve(false));
  });

describe("the socket path", () => {
  it("a live agent's socket is not taken over: the second agent refuses to start, the first still answers", async () => {
    const socket = path.join(dir, "live.sock");
    const first = await start(socket);
    expect(await refusedStart(socket)).toMatch(/another process is serving on .*live\.sock/);
    expect(await connects(socket)).toBe(true);
    await first.stop();
  });

  it("a crash's leftover socket (nobody listening) is removed and the path bound", async () => {
    const socket = path.join(dir, "stale.sock");
    await leftoverSocket(socket);
    expect(await connects(socket)).toBe(false);
    const a = await start(socket);
    expect(await connects(a.socket)).toBe(true);
    await a.stop();
  });

  it("a regular file at the path is left as it was and start-up stops with a message", async () => {
    const file = path.join(dir, "data.txt");
    writeFileSync(file, "IMPORTANT DATA");
    expect(await refusedStart(file)).toMatch(/exists and is not a socket/);
    expect(readFileSync(file, "utf8")).toBe("IMPORTANT DATA");
  });

  it("a socket in a directory that does not exist stops start-up with a message saying so (listen() said EACCES)", async () => {
    expect(await refusedStart(path.join(dir, "no-such-dir", "agent.sock"))).toMatch(/the directory of .*no-such-dir\/agent\.sock does not exist/);
  });
});
