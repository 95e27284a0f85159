/**
 * CPU per request of a few service routes, in process (`app.fetch`, no HTTP, no load generator):
 * what building SQL per request costs against statements built once (issue 9 B.1). One app on a
 * fresh embedded file through the native driver; every route is warmed, then timed N times with
 * `process.cpuUsage` (the driver is synchronous, so SQLite's own work is in the figure too).
 * `node bench/statements.ts [N]`; the median of BENCH_ROUNDS (3) rounds per route; BENCH_ONLY (a
 * regular expression) times only the routes it matches.
 */
import Database from "libsql";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { createApp } from "../functions/app.ts";
import { migrateDb } from "../functions/db/migrate.ts";
import { nativeDriver } from "../functions/db/native.ts";
import { sqlitePragmas } from "../functions/db/open.ts";
import { newToken, tokenHash } from "../functions/lib/crypto.ts";
import { loadSettings } from "../functions/lib/settings.ts";

const N = Number(process.argv[2] ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROOT = "http://bench.test/";

const dir = mkdtempSync(join(tmpdir(), "bench-statements-"));
const file = join(dir, "db.sqlite");
const client = createClient({ url: `file:${file}` });
await migrateDb(client);
const settings = loadSettings({ GITEA__server__ROOT_URL: ROOT, GITEA__security__SECRET_KEY: "bench-secret-key-0123456789" });
const sqlite = new Database(file);
for (const p of sqlitePragmas(settings.database.sqlite)) sqlite.exec(p);
const driver = nativeDriver(sqlite);
const app = createApp({ settings, driver: () => driver, assets: async () => null });

// The caller: a site admin with an `all` token and a second address.
const plain = newToken();
// Enough individuals for every timed team member add to add a new one (u0 is the collaborator).
const MEMBERS = 300 + ROUNDS * N + 1;
await client.batch([
  { sql: "INSERT INTO user (name, lower_name, email, is_admin, is_active, allow_create_organization) VALUES ('bench', 'bench', 'bench@example.com', 1, 1, 1)", args: [] },
  { sql: "INSERT INTO email_address (uid, email, lower_email, is_activated, is_primary) VALUES (1, 'bench@example.com', 'bench@example.com', 1, 1), (1, 'b2@example.com', 'b2@example.com', 1, 0)", args: [] },
  { sql: "INSERT INTO access_token (uid, name, token_hash, token_last_eight, scope) VALUES (1, 't', ?, ?, 'all')", args: [await tokenHash(plain), plain.slice(-8)] },
  {
    sql: "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO user (name, lower_name, email, is_active) SELECT 'u' || i, 'u' || i, 'u' || i || '@example.com', 1 FROM n",
    args: [MEMBERS],
  },
]);
client.close();
const headers = { authorization: `token ${plain}`, "content-type": "application/json" };
const call = async (method: string, path: string, body?: unknown) => {
  const res = await app.fetch(new Request(new URL(path, ROOT), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
  await res.arrayBuffer();
  return res.status;
};
const setup: [string, string, unknown, number][] = [
  ["POST", "/api/v1/orgs", { username: "borg" }, 201],
  ["POST", "/api/v1/orgs/borg/teams", { name: "devs", permission: "write", units: ["repo.code", "repo.issues"] }, 201],
  ["POST", "/api/v1/orgs/borg/repos", { name: "brepo" }, 201],
  ["PUT", "/api/v1/repos/borg/brepo/collaborators/u0", { permission: "read" }, 204],
];
// A page of 30 repositories for the list routes (names with a keyword the trigram index finds).
for (let i = 1; i < 30; i++) setup.push(["POST", "/api/v1/orgs/borg/repos", { name: `brepo-${i}`, description: `bench repository ${i}` }, 201]);
for (const [method, path, body, want] of setup) {
  const status = await call(method, path, body);
  if (status !== want) throw new Error(`${method} ${path} answered ${status}`);
}
const TEAM = 2; // the Owners team is 1
let member = 0;

const hook = { type: "gitea", config: { url: "https://example.com/hook", content_type: "json" }, events: ["push"], active: true };
const routes: [string, () => Promise<number>, number][] = [
  ["GET /orgs/{org}", () => call("GET", "/api/v1/orgs/borg"), 200],
  ["GET /users/{username}", () => call("GET", "/api/v1/users/bench"), 200],
  ["GET /user/emails", () => call("GET", "/api/v1/user/emails"), 200],
  ["GET /user/orgs", () => call("GET", "/api/v1/user/orgs"), 200],
  ["GET /orgs/{org}/hooks", () => call("GET", "/api/v1/orgs/borg/hooks?limit=5"), 200],
  ["POST /orgs/{org}/hooks", () => call("POST", "/api/v1/orgs/borg/hooks", hook), 201],
  ["GET /teams/{id}", () => call("GET", `/api/v1/teams/${TEAM}`), 200],
  ["GET /orgs/{org}/teams", () => call("GET", "/api/v1/orgs/borg/teams"), 200],
  ["GET /repos/{owner}/{repo}/collaborators/{collaborator}", () => call("GET", "/api/v1/repos/borg/brepo/collaborators/u0"), 204],
  ["GET /repos/{owner}/{repo}", () => call("GET", "/api/v1/repos/borg/brepo"), 200],
  ["GET /orgs/{org}/repos (30)", () => call("GET", "/api/v1/orgs/borg/repos?limit=30"), 200],
  ["GET /repos/search?q= (30)", () => call("GET", "/api/v1/repos/search?q=brepo&limit=30"), 200],
  // A new member on every call (u1, u2, …): each request writes.
  ["PUT /teams/{id}/members/{username}", () => call("PUT", `/api/v1/teams/${TEAM}/members/u${++member}`), 204],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`| Route | CPU µs per request (median of ${ROUNDS} × ${N}) |\n|---|---:|`);
const only = new RegExp(process.env.BENCH_ONLY ?? "");
for (const [name, run, want] of routes.filter(([name]) => only.test(name))) {
  for (let i = 0; i < 300; i++) {
    const status = await run();
    if (status !== want) throw new Error(`${name} answered ${status}`);
  }
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < N; i++) await run();
    const d = process.cpuUsage(t0);
    rounds.push((d.user + d.system) / N);
  }
  console.log(`| ${name} | ${median(rounds)!.toFixed(0)} |`);
}
sqlite.close();
rmSync(dir, { recursive: true, force: true });
