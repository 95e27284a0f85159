/** Organizations, membership and blocks (Gitea's org routes). */
import { and, eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collaboration, orgUser, repository, star, team, teamUnit, teamUser, user, userBlocking } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, apiRepo, interleavedWrites, roundTrips, seedMember, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type SeededOrg, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
let admin: SeededUser;

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  bob = await seedUser(t.db);
  admin = await seedUser(t.db, { admin: true });
});
afterAll(() => t.close());

const ORG_KEYS = ["id", "name", "full_name", "email", "avatar_url", "description", "website", "location", "visibility", "repo_admin_change_team_access", "username"];

describe("POST /orgs", () => {
  it("creates the org, its Owners team (owner access on every unit) with the creator in it, in 2 round trips", async () => {
    const name = uniq("acme");
    const res = await t.request("/api/v1/orgs", { method: "POST", headers: token(await alice.token()), json: { username: name, full_name: "Acme", visibility: "limited" } });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const body = await res.json();
    expect(Object.keys(body)).toEqual(ORG_KEYS);
    expect(body).toMatchObject({ name, username: name, full_name: "Acme", visibility: "limited" });
    const [owners] = await t.db.select().from(team).where(eq(team.orgId, body.id));
    expect(owners).toMatchObject({ name: "Owners", authorize: 4, canCreateOrgRepo: true, includesAllRepositories: true, numMembers: 1 });
    const units = await t.db.select().from(teamUnit).where(eq(teamUnit.teamId, owners!.id));
    expect(units.map((u) => [u.type, u.accessMode]).sort((a, b) => a[0]! - b[0]!)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((type) => [type, 4]));
    expect(await t.db.select().from(teamUser).where(eq(teamUser.teamId, owners!.id))).toMatchObject([{ uid: alice.id }]);
    expect(await t.db.select().from(orgUser).where(eq(orgUser.orgId, body.id))).toMatchObject([{ uid: alice.id }]);
  });

  it("visibility defaults to public; an unknown visibility → 422", async () => {
    const body = await (await t.request("/api/v1/orgs", { method: "POST", headers: token(await alice.token()), json: { username: uniq("pub") } })).json();
    expect(body.visibility).toBe("public");
    const bad = await t.request("/api/v1/orgs", { method: "POST", headers: token(await alice.token()), json: { username: uniq("bad"), visibility: "secret" } });
    await expectRefusal(bad, 422, "[Visibility]: In");
  });

  it("a name taken by a user or org (any case) → 422 and nothing partial is written", async () => {
    const res = await t.request("/api/v1/orgs", { method: "POST", headers: token(await bob.token()), json: { username: alice.name.toUpperCase() } });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe(`user already exists [name: ${alice.name.toUpperCase()}]`);
    const teams = await t.db.select().from(team).where(eq(team.orgId, alice.id));
    expect(teams).toEqual([]);
  });

  it("a user not allowed to create organizations → 403", async () => {
    const u = await seedUser(t.db);
    await t.db.update(user).set({ allowCreateOrganization: false }).where(eq(user.id, u.id));
    const res = await t.request("/api/v1/orgs", { method: "POST", headers: token(await u.token()), json: { username: uniq("no") } });
    await expectRefusal(res, 403, "Create organization not allowed");
  });

  it("reserved names → 422", async () => {
    await expectRefusal(t.request("/api/v1/orgs", { method: "POST", headers: token(await alice.token()), json: { username: "explore" } }), 422, "name is reserved [name: explore]");
  });
});

describe("GET /orgs/{org} and visibility", () => {
  let priv: SeededOrg;
  let limited: SeededOrg;
  let member: SeededUser;
  beforeAll(async () => {
    priv = await seedOrg(t, alice, { visibility: 2 });
    limited = await seedOrg(t, alice, { visibility: 1 });
    member = await seedUser(t.db);
    await seedMember(t, priv, member);
  });

  it("a private org is 404 to anonymous callers and non-members, visible to members and admins (1 round trip)", async () => {
    await expectRefusal(t.request(`/api/v1/orgs/${priv.name}`), 404, NOT_FOUND);
    await expectRefusal(t.request(`/api/v1/orgs/${priv.name}`, { headers: token(await bob.token()) }), 404, NOT_FOUND);
    const m = await t.request(`/api/v1/orgs/${priv.name}`, { headers: token(await member.token()) });
    expect(m.status).toBe(200);
    expect(roundTrips(m)).toBe(1);
    expect((await t.request(`/api/v1/orgs/${priv.name}`, { headers: token(await admin.token()) })).status).toBe(200);
  });

  it("a limited org is visible to signed-in users only", async () => {
    await expectRefusal(t.request(`/api/v1/orgs/${limited.name}`), 404, NOT_FOUND);
    expect((await t.request(`/api/v1/orgs/${limited.name}`, { headers: token(await bob.token()) })).status).toBe(200);
  });

  it("a public org's e-mail is shown to signed-in callers only (Gitea's org.Get blanks it for anonymous ones)", async () => {
    const name = uniq("mail");
    const tk = await alice.token();
    expect((await t.request("/api/v1/orgs", { method: "POST", headers: token(tk), json: { username: name, email: "contact@acme.example" } })).status).toBe(201);
    expect((await (await t.request(`/api/v1/orgs/${name}`)).json()).email).toBe("");
    expect((await (await t.request(`/api/v1/orgs/${name}`, { headers: token(await bob.token()) })).json()).email).toBe("contact@acme.example");
  });

  it("a user name is not an organization (404)", async () => {
    await expectRefusal(t.request(`/api/v1/orgs/${alice.name}`), 404, NOT_FOUND);
  });

  it("GET /user/orgs lists the caller's orgs; a public-only token sees only public ones (GHSA-fq2p-5p22-8g6j)", async () => {
    const mine = await (await t.request("/api/v1/user/orgs?limit=50", { headers: token(await member.token()) })).json();
    expect(mine.map((o: { name: string }) => o.name)).toEqual([priv.name]);
    const pub = await t.request("/api/v1/user/orgs", { headers: token(await member.token(["public-only", "read:user", "read:organization"])) });
    expect(await pub.json()).toEqual([]);
    expect(pub.headers.get("X-Total-Count")).toBe("0");
  });
});

describe("PATCH and DELETE /orgs/{org}", () => {
  it("an organization another request deleted between the edit's read and its write → 404 (not a 500)", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const o = await seedOrg(t2, await seedUser(t2.db));
    w.beforeNextWrite("DELETE FROM user WHERE id = ?", [o.id]);
    await expectRefusal(t2.request(`/api/v1/orgs/${o.name}`, { method: "PATCH", headers: token(o.ownerToken), json: { description: "late" } }), 404, NOT_FOUND);
    expect(await t2.db.select().from(user).where(eq(user.id, o.id))).toEqual([]);
    t2.close();
  });

  it("owners edit present fields only; members get 403; outsiders of a private org get 404", async () => {
    const org = await seedOrg(t, alice, { visibility: 2 });
    const member = await seedUser(t.db);
    await seedMember(t, org, member);
    const res = await t.request(`/api/v1/orgs/${org.name}`, { method: "PATCH", headers: token(await alice.token()), json: { description: "new desc", visibility: "public" } });
    expect(res.status).toBe(200);
    expect(roundTrips(res)).toBe(2);
    expect(await res.json()).toMatchObject({ description: "new desc", visibility: "public", full_name: "" });
    const m = await t.request(`/api/v1/orgs/${org.name}`, { method: "PATCH", headers: token(await member.token()), json: { description: "x" } });
    expect(m.status).toBe(403);
    expect((await m.json()).message).toBe("Must be an organization owner");
    const hidden = await seedOrg(t, alice, { visibility: 2 });
    await expectRefusal(t.request(`/api/v1/orgs/${hidden.name}`, { method: "PATCH", headers: token(await bob.token()), json: {} }), 404, NOT_FOUND);
  });

  it("an organization that still owns repositories is not deleted (422)", async () => {
    const org = await seedOrg(t, alice);
    await apiRepo(t, await alice.token(), { name: uniq("keep") }, org.name);
    const res = await t.request(`/api/v1/orgs/${org.name}`, { method: "DELETE", headers: token(await alice.token()) });
    await expectRefusal(res, 422, `user still has ownership of repositories [uid: ${org.id}]`);
    expect((await t.request(`/api/v1/orgs/${org.name}`)).status).toBe(200);
  });

  it("an organization that got a repository after the delete read it is not deleted either (the write batch's guard): 422, both stay", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const o = await seedOrg(t2, await seedUser(t2.db));
    // the repository a concurrent POST /orgs/{org}/repos creates, committed just before the delete's batch
    w.beforeNextWrite(() => t2.request(`/api/v1/orgs/${o.name}/repos`, { method: "POST", headers: token(o.ownerToken), json: { name: "late" } }).then((r) => expect(r.status).toBe(201)));
    await expectRefusal(t2.request(`/api/v1/orgs/${o.name}`, { method: "DELETE", headers: token(o.ownerToken) }), 422, `user still has ownership of repositories [uid: ${o.id}]`);
    expect((await t2.request(`/api/v1/repos/${o.name}/late`, { headers: token(o.ownerToken) })).status).toBe(200);
    t2.close();
  });

  it("deleting removes the org with its teams and memberships", async () => {
    const org = await seedOrg(t, alice);
    await seedMember(t, org, bob);
    const res = await t.request(`/api/v1/orgs/${org.name}`, { method: "DELETE", headers: token(await alice.token()) });
    expect(res.status).toBe(204);
    expect(roundTrips(res)).toBe(2);
    expect(await t.db.select().from(team).where(eq(team.orgId, org.id))).toEqual([]);
    expect(await t.db.select().from(orgUser).where(eq(orgUser.orgId, org.id))).toEqual([]);
    await expectRefusal(t.request(`/api/v1/orgs/${org.name}`), 404, NOT_FOUND);
  });
});

describe("members", () => {
  it("members see all members; non-members see public members only", async () => {
    const org = await seedOrg(t, alice);
    const quiet = await seedUser(t.db);
    const loud = await seedUser(t.db);
    await seedMember(t, org, quiet);
    await seedMember(t, org, loud, { isPublic: true });
    const asMember = await t.request(`/api/v1/orgs/${org.name}/members`, { headers: token(await quiet.token()) });
    expect(asMember.headers.get("X-Total-Count")).toBe("3");
    expect(roundTrips(asMember)).toBe(1);
    const asOutsider = await t.request(`/api/v1/orgs/${org.name}/members`, { headers: token(await bob.token()) });
    expect((await asOutsider.json()).map((u: { login: string }) => u.login)).toEqual([loud.name]);
    expect(asOutsider.headers.get("X-Total-Count")).toBe("1");
  });

  it("GET members/{username}: 204/404 for members; outsiders are redirected to public_members (303)", async () => {
    const org = await seedOrg(t, alice);
    const loud = await seedUser(t.db);
    await seedMember(t, org, loud, { isPublic: true });
    expect((await t.request(`/api/v1/orgs/${org.name}/members/${loud.name}`, { headers: token(await alice.token()) })).status).toBe(204);
    await expectRefusal(t.request(`/api/v1/orgs/${org.name}/members/${bob.name}`, { headers: token(await alice.token()) }), 404, NOT_FOUND);
    const redirect = await t.request(`/api/v1/orgs/${org.name}/members/${loud.name}`, { headers: token(await bob.token()), redirect: "manual" });
    expect(redirect.status).toBe(303);
    expect(redirect.headers.get("Location")).toBe(`http://gitea.test/api/v1/orgs/${org.name}/public_members/${loud.name}`);
    expect((await t.request(`/api/v1/orgs/${org.name}/public_members/${loud.name}`)).status).toBe(204);
    await expectRefusal(t.request(`/api/v1/orgs/${org.name}/public_members/${alice.name}`), 404, NOT_FOUND);
    // a site admin sees a concealed membership, but not through a public-only token (public data only)
    const quiet = await seedUser(t.db);
    await seedMember(t, org, quiet);
    const admin = await seedUser(t.db, { admin: true });
    expect((await t.request(`/api/v1/orgs/${org.name}/members/${quiet.name}`, { headers: token(await admin.token()) })).status).toBe(204);
    const publicOnly = await t.request(`/api/v1/orgs/${org.name}/members/${quiet.name}`, { headers: token(await admin.token(["public-only", "all"])), redirect: "manual" });
    expect(publicOnly.status).toBe(303);
    // so does a member's public-only token: it reads what is public, the member list and the check as an outsider's
    const memberPublic = await loud.token(["public-only", "all"]);
    expect((await t.request(`/api/v1/orgs/${org.name}/members/${quiet.name}`, { headers: token(memberPublic), redirect: "manual" })).status).toBe(303);
    const list = await t.request(`/api/v1/orgs/${org.name}/members`, { headers: token(memberPublic) });
    expect([(await list.json()).map((u: { login: string }) => u.login), list.headers.get("X-Total-Count")]).toEqual([[loud.name], "1"]);
    expect((await t.request(`/api/v1/orgs/${org.name}/members/${quiet.name}`, { headers: token(await loud.token()) })).status).toBe(204);
  });

  it("DELETE members/{username} removes the member from every team; the last owner cannot be removed", async () => {
    const org = await seedOrg(t, alice);
    const m = await seedUser(t.db);
    const mt = await seedMember(t, org, m);
    const res = await t.request(`/api/v1/orgs/${org.name}/members/${m.name}`, { method: "DELETE", headers: token(await alice.token()) });
    expect(res.status).toBe(204);
    expect(await t.db.select().from(teamUser).where(and(eq(teamUser.orgId, org.id), eq(teamUser.uid, m.id)))).toEqual([]);
    const [mteam] = await t.db.select().from(team).where(eq(team.id, mt.id));
    expect(mteam!.numMembers).toBe(0);
    const last = await t.request(`/api/v1/orgs/${org.name}/members/${alice.name}`, { method: "DELETE", headers: token(await alice.token()) });
    await expectRefusal(last, 422, `user is the last member of owner team [uid: ${alice.id}]`);
    expect(await t.db.select().from(orgUser).where(and(eq(orgUser.orgId, org.id), eq(orgUser.uid, alice.id)))).toHaveLength(1);
  });

  it("removed members lose access at once (GHSA-2vgv-hgv4-22mh)", async () => {
    const org = await seedOrg(t, alice, { visibility: 2 });
    const m = await seedUser(t.db);
    await seedMember(t, org, m);
    const tk = await m.token();
    expect((await t.request(`/api/v1/orgs/${org.name}`, { headers: token(tk) })).status).toBe(200);
    await t.request(`/api/v1/orgs/${org.name}/members/${m.name}`, { method: "DELETE", headers: token(await alice.token()) });
    await expectRefusal(t.request(`/api/v1/orgs/${org.name}`, { headers: token(tk) }), 404, NOT_FOUND);
  });
});

describe("blocks", () => {
  it("a user blocks, lists, checks and unblocks another user", async () => {
    const u = await seedUser(t.db);
    const tk = await u.token();
    const put = await t.request(`/api/v1/user/blocks/${bob.name}?note=spam`, { method: "PUT", headers: token(tk) });
    expect(put.status).toBe(204);
    expect(roundTrips(put)).toBe(2);
    // blocking again is Gitea's 400 (CanBlockUser), not a note update
    await expectRefusal(t.request(`/api/v1/user/blocks/${bob.name}?note=again`, { method: "PUT", headers: token(tk) }), 400, "cannot block the user");
    const [row] = await t.db.select().from(userBlocking).where(eq(userBlocking.blockerId, u.id));
    expect(row).toMatchObject({ blockeeId: bob.id, note: "spam" });
    const list = await t.request("/api/v1/user/blocks", { headers: token(tk) });
    expect(list.headers.get("X-Total-Count")).toBe("1");
    expect((await list.json()).map((x: { login: string }) => x.login)).toEqual([bob.name]);
    expect((await t.request(`/api/v1/user/blocks/${bob.name}`, { headers: token(tk) })).status).toBe(204);
    expect((await t.request(`/api/v1/user/blocks/${bob.name}`, { method: "DELETE", headers: token(tk) })).status).toBe(204);
    await expectRefusal(t.request(`/api/v1/user/blocks/${bob.name}`, { headers: token(tk) }), 404, NOT_FOUND);
    // unblocking a user that is not blocked is Gitea's 400 (CanUnblockUser)
    await expectRefusal(t.request(`/api/v1/user/blocks/${bob.name}`, { method: "DELETE", headers: token(tk) }), 400, "cannot unblock the user");
  });

  it("blocking yourself or an organization → 400 with Gitea's texts; an unknown user → 404", async () => {
    const tk = await alice.token();
    await expectRefusal(t.request(`/api/v1/user/blocks/${alice.name}`, { method: "PUT", headers: token(tk) }), 400, "cannot block the user");
    await expectRefusal(t.request(`/api/v1/user/blocks/${alice.name}`, { method: "DELETE", headers: token(tk) }), 400, "cannot unblock the user");
    const org = await seedOrg(t, bob);
    await expectRefusal(t.request(`/api/v1/user/blocks/${org.name}`, { method: "PUT", headers: token(tk) }), 400, "cannot block an organization");
    await expectRefusal(t.request("/api/v1/user/blocks/nobody-xyz", { method: "PUT", headers: token(tk) }), 404, NOT_FOUND);
  });

  it("a block ends, as Gitea's BlockUser, each side's collaborations on and stars of the other's repositories (counters too); other users' stay", async () => {
    const u = await seedUser(t.db);
    const b = await seedUser(t.db);
    const c = await seedUser(t.db);
    const [utk, btk, ctk] = [await u.token(), await b.token(), await c.token()];
    const r1 = await apiRepo(t, utk, { name: uniq("b1") });
    const r2 = await apiRepo(t, btk, { name: uniq("b2") });
    const r3 = await apiRepo(t, ctk, { name: uniq("b3") });
    const collab = (owner: string, repo: string, tk: string, who: string) => t.request(`/api/v1/repos/${owner}/${repo}/collaborators/${who}`, { method: "PUT", headers: token(tk), json: {} });
    for (const [o, r, tk, who] of [[u.name, r1.name, utk, b.name], [b.name, r2.name, btk, u.name], [u.name, r1.name, utk, c.name], [c.name, r3.name, ctk, b.name]] as const) {
      expect((await collab(o, r, tk, who)).status).toBe(204);
    }
    await t.db.insert(star).values([{ uid: b.id, repoId: r1.id }, { uid: u.id, repoId: r2.id }, { uid: c.id, repoId: r1.id }, { uid: b.id, repoId: r3.id }, { uid: u.id, repoId: r1.id }]);
    await t.client.execute("UPDATE repository SET num_stars = (SELECT COUNT(*) FROM star WHERE repo_id = repository.id)");
    await t.client.execute("UPDATE user SET num_stars = (SELECT COUNT(*) FROM star WHERE uid = user.id)");
    const ids = [u.id, b.id, c.id];
    const repos = [r1.id, r2.id, r3.id];
    expect((await t.request(`/api/v1/user/blocks/${b.name}`, { method: "PUT", headers: token(utk) })).status).toBe(204);
    const collabs = await t.db.select({ repoId: collaboration.repoId, userId: collaboration.userId }).from(collaboration).where(inArray(collaboration.repoId, repos)).orderBy(collaboration.repoId, collaboration.userId);
    expect(collabs).toEqual([{ repoId: r1.id, userId: c.id }, { repoId: r3.id, userId: b.id }]);
    const stars = await t.db.select({ uid: star.uid, repoId: star.repoId }).from(star).where(inArray(star.uid, ids)).orderBy(star.repoId, star.uid);
    expect(stars).toEqual([{ uid: u.id, repoId: r1.id }, { uid: c.id, repoId: r1.id }, { uid: b.id, repoId: r3.id }]);
    const repoStars = await t.db.select({ id: repository.id, n: repository.numStars }).from(repository).where(inArray(repository.id, repos)).orderBy(repository.id);
    expect(repoStars).toEqual([{ id: r1.id, n: 2 }, { id: r2.id, n: 0 }, { id: r3.id, n: 1 }]);
    const userStars = await t.db.select({ id: user.id, n: user.numStars }).from(user).where(inArray(user.id, ids)).orderBy(user.id);
    expect(userStars).toEqual([{ id: u.id, n: 1 }, { id: b.id, n: 1 }, { id: c.id, n: 1 }]);
    // The blocked user no longer reaches the blocker's private repositories through a collaboration.
    const priv = await apiRepo(t, utk, { name: uniq("bp"), private: true });
    expect((await collab(u.name, priv.name, utk, c.name)).status).toBe(204);
    expect((await t.request(`/api/v1/user/blocks/${c.name}`, { method: "PUT", headers: token(utk) })).status).toBe(204);
    await expectRefusal(t.request(`/api/v1/repos/${u.name}/${priv.name}`, { headers: token(ctk) }), 404, NOT_FOUND);
  });

  it("an organization's block ends the user's collaborations on the organization's repositories", async () => {
    const org = await seedOrg(t, alice);
    const r = await apiRepo(t, org.ownerToken, { name: uniq("ob"), private: true }, org.name);
    const u = await seedUser(t.db);
    expect((await t.request(`/api/v1/repos/${org.name}/${r.name}/collaborators/${u.name}`, { method: "PUT", headers: token(org.ownerToken), json: {} })).status).toBe(204);
    expect((await t.request(`/api/v1/repos/${org.name}/${r.name}`, { headers: token(await u.token()) })).status).toBe(200);
    expect((await t.request(`/api/v1/orgs/${org.name}/blocks/${u.name}`, { method: "PUT", headers: token(org.ownerToken) })).status).toBe(204);
    expect(await t.db.select().from(collaboration).where(eq(collaboration.repoId, r.id))).toEqual([]);
    await expectRefusal(t.request(`/api/v1/repos/${org.name}/${r.name}`, { headers: token(await u.token()) }), 404, NOT_FOUND);
  });

  it("organization blocks need an owner; members cannot be blocked by their org", async () => {
    const org = await seedOrg(t, alice);
    const m = await seedUser(t.db);
    await seedMember(t, org, m);
    await expectRefusal(t.request(`/api/v1/orgs/${org.name}/blocks/${bob.name}`, { method: "PUT", headers: token(await m.token()) }), 403, "Must be an organization owner");
    await expectRefusal(t.request(`/api/v1/orgs/${org.name}/blocks/${m.name}`, { method: "PUT", headers: token(await alice.token()) }), 400, "cannot block the user");
    expect((await t.request(`/api/v1/orgs/${org.name}/blocks/${bob.name}`, { method: "PUT", headers: token(await alice.token()) })).status).toBe(204);
    const list = await (await t.request(`/api/v1/orgs/${org.name}/blocks`, { headers: token(await alice.token()) })).json();
    expect(list.map((x: { login: string }) => x.login)).toEqual([bob.name]);
  });
});
