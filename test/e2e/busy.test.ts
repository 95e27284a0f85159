/**
 * Rule: a database that refuses a batch for now — sqld's and Turso's 429 (too many concurrent
 * requests), SQLITE_BUSY — gets the batch again after a pause, inside [database] QUERY_TIMEOUT, on
 * BOTH targets: a burst of requests is answered 200/201, never 500 or 503, and each write lands
 * once (a refused batch wrote nothing). Its own sqld, started with `--max-concurrent-requests 2`
 * so that a burst is refused for certain, with a Node server and a Worker in front of it.
 */
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript, startNodeServer, startSqld, startWorker, type Running } from "../../scripts/lib/processes.ts";
import { tokenAuth, uniqName } from "../fixtures/targets.ts";

let sqld: Running & { dbPath: string };
const servers: { name: string; running: Running }[] = [];
let h: Record<string, string>;
const admin = "busyadmin";

beforeAll(async () => {
  sqld = await startSqld({ args: ["--max-concurrent-requests", "2"] });
  const migrated = await runScript("scripts/migrate.ts", [], { DATABASE_URL: sqld.url });
  if (migrated.code !== 0) throw new Error(migrated.stderr);
  const cli = (args: string[]) => runScript("functions/cli.ts", ["user", ...args], { DATABASE_URL: sqld.url });
  const created = await cli(["create", "--username", admin, "--password", "busy-password-1", "--email", "busy@example.com", "--admin"]);
  if (created.code !== 0) throw new Error(created.stderr);
  h = tokenAuth((await cli(["generate-access-token", "--username", admin, "--scopes", "all", "--raw"])).stdout.trim());
  const env = { DATABASE_URL: sqld.url, GITEA__database__QUERY_TIMEOUT: "10s", GITEA__security__SECRET_KEY: "busy-secret-key-0123456789abcdef" };
  servers.push({ name: "node", running: await startNodeServer(env) });
  servers.push({ name: "workerd", running: await startWorker(env) });
}, 120_000);

afterAll(async () => {
  for (const s of servers) await s.running.stop();
  await sqld?.stop();
});

describe("a database that refuses for now", () => {
  it("a burst of 12 creations and 12 reads against a sqld that admits 2 requests at a time: every answer 201/200, each repository written once", async () => {
    const db = createClient({ url: sqld.url });
    try {
      for (const s of servers) {
        const prefix = uniqName(`busy${s.name}`);
        const answers = await Promise.all([
          ...Array.from({ length: 12 }, (_, i) => fetch(`${s.running.url}/api/v1/user/repos`, { method: "POST", headers: { ...h, "content-type": "application/json" }, body: JSON.stringify({ name: `${prefix}-${i}` }) })),
          ...Array.from({ length: 12 }, () => fetch(`${s.running.url}/api/v1/repos/search?q=${prefix}`, { headers: h })),
        ]);
        const seen = await Promise.all(answers.map(async (r) => `${r.status} ${r.status >= 300 ? await r.text() : (await r.arrayBuffer(), "")}`));
        expect(seen.filter((x) => !/^20[01] $/.test(x)), s.name).toEqual([]);
        expect(answers.slice(0, 12).map((r) => r.status), s.name).toEqual(Array(12).fill(201));
        // sqld did refuse some of them: some request took more than one round trip
        const trips = answers.map((r) => Number(/desc="(\d+)"/.exec(r.headers.get("server-timing") ?? "")?.[1]));
        expect(trips.some((t, i) => t > (i < 12 ? 2 : 1)), `${s.name}: ${trips}`).toBe(true);
        const rows = await db.execute({ sql: "SELECT COUNT(*) AS n FROM repository WHERE lower_name LIKE ?", args: [`${prefix.toLowerCase()}-%`] });
        expect(Number(rows.rows[0]!.n), s.name).toBe(12);
      }
    } finally {
      db.close();
    }
  }, 60_000);
});
