/** Activity feeds of users and organizations: never an entry the caller may not see (GHSA-6cqf-375w-639g). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCollaborator, expectRefusal, NOT_FOUND, apiRepo, roundTrips, seedMember, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let aliceTok: string;
let pub: { name: string };
let priv: { name: string };

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  aliceTok = await alice.token();
  pub = await apiRepo(t, aliceTok, { name: uniq("fpub") });
  priv = await apiRepo(t, aliceTok, { name: uniq("fpriv"), private: true });
});
afterAll(() => t.close());

const names = (feeds: { repo: { name: string } }[]) => feeds.map((f) => f.repo.name);

describe("GET /users/{username}/activities/feeds", () => {
  it("the user sees their private activity; others and anonymous callers do not (1 round trip)", async () => {
    const own = await t.request(`/api/v1/users/${alice.name}/activities/feeds`, { headers: token(aliceTok) });
    expect(roundTrips(own)).toBe(1);
    expect(names(await own.json())).toEqual(expect.arrayContaining([pub.name, priv.name]));
    const anon = await t.request(`/api/v1/users/${alice.name}/activities/feeds`);
    expect(names(await anon.json())).toEqual([pub.name]);
    expect(anon.headers.get("X-Total-Count")).toBe("1");
    const other = await seedUser(t.db);
    expect(names(await (await t.request(`/api/v1/users/${alice.name}/activities/feeds`, { headers: token(await other.token()) })).json())).toEqual([pub.name]);
  });

  it("a private user's feed is 404 to others; entries are Gitea's Activity", async () => {
    const hidden = await seedUser(t.db, { visibility: 2 });
    await apiRepo(t, await hidden.token(), { name: uniq("h") });
    await expectRefusal(t.request(`/api/v1/users/${hidden.name}/activities/feeds`), 404, NOT_FOUND);
    const [entry] = await (await t.request(`/api/v1/users/${alice.name}/activities/feeds?limit=1`)).json();
    expect(Object.keys(entry)).toEqual(["id", "user_id", "op_type", "act_user_id", "act_user", "repo_id", "repo", "comment_id", "comment", "ref_name", "is_private", "content", "created"]);
    expect(entry.op_type).toBe("create_repo");
  });

  it("a date that does not parse is ignored, as Gitea's FeedDateCond; a date without activity → empty", async () => {
    const all = await (await t.request(`/api/v1/users/${alice.name}/activities/feeds`)).json();
    expect(all.length).toBeGreaterThan(0);
    for (const bad of ["yesterday", "2026-02-30", "2026-13-01", ""]) {
      const res = await t.request(`/api/v1/users/${alice.name}/activities/feeds?date=${bad}`);
      expect(res.status, bad).toBe(200);
      expect(await res.json(), bad).toEqual(all);
    }
    expect(await (await t.request(`/api/v1/users/${alice.name}/activities/feeds?date=2001-01-01`)).json()).toEqual([]);
  });
});

describe("GET /orgs/{org}/activities/feeds", () => {
  it("members see the org's private activity when they may access the repository; outsiders never", async () => {
    const org = await seedOrg(t, alice);
    const op = await apiRepo(t, aliceTok, { name: uniq("op") }, org.name);
    const oq = await apiRepo(t, aliceTok, { name: uniq("oq"), private: true }, org.name);
    const own = await (await t.request(`/api/v1/orgs/${org.name}/activities/feeds`, { headers: token(aliceTok) })).json();
    expect(names(own)).toEqual(expect.arrayContaining([op.name, oq.name]));
    const outsider = await seedUser(t.db);
    expect(names(await (await t.request(`/api/v1/orgs/${org.name}/activities/feeds`, { headers: token(await outsider.token()) })).json())).toEqual([op.name]);
    // A member without team access to the private repository does not see its activity either.
    const m = await seedUser(t.db);
    await seedMember(t, org, m);
    expect(names(await (await t.request(`/api/v1/orgs/${org.name}/activities/feeds`, { headers: token(await m.token()) })).json())).toEqual([op.name]);
  });

  it("a private organization's feed is 404 to outsiders", async () => {
    const org = await seedOrg(t, alice, { visibility: 2 });
    await apiRepo(t, aliceTok, { name: uniq("x") }, org.name);
    await expectRefusal(t.request(`/api/v1/orgs/${org.name}/activities/feeds`), 404, NOT_FOUND);
  });
});

describe("a feed's repository is the repository as GET shows it", () => {
  it("a fork's entry embeds its parent when the caller may see it, in the user's and the repository's feed", async () => {
    const bob = await seedUser(t.db);
    const bobTok = await bob.token();
    const limited = await seedOrg(t, alice, { visibility: 1 });
    const hiddenBase = await apiRepo(t, aliceTok, { name: uniq("lim") }, limited.name);
    for (const base of [`${alice.name}/${pub.name}`, `${limited.name}/${hiddenBase.name}`]) {
      expect((await t.request(`/api/v1/repos/${base}/forks`, { method: "POST", headers: token(bobTok), json: {} })).status, base).toBe(202);
    }
    for (const [who, tk] of [["bob", bobTok], ["anonymous", undefined]] as const) {
      const headers = tk ? token(tk) : {};
      const feed = (await (await t.request(`/api/v1/users/${bob.name}/activities/feeds`, { headers })).json()) as { repo: { full_name: string; parent?: { full_name: string } } }[];
      const forks = [pub.name, hiddenBase.name].map((name) => feed.find((f) => f.repo.full_name === `${bob.name}/${name}`));
      expect(forks.every(Boolean), who).toBe(true);
      for (const f of forks) expect(f!.repo, who).toEqual(await (await t.request(`/api/v1/repos/${f!.repo.full_name}`, { headers })).json());
      expect(forks[0]!.repo.parent?.full_name, who).toBe(`${alice.name}/${pub.name}`);
      // The limited organization is hidden from anonymous callers.
      expect(forks[1]!.repo.parent?.full_name, who).toBe(tk ? `${limited.name}/${hiddenBase.name}` : undefined);
      const repoFeed = (await (await t.request(`/api/v1/repos/${bob.name}/${pub.name}/activities/feeds`, { headers })).json()) as { repo: { parent?: { full_name: string } } }[];
      expect(repoFeed.length, who).toBeGreaterThan(0);
      expect(repoFeed[0]!.repo.parent?.full_name, who).toBe(`${alice.name}/${pub.name}`);
    }
  });
});

describe("GET /repos/{owner}/{repo}/activities/feeds", () => {
  it("each action once, as the actor's own copy (Gitea: user_id = act_user_id): a collaborator's commit carries the collaborator's user_id and row id", async () => {
    const bob = await seedUser(t.db);
    const bobTok = await bob.token();
    const r = await apiRepo(t, aliceTok, { name: uniq("fcol"), auto_init: true });
    await addCollaborator(t, aliceTok, `${alice.name}/${r.name}`, bob, "write");
    const wrote = await t.request(`/api/v1/repos/${alice.name}/${r.name}/contents/by-bob.txt`, { method: "POST", headers: token(bobTok), json: { content: "aGk=" } });
    expect(wrote.status).toBe(201);
    const feed = (await (await t.request(`/api/v1/repos/${alice.name}/${r.name}/activities/feeds`, { headers: token(aliceTok) })).json()) as { id: number; user_id: number; act_user_id: number; op_type: string }[];
    const bobs = feed.filter((f) => f.act_user_id === bob.id);
    expect(bobs.map((f) => f.op_type)).toEqual(["commit_repo"]);
    expect(bobs[0]!.user_id).toBe(bob.id);
    // the same row bob's own feed shows
    const bobFeed = (await (await t.request(`/api/v1/users/${bob.name}/activities/feeds`, { headers: token(bobTok) })).json()) as { id: number }[];
    expect(bobFeed.map((f) => f.id)).toContain(bobs[0]!.id);
    // every action once: alice's create_repo and bob's commit, no owner copy of bob's
    expect(feed.every((f) => f.user_id === f.act_user_id)).toBe(true);
  });
});

describe("commits, tags and branches in a feed", () => {
  it("appear exactly to the callers the repository's code routes answer, for every caller kind and feed, and are counted alike", async () => {
    const owner = await seedUser(t.db);
    const ownerTok = await owner.token();
    const org = await seedOrg(t, owner);
    const orgPriv = await apiRepo(t, ownerTok, { name: uniq("cp"), private: true, auto_init: true }, org.name);
    const orgPub = await apiRepo(t, ownerTok, { name: uniq("cq"), auto_init: true }, org.name);
    const userPriv = await apiRepo(t, ownerTok, { name: uniq("cu"), private: true, auto_init: true });
    const userPub = await apiRepo(t, ownerTok, { name: uniq("cv"), auto_init: true });
    const repos = [orgPriv, orgPub, userPriv, userPub];
    // Code activity in each: a commit through the contents API, and a tag's and a branch's.
    for (const r of repos) {
      const res = await t.request(`/api/v1/repos/${r.full_name}/contents/x.txt`, { method: "POST", headers: token(ownerTok), json: { content: "aGk=", new_branch: "side" } });
      expect(res.status).toBe(201);
      expect((await t.request(`/api/v1/repos/${r.full_name}/branches/side`, { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    }
    const issuesOnly = await seedUser(t.db);
    const issuesTeam = await seedMember(t, org, issuesOnly, { permission: "read", units: ["repo.issues"], includesAll: true });
    const coder = await seedUser(t.db);
    await seedMember(t, org, coder, { permission: "read", units: ["repo.code"], includesAll: true });
    const restricted = await seedUser(t.db, { restricted: true });
    await seedMember(t, org, restricted, { permission: "read", units: ["repo.issues"], includesAll: true });
    const collab = await seedUser(t.db);
    await addCollaborator(t, ownerTok, userPriv.full_name, collab, "read");
    const admin = await seedUser(t.db, { admin: true });
    const callers: [string, Record<string, string>][] = [
      ["anonymous", {}],
      ["the owner", token(ownerTok)],
      ["an issues-only team member", token(await issuesOnly.token())],
      ["a code team member", token(await coder.token())],
      ["a code team member's public-only token", token(await coder.token(["public-only", "all"]))],
      ["a restricted issues-only member", token(await restricted.token())],
      ["a collaborator", token(await collab.token())],
      ["an unrelated user", token(await (await seedUser(t.db)).token())],
      ["a site admin", token(await admin.token())],
    ];
    const CODE_OPS = new Set(["commit_repo", "push_tag", "delete_tag", "delete_branch"]);
    type Entry = { op_type: string; repo_id: number };
    const feed = async (path: string, h: Record<string, string>) => {
      const res = await t.request(`${path}?limit=50`, { headers: h });
      if (res.status !== 200) return null;
      const entries = (await res.json()) as Entry[];
      expect(res.headers.get("X-Total-Count"), path).toBe(String(entries.length));
      return entries;
    };
    let checked = 0;
    for (const [who, h] of callers) {
      const codeReadable = new Map<number, boolean>();
      for (const r of repos) codeReadable.set(r.id, (await t.request(`/api/v1/repos/${r.full_name}/commits`, { headers: h })).status === 200);
      for (const path of [`/api/v1/orgs/${org.name}/activities/feeds`, `/api/v1/users/${owner.name}/activities/feeds`, `/api/v1/teams/${issuesTeam.id}/activities/feeds`, ...repos.map((r) => `/api/v1/repos/${r.full_name}/activities/feeds`)]) {
        const entries = await feed(path, h);
        if (!entries) continue;
        for (const r of repos) {
          const ops = entries.filter((e) => e.repo_id === r.id).map((e) => e.op_type);
          if (ops.length === 0) continue; // the feed does not show this repository to this caller at all
          expect(ops.some((o) => CODE_OPS.has(o)), `${who}: ${path}, ${r.full_name}`).toBe(codeReadable.get(r.id));
          checked++;
        }
      }
    }
    // Every caller kind met both answers somewhere.
    expect(checked).toBeGreaterThan(30);
  });
});
