/**
 * The total of a repository search without a keyword is counted by class (issue 9 B.5): the
 * repositories every caller of a kind may read come from `repo_count`, kept by triggers, and only
 * what a caller reaches by relation is looked at one by one. The rule it must keep: the total is
 * exactly the number of repositories the pages list — for every kind of caller and token, every
 * filter, and after every kind of write that moves a repository between classes.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repository, user } from "../../functions/db/schema.ts";
import { addCollaborator, addTeamMember, allPages, apiRepo, seedMember, seedOrg, seedTeam, seedUser, testApp, token, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
let carol: SeededUser;
let dave: SeededUser;
let hid: SeededUser;
let lim: SeededUser;
let admin: SeededUser;
let pub: SeededOrg;
let priv: SeededOrg;
let limOrg: SeededOrg;
/** Caller name → Authorization headers (none: anonymous). */
const callers: [string, Record<string, string>][] = [];

beforeAll(async () => {
  t = await testApp();
  [alice, bob, dave] = [await seedUser(t.db), await seedUser(t.db), await seedUser(t.db)];
  carol = await seedUser(t.db, { restricted: true });
  hid = await seedUser(t.db, { visibility: 2 });
  lim = await seedUser(t.db, { visibility: 1 });
  admin = await seedUser(t.db, { admin: true });
  const aliceTok = await alice.token();
  // alice's own: public, private, template, archived, and a mirror.
  await apiRepo(t, aliceTok, { name: "a" });
  await apiRepo(t, aliceTok, { name: "p", private: true });
  await apiRepo(t, aliceTok, { name: "tpl", template: true });
  await apiRepo(t, aliceTok, { name: "arch" });
  await t.request(`/api/v1/repos/${alice.name}/arch`, { method: "PATCH", headers: token(aliceTok), json: { archived: true } });
  const mir = await apiRepo(t, aliceTok, { name: "mir" });
  await t.db.update(repository).set({ isMirror: true }).where(eq(repository.id, mir.id));
  // bob collaborates on alice's private repository and forks her public one.
  await addCollaborator(t, aliceTok, `${alice.name}/p`, bob, "read");
  expect((await t.request(`/api/v1/repos/${alice.name}/a/forks`, { method: "POST", headers: token(await bob.token()), json: {} })).status).toBe(202);
  // A hidden (private) user and a limited user with public and private repositories; dave shares an organization with the hidden one.
  await apiRepo(t, await hid.token(), { name: "h" });
  await apiRepo(t, await hid.token(), { name: "hp", private: true });
  await apiRepo(t, await lim.token(), { name: "l" });
  await apiRepo(t, await lim.token(), { name: "lp", private: true });
  // A public organization (carol, restricted, in a team covering every repository), a private one
  // (bob in a team of one repository; dave a member), a limited one.
  pub = await seedOrg(t, alice);
  await apiRepo(t, pub.ownerToken, { name: "o1" }, pub.name);
  await apiRepo(t, pub.ownerToken, { name: "o2", private: true }, pub.name);
  await seedMember(t, pub, carol, { includesAll: true });
  priv = await seedOrg(t, alice, { visibility: 2 });
  await apiRepo(t, priv.ownerToken, { name: "q1" }, priv.name);
  await apiRepo(t, priv.ownerToken, { name: "q2", private: true }, priv.name);
  await apiRepo(t, priv.ownerToken, { name: "q3", private: true }, priv.name);
  const team = await seedTeam(t, priv);
  await addTeamMember(t, priv, team.id, bob);
  expect((await t.request(`/api/v1/teams/${team.id}/repos/${priv.name}/q2`, { method: "PUT", headers: token(priv.ownerToken) })).status).toBe(204);
  await seedMember(t, priv, dave);
  await apiRepo(t, await dave.token(), { name: "d", private: true });
  // The hidden user's own organization, with dave in it: dave may see the hidden user.
  await seedMember(t, await seedOrg(t, hid), dave);
  limOrg = await seedOrg(t, lim, { visibility: 1 });
  await apiRepo(t, limOrg.ownerToken, { name: "m1" }, limOrg.name);
  await apiRepo(t, limOrg.ownerToken, { name: "m2", private: true }, limOrg.name);
  callers.push(
    ["anonymous", {}],
    ["alice", token(aliceTok)],
    ["bob", token(await bob.token())],
    ["carol (restricted)", token(await carol.token())],
    ["dave", token(await dave.token())],
    ["hid", token(await hid.token())],
    ["admin", token(await admin.token())],
    // Sudo makes the viewer the target: the admin's classes must not come with it.
    ["admin as carol (sudo)", { ...token(await admin.token()), Sudo: carol.name }],
    ["admin, public-only token", token(await admin.token(["public-only", "read:repository"]))],
    ["bob, public-only token", token(await bob.token(["public-only", "read:repository"]))],
  );
});
afterAll(() => t.close());

/** Filters of a search without a keyword: the class-counted ones, and others that count row by row. */
const QUERIES = [
  "",
  "private=false",
  "is_private=true",
  "is_private=false",
  "template=true",
  "template=false",
  "archived=true",
  "archived=false",
  "mode=fork",
  "mode=mirror",
  "mode=source",
  "mode=source&is_private=false&archived=false",
  "sort=updated&order=desc",
  "sort=id&order=desc&priority_owner_id=1",
  "mode=collaborative",
];

/** Every repository the pages of `query` list (in pages of 7), and the total the first page states. */
const listed = (query: string, headers: Record<string, string>) => allPages(t, `/api/v1/repos/search?${query}`, headers, 7, (r: { full_name: string }) => r.full_name);

/** For every caller and filter: the stated total is the number of repositories listed, none twice. */
async function expectTotalsExact(when: string) {
  const problems: string[] = [];
  for (const [who, headers] of callers) {
    for (const q of QUERIES) {
      const { total, names } = await listed(q, headers);
      if (new Set(names).size !== names.length) problems.push(`${when}, ${who}, ?${q}: a repository listed twice`);
      if (total !== names.length) problems.push(`${when}, ${who}, ?${q}: total ${total}, listed ${names.length}`);
    }
  }
  expect(problems).toEqual([]);
}

/** `repo_count` holds exactly the classes of the repositories there are (emptied classes may stay, at 0). */
async function expectCountsKept() {
  const [kept, actual] = await t.driver.batch(
    [
      { text: "SELECT vis, is_private, is_fork, is_mirror, is_template, is_archived, n FROM repo_count WHERE n <> 0 ORDER BY 1, 2, 3, 4, 5, 6", args: [] },
      {
        text: `SELECT COALESCE(u.visibility, -1), r.is_private, r.is_fork, r.is_mirror, r.is_template, r.is_archived, COUNT(*)
          FROM repository r LEFT JOIN user u ON u.id = r.owner_id GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`,
        args: [],
      },
    ],
    "read",
  );
  const rows = (r: unknown[]) => r.map((row) => (row as unknown[]).map(Number).join(" "));
  expect(rows(actual!).length).toBeGreaterThan(0);
  expect(rows(kept!)).toEqual(rows(actual!));
}

describe("a search without a keyword states the total its pages list", () => {
  it("for every kind of caller and token, with every filter", async () => {
    await expectCountsKept();
    await expectTotalsExact("at the start");
  });

  it("after repositories change privacy, archive state and template flag, and after one is deleted", async () => {
    const aliceTok = await alice.token();
    await t.request(`/api/v1/repos/${alice.name}/a`, { method: "PATCH", headers: token(aliceTok), json: { private: true } });
    await t.request(`/api/v1/repos/${alice.name}/p`, { method: "PATCH", headers: token(aliceTok), json: { private: false, template: true } });
    await t.request(`/api/v1/repos/${alice.name}/arch`, { method: "PATCH", headers: token(aliceTok), json: { archived: false } });
    await t.request(`/api/v1/repos/${priv.name}/q1`, { method: "PATCH", headers: token(priv.ownerToken), json: { private: true } });
    expect((await t.request(`/api/v1/repos/${alice.name}/tpl`, { method: "DELETE", headers: token(aliceTok) })).status).toBe(204);
    await expectCountsKept();
    await expectTotalsExact("after repository edits");
  });

  it("after owners change visibility: an organization through its edit, a user through the admin's", async () => {
    expect((await t.request(`/api/v1/orgs/${pub.name}`, { method: "PATCH", headers: token(pub.ownerToken), json: { visibility: "private" } })).status).toBe(200);
    expect((await t.request(`/api/v1/orgs/${priv.name}`, { method: "PATCH", headers: token(priv.ownerToken), json: { visibility: "limited" } })).status).toBe(200);
    const adminTok = await admin.token();
    const edit = (who: SeededUser, visibility: string) =>
      t.request(`/api/v1/admin/users/${who.name}`, { method: "PATCH", headers: token(adminTok), json: { login_name: who.name, source_id: 0, visibility } });
    expect((await edit(hid, "public")).status).toBe(200);
    expect((await edit(lim, "private")).status).toBe(200);
    expect((await edit(alice, "limited")).status).toBe(200);
    await expectCountsKept();
    await expectTotalsExact("after visibility changes");
  });

  it("after a user with repositories is purged and new repositories are made", async () => {
    const adminTok = await admin.token();
    expect((await t.request(`/api/v1/admin/users/${dave.name}?purge=true`, { method: "DELETE", headers: token(adminTok) })).status).toBe(204);
    callers.splice(callers.findIndex(([who]) => who === "dave"), 1);
    const eve = await seedUser(t.db, { visibility: 1 });
    await apiRepo(t, await eve.token(), { name: "e1" });
    await apiRepo(t, await eve.token(), { name: "e2", private: true });
    expect((await t.request(`/api/v1/admin/users/${eve.name}?purge=true`, { method: "DELETE", headers: token(adminTok) })).status).toBe(204);
    await apiRepo(t, await bob.token(), { name: "late" });
    await apiRepo(t, pub.ownerToken, { name: "late", private: true }, pub.name);
    await expectCountsKept();
    await expectTotalsExact("after a purge and new repositories");
  });
});

describe("repo_count is kept by the database, whatever statement writes", () => {
  it("a repository moved to another owner, an owner's row deleted before its repositories, a repository inserted before its owner's row", async () => {
    const other = await seedUser(t.db, { visibility: 2 });
    const [a] = await t.db.select().from(repository).where(eq(repository.ownerId, bob.id));
    await t.db.update(repository).set({ ownerId: other.id }).where(eq(repository.id, a!.id));
    await expectCountsKept();
    // The owner's row goes first, its repositories after: they leave the class -1.
    await t.db.delete(user).where(eq(user.id, other.id));
    await expectCountsKept();
    await t.db.delete(repository).where(eq(repository.ownerId, other.id));
    await expectCountsKept();
    // A repository whose owner's row comes later joins the owner's class when it does.
    await t.db.insert(repository).values({ ownerId: 999_999, ownerName: "ghost", lowerName: "g", name: "g" });
    await expectCountsKept();
    await expectTotalsExact("with a repository without an owner row");
    await t.db.insert(user).values({ id: 999_999, name: "ghost", lowerName: "ghost", visibility: 1 });
    await expectCountsKept();
    await expectTotalsExact("after direct writes");
  });
});
