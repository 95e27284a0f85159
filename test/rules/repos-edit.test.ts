/** Repository edit (PATCH /repos/{owner}/{repo}): the rules the mutation run of edit rules 1–8 found unpinned. */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action, mirror, repoUnit, repository } from "../../functions/db/schema.ts";
import { addCollaborator, apiRepo, expectRefusal, roundTrips, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let aliceTok: string;

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  aliceTok = await alice.token();
});
afterAll(() => t.close());

const patch = (name: string, json: unknown) => t.request(`/api/v1/repos/${alice.name}/${name}`, { method: "PATCH", headers: token(aliceTok), json });
const edit = async (name: string, json: unknown) => {
  const res = await patch(name, json);
  expect(res.status).toBe(200);
  return res.json();
};
const unitTypes = async (repoId: number) =>
  (await t.db.select({ type: repoUnit.type }).from(repoUnit).where(eq(repoUnit.repoId, repoId))).map((u) => u.type).sort((a, b) => a - b);
const unitConfig = async (repoId: number, type: number) =>
  JSON.parse((await t.db.select({ config: repoUnit.config }).from(repoUnit).where(and(eq(repoUnit.repoId, repoId), eq(repoUnit.type, type))))[0]!.config as string);

describe("edit rule 1: rename", () => {
  it("edit rule 1: renaming onto a reserved name or pattern → 422 with Gitea's message, nothing written", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("rn") });
    await expectRefusal(patch(r.name, { name: "." }), 422, "name is reserved [name: .]");
    await expectRefusal(patch(r.name, { name: `${r.name}.wiki` }), 422, "name pattern is not allowed [pattern: *.wiki]");
    const res = await expectRefusal(patch(r.name, { name: `${r.name}.GIT`, description: "not applied" }), 422, "name pattern is not allowed [pattern: *.git]");
    expect(roundTrips(res)).toBe(1);
    const [row] = await t.db.select().from(repository).where(eq(repository.id, r.id));
    expect(row).toMatchObject({ name: r.name, description: "" });
  });
});

describe("edit rule 3 and the state table: private", () => {
  it("edit rule 3: FORCE_PRIVATE refuses only making a private repository public; keeping it private, or a public one public, is allowed", async () => {
    const t2 = await testApp({ GITEA__repository__FORCE_PRIVATE: "true" });
    try {
      const u = await seedUser(t2.db);
      const a2 = await seedUser(t2.db, { admin: true });
      const [ut, at] = await Promise.all([u.token(), a2.token()]);
      const p = (tk: string, json: unknown) => t2.request(`/api/v1/repos/${u.name}/fp`, { method: "PATCH", headers: token(tk), json });
      expect((await apiRepo(t2, ut, { name: "fp" })).private).toBe(true);
      const keep = await p(ut, { private: true, description: "kept private" });
      expect(keep.status).toBe(200);
      expect(await keep.json()).toMatchObject({ private: true, description: "kept private" });
      expect((await (await p(at, { private: false })).json()).private).toBe(false);
      const stay = await p(ut, { private: false, description: "still public" });
      expect(stay.status).toBe(200);
      expect(await stay.json()).toMatchObject({ private: false, description: "still public" });
      expect((await (await p(ut, { private: true })).json()).private).toBe(true);
    } finally {
      t2.close();
    }
  });

  it("state table: made private, a repository's activity becomes private; made public, what was private stays private (Gitea's rule)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("act") });
    const privacy = async () => (await t.db.select({ p: action.isPrivate }).from(action).where(eq(action.repoId, r.id))).map((a) => a.p);
    expect(await privacy()).toEqual([false]);
    await edit(r.name, { private: true });
    expect(await privacy()).toEqual([true]);
    await edit(r.name, { private: false });
    expect(await privacy()).toEqual([true]);
  });
});

describe("edit rules 5–7: issue trackers", () => {
  it("edit rule 5: an external tracker without a URL → 422", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("nu") });
    await expectRefusal(patch(r.name, { has_issues: true, external_tracker: { external_tracker_format: "https://t.example/{index}" } }), 422, "Invalid external tracker URL");
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
  });

  it("edit rule 5: an external tracker applies only with has_issues true", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("eo") });
    const body = await edit(r.name, { external_tracker: { external_tracker_url: "https://t.example" } });
    expect(body.has_issues).toBe(true);
    expect(body.external_tracker).toBeUndefined();
    expect(body.internal_tracker).toEqual({ enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true });
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
  });

  it("edit rule 5: the regexp style keeps its pattern", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("rx") });
    const tracker = { external_tracker_url: "https://t.example", external_tracker_format: "https://t.example/{index}", external_tracker_style: "regexp", external_tracker_regexp_pattern: "#(\\d+)" };
    expect((await edit(r.name, { has_issues: true, external_tracker: tracker })).external_tracker).toEqual(tracker);
    expect(await unitConfig(r.id, 7)).toEqual(tracker);
  });

  it("edit rule 6: the internal tracker keeps its stored settings and takes the given ones; it replaces an external tracker", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("ik") });
    await edit(r.name, { has_issues: true, internal_tracker: { enable_time_tracker: false } });
    const body = await edit(r.name, { has_issues: true, internal_tracker: { enable_issue_dependencies: false } });
    expect(body.internal_tracker).toEqual({ enable_time_tracker: false, allow_only_contributors_to_track_time: true, enable_issue_dependencies: false });
    await edit(r.name, { has_issues: true, external_tracker: { external_tracker_url: "https://t.example" } });
    expect(await unitTypes(r.id)).toEqual([1, 3, 4, 5, 7, 8, 9, 10]);
    const back = await edit(r.name, { has_issues: true });
    expect(back.external_tracker).toBeUndefined();
    expect(back.internal_tracker).toEqual({ enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true });
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
  });

  it("edit rule 7: has_issues false removes an external tracker too", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("ex") });
    await edit(r.name, { has_issues: true, external_tracker: { external_tracker_url: "https://t.example" } });
    const body = await edit(r.name, { has_issues: false });
    expect(body).toMatchObject({ has_issues: false });
    expect(body.external_tracker).toBeUndefined();
    expect(await unitTypes(r.id)).toEqual([1, 3, 4, 5, 8, 9, 10]);
  });

  it("edit rules 5–8: an edit without has_issues or has_wiki leaves trackers and wikis alone", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("la") });
    const body = await edit(r.name, { description: "only this" });
    expect(body).toMatchObject({ description: "only this", has_issues: true, has_wiki: true });
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
  });
});

describe("edit rule 8: wiki", () => {
  it("edit rule 8: an external wiki without a URL → 422", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("wu") });
    await expectRefusal(patch(r.name, { has_wiki: true, external_wiki: {} }), 422, "Invalid external wiki URL");
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
  });

  it("edit rule 8: an external wiki applies only with has_wiki true, and then replaces the internal wiki", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("wo") });
    const ignored = await edit(r.name, { external_wiki: { external_wiki_url: "https://wiki.example" } });
    expect(ignored.has_wiki).toBe(true);
    expect(ignored.external_wiki).toBeUndefined();
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
    await edit(r.name, { has_wiki: true, external_wiki: { external_wiki_url: "https://wiki.example" } });
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 6, 8, 9, 10]);
  });

  it("edit rule 8: has_wiki true without an external wiki enables the internal wiki and removes an external one", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("wi") });
    await edit(r.name, { has_wiki: false });
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 8, 9, 10]);
    expect((await edit(r.name, { has_wiki: true })).has_wiki).toBe(true);
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
    await edit(r.name, { has_wiki: true, external_wiki: { external_wiki_url: "https://wiki.example" } });
    const back = await edit(r.name, { has_wiki: true });
    expect(back.has_wiki).toBe(true);
    expect(back.external_wiki).toBeUndefined();
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
  });
});

describe("edit rules 12–13: mirror settings and the answer", () => {
  const asMirror = async (repoId: number) => {
    await t.db.update(repository).set({ isMirror: true }).where(eq(repository.id, repoId));
    await t.db.insert(mirror).values({ repoId, intervalMs: 28_800_000 });
  };

  it("edit rule 12: the minimum interval itself is allowed", async () => {
    const m = await apiRepo(t, aliceTok, { name: uniq("mm") });
    await asMirror(m.id);
    expect((await edit(m.name, { mirror_interval: "10m" })).mirror_interval).toBe("10m0s");
    await expectRefusal(patch(m.name, { mirror_interval: "9m59s" }), 422, "invalid mirror interval: 9m59s is below minimum interval: 10m0s");
  });

  it("edit rule 13: the answer is the repository as GET shows it afterwards (a mirror, a fork and its parent)", async () => {
    const get = async (path: string, tk: string) => (await t.request(`/api/v1/repos/${path}`, { headers: token(tk) })).json();
    const m = await apiRepo(t, aliceTok, { name: uniq("ma") });
    await asMirror(m.id);
    const mb = await edit(m.name, { description: "a mirror" });
    expect(mb).toMatchObject({ mirror: true, mirror_interval: "8h0m0s", description: "a mirror" });
    expect(mb).toEqual(await get(`${alice.name}/${m.name}`, aliceTok));
    const bob = await seedUser(t.db);
    const bobTok = await bob.token();
    const base = await apiRepo(t, aliceTok, { name: uniq("fb") });
    const fork = await (await t.request(`/api/v1/repos/${alice.name}/${base.name}/forks`, { method: "POST", headers: token(bobTok), json: {} })).json();
    const res = await t.request(`/api/v1/repos/${bob.name}/${fork.name}`, { method: "PATCH", headers: token(bobTok), json: { description: "my fork" } });
    expect(res.status).toBe(200);
    const fb = await res.json();
    expect(fb).toMatchObject({ fork: true, description: "my fork", parent: { full_name: `${alice.name}/${base.name}` } });
    expect(fb).toEqual(await get(`${bob.name}/${fork.name}`, bobTok));
  });

  it("edit rule 13: a fork whose parent the caller may no longer read answers without the parent", async () => {
    const bob = await seedUser(t.db);
    const bobTok = await bob.token();
    const base = await apiRepo(t, aliceTok, { name: uniq("pp"), private: true });
    await addCollaborator(t, aliceTok, `${alice.name}/${base.name}`, bob, "read");
    const fork = await (await t.request(`/api/v1/repos/${alice.name}/${base.name}/forks`, { method: "POST", headers: token(bobTok), json: {} })).json();
    expect(fork.parent.full_name).toBe(`${alice.name}/${base.name}`);
    expect((await t.request(`/api/v1/repos/${alice.name}/${base.name}/collaborators/${bob.name}`, { method: "DELETE", headers: token(aliceTok) })).status).toBe(204);
    const fb = await edit2(bob.name, fork.name, bobTok, { description: "orphaned" });
    expect(fb).toMatchObject({ fork: true, private: true, description: "orphaned" });
    expect(fb.parent).toBeUndefined();
    expect(fb).toEqual(await (await t.request(`/api/v1/repos/${bob.name}/${fork.name}`, { headers: token(bobTok) })).json());
  });

  it("edit rule 13: an admin collaborator editing a repository of an owner hidden from them sees the owner in the hidden-user form", async () => {
    const bob = await seedUser(t.db);
    const bobTok = await bob.token();
    const hidden = await seedUser(t.db, { visibility: 2 });
    const htk = await hidden.token();
    const r = await apiRepo(t, htk, { name: uniq("ho"), private: true });
    await addCollaborator(t, htk, `${hidden.name}/${r.name}`, bob, "admin");
    const body = await edit2(hidden.name, r.name, bobTok, { description: "edited" });
    expect(body.owner).toMatchObject({ login: hidden.name, full_name: "", created: "0001-01-01T00:00:00Z" });
    expect(body).toEqual(await (await t.request(`/api/v1/repos/${hidden.name}/${r.name}`, { headers: token(bobTok) })).json());
  });
});

const edit2 = async (owner: string, name: string, tk: string, json: unknown) => {
  const res = await t.request(`/api/v1/repos/${owner}/${name}`, { method: "PATCH", headers: token(tk), json });
  expect(res.status).toBe(200);
  return res.json();
};

describe("edit rule 11: archive", () => {
  it("edit rule 11: archiving an archived repository renews its archive time (Gitea's SetArchiveRepoState); un-archiving twice keeps 0", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("ra") });
    await edit(r.name, { archived: true });
    await t.db.update(repository).set({ archivedUnix: 1_000_000_000 }).where(eq(repository.id, r.id));
    const before = Math.floor(Date.now() / 1000);
    const again = await edit(r.name, { archived: true });
    expect(again.archived).toBe(true);
    const [row] = await t.db.select({ u: repository.archivedUnix }).from(repository).where(eq(repository.id, r.id));
    expect(row!.u).toBeGreaterThanOrEqual(before);
    expect(again.archived_at).toBe(new Date(row!.u * 1000).toISOString().replace(".000Z", "Z"));
    await edit(r.name, { archived: false });
    expect((await edit(r.name, { archived: false })).archived_at).toBe("1970-01-01T00:00:00Z");
  });
});

describe("edit rules 9–10: units and pull request settings", () => {
  it("edit rule 9: a unit switched off comes back with true; projects come back with their stored mode", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("u9") });
    await edit(r.name, { has_projects: true, projects_mode: "repo" });
    await edit(r.name, { has_releases: false, has_code: false });
    expect(await unitTypes(r.id)).toEqual([2, 3, 5, 8, 9, 10]);
    const back = await edit(r.name, { has_releases: true, has_code: true });
    expect(back).toMatchObject({ has_releases: true, has_code: true });
    expect(await unitTypes(r.id)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
    expect((await edit(r.name, { has_projects: true })).projects_mode).toBe("repo");
    await edit(r.name, { has_projects: false });
    const again = await edit(r.name, { has_projects: true });
    expect(again).toMatchObject({ has_projects: true, projects_mode: "all" });
    expect(await unitConfig(r.id, 8)).toEqual({ projects_mode: "all" });
  });

  it("edit rule 10: settings merge into the stored ones; an edit without them keeps them; has_pull_requests true brings the unit back with Gitea's defaults", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("p10") });
    const defaults = await unitConfig(r.id, 3);
    await edit(r.name, { allow_squash_merge: false });
    await edit(r.name, { allow_rebase: false });
    expect(await unitConfig(r.id, 3)).toEqual({ ...defaults, allow_squash_merge: false, allow_rebase: false });
    const kept = await edit(r.name, { description: "settings untouched" });
    expect(kept).toMatchObject({ allow_squash_merge: false, allow_rebase: false, allow_merge_commits: true });
    expect(await unitConfig(r.id, 3)).toEqual({ ...defaults, allow_squash_merge: false, allow_rebase: false });
    await edit(r.name, { has_pull_requests: false });
    const back = await edit(r.name, { has_pull_requests: true });
    expect(back).toMatchObject({ has_pull_requests: true, allow_squash_merge: true, allow_rebase: true });
    expect(await unitConfig(r.id, 3)).toEqual(defaults);
  });
});

describe("delete", () => {
  it("delete: an organization acting through sudo may delete its own repository (Gitea's CanUserDelete)", async () => {
    const admin = await seedUser(t.db, { admin: true });
    const org = await seedOrg(t, alice);
    const r = await apiRepo(t, aliceTok, { name: uniq("sd") }, org.name);
    const res = await t.request(`/api/v1/repos/${org.name}/${r.name}?sudo=${org.name}`, { method: "DELETE", headers: token(await admin.token()) });
    expect(res.status).toBe(204);
    expect(await t.db.select().from(repository).where(eq(repository.id, r.id))).toEqual([]);
  });
});
