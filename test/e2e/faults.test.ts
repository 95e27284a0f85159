/**
 * Issue 8 C.1 on BOTH targets: a stalled or unreachable database answers 503 in Gitea's error shape
 * within the configured [database] QUERY_TIMEOUT, instead of holding the request for as long as the
 * database stalls. Its own sqld (stopped with SIGSTOP mid-request, then resumed, then killed), a
 * Node server and a Worker in front of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript, startNodeServer, startSqld, startWorker, type Running } from "../../scripts/lib/processes.ts";

const TIMEOUT = "1500ms";
let sqld: Running & { dbPath: string };
const servers: { name: string; running: Running }[] = [];

beforeAll(async () => {
  sqld = await startSqld();
  const migrated = await runScript("scripts/migrate.ts", [], { DATABASE_URL: sqld.url });
  if (migrated.code !== 0) throw new Error(migrated.stderr);
  const env = { DATABASE_URL: sqld.url, GITEA__database__QUERY_TIMEOUT: TIMEOUT, GITEA__security__SECRET_KEY: "faults-secret-key-0123456789" };
  servers.push({ name: "node", running: await startNodeServer(env) });
  servers.push({ name: "workerd", running: await startWorker(env) });
}, 120_000);

afterAll(async () => {
  if (sqld?.pid) {
    try {
      process.kill(sqld.pid, "SIGCONT");
    } catch {}
  }
  for (const s of servers) await s.running.stop();
  await sqld?.stop();
});

const search = (url: string) => fetch(`${url}/api/v1/repos/search?q=x`);

describe("a stalled database", () => {
  it("C.1 a request during a database stall answers 503 in Gitea's shape within QUERY_TIMEOUT, and recovers after", async () => {
    for (const s of servers) expect((await search(s.running.url)).status, s.name).toBe(200);
    process.kill(sqld.pid!, "SIGSTOP");
    let answers: { name: string; status: number; body: { message: string; url: string }; retryAfter: string | null }[];
    try {
      answers = await Promise.all(
        servers.map(async (s) => {
          const res = await search(s.running.url);
          return { name: s.name, status: res.status, body: await res.json(), retryAfter: res.headers.get("Retry-After") };
        }),
      );
    } finally {
      // The answers came while sqld was still stopped: the requests were bounded by the timeout.
      process.kill(sqld.pid!, "SIGCONT");
    }
    for (const a of answers) {
      expect(a.status, a.name).toBe(503);
      expect(a.body, a.name).toEqual({ message: "the database is unavailable, try again later", url: expect.stringMatching(/\/api\/swagger$/) });
      expect(a.retryAfter, a.name).toBe("5");
    }
    for (const s of servers) expect((await search(s.running.url)).status, `${s.name} after resume`).toBe(200);
  });

  it("C.1 an unreachable database answers 503 at once, not a 500", async () => {
    await sqld.stop();
    for (const s of servers) {
      const res = await search(s.running.url);
      expect(res.status, s.name).toBe(503);
      expect((await res.json()).message).toBe("the database is unavailable, try again later");
      // A route that reads nothing from the database still answers.
      expect((await fetch(`${s.running.url}/api/v1/version`)).status, s.name).toBe(200);
    }
  });
});
