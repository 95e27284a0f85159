/** Collaborators, reviewers and assignees: the spec's rules 1–5. */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collaboration, orgUser, user, userBlocking } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, addCollaborator, apiRepo, roundTrips, seedMember, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
let ownerTok: string;
let repoName: string;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  ownerTok = await owner.token();
  repoName = (await apiRepo(t, ownerTok, { name: uniq("c"), private: true })).name;
});
afterAll(() => t.close());

const path = (c = "") => `/api/v1/repos/${owner.name}/${repoName}/collaborators${c ? `/${c}` : ""}`;
const put = (who: string, tk: string, json?: unknown) => t.request(path(who), { method: "PUT", headers: token(tk), json: json ?? {} });

describe("rule 1: check, add, delete", () => {
  it("an unknown user → 422 on check, add and delete", async () => {
    for (const method of ["GET", "PUT", "DELETE"]) {
      const res = await t.request(path("nobody-known"), { method, headers: token(ownerTok), json: method === "PUT" ? {} : undefined });
      await expectRefusal(res, 422, "user does not exist [uid: 0, name: nobody-known]", method);
    }
  });

  it("check answers 204 for a collaborator and 404 otherwise (1 round trip)", async () => {
    const u = await seedUser(t.db);
    await expectRefusal(t.request(path(u.name), { headers: token(ownerTok) }), 404, NOT_FOUND);
    expect((await put(u.name, ownerTok)).status).toBe(204);
    const res = await t.request(path(u.name), { headers: token(ownerTok) });
    expect(res.status).toBe(204);
    expect(roundTrips(res)).toBe(1);
  });
});

describe("rule 2: add or update", () => {
  it("the default permission is write; giving one updates it (2 round trips)", async () => {
    const u = await seedUser(t.db);
    const res = await put(u.name, ownerTok);
    expect(res.status).toBe(204);
    expect(roundTrips(res)).toBe(2);
    const [row] = await t.db.select().from(collaboration).where(eq(collaboration.userId, u.id));
    expect(row!.mode).toBe(2);
    await put(u.name, ownerTok, { permission: "admin" });
    const [row2] = await t.db.select().from(collaboration).where(eq(collaboration.userId, u.id));
    expect(row2!.mode).toBe(3);
    await expectRefusal(put(u.name, ownerTok, { permission: "owner" }), 422, "[Permission]: In");
  });

  it("an inactive account → 500 with a clear message", async () => {
    const u = await seedUser(t.db, { active: false });
    const res = await put(u.name, ownerTok);
    expect(res.status).toBe(500);
    expect((await res.json()).message).toMatch(/inactive/);
  });

  it("a user who blocks the actor → 403, and nothing is written", async () => {
    const u = await seedUser(t.db);
    await t.db.insert(userBlocking).values({ blockerId: u.id, blockeeId: owner.id });
    await expectRefusal(put(u.name, ownerTok), 403, "user is blocked by the repository owner or blocks the doer");
    expect(await t.db.select().from(collaboration).where(eq(collaboration.userId, u.id))).toEqual([]);
  });

  it("a block of a site admin counts for nothing (Gitea's IsUserBlockedBy): the owner adds an admin it blocked, and an admin adds a user who blocks the admin", async () => {
    const admin = await seedUser(t.db, { admin: true });
    await t.db.insert(userBlocking).values({ blockerId: owner.id, blockeeId: admin.id });
    expect((await put(admin.name, ownerTok)).status).toBe(204);
    const u = await seedUser(t.db);
    await t.db.insert(userBlocking).values({ blockerId: u.id, blockeeId: admin.id });
    expect((await put(u.name, await admin.token())).status).toBe(204);
    // … while the same blocks between two non-admins refuse
    const v = await seedUser(t.db);
    await t.db.insert(userBlocking).values({ blockerId: owner.id, blockeeId: v.id });
    await expectRefusal(put(v.name, ownerTok), 403, "user is blocked by the repository owner or blocks the doer");
    // a user who blocks the repository's owner is refused whoever adds them (Gitea's AddOrUpdateCollaborator: owner ↔ target)
    const w = await seedUser(t.db);
    await t.db.insert(userBlocking).values({ blockerId: w.id, blockeeId: owner.id });
    await expectRefusal(put(w.name, await admin.token()), 403, "user is blocked by the repository owner or blocks the doer");
  });

  it("only repository admins may add: a write collaborator gets 403", async () => {
    const w = await seedUser(t.db);
    await put(w.name, ownerTok, { permission: "write" });
    const u = await seedUser(t.db);
    const res = await put(u.name, await w.token());
    await expectRefusal(res, 403, "user should be an owner or a collaborator with admin write of a repository");
  });

  it("an organization or the repository's owner cannot be added (422, Gitea's messages), and nothing is written", async () => {
    const org = await seedOrg(t, owner);
    await expectRefusal(put(org.name, ownerTok), 422, `user is an organization [name: ${org.name}]`);
    await expectRefusal(put(owner.name, ownerTok), 422, "cannot add the repository owner as a collaborator");
    expect(await t.db.select().from(collaboration).where(eq(collaboration.userId, owner.id))).toEqual([]);
  });

  it("only repository admins may remove: a write collaborator gets 403 and the collaboration stays", async () => {
    const w = await seedUser(t.db);
    await put(w.name, ownerTok, { permission: "write" });
    const u = await seedUser(t.db);
    await put(u.name, ownerTok, { permission: "read" });
    await expectRefusal(t.request(path(u.name), { method: "DELETE", headers: token(await w.token()) }), 403, "user should be an owner or a collaborator with admin write of a repository");
    expect((await t.db.select().from(collaboration).where(eq(collaboration.userId, u.id))).map((r) => r.mode)).toEqual([1]);
  });

  it("the list counts the collaborators in X-Total-Count (1 round trip)", async () => {
    const name = (await apiRepo(t, ownerTok, { name: uniq("cl") })).name;
    const listPath = `/api/v1/repos/${owner.name}/${name}/collaborators`;
    const empty = await t.request(listPath, { headers: token(ownerTok) });
    expect([empty.status, empty.headers.get("X-Total-Count"), await empty.json()]).toEqual([200, "0", []]);
    const a = await seedUser(t.db);
    const b = await seedUser(t.db);
    for (const u of [a, b]) expect((await t.request(`${listPath}/${u.name}`, { method: "PUT", headers: token(ownerTok), json: {} })).status).toBe(204);
    const res = await t.request(`${listPath}?page=1&limit=1`, { headers: token(ownerTok) });
    expect(res.headers.get("X-Total-Count")).toBe("2");
    expect((await res.json()).map((u: { login: string }) => u.login)).toEqual([a.name]);
    expect(roundTrips(res)).toBe(1);
  });

  it("removing a collaborator revokes access at once (GHSA-2vgv-hgv4-22mh)", async () => {
    const u = await seedUser(t.db);
    const tk = await u.token();
    await put(u.name, ownerTok, { permission: "read" });
    expect((await t.request(`/api/v1/repos/${owner.name}/${repoName}`, { headers: token(tk) })).status).toBe(200);
    expect((await t.request(path(u.name), { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    await expectRefusal(t.request(`/api/v1/repos/${owner.name}/${repoName}`, { headers: token(tk) }), 404, NOT_FOUND);
    expect((await t.request(`/api/v1/repos/search?q=${repoName}`, { headers: token(tk) }).then((r) => r.json())).data).toEqual([]);
  });
});

describe("rule 3: permission read", () => {
  it("a collaborator reads their own permission (case-insensitive login); role_name equals permission", async () => {
    const u = await seedUser(t.db);
    await put(u.name, ownerTok, { permission: "read" });
    const res = await t.request(path(`${u.name.toUpperCase()}/permission`), { headers: token(await u.token()) });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ permission: "read", role_name: "read" });
    expect(body.user.login).toBe(u.name);
    expect(Object.keys(body)).toEqual(["permission", "role_name", "user"]);
  });

  it("another non-admin collaborator → 403; the repository admin and a site admin may read anyone's", async () => {
    const a = await seedUser(t.db);
    const b = await seedUser(t.db);
    await put(a.name, ownerTok, { permission: "write" });
    await put(b.name, ownerTok, { permission: "read" });
    await expectRefusal(t.request(path(`${b.name}/permission`), { headers: token(await a.token()) }), 403, "Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own");
    expect((await (await t.request(path(`${a.name}/permission`), { headers: token(ownerTok) })).json()).permission).toBe("write");
    const admin = await seedUser(t.db, { admin: true });
    expect((await (await t.request(path(`${owner.name}/permission`), { headers: token(await admin.token()) })).json()).permission).toBe("owner");
    expect((await (await t.request(path(`${admin.name}/permission`), { headers: token(await admin.token()) })).json()).permission).toBe("admin");
  });

  it("a collaborator whose account was deactivated or barred from signing in has no permission left (none)", async () => {
    for (const change of [{ isActive: false }, { prohibitLogin: true }] as const) {
      const u = await seedUser(t.db);
      await put(u.name, ownerTok, { permission: "write" });
      expect((await (await t.request(path(`${u.name}/permission`), { headers: token(ownerTok) })).json()).permission).toBe("write");
      await t.db.update(user).set(change).where(eq(user.id, u.id));
      const body = await (await t.request(path(`${u.name}/permission`), { headers: token(ownerTok) })).json();
      expect([body.permission, body.role_name], JSON.stringify(change)).toEqual(["none", "none"]);
    }
  });

  it("an unknown user → 404 (for a caller allowed to ask)", async () => {
    await expectRefusal(t.request(path("no-such-person/permission"), { headers: token(ownerTok) }), 404, NOT_FOUND);
  });

  it("reflects org roles: an org owner is owner, a team member has the team's access", async () => {
    const o = await seedUser(t.db);
    const org = await seedOrg(t, o);
    const m = await seedUser(t.db);
    await seedMember(t, org, m, { permission: "write", includesAll: true });
    const r = await apiRepo(t, await o.token(), { name: uniq("orgrepo"), private: true }, org.name);
    const base = `/api/v1/repos/${org.name}/${r.name}/collaborators`;
    expect((await (await t.request(`${base}/${o.name}/permission`, { headers: token(await o.token()) })).json()).permission).toBe("owner");
    expect((await (await t.request(`${base}/${m.name}/permission`, { headers: token(await o.token()) })).json()).permission).toBe("write");
  });
});

describe("rules 4–5: reviewers and assignees", () => {
  it("assignees are users with write access; reviewers need write on pull requests (403 otherwise)", async () => {
    const repo = await apiRepo(t, ownerTok, { name: uniq("ar"), private: true });
    const w = await seedUser(t.db);
    const r = await seedUser(t.db);
    await addCollaborator(t, ownerTok, repo.full_name, w, "write");
    await addCollaborator(t, ownerTok, repo.full_name, r, "read");
    const logins = async (res: Response) => (await res.json()).map((u: { login: string }) => u.login);
    const assignees = await t.request(`/api/v1/repos/${repo.full_name}/assignees`, { headers: token(ownerTok) });
    // GetRepoAssignees: by name, a user-owned repository's owner appended last
    expect(await logins(assignees)).toEqual([w.name, owner.name]);
    expect(roundTrips(assignees)).toBe(1);
    const reviewers = await t.request(`/api/v1/repos/${repo.full_name}/reviewers`, { headers: token(ownerTok) });
    expect(reviewers.status).toBe(200);
    // GetReviewers: everyone with read access by name, the caller too (the API's poster is 0), a user-owned repository's owner last
    expect(await logins(reviewers)).toEqual([...[w, r].map((u) => u.name).sort(), owner.name]);
    expect(await logins(await t.request(`/api/v1/repos/${repo.full_name}/reviewers`, { headers: token(await w.token()) }))).toEqual([...[w, r].map((u) => u.name).sort(), owner.name]);
    const denied = await t.request(`/api/v1/repos/${repo.full_name}/reviewers`, { headers: token(await r.token()) });
    expect(denied.status).toBe(403);
    expect((await denied.json()).message).toBe("doer has no permission to get reviewers");
  });

  it("an organization repository's assignees show a team member to whom the organization's member list shows the membership: a concealed one to members and site admins, not to an outside collaborator, a stranger or a public-only token", async () => {
    const orgOwner = await seedUser(t.db);
    const org = await seedOrg(t, orgOwner);
    const repo = await apiRepo(t, org.ownerToken, { name: uniq("oa") }, org.name);
    const [concealed, shown, outside, stranger] = [await seedUser(t.db), await seedUser(t.db), await seedUser(t.db), await seedUser(t.db)];
    const team = await (await t.request(`/api/v1/orgs/${org.name}/teams`, { method: "POST", headers: token(org.ownerToken), json: { name: uniq("w"), permission: "write", units: ["repo.code", "repo.issues"], includes_all_repositories: true } })).json();
    for (const u of [concealed, shown]) expect((await t.request(`/api/v1/teams/${team.id}/members/${u.name}`, { method: "PUT", headers: token(org.ownerToken) })).status).toBe(204);
    await t.db.update(orgUser).set({ isPublic: true }).where(and(eq(orgUser.orgId, org.id), eq(orgUser.uid, shown.id)));
    await addCollaborator(t, org.ownerToken, repo.full_name, outside, "write");
    const assignees = async (tk: string) => ((await (await t.request(`/api/v1/repos/${repo.full_name}/assignees`, { headers: token(tk) })).json()) as { login: string }[]).map((u) => u.login).sort();
    const all = [orgOwner.name, concealed.name, shown.name, outside.name].sort();
    // (the organization's owner is a member too, through the Owners team, concealed like any)
    const open = [shown.name, outside.name].sort();
    expect(await assignees(org.ownerToken)).toEqual(all);
    expect(await assignees(await concealed.token())).toEqual(all);
    expect(await assignees(await (await seedUser(t.db, { admin: true })).token())).toEqual(all);
    expect(await assignees(await outside.token())).toEqual(open);
    expect(await assignees(await stranger.token())).toEqual(open);
    expect(await assignees(await shown.token(["public-only", "read:repository", "read:user", "read:organization"]))).toEqual(open);
  });

  it("inactive users are never offered as assignees", async () => {
    const repo = await apiRepo(t, ownerTok, { name: uniq("in") });
    const w = await seedUser(t.db);
    await addCollaborator(t, ownerTok, repo.full_name, w, "write");
    const assignees = async () => (await (await t.request(`/api/v1/repos/${repo.full_name}/assignees`, { headers: token(ownerTok) })).json()).map((u: { login: string }) => u.login).sort();
    expect(await assignees()).toEqual([owner.name, w.name].sort());
    await t.request(`/api/v1/admin/users/${w.name}`, { method: "PATCH", headers: token(await (await seedUser(t.db, { admin: true })).token()), json: { active: false } });
    expect(await assignees()).toEqual([owner.name]);
    void and;
    void user;
  });
});
