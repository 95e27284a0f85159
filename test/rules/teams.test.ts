/** Teams: the spec's team rules 1–7 and the visibility matrix. */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orgUser, repository, team, teamRepo, teamUnit, teamUser, user, userBlocking } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, apiRepo, interleavedWrites, roundTrips, seedMember, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type SeededOrg, type TestApp } from "../fixtures/app.ts";
import { giteaShapeErrors } from "../fixtures/gitea-schema.ts";

let t: TestApp;
let owner: SeededUser;
let ownerTok: string;
let org: SeededOrg;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  ownerTok = await owner.token();
  org = await seedOrg(t, owner);
});
afterAll(() => t.close());

const createTeam = (json: unknown, tk = ownerTok, o = org.name) => t.request(`/api/v1/orgs/${o}/teams`, { method: "POST", headers: token(tk), json });

describe("rule 3: create", () => {
  it("units at the parsed level; Gitea's Team JSON with organization; visibility defaults to private (2 round trips)", async () => {
    const res = await createTeam({ name: uniq("dev"), permission: "write", units: ["repo.code", "repo.issues", "repo.ext_wiki"] });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const body = await res.json();
    expect(giteaShapeErrors("Team", body)).toEqual([]);
    expect(body).toMatchObject({ permission: "write", visibility: "private", units_map: { "repo.code": "write", "repo.issues": "write", "repo.ext_wiki": "read" } });
    expect(body.organization.name).toBe(org.name);
  });

  it("fields the form leaves out take Gitea's defaults: no description, no repository creation, not every repository (stored too)", async () => {
    const res = await createTeam({ name: uniq("bare"), permission: "read", units: ["repo.code"] });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({ description: "", can_create_org_repo: false, includes_all_repositories: false });
    const [row] = await t.db.select().from(team).where(eq(team.id, body.id));
    expect(row).toMatchObject({ description: "", canCreateOrgRepo: false, includesAllRepositories: false });
  });

  it("units_map takes precedence; the team level is the minimum non-none unit level", async () => {
    const body = await (await createTeam({ name: uniq("map"), permission: "admin", units: ["repo.wiki"], units_map: { "repo.code": "write", "repo.issues": "read", "repo.pulls": "none" } })).json();
    expect(body.permission).toBe("admin");
    const below = await (await createTeam({ name: uniq("map2"), permission: "write", units_map: { "repo.code": "write", "repo.issues": "read" } })).json();
    expect(below.permission).toBe("read");
    expect(below.units_map).toEqual({ "repo.code": "write", "repo.issues": "read" });
  });

  it("admin level: every unit at admin except the external ones (read); units_map lists all at admin", async () => {
    const body = await (await createTeam({ name: uniq("adm"), permission: "admin" })).json();
    expect(body.permission).toBe("admin");
    expect(body.units_map).toEqual(Object.fromEntries(["repo.code", "repo.issues", "repo.pulls", "repo.releases", "repo.wiki", "repo.ext_wiki", "repo.ext_issues", "repo.projects", "repo.packages", "repo.actions"].map((k) => [k, "admin"])));
    const rows = await t.db.select().from(teamUnit).where(eq(teamUnit.teamId, body.id));
    expect(rows.find((r) => r.type === 6)?.accessMode).toBe(1);
    expect(rows.find((r) => r.type === 1)?.accessMode).toBe(3);
  });

  it("below admin without units or units_map → 500 `units permission should not be empty`", async () => {
    const res = await createTeam({ name: uniq("none"), permission: "read" });
    expect(res.status).toBe(500);
    expect((await res.json()).message).toBe("units permission should not be empty");
  });

  it("a duplicate name in the organization (any case) → 422; unknown visibility normalizes to private", async () => {
    const name = uniq("dup");
    await createTeam({ name, permission: "read", units: ["repo.code"] });
    await expectRefusal(createTeam({ name: name.toUpperCase(), permission: "read", units: ["repo.code"] }), 422, `team already exists [org_id: ${org.id}, name: ${name.toUpperCase()}]`);
    expect((await (await createTeam({ name: uniq("v"), permission: "read", units: ["repo.code"], visibility: "galactic" })).json()).visibility).toBe("private");
  });

  it("only organization owners create teams (403 for members, 404 for a hidden org)", async () => {
    const m = await seedUser(t.db);
    await seedMember(t, org, m);
    await expectRefusal(createTeam({ name: uniq("x"), permission: "read", units: ["repo.code"] }, await m.token()), 403, "Must be an organization owner");
    const hidden = await seedOrg(t, owner, { visibility: 2 });
    const outsider = await seedUser(t.db);
    await expectRefusal(createTeam({ name: uniq("x"), permission: "read", units: ["repo.code"] }, await outsider.token(), hidden.name), 404, NOT_FOUND);
  });
});

describe("team list order (Gitea's SearchTeam: Owners first, then lower-cased name)", () => {
  it("GET /orgs/{org}/teams, /orgs/{org}/teams/search and /user/teams put the Owners team first, then order by lower-cased name (not id)", async () => {
    const me = await seedUser(t.db);
    const o = await seedOrg(t, me);
    for (const name of ["zulu", "Bravo", "alpha"]) {
      const tm = await (await createTeam({ name, permission: "read", units: ["repo.code"] }, o.ownerToken, o.name)).json();
      expect((await t.request(`/api/v1/teams/${tm.id}/members/${me.name}`, { method: "PUT", headers: token(o.ownerToken) })).status).toBe(204);
    }
    const want = ["Owners", "alpha", "Bravo", "zulu"];
    const names = (list: { name: string }[]) => list.map((x) => x.name);
    expect(names(await (await t.request(`/api/v1/orgs/${o.name}/teams`, { headers: token(o.ownerToken) })).json())).toEqual(want);
    expect(names((await (await t.request(`/api/v1/orgs/${o.name}/teams/search`, { headers: token(o.ownerToken) })).json()).data)).toEqual(want);
    expect(names(await (await t.request("/api/v1/user/teams", { headers: token(o.ownerToken) })).json())).toEqual(want);
  });
});

describe("rule 1: visibility filtering of lists, search and GET /teams/{id}", () => {
  let member: SeededUser;
  let stranger: SeededUser;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    member = await seedUser(t.db);
    stranger = await seedUser(t.db);
    for (const v of ["private", "limited", "public"]) {
      ids[v] = (await (await createTeam({ name: `${v}-${uniq("t")}`, permission: "read", units: ["repo.code"], visibility: v, description: `the ${v} team` })).json()).id;
    }
    ids.mine = (await (await createTeam({ name: uniq("mine"), permission: "read", units: ["repo.code"] })).json()).id;
    await t.request(`/api/v1/teams/${ids.mine}/members/${member.name}`, { method: "PUT", headers: token(ownerTok) });
  });

  const listed = async (tk: string, path = `/api/v1/orgs/${org.name}/teams?limit=50`) => {
    const res = await t.request(path, { headers: token(tk) });
    const body = await res.json();
    const list = (Array.isArray(body) ? body : body.data) as { id: number; organization: unknown }[];
    return { ids: list.map((x) => x.id), res, list };
  };

  it("owners see every team; teams are listed without organization; X-Total-Count matches (1 round trip)", async () => {
    const { ids: seen, res, list } = await listed(ownerTok);
    const all = (await t.db.select({ id: team.id }).from(team).where(eq(team.orgId, org.id))).map((r) => r.id);
    expect([...seen].sort((a, b) => a - b)).toEqual(all.sort((a, b) => a - b));
    for (const id of Object.values(ids)) expect(seen).toContain(id);
    expect(list.map((x) => x.organization)).toEqual(seen.map(() => null));
    expect(res.headers.get("X-Total-Count")).toBe(String(seen.length));
    expect(roundTrips(res)).toBe(1);
  });

  it("members see their teams plus limited and public ones, never other private teams", async () => {
    const { ids: seen } = await listed(await member.token());
    // Every limited and public team of the organization, and the member's own.
    const rows = await t.db.select({ id: team.id, visibility: team.visibility }).from(team).where(eq(team.orgId, org.id));
    const expected = rows.filter((r) => r.visibility !== "private" || r.id === ids.mine).map((r) => r.id);
    expect([...seen].sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
    expect(seen).toEqual(expect.arrayContaining([ids.mine, ids.limited, ids.public]));
  });

  it("non-members see public teams only; GET /teams/{id} follows the same rule (404 otherwise)", async () => {
    const tk = await stranger.token();
    expect((await listed(tk)).ids).toEqual([ids.public]);
    expect((await t.request(`/api/v1/teams/${ids.public}`, { headers: token(tk) })).status).toBe(200);
    for (const v of ["private", "limited", "mine"]) await expectRefusal(t.request(`/api/v1/teams/${ids[v]}`, { headers: token(tk) }), 404, NOT_FOUND, v);
    expect((await t.request(`/api/v1/teams/${ids.limited}`, { headers: token(await member.token()) })).status).toBe(200);
    await expectRefusal(t.request("/api/v1/teams/not-a-number", { headers: token(tk) }), 404, NOT_FOUND);
    // the id as strconv.ParseInt reads it: a leading + and zeros are the same id; a sign of - or a float is none
    expect((await t.request(`/api/v1/teams/+${ids.public}`, { headers: token(tk) })).status).toBe(200);
    expect((await t.request(`/api/v1/teams/00${ids.public}`, { headers: token(tk) })).status).toBe(200);
    for (const v of [`-${ids.public}`, `${ids.public}.0`, `++${ids.public}`]) await expectRefusal(t.request(`/api/v1/teams/${v}`, { headers: token(tk) }), 404, NOT_FOUND, v);
  });

  it("search filters the same way, matches descriptions by default, answers {ok,data}", async () => {
    const found = await listed(await stranger.token(), `/api/v1/orgs/${org.name}/teams/search?q=team`);
    expect(found.ids).toEqual([ids.public]);
    const all = await listed(ownerTok, `/api/v1/orgs/${org.name}/teams/search?q=the%20limited`);
    expect(all.ids).toEqual([ids.limited]);
    const noDesc = await listed(ownerTok, `/api/v1/orgs/${org.name}/teams/search?q=the%20limited&include_desc=false`);
    expect(noDesc.ids).toEqual([]);
  });

  it("search ignores spaces around the keyword (Gitea's FormTrim)", async () => {
    expect((await listed(ownerTok, `/api/v1/orgs/${org.name}/teams/search?q=%20the%20limited%20`)).ids).toEqual([ids.limited]);
  });

  it("rule 2: GET /user/teams lists the caller's teams with their organization", async () => {
    const res = await t.request("/api/v1/user/teams", { headers: token(await member.token()) });
    const list = await res.json();
    expect(list.map((x: { id: number }) => x.id)).toEqual([ids.mine]);
    expect(list[0].organization.name).toBe(org.name);
    expect(res.headers.get("X-Total-Count")).toBe("1");
    expect(roundTrips(res)).toBe(1);
  });
});

describe("rule 4: edit", () => {
  it("a team another request deleted between the edit's read and its write → 404 (not a 500)", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const o = await seedOrg(t2, await seedUser(t2.db));
    const tm = await (await t2.request(`/api/v1/orgs/${o.name}/teams`, { method: "POST", headers: token(o.ownerToken), json: { name: uniq("gone"), permission: "read", units: ["repo.code"] } })).json();
    w.beforeNextWrite("DELETE FROM team WHERE id = ?", [tm.id]);
    await expectRefusal(t2.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(o.ownerToken), json: { description: "late" } }), 404, NOT_FOUND);
    expect(await t2.db.select().from(team).where(eq(team.id, tm.id))).toEqual([]);
    t2.close();
  });

  it("an edit of a team deleted meanwhile writes no unit rows for it (no orphans, whatever the answer)", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const o = await seedOrg(t2, await seedUser(t2.db));
    const tm = await (await t2.request(`/api/v1/orgs/${o.name}/teams`, { method: "POST", headers: token(o.ownerToken), json: { name: uniq("gone"), permission: "read", units: ["repo.code"] } })).json();
    expect(await t2.db.select().from(teamUnit).where(eq(teamUnit.teamId, tm.id))).toHaveLength(1);
    // The team goes with its units, as a deletion does; then the edit that replaces the units runs.
    w.beforeNextWrite("DELETE FROM team_unit WHERE team_id = ?", [tm.id]);
    w.beforeNextWrite("DELETE FROM team WHERE id = ?", [tm.id]);
    await expectRefusal(t2.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(o.ownerToken), json: { permission: "write", units: ["repo.code", "repo.issues"] } }), 404, NOT_FOUND);
    expect(await t2.db.select().from(teamUnit).where(eq(teamUnit.teamId, tm.id))).toEqual([]);
    t2.close();
  });

  it("the Owners team keeps can_create_org_repo, its visibility and permission", async () => {
    const res = await t.request(`/api/v1/teams/${org.ownersTeamId}`, { method: "PATCH", headers: token(ownerTok), json: { can_create_org_repo: false, visibility: "public", permission: "read", description: "the bosses" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: "Owners", can_create_org_repo: true, visibility: "private", permission: "owner", description: "the bosses" });
  });

  it("permission and includes_all only with a non-empty permission; name only when non-empty", async () => {
    const tm = await (await createTeam({ name: uniq("e"), permission: "read", units: ["repo.code"] })).json();
    const a = await (await t.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(ownerTok), json: { includes_all_repositories: true, name: "" } })).json();
    expect(a).toMatchObject({ includes_all_repositories: false, name: tm.name });
    const b = await (await t.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(ownerTok), json: { permission: "write", units: ["repo.code", "repo.pulls"], includes_all_repositories: true, visibility: "limited" } })).json();
    expect(b).toMatchObject({ permission: "write", includes_all_repositories: true, visibility: "limited", units_map: { "repo.code": "write", "repo.pulls": "write" } });
  });

  it("non-owners get 404", async () => {
    const m = await seedUser(t.db);
    await seedMember(t, org, m);
    await expectRefusal(t.request(`/api/v1/teams/${org.ownersTeamId}`, { method: "PATCH", headers: token(await m.token()), json: { description: "x" } }), 404, NOT_FOUND);
  });
});

describe("members (rule 6) and delete", () => {
  it("GET /teams/{id}/members lists in Gitea's GetTeamMembers order: full name, then name", async () => {
    const tm = await (await createTeam({ name: uniq("ord"), permission: "read", units: ["repo.code"] })).json();
    const [a, b, c] = [await seedUser(t.db, { name: uniq("zz") }), await seedUser(t.db, { name: uniq("aa") }), await seedUser(t.db, { name: uniq("mm") })];
    // a: no full name; b: "Zed"; c: "Alice" → a, c, b (by name alone it would be b, c, a)
    await t.db.update(user).set({ fullName: "Zed" }).where(eq(user.id, b.id));
    await t.db.update(user).set({ fullName: "Alice" }).where(eq(user.id, c.id));
    for (const u of [a, b, c]) expect((await t.request(`/api/v1/teams/${tm.id}/members/${u.name}`, { method: "PUT", headers: token(ownerTok) })).status).toBe(204);
    const list = await (await t.request(`/api/v1/teams/${tm.id}/members`, { headers: token(ownerTok) })).json();
    expect(list.map((u: { login: string }) => u.login)).toEqual([a.name, c.name, b.name]);
  });

  it("PUT adds to the team and the organization; the member count follows; a blocked user → 403", async () => {
    const tm = await (await createTeam({ name: uniq("m"), permission: "read", units: ["repo.code"] })).json();
    const u = await seedUser(t.db);
    const res = await t.request(`/api/v1/teams/${tm.id}/members/${u.name}`, { method: "PUT", headers: token(ownerTok) });
    expect(res.status).toBe(204);
    expect(roundTrips(res)).toBe(2);
    expect(await t.db.select().from(orgUser).where(and(eq(orgUser.orgId, org.id), eq(orgUser.uid, u.id)))).toHaveLength(1);
    const list = await t.request(`/api/v1/teams/${tm.id}/members`, { headers: token(ownerTok) });
    expect(list.headers.get("X-Total-Count")).toBe("1");
    expect((await t.request(`/api/v1/teams/${tm.id}/members/${u.name}`, { headers: token(ownerTok) })).status).toBe(200);
    const blocked = await seedUser(t.db);
    await t.db.insert(userBlocking).values({ blockerId: org.id, blockeeId: blocked.id });
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}/members/${blocked.name}`, { method: "PUT", headers: token(ownerTok) }), 403, "user is blocked by the organization");
    // a block of a site admin counts for nothing (Gitea's IsUserBlockedBy)
    const admin = await seedUser(t.db, { admin: true });
    await t.db.insert(userBlocking).values({ blockerId: org.id, blockeeId: admin.id });
    expect((await t.request(`/api/v1/teams/${tm.id}/members/${admin.name}`, { method: "PUT", headers: token(ownerTok) })).status).toBe(204);
    expect((await t.request(`/api/v1/teams/${tm.id}/members/${u.name}`, { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    expect(await t.db.select().from(orgUser).where(and(eq(orgUser.orgId, org.id), eq(orgUser.uid, u.id)))).toEqual([]);
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}/members/${u.name}`, { headers: token(ownerTok) }), 404, NOT_FOUND);
  });

  it("a team's roster shows a concealed organization membership only to whom the organization's member list shows it: outsiders and public-only tokens see public members, as a non-member (404, counts included)", async () => {
    const tm = await (await createTeam({ name: uniq("pubroster"), permission: "read", units: ["repo.code"], visibility: "public" })).json();
    const [concealed, shown, fellow, stranger] = [await seedUser(t.db), await seedUser(t.db), await seedUser(t.db), await seedUser(t.db)];
    for (const u of [concealed, shown]) expect((await t.request(`/api/v1/teams/${tm.id}/members/${u.name}`, { method: "PUT", headers: token(ownerTok) })).status).toBe(204);
    await seedMember(t, org, fellow);
    await t.db.update(orgUser).set({ isPublic: true }).where(and(eq(orgUser.orgId, org.id), eq(orgUser.uid, shown.id)));
    const admin = await seedUser(t.db, { admin: true });
    const roster = async (tk: string) => {
      const res = await t.request(`/api/v1/teams/${tm.id}/members`, { headers: token(tk) });
      expect(res.status).toBe(200);
      return { names: ((await res.json()) as { login: string }[]).map((u) => u.login).sort(), total: res.headers.get("X-Total-Count") };
    };
    const all = { names: [concealed.name, shown.name].sort(), total: "2" };
    const publicOnes = { names: [shown.name], total: "1" };
    const strangerTok = await stranger.token();
    // the team itself is visible to the stranger (a public team)
    expect((await t.request(`/api/v1/teams/${tm.id}`, { headers: token(strangerTok) })).status).toBe(200);
    expect(await roster(strangerTok)).toEqual(publicOnes);
    expect(await roster(await fellow.token(["public-only", "read:organization", "read:user"]))).toEqual(publicOnes);
    expect(await roster(await admin.token(["public-only", "read:organization", "read:user"]))).toEqual(publicOnes);
    for (const tk of [await fellow.token(), ownerTok, await admin.token()]) expect(await roster(tk)).toEqual(all);
    // the single check: a concealed member answers as a user outside the team
    const outside = await t.request(`/api/v1/teams/${tm.id}/members/${stranger.name}`, { headers: token(strangerTok) });
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}/members/${concealed.name}`, { headers: token(strangerTok) }), 404, NOT_FOUND);
    expect(outside.status).toBe(404);
    expect((await t.request(`/api/v1/teams/${tm.id}/members/${shown.name}`, { headers: token(strangerTok) })).status).toBe(200);
    expect((await t.request(`/api/v1/teams/${tm.id}/members/${concealed.name}`, { headers: token(await fellow.token()) })).status).toBe(200);
  });

  it("the last owner cannot leave the Owners team; the Owners team cannot be deleted", async () => {
    await expectRefusal(t.request(`/api/v1/teams/${org.ownersTeamId}/members/${owner.name}`, { method: "DELETE", headers: token(ownerTok) }), 422, `user is the last member of owner team [uid: ${owner.id}]`);
    await expectRefusal(t.request(`/api/v1/teams/${org.ownersTeamId}`, { method: "DELETE", headers: token(ownerTok) }), 422, "the Owners team cannot be deleted");
  });

  it("deleting a team removes its units and memberships; members of no other team leave the org", async () => {
    const tm = await (await createTeam({ name: uniq("gone"), permission: "read", units: ["repo.code"] })).json();
    const u = await seedUser(t.db);
    await t.request(`/api/v1/teams/${tm.id}/members/${u.name}`, { method: "PUT", headers: token(ownerTok) });
    expect((await t.request(`/api/v1/teams/${tm.id}`, { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    expect(await t.db.select().from(team).where(eq(team.id, tm.id))).toEqual([]);
    expect(await t.db.select().from(teamUser).where(eq(teamUser.teamId, tm.id))).toEqual([]);
    expect(await t.db.select().from(orgUser).where(and(eq(orgUser.orgId, org.id), eq(orgUser.uid, u.id)))).toEqual([]);
  });
});

describe("repositories (rules 5 and 7)", () => {
  it("assign and remove need admin on the repository (403) and a repository of the team's org (404)", async () => {
    const tm = await (await createTeam({ name: uniq("r"), permission: "write", units: ["repo.code"] })).json();
    const r = await apiRepo(t, ownerTok, { name: uniq("tr"), private: true }, org.name);
    expect((await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { method: "PUT", headers: token(ownerTok) })).status).toBe(204);
    const other = await seedOrg(t, owner);
    const r2 = await apiRepo(t, ownerTok, { name: uniq("x") }, other.name);
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}/repos/${other.name}/${r2.name}`, { method: "PUT", headers: token(ownerTok) }), 404, NOT_FOUND);
    const m = await seedUser(t.db);
    await t.request(`/api/v1/teams/${tm.id}/members/${m.name}`, { method: "PUT", headers: token(ownerTok) });
    // A write member sees the repository through the team but may not manage team access.
    expect((await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { headers: token(await m.token()) })).status).toBe(200);
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { method: "DELETE", headers: token(await m.token()) }), 403, "Must have admin-level access to the repository");
    expect((await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { headers: token(ownerTok) }), 404, NOT_FOUND);
    await expectRefusal(t.request(`/api/v1/repos/${org.name}/${r.name}`, { headers: token(await m.token()) }), 404, NOT_FOUND);
  });

  it("a repository that does not exist in the team's organization → 404 on GET, PUT and DELETE (never a 500)", async () => {
    const tm = await (await createTeam({ name: uniq("nr"), permission: "write", units: ["repo.code"] })).json();
    for (const method of ["GET", "PUT", "DELETE"]) {
      await expectRefusal(t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${uniq("none")}`, { method, headers: token(ownerTok) }), 404, NOT_FOUND);
    }
  });

  it("the team repository list omits repositories the caller cannot access, in the count too (GHSA-h56g-4qw7-2mxg)", async () => {
    const tm = await (await createTeam({ name: uniq("pub"), permission: "read", units: ["repo.code"], visibility: "public" })).json();
    const pub = await apiRepo(t, ownerTok, { name: uniq("open") }, org.name);
    const priv = await apiRepo(t, ownerTok, { name: uniq("closed"), private: true }, org.name);
    for (const r of [pub, priv]) await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { method: "PUT", headers: token(ownerTok) });
    const stranger = await seedUser(t.db);
    const res = await t.request(`/api/v1/teams/${tm.id}/repos`, { headers: token(await stranger.token()) });
    expect((await res.json()).map((r: { name: string }) => r.name)).toEqual([pub.name]);
    expect(res.headers.get("X-Total-Count")).toBe("1");
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${priv.name}`, { headers: token(await stranger.token()) }), 404, NOT_FOUND);
    const own = await t.request(`/api/v1/teams/${tm.id}/repos`, { headers: token(ownerTok) });
    expect(own.headers.get("X-Total-Count")).toBe("2");
  });

  it("team feeds show activity of the team's repositories the caller may access", async () => {
    const tm = await (await createTeam({ name: uniq("feed"), permission: "read", units: ["repo.code"], includes_all_repositories: true, visibility: "public" })).json();
    const priv = await apiRepo(t, ownerTok, { name: uniq("fp"), private: true }, org.name);
    const pub = await apiRepo(t, ownerTok, { name: uniq("fo") }, org.name);
    // The team includes every repository of the organization: its feed is their creation, one each.
    const orgRepos = await t.db.select({ name: repository.name, isPrivate: repository.isPrivate }).from(repository).where(eq(repository.ownerId, org.id));
    const feed = async (tk: string) => (await (await t.request(`/api/v1/teams/${tm.id}/activities/feeds?limit=50`, { headers: token(tk) })).json()).map((f: { repo: { name: string }; op_type: string }) => `${f.op_type} ${f.repo.name}`).sort();
    expect(await feed(ownerTok)).toEqual(orgRepos.map((r) => `create_repo ${r.name}`).sort());
    expect(await feed(ownerTok)).toEqual(expect.arrayContaining([`create_repo ${priv.name}`, `create_repo ${pub.name}`]));
    const stranger = await seedUser(t.db);
    expect(await feed(await stranger.token())).toEqual(orgRepos.filter((r) => !r.isPrivate).map((r) => `create_repo ${r.name}`).sort());
    // X-Total-Count counts the same activity, whatever the page size.
    const total = async (tk: string) => (await t.request(`/api/v1/teams/${tm.id}/activities/feeds?limit=1`, { headers: token(tk) })).headers.get("X-Total-Count");
    expect(await total(ownerTok)).toBe(String(orgRepos.length));
    expect(await total(await stranger.token())).toBe(String(orgRepos.filter((r) => !r.isPrivate).length));
  });
});

describe("rule 3: the unit and mode rules of create and edit (Gitea's CreateTeam, EditTeam, MinUnitAccessMode)", () => {
  const unitsOf = async (id: number) => (await t.db.select({ type: teamUnit.type, mode: teamUnit.accessMode }).from(teamUnit).where(eq(teamUnit.teamId, id))).sort((a, b) => a.type - b.type);
  const teamCount = async () => (await t.db.select({ id: team.id }).from(team).where(eq(team.orgId, org.id))).length;

  it("an unknown unit key in units or units_map → 422 naming it, on create and on edit, nothing written (issue 8 B.2)", async () => {
    const before = await teamCount();
    await expectRefusal(createTeam({ name: uniq("u"), permission: "read", units: ["repo.code", "repo.nope"] }), 422, '[Units]: unknown unit "repo.nope"');
    await expectRefusal(createTeam({ name: uniq("u"), permission: "read", units_map: { "repo.code": "read", "repo.gone": "read" } }), 422, '[UnitsMap]: unknown unit "repo.gone"');
    expect(await teamCount()).toBe(before);
    const tm = await (await createTeam({ name: uniq("u"), permission: "read", units: ["repo.code"] })).json();
    const patch = (json: unknown) => t.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(ownerTok), json });
    const res = await expectRefusal(patch({ permission: "write", units: ["repo.nope"] }), 422, '[Units]: unknown unit "repo.nope"');
    expect(roundTrips(res)).toBe(1);
    await expectRefusal(patch({ permission: "write", units_map: { "repo.nope": "write" } }), 422, '[UnitsMap]: unknown unit "repo.nope"');
    expect(await unitsOf(tm.id)).toEqual([{ type: 1, mode: 1 }]);
    expect((await (await t.request(`/api/v1/teams/${tm.id}`, { headers: token(ownerTok) })).json()).permission).toBe("read");
  });

  it("units_map naming one unit twice (keys match in any case) → 422 on create and edit, not a 500", async () => {
    const before = await teamCount();
    const twice = { "repo.code": "read", "REPO.CODE": "write" };
    await expectRefusal(createTeam({ name: uniq("tw"), units_map: twice }), 422, '[UnitsMap]: unit "REPO.CODE" is given twice');
    expect(await teamCount()).toBe(before);
    const tm = await (await createTeam({ name: uniq("tw"), permission: "read", units: ["repo.code", "REPO.CODE"] })).json();
    expect(tm.units_map).toEqual({ "repo.code": "read" });
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(ownerTok), json: { permission: "write", units_map: twice } }), 422, '[UnitsMap]: unit "REPO.CODE" is given twice');
    expect(await unitsOf(tm.id)).toEqual([{ type: 1, mode: 1 }]);
  });

  it("units_map: a `none` unit stays none and does not lower the level; external units are capped at read and never set the level", async () => {
    const res = await createTeam({ name: uniq("mix"), permission: "write", units_map: { "repo.code": "write", "repo.pulls": "none", "repo.ext_wiki": "read", "repo.ext_issues": "admin" } });
    const body = await res.json();
    expect(body.permission).toBe("write");
    expect(body.units_map).toEqual({ "repo.code": "write", "repo.pulls": "none", "repo.ext_wiki": "read", "repo.ext_issues": "read" });
    expect(await unitsOf(body.id)).toEqual([
      { type: 1, mode: 2 },
      { type: 3, mode: 0 },
      { type: 6, mode: 1 },
      { type: 7, mode: 1 },
    ]);
  });

  it("without a permission, units make a read team with every unit at read; a units_map of only `none` keeps the team at none", async () => {
    const byUnits = await (await createTeam({ name: uniq("np"), units: ["repo.code", "repo.issues", "repo.ext_issues"] })).json();
    expect(byUnits).toMatchObject({ permission: "read", units_map: { "repo.code": "read", "repo.issues": "read", "repo.ext_issues": "read" } });
    const none = await (await createTeam({ name: uniq("nn"), units_map: { "repo.code": "none" } })).json();
    expect(none).toMatchObject({ permission: "none", units_map: { "repo.code": "none" } });
  });

  it("units are listed in unit order whatever the form's order; the name is stored with its lower-case form", async () => {
    const name = uniq("OrderTeam");
    const body = await (await createTeam({ name, permission: "read", units: ["repo.pulls", "repo.issues", "repo.code", "repo.pulls"] })).json();
    expect(body.units).toEqual(["repo.code", "repo.issues", "repo.pulls"]);
    expect(await unitsOf(body.id)).toEqual([1, 2, 3].map((type) => ({ type, mode: 1 })));
    const [stored] = await t.db.select({ name: team.name, lowerName: team.lowerName }).from(team).where(eq(team.id, body.id));
    expect(stored).toEqual({ name, lowerName: name.toLowerCase() });
  });

  it("an organization member who is not an owner → 403 `Must be an organization owner`; a non-member of a public org → 403 `Must be an organization member`", async () => {
    const outsider = await seedUser(t.db);
    await expectRefusal(createTeam({ name: uniq("x"), permission: "read", units: ["repo.code"] }, await outsider.token()), 403, "Must be an organization member");
  });

  it("edit: raising a team to admin stores every unit at admin (external ones at read), as on create", async () => {
    const tm = await (await createTeam({ name: uniq("up"), permission: "read", units: ["repo.code"] })).json();
    const res = await t.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(ownerTok), json: { permission: "admin", units: ["repo.code"] } });
    expect((await res.json()).permission).toBe("admin");
    expect(await unitsOf(tm.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((type) => ({ type, mode: type === 6 || type === 7 ? 1 : 3 })));
  });

  it("edit: a new name is stored with its lower-case form; a name another team has (any case) → 422", async () => {
    const a = await (await createTeam({ name: uniq("a"), permission: "read", units: ["repo.code"] })).json();
    const b = await (await createTeam({ name: uniq("b"), permission: "read", units: ["repo.code"] })).json();
    const name = uniq("Renamed");
    const res = await t.request(`/api/v1/teams/${a.id}`, { method: "PATCH", headers: token(ownerTok), json: { name } });
    expect((await res.json()).name).toBe(name);
    expect((await t.db.select({ lowerName: team.lowerName }).from(team).where(eq(team.id, a.id)))[0]!.lowerName).toBe(name.toLowerCase());
    await expectRefusal(t.request(`/api/v1/teams/${b.id}`, { method: "PATCH", headers: token(ownerTok), json: { name: name.toUpperCase() } }), 422, `team already exists [org_id: ${org.id}, name: ${name.toUpperCase()}]`);
    expect((await t.db.select({ name: team.name }).from(team).where(eq(team.id, b.id)))[0]!.name).toBe(b.name);
  });

  it("edit: fields not sent keep their values; can_create_org_repo false is stored", async () => {
    const tm = await (await createTeam({ name: uniq("keep"), permission: "read", units: ["repo.code"], visibility: "public", can_create_org_repo: true })).json();
    const patch = async (json: unknown) => (await t.request(`/api/v1/teams/${tm.id}`, { method: "PATCH", headers: token(ownerTok), json })).json();
    expect(await patch({ description: "kept" })).toMatchObject({ visibility: "public", can_create_org_repo: true, description: "kept", permission: "read" });
    expect(await patch({ can_create_org_repo: false })).toMatchObject({ visibility: "public", can_create_org_repo: false, description: "kept" });
  });

  it("edit: the Owners team's units never change (owner mode on every unit)", async () => {
    const before = await unitsOf(org.ownersTeamId);
    expect(before.map((u) => u.mode)).toEqual(before.map(() => 4));
    const res = await t.request(`/api/v1/teams/${org.ownersTeamId}`, { method: "PATCH", headers: token(ownerTok), json: { units: ["repo.code"], units_map: { "repo.code": "read" } } });
    expect(res.status).toBe(200);
    expect(await unitsOf(org.ownersTeamId)).toEqual(before);
  });
});

describe("the guards of the team write routes (reqTeamMembership, then reqOrgOwnership with only the team: 404)", () => {
  it("a team member who is not an owner → 404 (403 on repositories without admin); an org member outside the team → 403 `Must be a team member`; a site admin outside the org may", async () => {
    const tm = await (await createTeam({ name: uniq("g"), permission: "write", units: ["repo.code"], visibility: "limited" })).json();
    const doomed = await (await createTeam({ name: uniq("gd"), permission: "read", units: ["repo.code"], visibility: "limited" })).json();
    const repo = await apiRepo(t, ownerTok, { name: uniq("gr"), private: true }, org.name);
    const inTeam = await seedUser(t.db);
    const outside = await seedUser(t.db);
    const target = await seedUser(t.db);
    const admin = await seedUser(t.db, { admin: true });
    for (const id of [tm.id, doomed.id]) await t.request(`/api/v1/teams/${id}/members/${inTeam.name}`, { method: "PUT", headers: token(ownerTok) });
    // The team's write access to the repository lets its members see it, not manage it.
    await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${repo.name}`, { method: "PUT", headers: token(ownerTok) });
    await seedMember(t, org, outside);
    const routes: [string, string, unknown?][] = [
      ["PATCH", `/api/v1/teams/${tm.id}`, { description: "changed" }],
      ["PUT", `/api/v1/teams/${tm.id}/members/${target.name}`],
      ["DELETE", `/api/v1/teams/${tm.id}/members/${target.name}`],
      ["PUT", `/api/v1/teams/${tm.id}/repos/${org.name}/${repo.name}`],
      ["DELETE", `/api/v1/teams/${tm.id}/repos/${org.name}/${repo.name}`],
      ["DELETE", `/api/v1/teams/${doomed.id}`],
    ];
    const [memberTok, outsideTok, adminTok] = [await inTeam.token(), await outside.token(), await admin.token()];
    for (const [method, path, json] of routes) {
      const label = `${method} ${path}`;
      if (path.includes("/repos/")) await expectRefusal(t.request(path, { method, headers: token(memberTok), json }), 403, "Must have admin-level access to the repository", label);
      else await expectRefusal(t.request(path, { method, headers: token(memberTok), json }), 404, NOT_FOUND, label);
      await expectRefusal(t.request(path, { method, headers: token(outsideTok), json }), 403, "Must be a team member", label);
    }
    expect(await t.db.select().from(teamUser).where(and(eq(teamUser.teamId, tm.id), eq(teamUser.uid, target.id)))).toEqual([]);
    for (const [method, path, json] of routes) {
      const res = await t.request(path, { method, headers: token(adminTok), json });
      expect(res.status, `${method} ${path}`).toBe(method === "PATCH" ? 200 : 204);
    }
    expect(await t.db.select().from(team).where(eq(team.id, doomed.id))).toEqual([]);
  });
});

describe("members: who can be added or removed (rule 6)", () => {
  it("PUT: an unknown user or an organization → 404; a member already in the team → 204 without a write (1 round trip)", async () => {
    const tm = await (await createTeam({ name: uniq("pm"), permission: "read", units: ["repo.code"] })).json();
    const put = (name: string) => t.request(`/api/v1/teams/${tm.id}/members/${name}`, { method: "PUT", headers: token(ownerTok) });
    await expectRefusal(put(uniq("ghost")), 404, NOT_FOUND);
    await expectRefusal(put(org.name), 404, NOT_FOUND);
    const u = await seedUser(t.db);
    expect(roundTrips(await put(u.name))).toBe(2);
    const again = await put(u.name);
    expect(again.status).toBe(204);
    expect(roundTrips(again)).toBe(1);
    expect(await t.db.select().from(teamUser).where(eq(teamUser.teamId, tm.id))).toHaveLength(1);
  });

  it("DELETE: an unknown user → 404; a user not in the team → 204 without a write (1 round trip), their other memberships kept", async () => {
    const tm = await (await createTeam({ name: uniq("dm"), permission: "read", units: ["repo.code"] })).json();
    const other = await (await createTeam({ name: uniq("do"), permission: "read", units: ["repo.code"] })).json();
    const u = await seedUser(t.db);
    await t.request(`/api/v1/teams/${other.id}/members/${u.name}`, { method: "PUT", headers: token(ownerTok) });
    const del = (name: string) => t.request(`/api/v1/teams/${tm.id}/members/${name}`, { method: "DELETE", headers: token(ownerTok) });
    await expectRefusal(del(uniq("ghost")), 404, NOT_FOUND);
    const res = await del(u.name);
    expect(res.status).toBe(204);
    expect(roundTrips(res)).toBe(1);
    expect(await t.db.select().from(teamUser).where(and(eq(teamUser.teamId, other.id), eq(teamUser.uid, u.id)))).toHaveLength(1);
  });
});

describe("repositories of a team (rules 5 and 7)", () => {
  it("a team that includes all repositories: adding or removing one writes nothing (1 round trip, no team_repo row)", async () => {
    const tm = await (await createTeam({ name: uniq("all"), permission: "read", units: ["repo.code"], includes_all_repositories: true })).json();
    const r = await apiRepo(t, ownerTok, { name: uniq("ar") }, org.name);
    for (const method of ["PUT", "DELETE"]) {
      const res = await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { method, headers: token(ownerTok) });
      expect(res.status).toBe(204);
      expect(roundTrips(res)).toBe(1);
      expect(await t.db.select().from(teamRepo).where(eq(teamRepo.teamId, tm.id))).toEqual([]);
    }
    expect((await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { headers: token(ownerTok) })).status).toBe(200);
  });

  it("GET a team's repository answers it as GET /repos/{owner}/{repo} does, for a member of the team", async () => {
    const tm = await (await createTeam({ name: uniq("same"), permission: "write", units: ["repo.code"] })).json();
    const r = await apiRepo(t, ownerTok, { name: uniq("sr"), private: true }, org.name);
    await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { method: "PUT", headers: token(ownerTok) });
    const m = await seedUser(t.db);
    await t.request(`/api/v1/teams/${tm.id}/members/${m.name}`, { method: "PUT", headers: token(ownerTok) });
    const tk = await m.token();
    const viaTeam = await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { headers: token(tk) });
    expect(roundTrips(viaTeam)).toBe(1);
    const direct = await (await t.request(`/api/v1/repos/${org.name}/${r.name}`, { headers: token(tk) })).json();
    const body = await viaTeam.json();
    expect(body).toEqual(direct);
    expect(body.owner.login).toBe(org.name);
    expect(body.permissions).toEqual({ admin: false, push: true, pull: true });
  });
});

describe("a team with no level but a readable unit (rule 5)", () => {
  it("a member of a team that may only read the external wiki sees an assigned private repository through the team", async () => {
    const tm = await (await createTeam({ name: uniq("ext"), units_map: { "repo.ext_wiki": "read" } })).json();
    expect(tm.permission).toBe("none");
    const r = await apiRepo(t, ownerTok, { name: uniq("xw"), private: true }, org.name);
    const edit = await t.request(`/api/v1/repos/${org.name}/${r.name}`, { method: "PATCH", headers: token(ownerTok), json: { has_wiki: true, external_wiki: { external_wiki_url: "https://wiki.example.com/" } } });
    expect(edit.status).toBe(200);
    await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { method: "PUT", headers: token(ownerTok) });
    const m = await seedUser(t.db);
    await t.request(`/api/v1/teams/${tm.id}/members/${m.name}`, { method: "PUT", headers: token(ownerTok) });
    const res = await t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { headers: token(await m.token()) });
    expect(res.status).toBe(200);
    expect((await res.json()).permissions).toEqual({ admin: false, push: false, pull: false });
    const stranger = await seedUser(t.db);
    await expectRefusal(t.request(`/api/v1/teams/${tm.id}/repos/${org.name}/${r.name}`, { headers: token(await stranger.token()) }), 404, NOT_FOUND);
  });
});
