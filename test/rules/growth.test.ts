/**
 * Flat growth (issue 9 B.5), as work rather than time: the statements a hot read sends cost the
 * same number of SQLite virtual machine operations (`sqlite_stmt.nstep`, summed over every statement
 * of the request) however many accounts and repositories there are that the caller does not reach.
 * A full scan, a walk that reads past its page, a count that reads every row, or a permission test
 * run per repository of the instance each add steps for every row added; `bench:scale` times the
 * same routes at 1,000 / 10,000 / 100,000 repositories, this holds the rule in `npm test` exactly
 * (the counts are deterministic: the same statements over the same rows take the same steps).
 *
 * The strangers' repositories are named to sort after the viewer's world: a list walked in name
 * order (a search without a keyword) stops after its page, and rows after it are never read. Rows
 * the caller may not see placed before the page are walked past — that cost follows how densely
 * the visible ones lie, not how many rows there are; the narrow filters walk partial indexes for
 * that reason (search-plans.test.ts pins those plans).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCollaborator, addTeamMember, apiRepo, seedMember, seedOrg, seedTeam, seedUser, testApp, token, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let viewer: SeededUser;
let viewerTok = "";
let org: SeededOrg;
let teamId = 0;
let publicRepo = "";
let publicRepoId = 0;
let collaborator: SeededUser;
let adminTok = "";
let friendTok = "";
let owners: { token: string; org?: string }[] = [];

/** The VM operations of every statement the request ran (the counters are cumulative per prepared statement). */
async function stepsOf(path: string, headers: Record<string, string>, init: { method?: string; json?: unknown; status?: number } = {}) {
  const total = async () => {
    // The trigram index's own reads (FTS5's statements on its shadow tables, `'main'.'repo_search_idx'`
    // and the like) are left out: they look up its segments, whose number FTS5 keeps logarithmic by
    // merging them, so they move up and down as it merges; bench:scale times the keyword search whole.
    const [rows] = await t.driver.batch([{ text: "SELECT COALESCE(SUM(nstep), 0) FROM sqlite_stmt WHERE sql NOT LIKE '%sqlite_stmt%' AND sql NOT LIKE '%''main''.%'", args: [] }], "read");
    return Number((rows![0] as unknown[])[0]);
  };
  const before = await total();
  const res = await t.request(path, { headers, method: init.method, json: init.json });
  expect(res.status, path).toBe(init.status ?? 200);
  await res.arrayBuffer();
  return (await total()) - before;
}

interface Route {
  name: string;
  path: () => string;
  signIn?: boolean;
}
const ROUTES: Route[] = [
  { name: "GET /repos/{owner}/{repo}", path: () => `/api/v1/repos/${publicRepo}` },
  { name: "GET /user", path: () => "/api/v1/user", signIn: true },
  { name: "GET /repos/search?q=", path: () => "/api/v1/repos/search?q=needle" },
  { name: "GET /repos/search?q=a,b", path: () => "/api/v1/repos/search?q=needle,haystack" },
  { name: "GET /repos/search?q={owner}/{repo}", path: () => `/api/v1/repos/search?q=${viewer.name}/n` },
  { name: "GET /repos/search (no keyword)", path: () => "/api/v1/repos/search?limit=5" },
  { name: "GET /repos/search?is_private=true", path: () => "/api/v1/repos/search?is_private=true&limit=5" },
  { name: "GET /repos/search?template=true", path: () => "/api/v1/repos/search?template=true&limit=5" },
  { name: "GET /repos/search?uid={viewer}", path: () => `/api/v1/repos/search?uid=${viewer.id}` },
  { name: "GET /repos/search?mode=collaborative", path: () => "/api/v1/repos/search?mode=collaborative", signIn: true },
  { name: "GET /user/repos", path: () => "/api/v1/user/repos", signIn: true },
  { name: "GET /orgs/{org}/repos", path: () => `/api/v1/orgs/${org.name}/repos` },
  { name: "GET /teams/{id}/repos", path: () => `/api/v1/teams/${teamId}/repos`, signIn: true },
  { name: "GET /users/{username}/activities/feeds", path: () => `/api/v1/users/${viewer.name}/activities/feeds` },
  { name: "GET /orgs/{org}/activities/feeds", path: () => `/api/v1/orgs/${org.name}/activities/feeds` },
  { name: "GET /repos/{owner}/{repo}/activities/feeds", path: () => `/api/v1/repos/${publicRepo}/activities/feeds` },
  { name: "GET /users/search?q=", path: () => `/api/v1/users/search?q=${viewer.name}` },
  { name: "GET /users/search (no keyword)", path: () => "/api/v1/users/search?limit=5" },
  // Every other read of the API over accounts, organizations, teams and repositories.
  { name: "GET /users/{username}", path: () => `/api/v1/users/${viewer.name}` },
  { name: "GET /users/{username}/repos", path: () => `/api/v1/users/${viewer.name}/repos` },
  { name: "GET /repositories/{id}", path: () => `/api/v1/repositories/${publicRepoId}`, signIn: true },
  { name: "GET /repos/{owner}/{repo}/forks", path: () => `/api/v1/repos/${publicRepo}/forks` },
  { name: "GET /repos/{owner}/{repo}/labels", path: () => `/api/v1/repos/${publicRepo}/labels` },
  { name: "GET /repos/{owner}/{repo}/collaborators", path: () => `/api/v1/repos/${publicRepo}/collaborators`, signIn: true },
  { name: "GET /repos/{owner}/{repo}/assignees", path: () => `/api/v1/repos/${publicRepo}/assignees`, signIn: true },
  { name: "GET /repos/{owner}/{repo}/reviewers", path: () => `/api/v1/repos/${publicRepo}/reviewers`, signIn: true },
  { name: "GET /orgs/{org}", path: () => `/api/v1/orgs/${org.name}` },
  { name: "GET /orgs/{org}/members", path: () => `/api/v1/orgs/${org.name}/members`, signIn: true },
  { name: "GET /orgs/{org}/teams", path: () => `/api/v1/orgs/${org.name}/teams`, signIn: true },
  { name: "GET /orgs/{org}/teams/search", path: () => `/api/v1/orgs/${org.name}/teams/search?q=team`, signIn: true },
  { name: "GET /user/orgs", path: () => "/api/v1/user/orgs", signIn: true },
  { name: "GET /user/teams", path: () => "/api/v1/user/teams", signIn: true },
  { name: "GET /user/emails", path: () => "/api/v1/user/emails", signIn: true },
  { name: "GET /user/blocks", path: () => "/api/v1/user/blocks", signIn: true },
  { name: "GET /teams/{id}", path: () => `/api/v1/teams/${teamId}`, signIn: true },
  { name: "GET /teams/{id}/members", path: () => `/api/v1/teams/${teamId}/members`, signIn: true },
  { name: "GET /teams/{id}/activities/feeds", path: () => `/api/v1/teams/${teamId}/activities/feeds`, signIn: true },
];

/** Steps of every route for the viewer and (where it may) an anonymous caller. */
async function measure() {
  const out = new Map<string, number>();
  for (const r of ROUTES) {
    out.set(`${r.name} as the viewer`, await stepsOf(r.path(), token(viewerTok)));
    if (!r.signIn) out.set(`${r.name} anonymously`, await stepsOf(r.path(), {}));
  }
  return out;
}

let unique = 0;
/** Names that sort after every repository of the viewer's world: lists by name end their page before them. */
const later = () => `zz-${++unique}`;

/**
 * Accounts the viewer does not reach, each with a repository of every kind: users with public and
 * private repositories (templates among them) and a fork, a public and a private organization with
 * repositories and a team covering all of them.
 */
async function strangers(users: number) {
  const made: { token: string; org?: string }[] = [];
  for (let i = 0; i < users; i++) {
    const tok = await (await seedUser(t.db)).token();
    const pub = await apiRepo(t, tok, { name: later() });
    const forker = await (await seedUser(t.db)).token();
    expect((await t.request(`/api/v1/repos/${pub.full_name}/forks`, { method: "POST", headers: token(forker), json: {} })).status).toBe(202);
    made.push({ token: tok });
  }
  for (const visibility of [0, 2]) {
    const o = await seedOrg(t, await seedUser(t.db), { visibility });
    await seedMember(t, o, await seedUser(t.db), { includesAll: true });
    made.push({ token: o.ownerToken, org: o.name });
  }
  return made;
}

/** More repositories of accounts the viewer does not reach, and no new account. */
async function moreRepositories(owners: { token: string; org?: string }[], each: number) {
  for (const o of owners) {
    for (let i = 0; i < each; i++) {
      await apiRepo(t, o.token, { name: later(), private: i % 2 === 1, template: i % 3 === 0 }, o.org);
    }
  }
}

beforeAll(async () => {
  t = await testApp();
  viewer = await seedUser(t.db);
  viewerTok = await viewer.token();
  const friend = await seedUser(t.db);
  collaborator = friend;
  adminTok = await (await seedUser(t.db, { admin: true })).token();
  friendTok = await friend.token();
  // The viewer's world: own repositories (one matching the keyword), a collaboration, an
  // organization with a team of one repository and a team covering all of them.
  const mine = await apiRepo(t, viewerTok, { name: "needle-mine" });
  publicRepo = mine.full_name;
  publicRepoId = mine.id;
  await apiRepo(t, viewerTok, { name: "mine-private", private: true });
  await apiRepo(t, friendTok, { name: "friends", private: true });
  await addCollaborator(t, friendTok, `${friend.name}/friends`, viewer, "read");
  org = await seedOrg(t, friend);
  await apiRepo(t, org.ownerToken, { name: "needle-org" }, org.name);
  await apiRepo(t, org.ownerToken, { name: "org-private", private: true }, org.name);
  const team = await seedTeam(t, org);
  teamId = team.id;
  await addTeamMember(t, org, team.id, viewer);
  expect((await t.request(`/api/v1/teams/${team.id}/repos/${org.name}/org-private`, { method: "PUT", headers: token(org.ownerToken) })).status).toBe(204);
  const hidden = await seedOrg(t, friend, { visibility: 2 });
  await apiRepo(t, hidden.ownerToken, { name: "hidden-org" }, hidden.name);
  await seedMember(t, hidden, viewer, { includesAll: true });
  // Five templates of the viewer's own: the template list's page is full before strangers come.
  for (let i = 0; i < 5; i++) await apiRepo(t, viewerTok, { name: `tpl-${i}`, template: true });
  // Strangers' repositories of every kind already there: the classes of `repo_count` (at most
  // 4 × 32 rows, read whole by the search's total) exist before the counting starts.
  owners = await strangers(3);
  await moreRepositories(owners, 6);
});
afterAll(() => t.close());

/** The routes whose steps differ between two measurements. */
const grownBetween = (before: Map<string, number>, after: Map<string, number>) =>
  [...before].filter(([k, n]) => after.get(k) !== n).map(([k, n]) => `${k}: ${n} → ${after.get(k)} steps`);

describe("flat growth: a hot read costs the same however much there is that the caller does not reach", () => {
  it("more repositories of other owners (public, private, templates, in public and private organizations): not one more step on any route", async () => {
    const before = await measure();
    await moreRepositories(owners, 6);
    expect(grownBetween(before, await measure())).toEqual([]);
  });

  it("more users and organizations, with teams, members, repositories and forks: not one more step on any route", async () => {
    const before = await measure();
    await strangers(8);
    expect(grownBetween(before, await measure())).toEqual([]);
  });

  it("the writes of a repository's life — and of an organization's, a team's and a user's —: not one more step with more of everything", async () => {
    let round = 0;
    const life = async () => {
      const name = `life-${++round}`;
      const h = token(viewerTok);
      const friendH = token(friendTok);
      const at = `/api/v1/repos/${viewer.name}/${name}`;
      const out = new Map<string, number>();
      const step = async (what: string, path: string, init: { method: string; json?: unknown; status?: number }, headers = h) => out.set(what, await stepsOf(path, headers, init));
      // A repository: created, edited, renamed, labelled, shared, forked, used as a template, deleted.
      await step("POST /user/repos", "/api/v1/user/repos", { method: "POST", json: { name, private: true, template: true }, status: 201 });
      await step("PATCH /repos/{owner}/{repo}", at, { method: "PATCH", json: { description: "the same length" } });
      await step("PATCH /repos/{owner}/{repo} (private → public)", at, { method: "PATCH", json: { private: false } });
      const label = await t.request(`${at}/labels`, { method: "POST", headers: h, json: { name: "bug", color: "#ee0701" } });
      const labelId = ((await label.json()) as { id: number }).id;
      await step("PATCH /repos/{owner}/{repo}/labels/{id}", `${at}/labels/${labelId}`, { method: "PATCH", json: { name: "bugs" } });
      await step("DELETE /repos/{owner}/{repo}/labels/{id}", `${at}/labels/${labelId}`, { method: "DELETE", status: 204 });
      await step("PUT /repos/{owner}/{repo}/collaborators/{collaborator}", `${at}/collaborators/${collaborator.name}`, { method: "PUT", json: { permission: "write" }, status: 204 });
      await step("DELETE /repos/{owner}/{repo}/collaborators/{collaborator}", `${at}/collaborators/${collaborator.name}`, { method: "DELETE", status: 204 });
      await step("POST /repos/{owner}/{repo}/forks", `${at}/forks`, { method: "POST", json: {}, status: 202 }, friendH);
      await step("POST /repos/{template_owner}/{template_repo}/generate", `${at}/generate`, { method: "POST", json: { owner: collaborator.name, name: `gen-${round}`, git_content: false, labels: true }, status: 201 }, friendH);
      await step("PATCH /repos/{owner}/{repo} (rename)", at, { method: "PATCH", json: { name: `${name}-x` } });
      await step("DELETE /repos/{owner}/{repo}", `${at}-x`, { method: "DELETE", status: 204 });
      await stepsOf(`/api/v1/repos/${collaborator.name}/${name}`, friendH, { method: "DELETE", status: 204 });
      await stepsOf(`/api/v1/repos/${collaborator.name}/gen-${round}`, friendH, { method: "DELETE", status: 204 });
      // An organization: edited, a hook, a team with a member and a repository, a member removed, deleted.
      const orgName = `life-org-${round}`;
      const org = `/api/v1/orgs/${orgName}`;
      await step("POST /orgs", "/api/v1/orgs", { method: "POST", json: { username: orgName }, status: 201 });
      await step("PATCH /orgs/{org}", org, { method: "PATCH", json: { description: "the same length" } });
      await step("POST /orgs/{org}/repos", `${org}/repos`, { method: "POST", json: { name: "r" }, status: 201 });
      const hook = await t.request(`${org}/hooks`, { method: "POST", headers: h, json: { type: "gitea", config: { url: "https://hooks.example/x", content_type: "json" }, events: ["repository"], active: false } });
      expect(hook.status).toBe(201);
      const hookId = ((await hook.json()) as { id: number }).id;
      await step("PATCH /orgs/{org}/hooks/{id}", `${org}/hooks/${hookId}`, { method: "PATCH", json: { active: false, events: ["create"] } });
      await step("DELETE /orgs/{org}/hooks/{id}", `${org}/hooks/${hookId}`, { method: "DELETE", status: 204 });
      const team = await t.request(`${org}/teams`, { method: "POST", headers: h, json: { name: "t", permission: "read", units: ["repo.code"], includes_all_repositories: false } });
      const teamId = ((await team.json()) as { id: number }).id;
      await step("PATCH /teams/{id}", `/api/v1/teams/${teamId}`, { method: "PATCH", json: { name: "t", description: "the same length" } });
      await step("PUT /teams/{id}/members/{username}", `/api/v1/teams/${teamId}/members/${collaborator.name}`, { method: "PUT", status: 204 });
      await step("PUT /teams/{id}/repos/{org}/{repo}", `/api/v1/teams/${teamId}/repos/${orgName}/r`, { method: "PUT", status: 204 });
      await step("DELETE /teams/{id}/repos/{org}/{repo}", `/api/v1/teams/${teamId}/repos/${orgName}/r`, { method: "DELETE", status: 204 });
      await step("DELETE /teams/{id}/members/{username}", `/api/v1/teams/${teamId}/members/${collaborator.name}`, { method: "DELETE", status: 204 });
      await stepsOf(`/api/v1/teams/${teamId}/members/${collaborator.name}`, h, { method: "PUT", status: 204 });
      await step("DELETE /orgs/{org}/members/{username}", `${org}/members/${collaborator.name}`, { method: "DELETE", status: 204 });
      await step("DELETE /teams/{id}", `/api/v1/teams/${teamId}`, { method: "DELETE", status: 204 });
      await stepsOf(`/api/v1/repos/${orgName}/r`, h, { method: "DELETE", status: 204 });
      await step("DELETE /orgs/{org}", org, { method: "DELETE", status: 204 });
      // The caller's e-mail addresses and blocks; a user with a repository, purged.
      await step("POST /user/emails", "/api/v1/user/emails", { method: "POST", json: { emails: [`life-${round}@mail.example`] }, status: 201 });
      await step("DELETE /user/emails", "/api/v1/user/emails", { method: "DELETE", json: { emails: [`life-${round}@mail.example`] }, status: 204 });
      const doomed = await seedUser(t.db, { name: `life-user-${round}` });
      await apiRepo(t, await doomed.token(), { name: "r" });
      await step("PUT /user/blocks/{username}", `/api/v1/user/blocks/${doomed.name}`, { method: "PUT", status: 204 });
      await step("DELETE /user/blocks/{username}", `/api/v1/user/blocks/${doomed.name}`, { method: "DELETE", status: 204 });
      await step("DELETE /admin/users/{username}?purge=true", `/api/v1/admin/users/${doomed.name}?purge=true`, { method: "DELETE", status: 204 }, token(adminTok));
      return out;
    };
    await life();
    const before = await life();
    await strangers(4);
    await moreRepositories(owners, 3);
    expect(grownBetween(before, await life())).toEqual([]);
  });
});
