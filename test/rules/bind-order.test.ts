/**
 * Gitea's order: a route's guards before its body is bound (routers/api/v1/api.go — the path's
 * repoAssignment/orgAssignment, then reqRepoWriter, reqOrgOwnership, … and only then bind(form)).
 * A caller who may not use a route learns that (404 as for a missing resource, 403), never what its
 * body got wrong; and the guard that runs for an invalid body answers exactly as the service does
 * for a valid one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCollaborator, apiRepo, basic, NOT_FOUND, roundTrips, seedMember, seedOrg, seedTeam, seedUser, testApp, token, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;

/** The world: who calls, and on what. */
interface World {
  o: SeededUser;
  /** read collaborator of o/pub */
  r: SeededUser;
  /** outsider */
  x: SeededUser;
  /** member of `org` (a read team), not an owner */
  m: SeededUser;
  /** a private user */
  p: SeededUser;
  admin: SeededUser;
  org: string;
  porg: string;
  /** a team of `org` with m in it; a public team of `org` without m; a team of `porg` */
  team: number;
  otherTeam: number;
  hiddenTeam: number;
  auth: Record<string, Record<string, string>>;
}
let w: World;

const WRITER = "user should have a permission to write to a repo";
const REPO_ADMIN = "user should be an owner or a collaborator with admin write of a repository";

/** One guarded route: its path on a resource the caller may use, on a hidden one, and who is refused. */
interface Case {
  op: string;
  method: string;
  /** The path for `allowed` and `forbidden`. */
  path: (w: World) => string;
  /** The same route on a resource `hiddenFrom` may not see. */
  hidden: (w: World) => string;
  hiddenFrom: keyof World["auth"];
  /** Callers the guards refuse (403) on `path`, with Gitea's message. */
  forbidden: [caller: keyof World["auth"], message: string][];
  /** A caller the guards let through: an invalid body is then a 422. */
  allowed: keyof World["auth"];
  /** A body the route binds (the guards' callers never reach what it asks for). */
  valid: unknown;
}

const repo = (w: World, name: string, rest = "") => `/api/v1/repos/${w.o.name}/${name}${rest}`;
const CASES: Case[] = [
  { op: "issueCreateLabel", method: "POST", path: (w) => repo(w, "pub", "/labels"), hidden: (w) => repo(w, "priv", "/labels"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { name: "bug", color: "#ff0000" } },
  { op: "issueEditLabel", method: "PATCH", path: (w) => repo(w, "pub", "/labels/1"), hidden: (w) => repo(w, "priv", "/labels/1"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { name: "bug" } },
  { op: "repoEdit", method: "PATCH", path: (w) => repo(w, "pub"), hidden: (w) => repo(w, "priv"), hiddenFrom: "x", forbidden: [["r", REPO_ADMIN]], allowed: "o", valid: { description: "d" } },
  { op: "repoAddCollaborator", method: "PUT", path: (w) => repo(w, "pub", `/collaborators/${w.x.name}`), hidden: (w) => repo(w, "priv", `/collaborators/${w.x.name}`), hiddenFrom: "x", forbidden: [["r", REPO_ADMIN]], allowed: "o", valid: { permission: "read" } },
  { op: "repoChangeFiles", method: "POST", path: (w) => repo(w, "pub", "/contents"), hidden: (w) => repo(w, "priv", "/contents"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { files: [{ operation: "create", path: "a.txt", content: "YQ==" }] } },
  { op: "repoCreateFile", method: "POST", path: (w) => repo(w, "pub", "/contents/a.txt"), hidden: (w) => repo(w, "priv", "/contents/a.txt"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { content: "YQ==" } },
  { op: "repoUpdateFile", method: "PUT", path: (w) => repo(w, "pub", "/contents/README.md"), hidden: (w) => repo(w, "priv", "/contents/README.md"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { content: "YQ==", sha: "0".repeat(40) } },
  { op: "repoDeleteFile", method: "DELETE", path: (w) => repo(w, "pub", "/contents/README.md"), hidden: (w) => repo(w, "priv", "/contents/README.md"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { sha: "0".repeat(40) } },
  { op: "repoGetFileContentsPost", method: "POST", path: (w) => repo(w, "pub", "/file-contents"), hidden: (w) => repo(w, "priv", "/file-contents"), hiddenFrom: "x", forbidden: [], allowed: "r", valid: { files: ["README.md"] } },
  { op: "repoCreateBranch", method: "POST", path: (w) => repo(w, "pub", "/branches"), hidden: (w) => repo(w, "priv", "/branches"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { new_branch_name: "b" } },
  { op: "repoUpdateBranch", method: "PUT", path: (w) => repo(w, "pub", "/branches/main"), hidden: (w) => repo(w, "priv", "/branches/main"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { new_commit_id: "0".repeat(40) } },
  { op: "repoRenameBranch", method: "PATCH", path: (w) => repo(w, "pub", "/branches/main"), hidden: (w) => repo(w, "priv", "/branches/main"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { name: "renamed" } },
  { op: "repoCreateTag", method: "POST", path: (w) => repo(w, "pub", "/tags"), hidden: (w) => repo(w, "priv", "/tags"), hiddenFrom: "x", forbidden: [["r", WRITER]], allowed: "o", valid: { tag_name: "v1" } },
  { op: "createFork", method: "POST", path: (w) => repo(w, "pub", "/forks"), hidden: (w) => repo(w, "priv", "/forks"), hiddenFrom: "x", forbidden: [], allowed: "r", valid: { name: "f" } },
  { op: "generateRepo", method: "POST", path: (w) => repo(w, "pub", "/generate"), hidden: (w) => repo(w, "priv", "/generate"), hiddenFrom: "x", forbidden: [], allowed: "r", valid: { owner: "someone", name: "g" } },
  { op: "orgEdit", method: "PATCH", path: (w) => `/api/v1/orgs/${w.org}`, hidden: (w) => `/api/v1/orgs/${w.porg}`, hiddenFrom: "x", forbidden: [["m", "Must be an organization owner"], ["x", "Must be an organization owner"]], allowed: "o", valid: { description: "d" } },
  { op: "orgCreateHook", method: "POST", path: (w) => `/api/v1/orgs/${w.org}/hooks`, hidden: (w) => `/api/v1/orgs/${w.porg}/hooks`, hiddenFrom: "x", forbidden: [["m", "Must be an organization owner"]], allowed: "o", valid: { type: "gitea", config: { url: "https://example.com/hook", content_type: "json" } } },
  { op: "orgEditHook", method: "PATCH", path: (w) => `/api/v1/orgs/${w.org}/hooks/1`, hidden: (w) => `/api/v1/orgs/${w.porg}/hooks/1`, hiddenFrom: "x", forbidden: [["m", "Must be an organization owner"]], allowed: "o", valid: { active: true } },
  { op: "createOrgRepo", method: "POST", path: (w) => `/api/v1/orgs/${w.org}/repos`, hidden: (w) => `/api/v1/orgs/${w.porg}/repos`, hiddenFrom: "x", forbidden: [], allowed: "x", valid: { name: "nr" } },
  { op: "orgCreateTeam", method: "POST", path: (w) => `/api/v1/orgs/${w.org}/teams`, hidden: (w) => `/api/v1/orgs/${w.porg}/teams`, hiddenFrom: "x", forbidden: [["x", "Must be an organization member"], ["m", "Must be an organization owner"]], allowed: "o", valid: { name: "t", permission: "read", units: ["repo.code"] } },
  { op: "orgEditTeam", method: "PATCH", path: (w) => `/api/v1/teams/${w.otherTeam}`, hidden: (w) => `/api/v1/teams/${w.hiddenTeam}`, hiddenFrom: "x", forbidden: [["m", "Must be a team member"]], allowed: "o", valid: { name: "renamed" } },
  { op: "userCreateToken", method: "POST", path: (w) => `/api/v1/users/${w.o.name}/tokens`, hidden: (w) => `/api/v1/users/${w.p.name}/tokens`, hiddenFrom: "xBasic", forbidden: [["xBasic", "doer should be the site admin or be same as the contextUser"]], allowed: "oBasic", valid: { name: "n", scopes: ["read:user"] } },
  { op: "adminEditUser", method: "PATCH", path: (w) => `/api/v1/admin/users/${w.x.name}`, hidden: () => "/api/v1/admin/users/no-such-user", hiddenFrom: "admin", forbidden: [], allowed: "admin", valid: { source_id: 0, login_name: "x" } },
];

/** Routes Gitea binds before any guard of theirs (nothing in the path, or the check is in the handler). */
const BINDS_FIRST = ["adminCreateUser", "userAddEmail", "userDeleteEmail", "orgCreate", "createCurrentUserRepo", "createOrgRepoDeprecated"];

/** Invalid input of every kind a route refuses when it binds, with the 422 message it gets. */
const INVALID: { kind: string; init: { headers?: Record<string, string>; body: string }; message: string }[] = [
  { kind: "a JSON array", init: { headers: { "Content-Type": "application/json" }, body: "[]" }, message: "[]: TypeError: expected object" },
  { kind: "malformed JSON", init: { headers: { "Content-Type": "application/json" }, body: "{not json" }, message: "[Body]: DeserializationError: Malformed JSON in request body" },
  { kind: "a NUL character", init: { headers: { "Content-Type": "application/json" }, body: '{"name":"a\\u0000"}' }, message: "[Name]: invalid character NUL" },
  { kind: "a body that is not JSON", init: { headers: { "Content-Type": "text/plain" }, body: "name=x" }, message: "[]: Unsupported Content-Type" },
];

beforeAll(async () => {
  t = await testApp();
  const [o, r, x, p, admin] = await Promise.all([seedUser(t.db), seedUser(t.db), seedUser(t.db), seedUser(t.db, { visibility: 2 }), seedUser(t.db, { admin: true })]);
  const m = await seedUser(t.db);
  const oTok = await o.token();
  await apiRepo(t, oTok, { name: "pub", auto_init: true });
  await apiRepo(t, oTok, { name: "priv", auto_init: true, private: true });
  await addCollaborator(t, oTok, `${o.name}/pub`, r, "read");
  const org = await seedOrg(t, o);
  const porg = await seedOrg(t, o, { visibility: 2 });
  const team = await seedMember(t, org, m);
  const otherTeam = await seedTeam(t, org, { visibility: "public" });
  const hiddenTeam = await seedTeam(t, porg);
  const auth = {
    o: token(oTok),
    r: token(await r.token()),
    x: token(await x.token()),
    m: token(await m.token()),
    admin: token(await admin.token()),
    oBasic: basic(o.name, o.password),
    xBasic: basic(x.name, x.password),
  };
  w = { o, r, x, m, p, admin, org: org.name, porg: porg.name, team: team.id, otherTeam: otherTeam.id, hiddenTeam: hiddenTeam.id, auth };
});
afterAll(() => t.close());

const send = (method: string, path: string, headers: Record<string, string>, init: { headers?: Record<string, string>; body: string }) =>
  t.request(path, { method, headers: { ...headers, ...init.headers }, body: init.body });
const json = (body: unknown) => ({ headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

async function answer(res: Response) {
  const body = await res.json();
  return { status: res.status, message: body.message as string };
}

describe("Gitea's order: a route's guards before its body is bound", () => {
  it("every route with a body is either guarded here or binds first in Gitea too", async () => {
    const doc: { paths: Record<string, Record<string, { operationId: string; requestBody?: unknown }>> } = await (await t.request("/openapi3.v1.json")).json();
    const withBody = Object.values(doc.paths).flatMap((ops) => Object.values(ops).filter((op) => op.requestBody).map((op) => op.operationId));
    expect(withBody.sort()).toEqual([...CASES.map((c) => c.op), ...BINDS_FIRST].sort());
  });

  for (const c of CASES) {
    describe(c.op, () => {
      it("a resource the caller may not see answers as a missing one (404) whatever the body, in one round trip", async () => {
        for (const bad of [...INVALID, { kind: "a valid body", init: json(c.valid), message: "" }]) {
          const res = await send(c.method, c.hidden(w), w.auth[c.hiddenFrom]!, bad.init);
          expect(await answer(res), `${bad.kind}`).toEqual({ status: 404, message: NOT_FOUND });
          expect(roundTrips(res)).toBe(1);
        }
      });

      it.skipIf(c.forbidden.length === 0)("a caller the guards refuse gets their 403 whatever the body — the same as for a valid one", async () => {
        for (const [caller, message] of c.forbidden) {
          for (const bad of [...INVALID, { kind: "a valid body", init: json(c.valid), message: "" }]) {
            const res = await send(c.method, c.path(w), w.auth[caller]!, bad.init);
            expect(await answer(res), `${caller}, ${bad.kind}`).toEqual({ status: 403, message });
          }
        }
      });

      it("a caller the guards let through gets the 422 of its body", async () => {
        for (const bad of INVALID) {
          const res = await send(c.method, c.path(w), w.auth[c.allowed]!, bad.init);
          expect(await answer(res), bad.kind).toEqual({ status: 422, message: bad.message });
        }
      });
    });
  }

  it("a route that binds first still checks credentials and scopes before the body (401/403 over 422)", async () => {
    const res = await send("POST", "/api/v1/user/repos", token("0".repeat(40)), { headers: { "Content-Type": "application/json" }, body: "{not json" });
    expect(await answer(res)).toEqual({ status: 401, message: "invalid username, password or token" });
    const nul = await send("POST", "/api/v1/orgs", token(await w.m.token(["read:user"])), { headers: { "Content-Type": "application/json" }, body: '{"username":"a\\u0000"}' });
    expect(await answer(nul)).toEqual({ status: 403, message: "token does not have at least one of required scope(s), required=[write:organization], token scope=read:user" });
  });

  it("a route without a body never reads one: a malformed body does not refuse it — but a DELETE refuses another route's body (lib/context.ts)", async () => {
    // PUT /teams/{id}/members/{username} takes no body
    const res = await send("PUT", `/api/v1/teams/${w.team}/members/${w.m.name}`, w.auth.admin!, { headers: { "Content-Type": "application/json" }, body: "{not json" });
    expect(res.status).toBe(204);
    // Gitea's DeleteLabel answers 204 for a label that is not there, whatever body came along…
    const junk = await send("DELETE", `/api/v1/repos/${w.o.name}/pub/labels/999999`, w.auth.o!, { headers: { "Content-Type": "application/json" }, body: "{not json" });
    expect(junk.status).toBe(204);
    // …but an object with members is another route's body here (lib/context.ts)
    const body = JSON.stringify({ name: "x" });
    const del = await send("DELETE", `/api/v1/repos/${w.o.name}/pub/labels/999999`, w.auth.o!, { headers: { "Content-Type": "application/json" }, body });
    expect(await answer(del)).toEqual({ status: 422, message: "[Body]: this request takes no body" });
    // an outsider learns nothing from it: a private repository answers as one that does not exist
    const hidden = await send("DELETE", `/api/v1/repos/${w.o.name}/priv/labels/999999`, w.auth.x!, { headers: { "Content-Type": "application/json" }, body });
    const missing = await send("DELETE", `/api/v1/repos/${w.o.name}/no-such-repo/labels/999999`, w.auth.x!, { headers: { "Content-Type": "application/json" }, body });
    expect(await answer(hidden)).toEqual(await answer(missing));
  });

  it("a query refusal (NUL) waits for the route's guards too", async () => {
    const res = await t.request(`${repo(w, "priv", "/labels")}?x=%00`, { method: "POST", headers: w.auth.x!, json: { name: "bug", color: "#ff0000" } });
    expect(await answer(res)).toEqual({ status: 404, message: NOT_FOUND });
    const mine = await t.request(`${repo(w, "pub", "/labels")}?x=%00`, { method: "POST", headers: w.auth.o!, json: { name: "bug", color: "#ff0000" } });
    expect(await answer(mine)).toEqual({ status: 422, message: "[X]: invalid character NUL" });
  });
});
