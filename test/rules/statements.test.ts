/**
 * Issue 9 B.1, checked at the driver: the routes of the services moved to the query layer send only
 * statement texts the query layer built once — at module load, or once per shape — never SQL built
 * for one request. Every text a request sends is recorded below the app and looked up in
 * `BUILT_ONCE` (functions/db/sql.ts), which only `query`/`command`/`shaped` statements enter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTableColumns, getTableName, is, sql, Table, type SQL } from "drizzle-orm";
import * as schema from "../../functions/db/schema.ts";
import { repoCascadeSql } from "../../functions/db/queries/cascade.ts";
import { REPO_DELETE } from "../../functions/db/queries/repos.ts";
import { BUILT_ONCE, COMPILED, compile, DEFINED_STATEMENTS, p, query, shaped, type Statement } from "../../functions/db/sql.ts";
import { migrateDb } from "../../functions/db/migrate.ts";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Driver } from "../../functions/db/driver.ts";
import { startSqld } from "../../scripts/lib/processes.ts";
import { apiRepo, basic, seedMember, seedOrg, seedTeam, seedUser, testApp, token, uniq, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let recording = false;
const seen: string[] = [];
/** Every statement text the app sent in this file, recorded or not (the sqld parser check). */
const everSent = new Set<string>();
const recorder = (d: Driver): Driver => ({
  batch(items, mode) {
    for (const i of items) everSent.add(i.text);
    if (recording) for (const i of items) seen.push(i.text);
    return d.batch(items, mode);
  },
  close: () => d.close(),
});

let admin: SeededUser;
let adminToken: string;
let org: SeededOrg;
let repo: string;
let repoId: number;
let other: SeededUser;
let doomed: SeededOrg;
let team: { id: number };
let doomedTeam: { id: number };
let orgRepo: string;
const newUser = uniq("nu");
beforeAll(async () => {
  t = await testApp({}, { wrap: recorder });
  admin = await seedUser(t.db, { admin: true });
  adminToken = await admin.token();
  org = await seedOrg(t, admin);
  doomed = await seedOrg(t, admin);
  other = await seedUser(t.db);
  await seedMember(t, org, other);
  const created = await apiRepo(t, adminToken, { name: uniq("repo"), auto_init: true });
  repo = created.full_name;
  repoId = created.id;
  team = await seedTeam(t, org, { permission: "write", units: ["repo.code", "repo.issues"] });
  doomedTeam = await seedTeam(t, org, { permission: "read" });
  orgRepo = (await apiRepo(t, adminToken, { name: uniq("orepo") }, org.name)).name;
});
afterAll(() => t.close());

/**
 * The statement texts `send` makes the app run, those of them not built once, and what the request
 * compiled: `loose` statements (outside a `shaped` build — a `query`/`command` made per request,
 * whose text enters BUILT_ONCE and so would pass the text check), texts `rebuilt`, and all of them.
 */
async function statementsOf(send: () => Promise<Response>, status: number) {
  seen.length = 0;
  const before = { ...COMPILED };
  recording = true;
  try {
    const res = await send();
    expect(res.status, await res.clone().text()).toBe(status);
  } finally {
    recording = false;
  }
  const compiled = { total: COMPILED.total - before.total, loose: COMPILED.loose - before.loose, rebuilt: COMPILED.rebuilt - before.rebuilt };
  return { sent: [...seen], perRequest: seen.filter((text) => !BUILT_ONCE.has(text)), compiled };
}

const get = (path: string) => () => t.request(path, { headers: token(adminToken) });
const send = (method: string, path: string, json?: unknown) => () => t.request(path, { method, headers: token(adminToken), json });

const basicAuth = (method: string, path: string, json?: unknown) => () => t.request(path, { method, headers: basic(admin.name, admin.password), json });

const HOOK = { type: "gitea", config: { url: "https://example.com/hook", content_type: "json" }, events: ["push"], active: true };

/**
 * [route, request, expected status] of every converted service's routes. Not here: ref changes
 * (pushes, branch create/delete), whose RefStore commit batch (db/queries/git-refs.ts) is plain SQL
 * text sized by the number of refs a push moves, and an auto-initialised repository's git rows
 * (SQL sized by its files, `commandOnce`).
 */
/** The id of the label the label create made, for the label routes that take an id only. */
let labelId = 0;
const labelCreated = (make: () => Promise<Response>) => async () => {
  const res = await make();
  labelId = (await res.clone().json()).id;
  return res;
};
const routes = (): [string, () => Promise<Response>, number][] => [
  ["GET /user/emails", get("/api/v1/user/emails"), 200],
  ["POST /user/emails", send("POST", "/api/v1/user/emails", { emails: [`${uniq("e")}@example.com`] }), 201],
  ["DELETE /user/emails", send("DELETE", "/api/v1/user/emails", { emails: [`nobody-${uniq("e")}@example.com`] }), 404],
  ["GET /users/{username}/tokens", basicAuth("GET", `/api/v1/users/${admin.name}/tokens`), 200],
  ["POST /users/{username}/tokens", basicAuth("POST", `/api/v1/users/${admin.name}/tokens`, { name: "t1", scopes: ["read:user"] }), 201],
  ["GET /user", get("/api/v1/user"), 200],
  ["GET /users/{username}", get(`/api/v1/users/${other.name}`), 200],
  ["GET /users/search", get("/api/v1/users/search?q=user"), 200],
  ["GET /users/search?uid=", get(`/api/v1/users/search?uid=${other.id}`), 200],
  ["POST /admin/users", send("POST", "/api/v1/admin/users", { username: newUser, email: `${newUser}@example.com`, password: "password1234" }), 201],
  ["PATCH /admin/users/{username}", send("PATCH", `/api/v1/admin/users/${newUser}`, { email: `${newUser}-2@example.com`, full_name: "N", visibility: "limited" }), 200],
  ["DELETE /admin/users/{username}", send("DELETE", `/api/v1/admin/users/${newUser}?purge=true`), 204],
  ["POST /orgs", send("POST", "/api/v1/orgs", { username: uniq("org") }), 201],
  ["GET /orgs/{org}", get(`/api/v1/orgs/${org.name}`), 200],
  ["PATCH /orgs/{org}", send("PATCH", `/api/v1/orgs/${org.name}`, { description: "d", visibility: "limited" }), 200],
  ["GET /user/orgs", get("/api/v1/user/orgs"), 200],
  ["GET /orgs/{org}/members", get(`/api/v1/orgs/${org.name}/members`), 200],
  ["GET /orgs/{org}/members/{username}", get(`/api/v1/orgs/${org.name}/members/${admin.name}`), 204],
  ["GET /orgs/{org}/public_members/{username}", get(`/api/v1/orgs/${org.name}/public_members/${admin.name}`), 404],
  ["DELETE /orgs/{org}/members/{username}", send("DELETE", `/api/v1/orgs/${org.name}/members/${other.name}`), 204],
  ["PUT /user/blocks/{username}", send("PUT", `/api/v1/user/blocks/${other.name}`), 204],
  ["GET /user/blocks/{username}", get(`/api/v1/user/blocks/${other.name}`), 204],
  ["GET /user/blocks", get("/api/v1/user/blocks"), 200],
  ["DELETE /user/blocks/{username}", send("DELETE", `/api/v1/user/blocks/${other.name}`), 204],
  ["PUT /orgs/{org}/blocks/{username}", send("PUT", `/api/v1/orgs/${org.name}/blocks/${other.name}`), 204],
  ["GET /orgs/{org}/blocks/{username}", get(`/api/v1/orgs/${org.name}/blocks/${other.name}`), 204],
  ["GET /orgs/{org}/blocks", get(`/api/v1/orgs/${org.name}/blocks`), 200],
  ["DELETE /orgs/{org}/blocks/{username}", send("DELETE", `/api/v1/orgs/${org.name}/blocks/${other.name}`), 204],
  ["DELETE /orgs/{org}", send("DELETE", `/api/v1/orgs/${doomed.name}`), 204],
  ["POST /repos/{owner}/{repo}/labels", labelCreated(send("POST", `/api/v1/repos/${repo}/labels`, { name: "bug", color: "#ee0701" })), 201],
  ["GET /repos/{owner}/{repo}/labels", get(`/api/v1/repos/${repo}/labels?sort=mostissues`), 200],
  ["GET /repos/{owner}/{repo}/labels/{id}", get(`/api/v1/repos/${repo}/labels/bug`), 200],
  // PATCH and DELETE take the id only (a name is 404 / nothing deleted, as Gitea's PathParamInt64)
  ["PATCH /repos/{owner}/{repo}/labels/{id}", () => send("PATCH", `/api/v1/repos/${repo}/labels/${labelId}`, { color: "00ff00", is_archived: true })(), 200],
  ["DELETE /repos/{owner}/{repo}/labels/{id}", () => send("DELETE", `/api/v1/repos/${repo}/labels/${labelId}`)(), 204],
  ["GET /users/{username}/activities/feeds", get(`/api/v1/users/${admin.name}/activities/feeds`), 200],
  ["GET /users/{username}/activities/feeds?only-performed-by&date", get(`/api/v1/users/${admin.name}/activities/feeds?only-performed-by=true&date=2026-01-02`), 200],
  ["GET /orgs/{org}/activities/feeds", get(`/api/v1/orgs/${org.name}/activities/feeds?date=2026-01-02`), 200],
  ["GET /repos/{owner}/{repo}/activities/feeds", get(`/api/v1/repos/${repo}/activities/feeds`), 200],
  ["GET /repos/{owner}/{repo}/contents/{path}", get(`/api/v1/repos/${repo}/contents/README.md`), 200],
  ["GET /repos/{owner}/{repo}/issue_templates", get(`/api/v1/repos/${repo}/issue_templates`), 200],
  ["GET /repos/{owner}/{repo}/branches", get(`/api/v1/repos/${repo}/branches`), 200],
  ["GET /repos/{owner}/{repo}/commits", get(`/api/v1/repos/${repo}/commits`), 200],
  ["GET /{owner}/{repo}.git/info/refs", get(`/${repo}.git/info/refs?service=git-upload-pack`), 200],
  ["GET /orgs/{org}/hooks", get(`/api/v1/orgs/${org.name}/hooks`), 200],
  ["POST /orgs/{org}/hooks", send("POST", `/api/v1/orgs/${org.name}/hooks`, HOOK), 201],
  ["GET /orgs/{org}/hooks/{id}", get(`/api/v1/orgs/${org.name}/hooks/1`), 200],
  ["PATCH /orgs/{org}/hooks/{id}", send("PATCH", `/api/v1/orgs/${org.name}/hooks/1`, { active: false, events: ["create"] }), 200],
  ["DELETE /orgs/{org}/hooks/{id}", send("DELETE", `/api/v1/orgs/${org.name}/hooks/1`), 204],
  ["DELETE /users/{username}/tokens/{token}", basicAuth("DELETE", `/api/v1/users/${admin.name}/tokens/t1`), 204],
  // teams: every route, each search kind, a member add that joins the org, the last-owner guard
  ["POST /orgs/{org}/teams", send("POST", `/api/v1/orgs/${org.name}/teams`, { name: uniq("team"), permission: "write", units: ["repo.code"] }), 201],
  ["GET /orgs/{org}/teams", get(`/api/v1/orgs/${org.name}/teams`), 200],
  ["GET /orgs/{org}/teams/search", get(`/api/v1/orgs/${org.name}/teams/search?q=own`), 200],
  ["GET /orgs/{org}/teams/search?include_desc", get(`/api/v1/orgs/${org.name}/teams/search?q=own&include_desc=true`), 200],
  ["GET /user/teams", get("/api/v1/user/teams"), 200],
  ["GET /teams/{id}", get(`/api/v1/teams/${team.id}`), 200],
  ["PATCH /teams/{id}", send("PATCH", `/api/v1/teams/${team.id}`, { description: "d", permission: "read", units: ["repo.code", "repo.issues"] }), 200],
  ["PATCH /teams/{id} (owners)", send("PATCH", `/api/v1/teams/${org.ownersTeamId}`, { description: "owners" }), 200],
  ["PUT /teams/{id}/members/{username}", send("PUT", `/api/v1/teams/${team.id}/members/${other.name}`), 204],
  ["GET /teams/{id}/members", get(`/api/v1/teams/${team.id}/members`), 200],
  ["GET /teams/{id}/members/{username}", get(`/api/v1/teams/${team.id}/members/${other.name}`), 200],
  ["DELETE /teams/{id}/members/{username}", send("DELETE", `/api/v1/teams/${team.id}/members/${other.name}`), 204],
  ["DELETE /teams/{id}/members/{username} (last owner)", send("DELETE", `/api/v1/teams/${org.ownersTeamId}/members/${admin.name}`), 422],
  ["PUT /teams/{id}/repos/{org}/{repo}", send("PUT", `/api/v1/teams/${team.id}/repos/${org.name}/${orgRepo}`), 204],
  ["GET /teams/{id}/repos", get(`/api/v1/teams/${team.id}/repos`), 200],
  ["GET /teams/{id}/repos/{org}/{repo}", get(`/api/v1/teams/${team.id}/repos/${org.name}/${orgRepo}`), 200],
  ["DELETE /teams/{id}/repos/{org}/{repo}", send("DELETE", `/api/v1/teams/${team.id}/repos/${org.name}/${orgRepo}`), 204],
  ["GET /teams/{id}/activities/feeds", get(`/api/v1/teams/${team.id}/activities/feeds`), 200],
  ["GET /teams/{id}/activities/feeds?date", get(`/api/v1/teams/${team.id}/activities/feeds?date=2026-01-02`), 200],
  ["DELETE /teams/{id}", send("DELETE", `/api/v1/teams/${doomedTeam.id}`), 204],
  // collaborators, assignees, reviewers
  ["PUT /repos/{owner}/{repo}/collaborators/{collaborator}", send("PUT", `/api/v1/repos/${repo}/collaborators/${other.name}`, { permission: "write" }), 204],
  ["GET /repos/{owner}/{repo}/collaborators", get(`/api/v1/repos/${repo}/collaborators`), 200],
  ["GET /repos/{owner}/{repo}/collaborators/{collaborator}", get(`/api/v1/repos/${repo}/collaborators/${other.name}`), 204],
  ["GET /repos/{owner}/{repo}/collaborators/{collaborator}/permission", get(`/api/v1/repos/${repo}/collaborators/${other.name}/permission`), 200],
  ["GET /repos/{owner}/{repo}/assignees", get(`/api/v1/repos/${repo}/assignees`), 200],
  ["GET /repos/{owner}/{repo}/reviewers", get(`/api/v1/repos/${repo}/reviewers`), 200],
  ["DELETE /repos/{owner}/{repo}/collaborators/{collaborator}", send("DELETE", `/api/v1/repos/${repo}/collaborators/${other.name}`), 204],
  // repositories: the reads and lists
  ["GET /repos/{owner}/{repo}", get(`/api/v1/repos/${repo}`), 200],
  ["GET /repositories/{id}", get(`/api/v1/repositories/${repoId}`), 200],
  ["GET /user/repos", get("/api/v1/user/repos"), 200],
  ["GET /users/{username}/repos", get(`/api/v1/users/${admin.name}/repos`), 200],
  ["GET /orgs/{org}/repos", get(`/api/v1/orgs/${org.name}/repos`), 200],
  ["GET /repos/{owner}/{repo}/forks", get(`/api/v1/repos/${repo}/forks`), 200],
  ["GET /repos/search", get("/api/v1/repos/search?q=repo"), 200],
  ["GET /repos/search (explore)", get("/api/v1/repos/search?sort=updated&order=desc&mode=source"), 200],
  // repositories: the writes (create with auto-init is not here: its git rows are SQL sized by the files)
  ["PATCH /repos/{owner}/{repo}", send("PATCH", `/api/v1/repos/${repo}`, { description: "d", template: true, private: true, has_issues: false, has_wiki: true, default_branch: "main", archived: false }), 200],
  ["POST /repos/{owner}/{repo}/generate", send("POST", `/api/v1/repos/${repo}/generate`, { owner: org.name, name: uniq("gen"), labels: true, topics: true }), 201],
  ["POST /repos/{owner}/{repo}/forks", send("POST", `/api/v1/repos/${repo}/forks`, { organization: org.name, name: uniq("fork") }), 202],
  ["POST /orgs/{org}/repos", send("POST", `/api/v1/orgs/${org.name}/repos`, { name: uniq("orepo") }), 201],
  ["POST /user/repos", send("POST", "/api/v1/user/repos", { name: uniq("urepo"), private: true }), 201],
  ["DELETE /repos/{owner}/{repo}", send("DELETE", `/api/v1/repos/${org.name}/${orgRepo}`), 204],
];

/** Columns holding a repository id that the cascade leaves alone on purpose, with the reason. */
const NOT_CASCADED: Record<string, string> = {
  // The storage owner: forks' catalog rows keep pointing at a deleted base's files until
  // releaseSharedPacks copies them (services/repo-storage.ts); the deleted repository's own
  // catalog goes by catalog_repo_id.
  "git_pack.repo_id": "storage owner",
  // Pack files a compaction replaced, by storage owner: the garbage sweep deletes the files (gone
  // with a deleted repository's storage already) and then the rows (services/git-maintenance.ts).
  "git_pack_garbage.repo_id": "storage owner",
};

describe("statements built once (issue 9 B.1)", () => {
  it("the repository cascade covers every column of the schema holding a repository id, for user purge and repository delete alike", () => {
    const ids = sql`(SELECT 1)`;
    const text = (q: SQL) => compile("cascade", q).text;
    const cascade = repoCascadeSql(ids).map(text);
    // Repository delete runs the same list as user purge, for one id.
    const byId = repoCascadeSql(sql`(${p("id")})`).map((q) => compile("cascade", q).text);
    expect(byId.map((q) => q.replaceAll("(?)", "(SELECT 1)"))).toEqual(cascade);
    expect(REPO_DELETE.slice(0, byId.length).map((s) => s.compiled.text)).toEqual(byId);
    const columns = (Object.values(schema) as unknown[])
      .filter((v): v is Table => is(v, Table))
      .flatMap((table) => Object.values(getTableColumns(table)).map((c) => `${getTableName(table)}.${c.name}`))
      .filter((c) => /(^|_)repo_id$/.test(c.split(".")[1]!) || c === "repository.fork_id" || c === "repository.template_id");
    expect(columns.length).toBeGreaterThan(10);
    const uncovered = columns.filter((c) => {
      const [table, column] = c.split(".");
      const touches = new RegExp(`^(DELETE FROM|UPDATE) "?${table}"? .*\\b${column} IN \\(SELECT 1\\)`, "s");
      return !NOT_CASCADED[c] && !cascade.some((q) => touches.test(q));
    });
    expect(uncovered).toEqual([]);
  });

  it("the check sees per-request SQL: an auto-initialised repository's git rows are reported", async () => {
    const { sent, perRequest } = await statementsOf(send("POST", "/api/v1/user/repos", { name: uniq("init"), auto_init: true }), 201);
    expect(sent.length).toBeGreaterThan(0);
    expect(perRequest.length).toBeGreaterThan(0);
  });

  it("the check sees statements the query layer compiles per request, whatever their text", () => {
    const before = { ...COMPILED };
    const perRequest = () => query<unknown, { x: number }>("probePerRequest", sql`SELECT ${p("x")}`, (r) => r[0]).bind({ x: 1 });
    perRequest();
    perRequest();
    expect(COMPILED.loose - before.loose).toBe(2);
    // A shape keyed per request (its text the same every time) is rebuilt.
    let n = 0;
    const perRequestShape = shaped((k: number) => query<unknown, { x: number }>(`s${k}`, sql`SELECT ${p("x")}, 'same-${before.total}'`, (r) => r[0]));
    perRequestShape(n++).bind({ x: 1 });
    expect(COMPILED.rebuilt - before.rebuilt).toBe(0);
    perRequestShape(n++).bind({ x: 1 });
    expect([COMPILED.loose - before.loose, COMPILED.rebuilt - before.rebuilt]).toEqual([2, 1]);
    // A statement is compiled on its first use, once: defining it compiles nothing, binding it
    // again compiles nothing more.
    const size = BUILT_ONCE.size;
    const lazy = query<unknown, { x: number }>("probeLazy", sql`SELECT ${p("x")}, ${sql.raw(`'lazy-${before.total}'`)}`, (r) => r[0]);
    expect(BUILT_ONCE.size).toBe(size);
    expect(lazy.bind({ x: 1 }).args).toEqual([1]);
    expect(BUILT_ONCE.size).toBe(size + 1);
    lazy.bind({ x: 2 });
    expect([BUILT_ONCE.size, COMPILED.rebuilt - before.rebuilt]).toEqual([size + 1, 1]);
    // A shape compiles once; a second call with the same key compiles nothing.
    const byShape = shaped((k: string) => query(`shape(${k})`, sql`SELECT ${p("x")}, ${sql.raw(`'${k}-${before.total}'`)}`, (r) => r[0]));
    const mid = { ...COMPILED };
    byShape("a");
    byShape("a");
    expect([COMPILED.total - mid.total, COMPILED.loose - mid.loose, COMPILED.rebuilt - mid.rebuilt]).toEqual([1, 0, 0]);
  });

  it("every statement defined at module load compiles and prepares on the migrated schema, as start-up checked before statements compiled lazily", async () => {
    // Statements compile on their first request: a statement of a rarely used path with a wrong
    // column would otherwise first fail in production. Each is compiled here and prepared by
    // SQLite on a migrated file of its own (prepared, never run).
    const dir = mkdtempSync(join(tmpdir(), "statements-"));
    const file = join(dir, "db.sqlite");
    const client = createClient({ url: `file:${file}` });
    await migrateDb(client);
    client.close();
    const db = new Database(file);
    try {
      const prepares = (s: Statement<unknown, never>) => {
        try {
          db.prepare(s.compiled.text);
          return null;
        } catch (e) {
          return `${s.compiled.name}: ${(e as Error).message}`;
        }
      };
      // Statements a test defines for itself are named `probe…` and left out: they name the test's
      // own tables, and where test files share one module graph (the mutation runs, which also run
      // a test again and again in one process) they are in the list before this file runs.
      const defined = DEFINED_STATEMENTS.filter((s) => !s.compiled.name.startsWith("probe"));
      expect(defined.length).toBeGreaterThan(200);
      expect(defined.map(prepares).filter((f) => f !== null)).toEqual([]);
      // The check fails on a statement SQLite cannot prepare.
      const broken = query("broken", sql`SELECT no_such_column FROM user`, (r) => r[0]);
      expect(DEFINED_STATEMENTS).toContain(broken);
      expect(prepares(broken)).toMatch(/^broken: no such column/);
      // It leaves the list again, for the next run of this test in the same process.
      (DEFINED_STATEMENTS as Statement<unknown, never>[]).splice(DEFINED_STATEMENTS.indexOf(broken), 1);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("every statement of the converted services' routes was built once", async () => {
    expect(repo).toContain("/");
    const offenders: string[] = [];
    for (const [name, request, status] of routes()) {
      const { sent, perRequest, compiled } = await statementsOf(request, status);
      expect(sent.length, name).toBeGreaterThan(0);
      for (const text of perRequest) offenders.push(`${name}: ${text.slice(0, 160)}`);
      if (compiled.loose || compiled.rebuilt) offenders.push(`${name}: compiled ${compiled.loose} statement(s) outside a shape, rebuilt ${compiled.rebuilt}`);
      // A read asked again compiles nothing at all: its shapes were built the first time.
      if (name.startsWith("GET ")) {
        const again = await statementsOf(request, status);
        if (again.compiled.total) offenders.push(`${name} (again): compiled ${again.compiled.total} statement(s)`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe("statements sqld accepts (the Worker's database parses every text itself before SQLite prepares it)", () => {
  it("every statement text SQLite prepares — defined, built per shape or sent by a request here, ref changes and webhook tasks included — also parses and prepares on sqld", async () => {
    // sqld reads each statement with its own parser first: `group_concat(x ORDER BY y)`, valid
    // SQLite, once made every push to an organization with hooks answer 500 on the Worker only.
    // Ref changes and hook tasks are per-request SQL: make some, in an organization with a hook.
    const hooked = await seedOrg(t, admin);
    const hook = { ...HOOK, events: ["push", "create", "delete", "repository", "fork"] };
    expect((await send("POST", `/api/v1/orgs/${hooked.name}/hooks`, hook)()).status).toBe(201);
    const r = (await apiRepo(t, adminToken, { name: uniq("hooked"), auto_init: true }, hooked.name)).full_name;
    const content = Buffer.from("hello").toString("base64");
    for (const [request, status] of [
      [send("POST", `/api/v1/repos/${r}/contents/a.txt`, { content, message: "add" }), 201],
      [send("POST", `/api/v1/repos/${r}/contents/b.txt`, { content, message: "on a branch", new_branch: "topic" }), 201],
      [send("POST", `/api/v1/repos/${r}/branches`, { new_branch_name: "other" }), 201],
      [send("DELETE", `/api/v1/repos/${r}/branches/other`), 204],
      [send("POST", `/api/v1/repos/${repo}/forks`, { organization: hooked.name, name: uniq("fork") }), 202],
      [send("DELETE", `/api/v1/repos/${r}`), 204],
    ] as const) {
      const res = await request();
      expect(res.status, await res.text()).toBe(status);
    }
    const texts = new Set([...everSent, ...BUILT_ONCE, ...DEFINED_STATEMENTS.map((s) => s.compiled.text)]);
    expect(texts.size).toBeGreaterThan(250);
    // The push's task rows (a raw text with its guard) were sent, and are among what is checked.
    expect([...everSent].some((text) => text.startsWith("INSERT INTO hook_task") && text.includes("WITH RECURSIVE"))).toBe(true);

    const dir = mkdtempSync(join(tmpdir(), "statements-"));
    const file = createClient({ url: `file:${join(dir, "db.sqlite")}` });
    await migrateDb(file);
    file.close();
    const db = new Database(join(dir, "db.sqlite"));
    const sqld = await startSqld();
    try {
      const remote = createClient({ url: sqld.url });
      await migrateDb(remote);
      remote.close();
      // What SQLite prepares on the migrated file (texts this file made broken on purpose drop out).
      const prepared = [...texts].filter((text) => {
        try {
          db.prepare(text);
          return true;
        } catch {
          return false;
        }
      });
      // EXPLAIN goes through sqld's parser and SQLite's prepare without running the statement
      // (Hrana's `describe` skips the parser); parameters stay unbound.
      const refusedBySqld = async (list: string[]) => {
        const res = await fetch(`${sqld.url}/v2/pipeline`, {
          method: "POST",
          body: JSON.stringify({ requests: [...list.map((text) => ({ type: "execute", stmt: { sql: `EXPLAIN ${text}` } })), { type: "close" }] }),
        });
        expect(res.status).toBe(200);
        const { results } = (await res.json()) as { results: { type: string; error?: { message: string } }[] };
        return list.flatMap((text, i) => (results[i]?.type === "ok" ? [] : [`${results[i]?.error?.message ?? "no result"}: ${text.slice(0, 200)}`]));
      };
      const refused: string[] = [];
      for (let i = 0; i < prepared.length; i += 50) refused.push(...(await refusedBySqld(prepared.slice(i, i + 50))));
      expect(refused).toEqual([]);
      // The check fails on the class it is for: a text SQLite prepares and sqld's parser refuses.
      const sqliteOnly = "SELECT group_concat(name ORDER BY id) FROM user";
      expect(() => db.prepare(sqliteOnly)).not.toThrow();
      expect(await refusedBySqld([sqliteOnly])).toEqual([expect.stringMatching(/could not be parsed/)]);
    } finally {
      db.close();
      await sqld.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
