/** Collaborators, reviewers and assignees: the spec's rules 1–5. */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collaboration, user, userBlocking } from "../../functions/db/schema.ts";
import { apiRepo, roundTrips, seedMember, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

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
      expect(res.status, method).toBe(422);
    }
  });

  it("check answers 204 for a collaborator and 404 otherwise (1 round trip)", async () => {
    const u = await seedUser(t.db);
    expect((await t.request(path(u.name), { headers: token(ownerTok) })).status).toBe(404);
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
    expect(row.mode).toBe(2);
    await put(u.name, ownerTok, { permission: "admin" });
    const [row2] = await t.db.select().from(collaboration).where(eq(collaboration.userId, u.id));
    expect(row2.mode).toBe(3);
    expect((await put(u.name, ownerTok, { permission: "owner" })).status).toBe(422);
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
    expect((await put(u.name, ownerTok)).status).toBe(403);
    expect(await t.db.select().from(collaboration).where(eq(collaboration.userId, u.id))).toEqual([]);
  });

  it("only repository admins may add: a write collaborator gets 403", async () => {
    const w = await seedUser(t.db);
    await put(w.name, ownerTok, { permission: "write" });
    const u = await seedUser(t.db);
    const res = await put(u.name, await w.token());
    expect(res.status).toBe(403);
  });

  it("removing a collaborator revokes access at once (GHSA-2vgv-hgv4-22mh)", async () => {
    const u = await seedUser(t.db);
    const tk = await u.token();
    await put(u.name, ownerTok, { permission: "read" });
    expect((await t.request(`/api/v1/repos/${owner.name}/${repoName}`, { headers: token(tk) })).status).toBe(200);
    expect((await t.request(path(u.name), { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    expect((await t.request(`/api/v1/repos/${owner.name}/${repoName}`, { headers: token(tk) })).status).toBe(404);
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
    expect((await t.request(path(`${b.name}/permission`), { headers: token(await a.token()) })).status).toBe(403);
    expect((await (await t.request(path(`${a.name}/permission`), { headers: token(ownerTok) })).json()).permission).toBe("write");
    const admin = await seedUser(t.db, { admin: true });
    expect((await (await t.request(path(`${owner.name}/permission`), { headers: token(await admin.token()) })).json()).permission).toBe("owner");
    expect((await (await t.request(path(`${admin.name}/permission`), { headers: token(await admin.token()) })).json()).permission).toBe("admin");
  });

  it("an unknown user → 404 (for a caller allowed to ask)", async () => {
    expect((await t.request(path("no-such-person/permission"), { headers: token(ownerTok) })).status).toBe(404);
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
    const w = await seedUser(t.db);
    const r = await seedUser(t.db);
    await put(w.name, ownerTok, { permission: "write" });
    await put(r.name, ownerTok, { permission: "read" });
    const assignees = await (await t.request(`/api/v1/repos/${owner.name}/${repoName}/assignees`, { headers: token(ownerTok) })).json();
    const names = assignees.map((u: { login: string }) => u.login);
    expect(names).toContain(owner.name);
    expect(names).toContain(w.name);
    expect(names).not.toContain(r.name);
    const reviewers = await t.request(`/api/v1/repos/${owner.name}/${repoName}/reviewers`, { headers: token(ownerTok) });
    expect(reviewers.status).toBe(200);
    expect((await reviewers.json()).map((u: { login: string }) => u.login)).toContain(r.name);
    const denied = await t.request(`/api/v1/repos/${owner.name}/${repoName}/reviewers`, { headers: token(await r.token()) });
    expect(denied.status).toBe(403);
    expect((await denied.json()).message).toBe("doer has no permission to get reviewers");
  });

  it("inactive users are never offered as assignees", async () => {
    const w = await seedUser(t.db);
    await put(w.name, ownerTok, { permission: "write" });
    await t.db.update(user).set({ isActive: false }).where(eq(user.id, w.id));
    const assignees = await (await t.request(`/api/v1/repos/${owner.name}/${repoName}/assignees`, { headers: token(ownerTok) })).json();
    expect(assignees.map((u: { login: string }) => u.login)).not.toContain(w.name);
    void and;
  });
});
