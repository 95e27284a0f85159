/**
 * The Node server's connection limits: no limit on how long a request takes to arrive (a large
 * push over a slow link is never cut, as with Gitea's server), but a silent connection is closed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { IDLE_SOCKET_MS, startServer } from "../../functions/node.ts";

let dir: string;
let started: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "node-server-"));
  started = await startServer({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, GITEA__security__SECRET_KEY: "test-secret-key-0123456789" });
});
afterAll(async () => {
  started.deliverer.stop();
  started.maintainer.stop();
  await new Promise<void>((ok) => started.server.close(() => ok()));
  started.driver.close();
  rmSync(dir, { recursive: true, force: true });
});

it("a request may take as long as it needs to arrive (Node's 300 s cut is off); a connection silent for IDLE_SOCKET_MS is closed; headers within 60 s", async () => {
  const server = started.server as Server;
  expect(server.requestTimeout).toBe(0);
  expect(server.timeout).toBe(IDLE_SOCKET_MS);
  expect(server.headersTimeout).toBe(60_000);
  const port = (server.address() as { port: number }).port;
  expect((await fetch(`http://127.0.0.1:${port}/api/v1/version`)).status).toBe(200);
});
