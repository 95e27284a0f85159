/**
 * The total of a user search without a keyword is counted by class: the individuals of the
 * visibility classes a caller may see whole come from `user_count`, kept by triggers on `user`, and
 * only the caller itself and the users sharing an organization with it are looked at one by one.
 * The rule it must keep: the total is exactly the number of users the pages list — for every kind
 * of caller and token, and after every kind of write that moves an account between classes or
 * changes who shares an organization with whom.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allPages, seedMember, seedOrg, seedUser, testApp, token, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let adminTok = "";
let carol: SeededUser;
let lim2: SeededUser;
let other: SeededOrg;
/** Caller name → Authorization headers (none: anonymous). */
const callers: [string, Record<string, string>][] = [];

beforeAll(async () => {
  t = await testApp();
  const admin = await seedUser(t.db, { admin: true });
  adminTok = await admin.token();
  const alice = await seedUser(t.db);
  const bob = await seedUser(t.db, { visibility: 1 });
  // A private user cannot be seen, so not added, by an organization's owner: made private once a member.
  const hid = await seedUser(t.db);
  carol = await seedUser(t.db, { restricted: true });
  const dave = await seedUser(t.db);
  lim2 = await seedUser(t.db, { visibility: 1 });
  const loner = await seedUser(t.db, { visibility: 2 });
  // carol (restricted) shares an organization with bob (limited), hid (private) and dave; lim2 shares none with her.
  const shared = await seedOrg(t, alice);
  for (const u of [bob, hid, carol, dave]) await seedMember(t, shared, u);
  other = await seedOrg(t, lim2, { visibility: 2 });
  await makePrivate(hid.name);
  callers.push(
    ["anonymous", {}],
    ["alice", token(await alice.token())],
    ["bob (limited)", token(await bob.token())],
    ["hid (private)", token(await hid.token())],
    ["a private user in no organization", token(await loner.token())],
    ["carol (restricted)", token(await carol.token())],
    ["admin", token(adminTok)],
    ["admin as carol (sudo)", { ...token(adminTok), Sudo: carol.name }],
    ["admin, public-only token", token(await admin.token(["public-only", "read:user"]))],
    ["alice, public-only token", token(await alice.token(["public-only", "read:user"]))],
  );
});
afterAll(() => t.close());

const edit = async (name: string, visibility: string) =>
  expect((await t.request(`/api/v1/admin/users/${name}`, { method: "PATCH", headers: token(adminTok), json: { login_name: name, source_id: 0, visibility } })).status).toBe(200);
const makePrivate = (name: string) => edit(name, "private");

/** Every user the pages list (in pages of 3), and the total the first page states. */
const listed = (headers: Record<string, string>) => allPages(t, "/api/v1/users/search", headers, 3, (u: { login: string }) => u.login);

/** For every caller: the stated total is the number of users listed, none twice; `user_count` equals a GROUP BY of the rows. */
async function expectTotalsExact(when: string) {
  const problems: string[] = [];
  for (const [who, headers] of callers) {
    const { total, names } = await listed(headers);
    if (new Set(names).size !== names.length) problems.push(`${when}, ${who}: a user listed twice`);
    if (total !== names.length) problems.push(`${when}, ${who}: total ${total}, listed ${names.length}`);
  }
  expect(problems).toEqual([]);
  const [kept, actual] = await t.driver.batch(
    [
      { text: "SELECT type, visibility, n FROM user_count WHERE n <> 0 ORDER BY 1, 2", args: [] },
      { text: "SELECT type, visibility, COUNT(*) FROM user GROUP BY 1, 2 ORDER BY 1, 2", args: [] },
    ],
    "read",
  );
  expect(kept, when).toEqual(actual);
}

describe("the total of a user search without a keyword, by class (user_count)", () => {
  it("for every kind of caller and token", async () => {
    await expectTotalsExact("at the start");
  });

  it("after visibility changes, a deletion, a new organization and a new shared organization", async () => {
    await edit(lim2.name, "private");
    await expectTotalsExact("lim2 made private");
    await edit(lim2.name, "public");
    await edit(carol.name, "limited");
    await expectTotalsExact("lim2 public, carol limited");
    // carol now shares an organization with a private user too.
    const hid2 = await seedUser(t.db);
    await seedMember(t, other, hid2);
    await seedMember(t, other, carol);
    await makePrivate(hid2.name);
    await expectTotalsExact("carol joined another organization");
    const gone = await seedUser(t.db, { visibility: 1 });
    expect((await t.request(`/api/v1/admin/users/${gone.name}`, { method: "DELETE", headers: token(adminTok) })).status).toBe(204);
    await seedOrg(t, hid2, { visibility: 1 });
    await expectTotalsExact("a user deleted, a limited organization created");
  });
});
