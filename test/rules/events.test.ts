/**
 * The event seam (functions/events, issue 9 A.4): a write's events become their rows in the write's
 * own batch — recorded exactly when the write commits, never for a write that failed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRepo, roundTrips, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let tok: string;

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  tok = await alice.token();
});
afterAll(() => t.close());

/** The caller's own feed: [op_type, repository name, content], newest first. */
async function feed(): Promise<[string, string, string][]> {
  const res = await t.request(`/api/v1/users/${alice.name}/activities/feeds?limit=50`, { headers: token(tok) });
  return (await res.json()).map((a: { op_type: string; repo: { name: string }; content: string }) => [a.op_type, a.repo.name, a.content]);
}

describe("events become rows in the write's own batch", () => {
  it("a created repository records create_repo; a refused duplicate records nothing", async () => {
    const name = uniq("ev");
    const before = (await feed()).length;
    await apiRepo(t, tok, { name });
    expect((await feed())[0]).toEqual(["create_repo", name, ""]);
    const dup = await t.request("/api/v1/user/repos", { method: "POST", headers: token(tok), json: { name } });
    expect(dup.status).toBe(409);
    expect((await feed()).length).toBe(before + 1);
  });

  it("a rename records rename_repo with the old name, in at most 2 round trips; a refused rename records nothing", async () => {
    const a = uniq("eva");
    const b = uniq("evb");
    await apiRepo(t, tok, { name: a });
    await apiRepo(t, tok, { name: b });
    const refused = await t.request(`/api/v1/repos/${alice.name}/${a}`, { method: "PATCH", headers: token(tok), json: { name: b } });
    expect(refused.status).toBe(422);
    expect((await feed()).filter(([op]) => op === "rename_repo")).toEqual([]);
    const renamed = await t.request(`/api/v1/repos/${alice.name}/${a}`, { method: "PATCH", headers: token(tok), json: { name: `${a}-new` } });
    expect(renamed.status).toBe(200);
    expect(roundTrips(renamed)).toBeLessThanOrEqual(2);
    expect((await feed())[0]).toEqual(["rename_repo", `${a}-new`, a]);
  });

  it("a visibility change makes the repository's activity as private as the repository", async () => {
    const name = uniq("evv");
    await apiRepo(t, tok, { name });
    const anon = async () => (await (await t.request(`/api/v1/users/${alice.name}/activities/feeds?limit=50`)).json()).map((x: { repo: { name: string } }) => x.repo.name);
    expect(await anon()).toContain(name);
    expect((await t.request(`/api/v1/repos/${alice.name}/${name}`, { method: "PATCH", headers: token(tok), json: { private: true } })).status).toBe(200);
    expect(await anon()).not.toContain(name);
    expect((await feed()).map(([, n]) => n)).toContain(name);
  });

  it("a repository made public keeps what happened while it was private from those who could not see it then — in every feed, its forks' too", async () => {
    const bob = await seedUser(t.db); // a read collaborator: saw it while private
    const eve = await seedUser(t.db); // a stranger
    const [bobTok, eveTok] = [await bob.token(), await eve.token()];
    const name = uniq("evp");
    await apiRepo(t, tok, { name, private: true });
    const at = `/api/v1/repos/${alice.name}/${name}`;
    expect((await t.request(`${at}/collaborators/${bob.name}`, { method: "PUT", headers: token(tok), json: { permission: "read" } })).status).toBe(204);
    expect((await t.request(at, { method: "PATCH", headers: token(tok), json: { name: `${name}-x` } })).status).toBe(200);
    // bob forks it while private: the fork is private, and so is its activity
    const fork = await t.request(`${at}-x/forks`, { method: "POST", headers: token(bobTok), json: {} });
    expect(fork.status).toBe(202);
    expect((await t.request(`/api/v1/repos/${bob.name}/${name}-x`, { method: "PATCH", headers: token(bobTok), json: { description: "d" } })).status).toBe(200);
    expect((await t.request(`${at}-x`, { method: "PATCH", headers: token(tok), json: { private: false } })).status).toBe(200);
    expect((await t.request(`${at}-x`, { method: "PATCH", headers: token(tok), json: { name: `${name}-y` } })).status).toBe(200);
    const ops = async (path: string, tk?: string) => {
      const res = await t.request(`/api/v1${path}/activities/feeds?limit=50`, tk ? { headers: token(tk) } : {});
      expect(res.status).toBe(200);
      const list = (await res.json()) as { op_type: string; content: string; repo: { name: string } }[];
      const mine = list.filter((a) => a.repo.name.startsWith(name));
      expect(Number(res.headers.get("X-Total-Count"))).toBe(list.length); // counted alike
      return mine.map((a) => `${a.op_type}:${a.content}`);
    };
    const publicPeriod = ["rename_repo:" + `${name}-x`];
    // the repository's feed, now public: strangers and anonymous callers see only what came after
    expect(await ops(`/repos/${alice.name}/${name}-y`)).toEqual(publicPeriod);
    expect(await ops(`/repos/${alice.name}/${name}-y`, eveTok)).toEqual(publicPeriod);
    expect(await ops(`/repos/${alice.name}/${name}-y`, bobTok)).toEqual([...publicPeriod, `rename_repo:${name}`, "create_repo:"]);
    expect(await ops(`/repos/${alice.name}/${name}-y`, tok)).toEqual([...publicPeriod, `rename_repo:${name}`, "create_repo:"]);
    // the owner's feed: others never see private entries there (Gitea), now-public ones they do
    expect(await ops(`/users/${alice.name}`, eveTok)).toEqual(publicPeriod);
    // the fork turned public with its base; what bob did in it while private stays his collaborators'
    expect((await t.request(`/api/v1/repos/${bob.name}/${name}-x`)).status).toBe(200);
    expect(await ops(`/repos/${bob.name}/${name}-x`)).toEqual([]);
    expect(await ops(`/repos/${bob.name}/${name}-x`, eveTok)).toEqual([]);
    expect((await ops(`/repos/${bob.name}/${name}-x`, bobTok)).length).toBeGreaterThan(0);
    // made private again, everything is private once more
    expect((await t.request(`${at}-y`, { method: "PATCH", headers: token(tok), json: { private: true } })).status).toBe(200);
    expect((await t.request(`/api/v1/repos/${alice.name}/${name}-y/activities/feeds`)).status).toBe(404);
    expect(await ops(`/users/${alice.name}`, eveTok)).toEqual([]);
  });
});
