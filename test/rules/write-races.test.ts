/**
 * A write racing a deletion: another request deletes the row a write hangs on (the repository a
 * collaborator is added to, the user a token is made for, …) after the route read it and before
 * its write. The write then changes nothing — no row is left pointing at nothing — and answers
 * 404, as the request would have been answered a moment later. Each case queues the real deletion
 * (a request through the app) just before the racing route's write batch, then checks the answer,
 * that the write left nothing, and that no row anywhere points at a deleted one.
 */
import { eq } from "drizzle-orm";
import { ZERO_OID } from "../../functions/git/bytes.ts";
import { FLUSH, pkt } from "../../functions/git/pkt-line.ts";
import { describe, expect, it } from "vitest";
import { accessToken, collaboration, emailAddress, gitPack, gitRef, label, orgUser, repository, team, teamRepo, teamUser, user, userBlocking, webhook } from "../../functions/db/schema.ts";
import { addTeamMember, apiRepo, basic, expectRefusal, interleavedPuts, interleavedWrites, NOT_FOUND, roundTrips, seedOrg, seedTeam, seedUser, testApp, token, uniq, type TestApp } from "../fixtures/app.ts";
import { expectNoOrphans } from "../fixtures/orphans.ts";
import { makeHistory, Scratch } from "../git/helpers.ts";

/** A fresh app whose next write batch first runs the queued deletions. */
async function racing() {
  const w = interleavedWrites();
  const t = await testApp({}, { wrap: w.wrap });
  const admin = await seedUser(t.db, { admin: true });
  const adminTok = await admin.token();
  const del = (path: string, tk: string, expected = 204) =>
    w.beforeNextWrite(async () => {
      const res = await t.request(path, { method: "DELETE", headers: token(tk) });
      if (res.status !== expected) throw new Error(`the racing DELETE ${path} answered ${res.status}: ${await res.text()}`);
    });
  return {
    t,
    /** The repository is deleted before the next write. */
    deleteRepo: (fullName: string, tk: string) => del(`/api/v1/repos/${fullName}`, tk),
    /** The user is purged (with everything they own) before the next write. */
    purgeUser: (name: string) => del(`/api/v1/admin/users/${name}?purge=true`, adminTok),
    deleteTeam: (id: number, tk: string) => del(`/api/v1/teams/${id}`, tk),
    deleteOrg: (name: string, tk: string) => del(`/api/v1/orgs/${name}`, tk),
  };
}

/**
 * The race's answer: 404 in Gitea's shape, in two round trips (the route's read, and its write that
 * changed nothing); `left` (the rows the write would have made) is empty, and no row anywhere
 * points at a deleted one.
 */
async function expectGone(t: TestApp, res: Promise<Response>, left: () => Promise<unknown[]>) {
  const r = await expectRefusal(res, 404, NOT_FOUND);
  expect(roundTrips(r)).toBe(2);
  expect(await left()).toEqual([]);
  await expectNoOrphans(t.client);
  t.close();
}

const PUT = (tk: string, json: unknown = {}) => ({ method: "PUT", headers: token(tk), json });
const POST = (tk: string, json: unknown) => ({ method: "POST", headers: token(tk), json });

/** A user with a token, and the login the API shows. */
async function account(t: TestApp) {
  const u = await seedUser(t.db);
  return { ...u, tk: await u.token() };
}

/** A real two-commit history's pack for `main`, made with the git CLI, pushed as the body of a receive-pack request. */
async function pushOfMain(scratch: Scratch) {
  const src = scratch.path("src");
  await makeHistory(scratch, src, { commits: 2, files: 2 });
  const tip = await scratch.gitText(["rev-parse", "main"], { cwd: src });
  const pack = (await scratch.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: "main\n" })).stdout;
  return (t: TestApp, a: { name: string; password: string }, repo: string) =>
    t.request(`/${a.name}/${repo}.git/git-receive-pack`, {
      method: "POST",
      body: Buffer.concat([pkt(`${ZERO_OID} ${tip} refs/heads/main\0report-status\n`), FLUSH, pack]) as Uint8Array<ArrayBuffer>,
      headers: { ...basic(a.name, a.password), "Content-Type": "application/x-git-receive-pack-request" },
    });
}

describe("a write whose row another request deleted between the route's read and its write → 404, nothing written, no orphan", () => {
  it("PUT a collaborator on a repository being deleted", async () => {
    const { t, deleteRepo } = await racing();
    const a = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("c") });
    const bob = await seedUser(t.db);
    deleteRepo(`${a.name}/${r.name}`, a.tk);
    await expectGone(t, t.request(`/api/v1/repos/${a.name}/${r.name}/collaborators/${bob.name}`, PUT(a.tk, { permission: "write" })), () =>
      t.db.select().from(collaboration).where(eq(collaboration.userId, bob.id)),
    );
  });

  it("PUT a collaborator who is being purged", async () => {
    const { t, purgeUser } = await racing();
    const a = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("c") });
    const bob = await seedUser(t.db);
    purgeUser(bob.name);
    await expectGone(t, t.request(`/api/v1/repos/${a.name}/${r.name}/collaborators/${bob.name}`, PUT(a.tk)), () => t.db.select().from(collaboration).where(eq(collaboration.repoId, r.id)));
  });

  it("PUT a member into a team being deleted", async () => {
    const { t, deleteTeam } = await racing();
    const o = await seedOrg(t, await account(t));
    const tm = await seedTeam(t, o, { units: ["repo.code"] });
    const bob = await seedUser(t.db);
    deleteTeam(tm.id, o.ownerToken);
    await expectGone(t, t.request(`/api/v1/teams/${tm.id}/members/${bob.name}`, PUT(o.ownerToken)), async () => [
      ...(await t.db.select().from(teamUser).where(eq(teamUser.uid, bob.id))),
      ...(await t.db.select().from(orgUser).where(eq(orgUser.uid, bob.id))),
    ]);
  });

  it("PUT a team member who is being purged", async () => {
    const { t, purgeUser } = await racing();
    const o = await seedOrg(t, await account(t));
    const tm = await seedTeam(t, o, { units: ["repo.code"] });
    const bob = await seedUser(t.db);
    purgeUser(bob.name);
    await expectGone(t, t.request(`/api/v1/teams/${tm.id}/members/${bob.name}`, PUT(o.ownerToken)), () => t.db.select().from(teamUser).where(eq(teamUser.teamId, tm.id)));
  });

  it("PUT a repository into a team being deleted", async () => {
    const { t, deleteTeam } = await racing();
    const o = await seedOrg(t, await account(t));
    const tm = await seedTeam(t, o, { units: ["repo.code"] });
    const r = await apiRepo(t, o.ownerToken, { name: uniq("tr") }, o.name);
    deleteTeam(tm.id, o.ownerToken);
    await expectGone(t, t.request(`/api/v1/teams/${tm.id}/repos/${o.name}/${r.name}`, PUT(o.ownerToken)), () => t.db.select().from(teamRepo).where(eq(teamRepo.repoId, r.id)));
  });

  it("PUT a repository being deleted into a team", async () => {
    const { t, deleteRepo } = await racing();
    const o = await seedOrg(t, await account(t));
    const tm = await seedTeam(t, o, { units: ["repo.code"] });
    const r = await apiRepo(t, o.ownerToken, { name: uniq("tr") }, o.name);
    deleteRepo(`${o.name}/${r.name}`, o.ownerToken);
    await expectGone(t, t.request(`/api/v1/teams/${tm.id}/repos/${o.name}/${r.name}`, PUT(o.ownerToken)), () => t.db.select().from(teamRepo).where(eq(teamRepo.teamId, tm.id)));
  });

  it("POST a label to a repository being deleted", async () => {
    const { t, deleteRepo } = await racing();
    const a = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("l") });
    deleteRepo(`${a.name}/${r.name}`, a.tk);
    await expectGone(t, t.request(`/api/v1/repos/${a.name}/${r.name}/labels`, POST(a.tk, { name: "late", color: "#00aabb" })), () => t.db.select().from(label).where(eq(label.repoId, r.id)));
  });

  it("POST a webhook to an organization being deleted", async () => {
    const { t, deleteOrg } = await racing();
    const o = await seedOrg(t, await account(t));
    deleteOrg(o.name, o.ownerToken);
    await expectGone(t, t.request(`/api/v1/orgs/${o.name}/hooks`, POST(o.ownerToken, { type: "gitea", config: { url: "https://hooks.example.com/in", content_type: "json" } })), () =>
      t.db.select().from(webhook).where(eq(webhook.ownerId, o.id)),
    );
  });

  it("POST a team to an organization being deleted", async () => {
    const { t, deleteOrg } = await racing();
    const o = await seedOrg(t, await account(t));
    deleteOrg(o.name, o.ownerToken);
    await expectGone(t, t.request(`/api/v1/orgs/${o.name}/teams`, POST(o.ownerToken, { name: uniq("late"), permission: "read", units: ["repo.code"] })), () =>
      t.db.select().from(team).where(eq(team.orgId, o.id)),
    );
  });

  it("POST a repository to an organization being deleted", async () => {
    const { t, deleteOrg } = await racing();
    const o = await seedOrg(t, await account(t));
    deleteOrg(o.name, o.ownerToken);
    await expectGone(t, t.request(`/api/v1/orgs/${o.name}/repos`, POST(o.ownerToken, { name: uniq("late") })), () => t.db.select().from(repository).where(eq(repository.ownerId, o.id)));
  });

  it("POST a repository to an organization by a member being purged (who would become its admin collaborator)", async () => {
    const { t, purgeUser } = await racing();
    const o = await seedOrg(t, await account(t));
    const bob = await account(t);
    await addTeamMember(t, o, (await seedTeam(t, o, { permission: "write", units: ["repo.code"], canCreateOrgRepo: true })).id, bob);
    purgeUser(bob.name);
    await expectGone(t, t.request(`/api/v1/orgs/${o.name}/repos`, POST(bob.tk, { name: uniq("late") })), () => t.db.select().from(repository).where(eq(repository.ownerId, o.id)));
  });

  it("POST /user/repos by a user being purged", async () => {
    const { t, purgeUser } = await racing();
    const a = await account(t);
    purgeUser(a.name);
    await expectGone(t, t.request("/api/v1/user/repos", POST(a.tk, { name: uniq("late") })), () => t.db.select().from(repository).where(eq(repository.ownerId, a.id)));
  });

  it("POST a fork of a repository being deleted", async () => {
    const { t, deleteRepo } = await racing();
    const a = await account(t);
    const b = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("f") });
    deleteRepo(`${a.name}/${r.name}`, a.tk);
    await expectGone(t, t.request(`/api/v1/repos/${a.name}/${r.name}/forks`, POST(b.tk, {})), () => t.db.select().from(repository).where(eq(repository.ownerId, b.id)));
  });

  it("POST a repository generated from a template being deleted", async () => {
    const { t, deleteRepo } = await racing();
    const a = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("tpl"), template: true });
    deleteRepo(`${a.name}/${r.name}`, a.tk);
    await expectGone(t, t.request(`/api/v1/repos/${a.name}/${r.name}/generate`, POST(a.tk, { owner: a.name, name: uniq("gen"), topics: true })), () =>
      t.db.select().from(repository).where(eq(repository.templateId, r.id)),
    );
  });

  it("PATCH a repository being deleted (units and mirror settings are written with the row)", async () => {
    const { t, deleteRepo } = await racing();
    const a = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("e") });
    deleteRepo(`${a.name}/${r.name}`, a.tk);
    await expectGone(t, t.request(`/api/v1/repos/${a.name}/${r.name}`, { method: "PATCH", headers: token(a.tk), json: { has_wiki: false, has_projects: false, description: "late" } }), () =>
      t.db.select().from(repository).where(eq(repository.id, r.id)),
    );
  });

  it("PUT a file through the contents API into a repository being deleted: no ref, pack row or pack file left", async () => {
    const { t, deleteRepo } = await racing();
    const a = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("g"), auto_init: true });
    deleteRepo(`${a.name}/${r.name}`, a.tk);
    await expectGone(t, t.request(`/api/v1/repos/${a.name}/${r.name}/contents/late.txt`, POST(a.tk, { content: Buffer.from("late\n").toString("base64"), message: "late" })), async () => [
      ...(await t.db.select().from(gitRef).where(eq(gitRef.repoId, r.id))),
      ...(await t.db.select().from(gitPack).where(eq(gitPack.catalogRepoId, r.id))),
      ...(await t.objects.list(String(r.id))),
    ]);
  });

  it("git push (receive-pack) into a repository being deleted: 404 Repository not found, nothing stored", async () => {
    const { t, deleteRepo } = await racing();
    const a = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("p") });
    const scratch = new Scratch("write-races-");
    try {
      const push = await pushOfMain(scratch);
      deleteRepo(`${a.name}/${r.name}`, a.tk);
      const res = await push(t, a, r.name);
      expect([res.status, await res.text()]).toEqual([404, "Repository not found\n"]);
      expect(await t.db.select().from(gitRef).where(eq(gitRef.repoId, r.id))).toEqual([]);
      expect(await t.db.select().from(gitPack).where(eq(gitPack.catalogRepoId, r.id))).toEqual([]);
      expect(await t.objects.list(String(r.id))).toEqual([]);
      await expectNoOrphans(t.client);
    } finally {
      scratch.cleanup();
      t.close();
    }
  });

  it("a push and a contents commit whose repository is deleted before their pack is stored leave no pack file behind", async () => {
    const puts = interleavedPuts();
    const t = await testApp({}, { wrapObjects: puts.wrap });
    const a = await account(t);
    const scratch = new Scratch("write-races-");
    try {
      const push = await pushOfMain(scratch);
      const deleteFirst = (fullName: string) =>
        puts.beforeNextPut(async () => {
          const res = await t.request(`/api/v1/repos/${fullName}`, { method: "DELETE", headers: token(a.tk) });
          if (res.status !== 204) throw new Error(`the racing DELETE answered ${res.status}`);
        });
      const pushed = await apiRepo(t, a.tk, { name: uniq("p") });
      deleteFirst(`${a.name}/${pushed.name}`);
      const res = await push(t, a, pushed.name);
      expect([res.status, await res.text()]).toEqual([404, "Repository not found\n"]);
      expect(await t.objects.list(String(pushed.id))).toEqual([]);
      const committed = await apiRepo(t, a.tk, { name: uniq("c"), auto_init: true });
      deleteFirst(`${a.name}/${committed.name}`);
      await expectRefusal(t.request(`/api/v1/repos/${a.name}/${committed.name}/contents/late.txt`, POST(a.tk, { content: Buffer.from("late\n").toString("base64"), message: "late" })), 404, NOT_FOUND);
      expect(await t.objects.list(String(committed.id))).toEqual([]);
      await expectNoOrphans(t.client);
    } finally {
      scratch.cleanup();
      t.close();
    }
  });

  it("a push whose repository is deleted between its pack's files answers 404 and leaves none of them (fuzz audit: 500, files left)", async () => {
    const puts = interleavedPuts();
    const t = await testApp({}, { wrapObjects: puts.wrap });
    const a = await account(t);
    const scratch = new Scratch("write-races-");
    try {
      const push = await pushOfMain(scratch);
      const pushed = await apiRepo(t, a.tk, { name: uniq("p") });
      // the pack's first file is stored, then the repository (files and rows) is deleted, then the rest
      puts.beforeNextPut(async () =>
        puts.beforeNextPut(async () => {
          const res = await t.request(`/api/v1/repos/${a.name}/${pushed.name}`, { method: "DELETE", headers: token(a.tk) });
          if (res.status !== 204) throw new Error(`the racing DELETE answered ${res.status}`);
        }),
      );
      const res = await push(t, a, pushed.name);
      expect([res.status, await res.text()]).toEqual([404, "Repository not found\n"]);
      expect(await t.objects.list(String(pushed.id))).toEqual([]);
      await expectNoOrphans(t.client);
    } finally {
      scratch.cleanup();
      t.close();
    }
  });

  it("POST a branch to a repository being deleted", async () => {
    const { t, deleteRepo } = await racing();
    const a = await account(t);
    const r = await apiRepo(t, a.tk, { name: uniq("g"), auto_init: true });
    deleteRepo(`${a.name}/${r.name}`, a.tk);
    await expectGone(t, t.request(`/api/v1/repos/${a.name}/${r.name}/branches`, POST(a.tk, { new_branch_name: "late" })), () => t.db.select().from(gitRef).where(eq(gitRef.repoId, r.id)));
  });

  it("POST an organization by a user being purged", async () => {
    const { t, purgeUser } = await racing();
    const a = await account(t);
    const name = uniq("org");
    purgeUser(a.name);
    await expectGone(t, t.request("/api/v1/orgs", POST(a.tk, { username: name })), () => t.db.select().from(user).where(eq(user.lowerName, name.toLowerCase())));
  });

  it("POST a token for a user being purged", async () => {
    const { t, purgeUser } = await racing();
    const a = await seedUser(t.db);
    purgeUser(a.name);
    await expectGone(t, t.request(`/api/v1/users/${a.name}/tokens`, { method: "POST", headers: basic(a.name, a.password), json: { name: "late", scopes: ["read:user"] } }), () =>
      t.db.select().from(accessToken).where(eq(accessToken.uid, a.id)),
    );
  });

  it("POST e-mail addresses for a user being purged", async () => {
    const { t, purgeUser } = await racing();
    const a = await account(t);
    purgeUser(a.name);
    await expectGone(t, t.request("/api/v1/user/emails", POST(a.tk, { emails: ["late@example.com"] })), () => t.db.select().from(emailAddress).where(eq(emailAddress.uid, a.id)));
  });

  it("PUT a block of a user being purged", async () => {
    const { t, purgeUser } = await racing();
    const a = await account(t);
    const bob = await seedUser(t.db);
    purgeUser(bob.name);
    await expectGone(t, t.request(`/api/v1/user/blocks/${bob.name}`, PUT(a.tk)), () => t.db.select().from(userBlocking).where(eq(userBlocking.blockerId, a.id)));
  });
});

describe("a delete that a fork raced: the fork would read packs whose copies were not made", () => {
  it("DELETE /repos/{owner}/{repo} while it is forked → 409 try again, both repositories read their files; deleted on the next try, the fork still reads", async () => {
    const w = interleavedWrites();
    const t = await testApp({}, { wrap: w.wrap });
    const a = await account(t);
    const b = await account(t);
    const base = await apiRepo(t, a.tk, { name: uniq("base"), auto_init: true });
    w.beforeNextWrite(async () => expect((await t.request(`/api/v1/repos/${a.name}/${base.name}/forks`, POST(b.tk, {}))).status).toBe(202));
    await expectRefusal(t.request(`/api/v1/repos/${a.name}/${base.name}`, { method: "DELETE", headers: token(a.tk) }), 409, "the repository was forked while it was being deleted; try again");
    const readme = (owner: string) => t.request(`/api/v1/repos/${owner}/${base.name}/raw/README.md`, { headers: token(b.tk) });
    expect((await readme(a.name)).status).toBe(200);
    expect((await readme(b.name)).status).toBe(200);
    expect((await t.request(`/api/v1/repos/${a.name}/${base.name}`, { method: "DELETE", headers: token(a.tk) })).status).toBe(204);
    expect((await readme(b.name)).status).toBe(200);
    t.close();
  });
});
