/**
 * The order of the repository lists, as Gitea's handlers ask for it: GET /user/repos goes through
 * SearchRepository without an order, which sorts alphabetically (SearchOrderByAlphabetically; here
 * by the lower-cased name, as `sort=alpha` of the search, then by id); an owner's list
 * (listUserRepos, `OrderBy: "id ASC"`) and a repository's forks keep the order of creation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCollaborator, apiRepo, seedOrg, seedUser, testApp, token, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
let aliceTok: string;
let bobTok: string;
let orgName: string;
/** Created in this order: neither the creation order nor the byte order of the names is alphabetical. */
const NAMES = ["mango", "Apple", "zebra", "banana", "Cherry"];

const names = async (path: string, tk: string) => {
  const res = await t.request(path, { headers: token(tk) });
  expect(res.status, path).toBe(200);
  return ((await res.json()) as { full_name: string }[]).map((r) => r.full_name);
};

beforeAll(async () => {
  t = await testApp();
  [alice, bob] = [await seedUser(t.db), await seedUser(t.db)];
  [aliceTok, bobTok] = await Promise.all([alice.token(), bob.token()]);
  for (const name of NAMES) await apiRepo(t, aliceTok, { name });
  orgName = (await seedOrg(t, alice)).name;
  for (const name of NAMES) await apiRepo(t, aliceTok, { name }, orgName);
  // bob's own "kiwi", and alice's "zebra" shared with him: his list mixes owners.
  await apiRepo(t, bobTok, { name: "kiwi" });
  await addCollaborator(t, aliceTok, `${alice.name}/zebra`, bob, "read");
  for (const tk of [bobTok, aliceTok]) {
    const res = await t.request(`/api/v1/repos/${orgName}/mango/forks`, { method: "POST", headers: token(tk), json: tk === aliceTok ? { name: "mango-fork" } : {} });
    expect(res.status).toBe(202);
  }
});
afterAll(() => t.close());

describe("repository list order", () => {
  it("GET /user/repos lists by name, case-insensitively, across owners", async () => {
    const [a, o] = [alice.name, orgName];
    const byName = [`${a}/Apple`, `${o}/Apple`, `${a}/banana`, `${o}/banana`, `${a}/Cherry`, `${o}/Cherry`, `${a}/mango`, `${o}/mango`, `${a}/mango-fork`, `${a}/zebra`, `${o}/zebra`];
    expect(await names("/api/v1/user/repos?limit=50", aliceTok)).toEqual(byName);
    expect(await names("/api/v1/user/repos", bobTok)).toEqual([`${bob.name}/kiwi`, `${bob.name}/mango`, `${alice.name}/zebra`]);
  });

  it("GET /user/repos pages through the same order", async () => {
    const all = await names("/api/v1/user/repos?limit=50", aliceTok);
    const pages = [...(await names("/api/v1/user/repos?limit=4&page=1", aliceTok)), ...(await names("/api/v1/user/repos?limit=4&page=2", aliceTok)), ...(await names("/api/v1/user/repos?limit=4&page=3", aliceTok))];
    expect(pages).toEqual(all);
  });

  it("an owner's list and a repository's forks keep the order of creation", async () => {
    expect(await names(`/api/v1/users/${alice.name}/repos`, aliceTok)).toEqual([...NAMES, "mango-fork"].map((n) => `${alice.name}/${n}`));
    expect(await names(`/api/v1/orgs/${orgName}/repos`, aliceTok)).toEqual(NAMES.map((n) => `${orgName}/${n}`));
    expect(await names(`/api/v1/repos/${orgName}/mango/forks`, aliceTok)).toEqual([`${bob.name}/mango`, `${alice.name}/mango-fork`]);
  });
});
