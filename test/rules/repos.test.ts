/** Repositories: the spec's create, generate, edit, delete and state-table rules (one test per rule). */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action, collaboration, label, mirror, repoRedirect, repoUnit, repository, teamUser, user } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, addCollaborator, apiRepo, roundTrips, seedMember, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
let admin: SeededUser;
let aliceTok: string;
let bobTok: string;
let adminTok: string;

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  bob = await seedUser(t.db);
  admin = await seedUser(t.db, { admin: true });
  [aliceTok, bobTok, adminTok] = await Promise.all([alice.token(), bob.token(), admin.token()]);
});
afterAll(() => t.close());

const post = (path: string, tk: string, json: unknown) => t.request(path, { method: "POST", headers: token(tk), json });
const patch = (owner: string, name: string, tk: string, json: unknown) => t.request(`/api/v1/repos/${owner}/${name}`, { method: "PATCH", headers: token(tk), json });

describe("create rules (POST /user/repos, /orgs/{org}/repos)", () => {
  it("creates an empty repository with Gitea's JSON, default units and owner permission (2 round trips)", async () => {
    const name = uniq("r");
    const res = await post("/api/v1/user/repos", aliceTok, { name, description: "d" });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const body = await res.json();
    expect(body).toMatchObject({ name, full_name: `${alice.name}/${name}`, empty: true, private: false, default_branch: "main", permissions: { admin: true, push: true, pull: true }, has_issues: true, has_wiki: true, has_pull_requests: true });
    expect(body.owner.login).toBe(alice.name);
    const units = await t.db.select().from(repoUnit).where(eq(repoUnit.repoId, body.id));
    expect(units.map((u) => u.type).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 8, 9, 10]);
  });

  it("rule 1: auto_init without readme uses the Default readme template (accepted)", async () => {
    expect((await post("/api/v1/user/repos", aliceTok, { name: uniq("ai"), auto_init: true })).status).toBe(201);
  });

  it("rule 2: auto_init with an unknown readme template → 400", async () => {
    const res = await post("/api/v1/user/repos", aliceTok, { name: uniq("ai"), auto_init: true, readme: "Nope" });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toBe("readme template does not exist, available templates: [Default]");
  });

  it("rule 3: the same name for the owner, in any case → 409", async () => {
    const name = uniq("dup");
    await post("/api/v1/user/repos", aliceTok, { name });
    const res = await post("/api/v1/user/repos", aliceTok, { name: name.toUpperCase() });
    expect(res.status).toBe(409);
    expect((await res.json()).message).toBe("The repository with the same name already exists.");
  });

  it("rule 4: reserved names, disallowed patterns and bad characters → 422", async () => {
    for (const [name, msg] of [
      ["..", "name is reserved [name: ..]"],
      ["-", "name is reserved [name: -]"],
      ["x.git", "name pattern is not allowed [pattern: *.git]"],
      ["x.wiki", "name pattern is not allowed [pattern: *.wiki]"],
      ["a..b", "name is invalid [a..b]: must be valid alpha or numeric or dash(-_) or dot characters"],
      ["has space", "[Name]: AlphaDashDot"],
    ]) {
      const res = await post("/api/v1/user/repos", aliceTok, { name });
      expect(res.status, name).toBe(422);
      expect((await res.json()).message, name).toBe(msg);
    }
  });

  it("rule 4: issue_labels applies the Default and Advanced templates; an unknown template → 422", async () => {
    const d = await apiRepo(t, aliceTok, { name: uniq("lbl"), issue_labels: "Default" });
    const rows = await t.db.select().from(label).where(eq(label.repoId, d.id));
    expect(rows.map((r) => r.name).sort()).toEqual(["bug", "duplicate", "enhancement", "help wanted", "invalid", "question", "wontfix"]);
    expect(rows.find((r) => r.name === "bug")?.color).toBe("#ee0701");
    const adv = await apiRepo(t, aliceTok, { name: uniq("adv"), issue_labels: "Advanced" });
    const advRows = await t.db.select().from(label).where(eq(label.repoId, adv.id));
    expect(advRows).toHaveLength(18);
    expect(advRows.find((r) => r.name === "Priority/High")?.exclusive).toBe(true);
    const bad = await post("/api/v1/user/repos", aliceTok, { name: uniq("bad"), issue_labels: "NoSuchTemplate" });
    await expectRefusal(bad, 422, "failed to load label template: NoSuchTemplate");
  });

  it("rule 6: an organization caller (sudo to an org) → 422", async () => {
    const org = await seedOrg(t, alice);
    const res = await t.request(`/api/v1/user/repos?sudo=${org.name}`, { method: "POST", headers: token(adminTok), json: { name: uniq("x") } });
    await expectRefusal(res, 422, "not allowed creating repository for organization");
  });

  it("rule 7: org members without the create right → 403; a team with can_create_org_repo may; unknown/invisible org → 404", async () => {
    const org = await seedOrg(t, alice, { visibility: 2 });
    const member = await seedUser(t.db);
    const mteam = await seedMember(t, org, member);
    const mt = await member.token();
    const denied = await post(`/api/v1/orgs/${org.name}/repos`, mt, { name: uniq("o") });
    expect(denied.status).toBe(403);
    expect((await denied.json()).message).toBe("Given user is not allowed to create repository in organization.");
    const grant = await t.request(`/api/v1/teams/${mteam.id}`, { method: "PATCH", headers: token(org.ownerToken), json: { can_create_org_repo: true } });
    expect(grant.status).toBe(200);
    const ok = await post(`/api/v1/orgs/${org.name}/repos`, mt, { name: uniq("o") });
    expect(ok.status).toBe(201);
    await expectRefusal(post(`/api/v1/orgs/${org.name}/repos`, bobTok, { name: uniq("o") }), 404, NOT_FOUND);
    await expectRefusal(post("/api/v1/orgs/no-such-org-x/repos", bobTok, { name: uniq("o") }), 404, NOT_FOUND);
  });

  it("the deprecated /org/{org}/repos creates too and answers an unknown org with 422", async () => {
    const org = await seedOrg(t, alice);
    expect((await post(`/api/v1/org/${org.name}/repos`, aliceTok, { name: uniq("dep") })).status).toBe(201);
    await expectRefusal(post("/api/v1/org/no-such-org-y/repos", aliceTok, { name: uniq("dep") }), 422, "org does not exist [id: 0, name: no-such-org-y]");
  });

  it("rule 8: the 201 carries owner-level permission, also for an org repository created by an owner", async () => {
    const org = await seedOrg(t, alice);
    const r = await apiRepo(t, aliceTok, { name: uniq("p") }, org.name);
    expect(r.permissions).toEqual({ admin: true, push: true, pull: true });
    expect(r.owner.login).toBe(org.name);
  });

  it("FORCE_PRIVATE makes every created repository private", async () => {
    const t2 = await testApp({ GITEA__repository__FORCE_PRIVATE: "true" });
    const u = await seedUser(t2.db);
    const res = await t2.request("/api/v1/user/repos", { method: "POST", headers: token(await u.token()), json: { name: "p", private: false } });
    expect((await res.json()).private).toBe(true);
    t2.close();
  });

  it("DISABLED_REPO_UNITS are not created", async () => {
    const t2 = await testApp({ GITEA__repository__DISABLED_REPO_UNITS: "repo.wiki,repo.projects" });
    const u = await seedUser(t2.db);
    const body = await (await t2.request("/api/v1/user/repos", { method: "POST", headers: token(await u.token()), json: { name: "p" } })).json();
    expect(body.has_wiki).toBe(false);
    expect(body.has_projects).toBe(false);
    t2.close();
  });

  it("records create_repo activity with is_private", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("act"), private: true });
    const rows = await t.db.select().from(action).where(eq(action.repoId, r.id));
    expect(rows.map((a) => ({ op: a.opType, priv: a.isPrivate }))).toEqual([{ op: 1, priv: true }]);
  });
});

describe("GET /repos/{owner}/{repo} and /repositories/{id}", () => {
  it("a private repository is 404 to outsiders and to anonymous callers, 200 to the owner (1 round trip)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("priv"), private: true });
    await expectRefusal(t.request(`/api/v1/repos/${alice.name}/${r.name}`), 404, NOT_FOUND);
    await expectRefusal(t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(bobTok) }), 404, NOT_FOUND);
    const own = await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(aliceTok) });
    expect(own.status).toBe(200);
    expect(roundTrips(own)).toBe(1);
    await expectRefusal(t.request(`/api/v1/repositories/${r.id}`, { headers: token(bobTok) }), 404, NOT_FOUND);
    expect((await t.request(`/api/v1/repositories/${r.id}`, { headers: token(aliceTok) })).status).toBe(200);
    await expectRefusal(t.request("/api/v1/repositories/99999999", { headers: token(aliceTok) }), 404, NOT_FOUND);
  });

  it("owner and repository names match case-insensitively; output keeps the stored case", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("CaSe") });
    const res = await t.request(`/api/v1/repos/${alice.name.toUpperCase()}/${r.name.toLowerCase()}`);
    expect((await res.json()).name).toBe(r.name);
  });
});

describe("edit rules (PATCH /repos/{owner}/{repo})", () => {
  it("rule 1: a rename stores a redirect; the old name answers 307 to the new path (query kept)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("old") });
    const newName = uniq("new");
    const res = await patch(alice.name, r.name, aliceTok, { name: newName });
    expect(res.status).toBe(200);
    expect((await res.json()).full_name).toBe(`${alice.name}/${newName}`);
    const old = await t.request(`/api/v1/repos/${alice.name}/${r.name}/forks?limit=3`, { redirect: "manual" });
    expect(old.status).toBe(307);
    expect(old.headers.get("Location")).toBe(`/api/v1/repos/${alice.name}/${newName}/forks?limit=3`);
    const acts = await t.db.select().from(action).where(and(eq(action.repoId, r.id), eq(action.opType, 2)));
    expect(acts[0]?.content).toBe(r.name);
  });

  it("rule 1: renaming onto an existing name → 422", async () => {
    const a = await apiRepo(t, aliceTok, { name: uniq("a") });
    const b = await apiRepo(t, aliceTok, { name: uniq("b") });
    const res = await patch(alice.name, a.name, aliceTok, { name: b.name.toUpperCase() });
    await expectRefusal(res, 422, `repository already exists [uname: ${alice.name}, name: ${b.name.toUpperCase()}]`);
  });

  it("rule 2: description, website and template are set only when present", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("d"), description: "keep" });
    const body = await (await patch(alice.name, r.name, aliceTok, { website: "https://x.example", template: true })).json();
    expect(body).toMatchObject({ description: "keep", website: "https://x.example", template: true });
  });

  it("state table: private ↔ public; FORCE_PRIVATE blocks making a private repository public for non-admins (422)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("v") });
    expect((await (await patch(alice.name, r.name, aliceTok, { private: true })).json()).private).toBe(true);
    expect((await (await patch(alice.name, r.name, aliceTok, { private: false })).json()).private).toBe(false);
    const t2 = await testApp({ GITEA__repository__FORCE_PRIVATE: "true" });
    const u = await seedUser(t2.db);
    const a2 = await seedUser(t2.db, { admin: true });
    const ut = await u.token();
    await t2.request("/api/v1/user/repos", { method: "POST", headers: token(ut), json: { name: "fp" } });
    const res = await t2.request(`/api/v1/repos/${u.name}/fp`, { method: "PATCH", headers: token(ut), json: { private: false } });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe("cannot change private repository to public");
    const byAdmin = await t2.request(`/api/v1/repos/${u.name}/fp`, { method: "PATCH", headers: token(await a2.token()), json: { private: false } });
    expect((await byAdmin.json()).private).toBe(false);
    t2.close();
  });

  it("state table: a fork's visibility follows its base; making the base private makes its forks private", async () => {
    const base = await apiRepo(t, aliceTok, { name: uniq("base") });
    const fork = await (await post(`/api/v1/repos/${alice.name}/${base.name}/forks`, bobTok, {})).json();
    const res = await patch(bob.name, fork.name, bobTok, { private: true });
    expect((await res.json()).private).toBe(false);
    await patch(alice.name, base.name, aliceTok, { private: true });
    const [row] = await t.db.select().from(repository).where(eq(repository.id, fork.id));
    expect(row!.isPrivate).toBe(true);
  });

  it("rule 4: default_branch on an empty repository is applied", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("db") });
    expect((await (await patch(alice.name, r.name, aliceTok, { default_branch: "develop" })).json()).default_branch).toBe("develop");
  });

  it("rule 5: external tracker needs a valid URL and format (422), then replaces the internal tracker", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("et") });
    await expectRefusal(patch(alice.name, r.name, aliceTok, { has_issues: true, external_tracker: { external_tracker_url: "not a url" } }), 422, "Invalid external tracker URL");
    await expectRefusal(patch(alice.name, r.name, aliceTok, { has_issues: true, external_tracker: { external_tracker_url: "https://t.example", external_tracker_format: "nope {index}" } }), 422, "Invalid external tracker URL format");
    const body = await (await patch(alice.name, r.name, aliceTok, { has_issues: true, external_tracker: { external_tracker_url: "https://t.example", external_tracker_format: "https://t.example/{user}/{repo}/{index}", external_tracker_style: "numeric" } })).json();
    expect(body.has_issues).toBe(true);
    expect(body.internal_tracker).toBeUndefined();
    expect(body.external_tracker).toEqual({ external_tracker_url: "https://t.example", external_tracker_format: "https://t.example/{user}/{repo}/{index}", external_tracker_style: "numeric", external_tracker_regexp_pattern: "" });
  });

  it("rule 6: has_issues without external tracker enables the internal one with the given config or defaults", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("it") });
    await patch(alice.name, r.name, aliceTok, { has_issues: false });
    const body = await (await patch(alice.name, r.name, aliceTok, { has_issues: true, internal_tracker: { enable_time_tracker: false } })).json();
    expect(body.internal_tracker).toEqual({ enable_time_tracker: false, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true });
    expect(body.external_tracker).toBeUndefined();
  });

  it("rule 7: has_issues false removes both trackers", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("ni") });
    const body = await (await patch(alice.name, r.name, aliceTok, { has_issues: false })).json();
    expect(body.has_issues).toBe(false);
    expect(body.internal_tracker).toBeUndefined();
  });

  it("rule 8: wiki — external wiki needs a valid URL (422) and replaces the internal wiki; false removes both", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("w") });
    const bad = await patch(alice.name, r.name, aliceTok, { has_wiki: true, external_wiki: { external_wiki_url: "ftp:/x" } });
    expect(bad.status).toBe(422);
    expect((await bad.json()).message).toBe("Invalid external wiki URL");
    const ext = await (await patch(alice.name, r.name, aliceTok, { has_wiki: true, external_wiki: { external_wiki_url: "https://wiki.example" } })).json();
    expect(ext.external_wiki).toEqual({ external_wiki_url: "https://wiki.example" });
    const none = await (await patch(alice.name, r.name, aliceTok, { has_wiki: false })).json();
    expect(none.has_wiki).toBe(false);
    expect(none.external_wiki).toBeUndefined();
  });

  it("rule 9: unit switches and projects mode", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("u") });
    const body = await (await patch(alice.name, r.name, aliceTok, { has_releases: false, has_packages: false, has_actions: false, has_code: false, projects_mode: "repo" })).json();
    expect(body).toMatchObject({ has_releases: false, has_packages: false, has_actions: false, has_code: false, projects_mode: "repo" });
    const on = await (await patch(alice.name, r.name, aliceTok, { has_projects: true, projects_mode: "owner" })).json();
    expect(on.projects_mode).toBe("owner");
  });

  it("rule 10: pull request settings merge into the unit; has_pull_requests false removes it", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("pr") });
    const body = await (await patch(alice.name, r.name, aliceTok, { allow_squash_merge: false, default_merge_style: "rebase" })).json();
    expect(body).toMatchObject({ has_pull_requests: true, allow_squash_merge: false, allow_rebase: true, default_merge_style: "rebase" });
    const off = await (await patch(alice.name, r.name, aliceTok, { has_pull_requests: false })).json();
    expect(off).toMatchObject({ has_pull_requests: false, allow_rebase: false, default_merge_style: "merge" });
  });

  it("rule 10: default_merge_style is stored as given, an unknown style too (Gitea's EditRepoOption binds no rule on it)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("ms") });
    const res = await patch(alice.name, r.name, aliceTok, { default_merge_style: "bogus" });
    expect(res.status).toBe(200);
    expect((await res.json()).default_merge_style).toBe("bogus");
    expect((await (await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(aliceTok) })).json()).default_merge_style).toBe("bogus");
    // an empty style reads as the default, as Gitea's GetDefaultMergeStyle
    expect((await (await patch(alice.name, r.name, aliceTok, { default_merge_style: "" })).json()).default_merge_style).toBe("merge");
  });

  it("globally disabled units are ignored on edit", async () => {
    const t2 = await testApp({ GITEA__repository__DISABLED_REPO_UNITS: "repo.wiki" });
    const u = await seedUser(t2.db);
    const ut = await u.token();
    await t2.request("/api/v1/user/repos", { method: "POST", headers: token(ut), json: { name: "g" } });
    const body = await (await t2.request(`/api/v1/repos/${u.name}/g`, { method: "PATCH", headers: token(ut), json: { has_wiki: true } })).json();
    expect(body.has_wiki).toBe(false);
    t2.close();
  });

  it("rule 11 and the state table: archive and unarchive; a mirror cannot be (un)archived (422)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("arc") });
    const archived = await (await patch(alice.name, r.name, aliceTok, { archived: true })).json();
    expect(archived.archived).toBe(true);
    expect(archived.archived_at).not.toBe("1970-01-01T00:00:00Z");
    expect((await (await patch(alice.name, r.name, aliceTok, { archived: false })).json()).archived).toBe(false);
    const m = await apiRepo(t, aliceTok, { name: uniq("mir") });
    await t.db.update(repository).set({ isMirror: true }).where(eq(repository.id, m.id));
    await t.db.insert(mirror).values({ repoId: m.id, intervalMs: 28_800_000 });
    const res = await patch(alice.name, m.name, aliceTok, { archived: true, description: "not applied" });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe("repo is a mirror, cannot archive/un-archive");
    const [row] = await t.db.select().from(repository).where(eq(repository.id, m.id));
    expect(row!.description).toBe("");
  });

  it("an archived repository is read-only in its units: a write collaborator loses push and label writes; admins keep settings", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("ro") });
    await addCollaborator(t, aliceTok, `${alice.name}/${r.name}`, bob, "write");
    expect((await (await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(bobTok) })).json()).permissions).toEqual({ admin: false, push: true, pull: true });
    await patch(alice.name, r.name, aliceTok, { archived: true });
    expect((await (await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(bobTok) })).json()).permissions).toEqual({ admin: false, push: false, pull: true });
    await expectRefusal(post(`/api/v1/repos/${alice.name}/${r.name}/labels`, bobTok, { name: "x", color: "ffffff" }), 403, "user should have a permission to write to a repo");
    expect((await (await patch(alice.name, r.name, aliceTok, { archived: false })).json()).archived).toBe(false);
    expect((await post(`/api/v1/repos/${alice.name}/${r.name}/labels`, bobTok, { name: "x", color: "ffffff" })).status).toBe(201);
  });

  it("rule 12: mirror_interval parses as a duration, at least the minimum unless zero; ignored for non-mirrors", async () => {
    const m = await apiRepo(t, aliceTok, { name: uniq("mi") });
    await t.db.update(repository).set({ isMirror: true }).where(eq(repository.id, m.id));
    await t.db.insert(mirror).values({ repoId: m.id, intervalMs: 28_800_000 });
    await expectRefusal(patch(alice.name, m.name, aliceTok, { mirror_interval: "soon" }), 422, "invalid mirror interval: time: invalid duration \"soon\"");
    const low = await patch(alice.name, m.name, aliceTok, { mirror_interval: "5m" });
    expect(low.status).toBe(422);
    expect((await low.json()).message).toBe("invalid mirror interval: 5m is below minimum interval: 10m0s");
    expect((await (await patch(alice.name, m.name, aliceTok, { mirror_interval: "1h30m", enable_prune: false })).json()).mirror_interval).toBe("1h30m0s");
    expect((await (await patch(alice.name, m.name, aliceTok, { mirror_interval: "0" })).json()).mirror_interval).toBe("0s");
    const [mrow] = await t.db.select().from(mirror).where(eq(mirror.repoId, m.id));
    expect(mrow!.enablePrune).toBe(false);
    const plain = await apiRepo(t, aliceTok, { name: uniq("np") });
    const ignored = await patch(alice.name, plain.name, aliceTok, { mirror_interval: "soon" });
    expect(ignored.status).toBe(200);
    expect((await ignored.json()).mirror_interval).toBe("");
  });

  it("edit needs repository admin: a write collaborator gets 403, an outsider of a private repo 404", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("perm"), private: true });
    await addCollaborator(t, aliceTok, `${alice.name}/${r.name}`, bob, "write");
    const res = await patch(alice.name, r.name, bobTok, { description: "x" });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("user should be an owner or a collaborator with admin write of a repository");
    const stranger = await seedUser(t.db);
    await expectRefusal(patch(alice.name, r.name, await stranger.token(), { description: "x" }), 404, NOT_FOUND);
  });
});

describe("delete rule", () => {
  it("the owner deletes (204) and everything hanging off the repository goes", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("del"), issue_labels: "Default" });
    await addCollaborator(t, aliceTok, `${alice.name}/${r.name}`, bob, "read");
    const res = await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { method: "DELETE", headers: token(aliceTok) });
    expect(res.status).toBe(204);
    expect(roundTrips(res)).toBe(2);
    for (const tbl of [repoUnit, label, collaboration, action] as const) {
      expect(await t.db.select().from(tbl).where(eq(tbl.repoId, r.id))).toEqual([]);
    }
    await expectRefusal(t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(aliceTok) }), 404, NOT_FOUND);
  });

  it("an admin collaborator or an org member who is not an org owner → 403", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("d2") });
    await addCollaborator(t, aliceTok, `${alice.name}/${r.name}`, bob, "admin");
    await expectRefusal(t.request(`/api/v1/repos/${alice.name}/${r.name}`, { method: "DELETE", headers: token(bobTok) }), 403, "user should be the owner of the repo");
    const org = await seedOrg(t, alice);
    const member = await seedUser(t.db);
    await seedMember(t, org, member, { permission: "admin", includesAll: true });
    const or = await apiRepo(t, aliceTok, { name: uniq("d3") }, org.name);
    await expectRefusal(t.request(`/api/v1/repos/${org.name}/${or.name}`, { method: "DELETE", headers: token(await member.token()) }), 403, "user should be the owner of the repo");
    expect((await t.request(`/api/v1/repos/${org.name}/${or.name}`, { method: "DELETE", headers: token(aliceTok) })).status).toBe(204);
  });
});

describe("generate rules (POST /repos/{template_owner}/{template_repo}/generate)", () => {
  it("rule 1: the source must be a template → 422", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("nt") });
    const res = await post(`/api/v1/repos/${alice.name}/${r.name}/generate`, aliceTok, { owner: alice.name, name: uniq("g"), labels: true });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe("this is not a template repo");
  });

  it("rule 3: at least one template item → 422", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("tp"), template: true });
    const res = await post(`/api/v1/repos/${alice.name}/${r.name}/generate`, aliceTok, { owner: alice.name, name: uniq("g") });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe("must select at least one template item");
  });

  it("copies labels when asked; 201 with owner permission; name conflict 409", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("tp"), template: true, issue_labels: "Default" });
    const name = uniq("gen");
    const res = await post(`/api/v1/repos/${alice.name}/${r.name}/generate`, aliceTok, { owner: alice.name, name, labels: true, private: true });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({ name, private: true, template: false, permissions: { admin: true, push: true, pull: true } });
    expect(await t.db.select().from(label).where(eq(label.repoId, body.id))).toHaveLength(7);
    await expectRefusal(post(`/api/v1/repos/${alice.name}/${r.name}/generate`, aliceTok, { owner: alice.name, name, labels: true }), 409, "The repository with the same name already exists.");
  });

  it("rule 4: unknown owner → 404 with {error}; another user for a non-admin → 403; an org without the create right → 403", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("tp"), template: true });
    const unknown = await post(`/api/v1/repos/${alice.name}/${r.name}/generate`, aliceTok, { owner: "no-such-owner-z", name: uniq("g"), labels: true });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "request owner `no-such-owner-z` does not exist" });
    // Gitea binds no rule on owner: absent or "" is an owner that does not exist
    for (const form of [{ name: uniq("g"), labels: true }, { owner: "", name: uniq("g"), labels: true }]) {
      const none = await post(`/api/v1/repos/${alice.name}/${r.name}/generate`, aliceTok, form);
      expect([none.status, await none.json()]).toEqual([404, { error: "request owner `` does not exist" }]);
    }
    const other = await post(`/api/v1/repos/${alice.name}/${r.name}/generate`, aliceTok, { owner: bob.name, name: uniq("g"), labels: true });
    expect(other.status).toBe(403);
    expect((await other.json()).message).toBe("Only admin can generate repository for other user.");
    const org = await seedOrg(t, bob);
    await seedMember(t, org, alice);
    const noRight = await post(`/api/v1/repos/${alice.name}/${r.name}/generate`, aliceTok, { owner: org.name, name: uniq("g"), labels: true });
    await expectRefusal(noRight, 403, "Given user is not allowed to create repository in organization.");
    expect((await post(`/api/v1/repos/${alice.name}/${r.name}/generate`, adminTok, { owner: bob.name, name: uniq("g"), labels: true })).status).toBe(201);
  });
});

describe("forks", () => {
  it("POST /forks answers 202 with the fork, parent set; GET /forks lists it; fork visibility follows the base", async () => {
    const base = await apiRepo(t, aliceTok, { name: uniq("fb") });
    const res = await post(`/api/v1/repos/${alice.name}/${base.name}/forks`, bobTok, {});
    expect(res.status).toBe(202);
    const fork = await res.json();
    expect(fork).toMatchObject({ fork: true, name: base.name, parent: { full_name: `${alice.name}/${base.name}` } });
    const list = await t.request(`/api/v1/repos/${alice.name}/${base.name}/forks`);
    expect((await list.json()).map((r: { full_name: string }) => r.full_name)).toEqual([`${bob.name}/${base.name}`]);
    expect(list.headers.get("X-Total-Count")).toBe("1");
    const again = await t.request(`/api/v1/repos/${bob.name}/${base.name}`);
    expect((await again.json()).parent.name).toBe(base.name);
    expect((await (await t.request(`/api/v1/repos/${alice.name}/${base.name}`)).json()).forks_count).toBe(1);
  });

  it("forking into an org needs the same create right as create and generate (GHSA-fhx7-m96w-mv29)", async () => {
    const base = await apiRepo(t, aliceTok, { name: uniq("fo") });
    const org = await seedOrg(t, alice);
    await seedMember(t, org, bob);
    const res = await post(`/api/v1/repos/${alice.name}/${base.name}/forks`, bobTok, { organization: org.name });
    await expectRefusal(res, 403, `User is not allowed to create repos in Organisation '${org.name}'`);
    expect(await t.db.select().from(repository).where(and(eq(repository.ownerId, org.id)))).toEqual([]);
  });
});

describe("team access on org repositories", () => {
  it("a team with can_create_org_repo gets the repository its member created", async () => {
    const org = await seedOrg(t, alice);
    const member = await seedUser(t.db);
    await seedMember(t, org, member, { permission: "write", canCreateOrgRepo: true });
    const r = await apiRepo(t, await member.token(), { name: uniq("tr"), private: true }, org.name);
    const other = await seedUser(t.db);
    await seedMember(t, org, other);
    expect((await t.request(`/api/v1/repos/${org.name}/${r.name}`, { headers: token(await member.token()) })).status).toBe(200);
    await expectRefusal(t.request(`/api/v1/repos/${org.name}/${r.name}`, { headers: token(await other.token()) }), 404, NOT_FOUND);
    void teamUser;
  });
});

describe("create, get and fork: details the first mutation run found unpinned", () => {
  it("rule 4: reserved patterns match in any case; a name with spaces fails AlphaDashDot first", async () => {
    await expectRefusal(post("/api/v1/user/repos", aliceTok, { name: "   " }), 422, "[Name]: AlphaDashDot");
    await expectRefusal(post("/api/v1/user/repos", aliceTok, { name: "Tools.GIT" }), 422, "name pattern is not allowed [pattern: *.git]");
  });

  it("a created repository has no topics and the asked trust model (any case; an unknown one is the default)", async () => {
    const trust = async (name: string, trust_model?: string) => {
      const body = await (await post("/api/v1/user/repos", aliceTok, { name, trust_model })).json();
      expect(body.topics).toEqual([]);
      return (await t.db.select({ m: repository.trustModel }).from(repository).where(eq(repository.id, body.id)))[0]!.m;
    };
    expect(await trust(uniq("tm"), "Committer")).toBe(2);
    expect(await trust(uniq("tm"), "collaboratorcommitter")).toBe(3);
    expect(await trust(uniq("tm"), "nonsense")).toBe(0);
    expect(await trust(uniq("tm"))).toBe(0);
  });

  it("object_format_name sha256 is refused (git here stores SHA-1 only), nothing created; sha1 and empty are sha1", async () => {
    const name = uniq("fmt");
    await expectRefusal(post("/api/v1/user/repos", aliceTok, { name, object_format_name: "sha256" }), 422, "[ObjectFormatName]: sha256 is not supported by this server, only sha1");
    expect((await t.db.select({ id: repository.id }).from(repository).where(eq(repository.lowerName, name.toLowerCase()))).length).toBe(0);
    for (const object_format_name of ["sha1", ""]) {
      const res = await post("/api/v1/user/repos", aliceTok, { name: uniq("fmt"), object_format_name });
      expect(res.status).toBe(201);
      expect((await res.json()).object_format_name).toBe("sha1");
    }
  });

  it("POST /orgs/{org}/repos with a user's name → 404, also for that user", async () => {
    await expectRefusal(post(`/api/v1/orgs/${alice.name}/repos`, aliceTok, { name: uniq("x") }), 404, NOT_FOUND);
  });

  it("GET /repos/{owner}/{repo} and /repositories/{id} show the owner as GET /users/{name} does", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("ow") });
    const user = await (await t.request(`/api/v1/users/${alice.name}`, { headers: token(bobTok) })).json();
    expect((await (await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(bobTok) })).json()).owner).toEqual(user);
    expect((await (await t.request(`/api/v1/repositories/${r.id}`, { headers: token(bobTok) })).json()).owner).toEqual(user);
  });

  it("a fork of a public repository of a private organization is private (Gitea's ForkRepository)", async () => {
    const org = await seedOrg(t, alice, { visibility: 2 });
    const base = await apiRepo(t, aliceTok, { name: uniq("pb") }, org.name);
    expect(base.private).toBe(false);
    const res = await post(`/api/v1/repos/${org.name}/${base.name}/forks`, aliceTok, {});
    expect(res.status).toBe(202);
    const fork = await res.json();
    expect(fork).toMatchObject({ private: true, topics: [] });
  });

  it("a rename redirect on a path spelled with escapes it cannot match keeps the path (Gitea replaces the escaped owner/name only)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("esc") });
    const newName = uniq("esc2");
    expect((await patch(alice.name, r.name, aliceTok, { name: newName })).status).toBe(200);
    const first = r.name[0].charCodeAt(0).toString(16);
    const path = `/api/v1/repos/${alice.name}/%${first}${r.name.slice(1)}/forks`;
    const old = await t.request(path, { redirect: "manual" });
    expect(old.status).toBe(307);
    expect(old.headers.get("Location")).toBe(path);
  });
});

describe("edit details (rules 1, 5, 10-12)", () => {
  it("rule 1: a rename that only changes case stores no redirect and no rename activity; the same name changes nothing", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("case") });
    const same = await patch(alice.name, r.name, aliceTok, { name: r.name });
    expect((await same.json()).name).toBe(r.name);
    const upper = r.name.toUpperCase();
    expect((await (await patch(alice.name, r.name, aliceTok, { name: upper })).json()).name).toBe(upper);
    expect((await t.db.select({ n: repository.lowerName }).from(repository).where(eq(repository.id, r.id)))[0]!.n).toBe(r.name.toLowerCase());
    expect(await t.db.select().from(repoRedirect).where(eq(repoRedirect.redirectRepoId, r.id))).toEqual([]);
    expect(await t.db.select().from(action).where(and(eq(action.repoId, r.id), eq(action.opType, 2)))).toEqual([]);
  });

  it("rule 1: renaming back onto a name that redirects replaces the redirect (the old name serves the repository again)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("back") });
    const other = uniq("there");
    await patch(alice.name, r.name, aliceTok, { name: other });
    expect((await (await patch(alice.name, other, aliceTok, { name: r.name })).json()).name).toBe(r.name);
    const redirects = await t.db.select({ lowerName: repoRedirect.lowerName }).from(repoRedirect).where(eq(repoRedirect.redirectRepoId, r.id));
    expect(redirects).toEqual([{ lowerName: other.toLowerCase() }]);
    expect((await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(aliceTok) })).status).toBe(200);
  });

  it("rule 5: an external tracker without style or format gets Gitea's defaults", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("etd") });
    const body = await (await patch(alice.name, r.name, aliceTok, { has_issues: true, external_tracker: { external_tracker_url: "https://t.example" } })).json();
    expect(body.external_tracker).toEqual({ external_tracker_url: "https://t.example", external_tracker_format: "", external_tracker_style: "numeric", external_tracker_regexp_pattern: "" });
  });

  it("rule 11: unarchiving clears the archive time", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("ua") });
    await patch(alice.name, r.name, aliceTok, { archived: true });
    const body = await (await patch(alice.name, r.name, aliceTok, { archived: false })).json();
    expect(body.archived_at).toBe("1970-01-01T00:00:00Z");
    expect((await t.db.select({ u: repository.archivedUnix }).from(repository).where(eq(repository.id, r.id)))[0]!.u).toBe(0);
  });

  it("rule 12: a mirror's next update follows the new interval; enable_prune alone keeps the interval", async () => {
    const m = await apiRepo(t, aliceTok, { name: uniq("mn") });
    await t.db.update(repository).set({ isMirror: true }).where(eq(repository.id, m.id));
    await t.db.insert(mirror).values({ repoId: m.id, intervalMs: 28_800_000 });
    const before = Math.floor(Date.now() / 1000);
    await patch(alice.name, m.name, aliceTok, { mirror_interval: "1h" });
    const [row] = await t.db.select().from(mirror).where(eq(mirror.repoId, m.id));
    expect(row!.intervalMs).toBe(3_600_000);
    expect(row!.nextUpdateUnix).toBeGreaterThanOrEqual(before + 3600);
    expect(row!.nextUpdateUnix).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 3600);
    await patch(alice.name, m.name, aliceTok, { enable_prune: false });
    const [after] = await t.db.select().from(mirror).where(eq(mirror.repoId, m.id));
    expect(after).toMatchObject({ intervalMs: 3_600_000, enablePrune: false, nextUpdateUnix: row!.nextUpdateUnix });
    await patch(alice.name, m.name, aliceTok, { mirror_interval: "0s" });
    expect((await t.db.select().from(mirror).where(eq(mirror.repoId, m.id)))[0]).toMatchObject({ intervalMs: 0, nextUpdateUnix: 0 });
  });
});

describe("generate and fork details (generate rules 1-5, forks)", () => {
  const gen = (owner: string, name: string, tk: string, json: Record<string, unknown>) => post(`/api/v1/repos/${owner}/${name}/generate`, tk, json);
  const fork = (owner: string, name: string, tk: string, json: Record<string, unknown> = {}) => post(`/api/v1/repos/${owner}/${name}/forks`, tk, json);

  it("generate copies git content only when asked and only from a non-empty template; defaults: public, no description", async () => {
    const tpl = await apiRepo(t, aliceTok, { name: uniq("gc"), template: true, auto_init: true, description: "the template" });
    const withContent = await (await gen(alice.name, tpl.name, aliceTok, { owner: alice.name, name: uniq("g"), git_content: true })).json();
    expect(withContent).toMatchObject({ empty: false, private: false, description: "" });
    const files = await t.request(`/api/v1/repos/${alice.name}/${withContent.name}/contents/README.md`, { headers: token(aliceTok) });
    expect(files.status).toBe(200);
    const without = await (await gen(alice.name, tpl.name, aliceTok, { owner: alice.name, name: uniq("g"), labels: true })).json();
    expect(without).toMatchObject({ empty: true, private: false, description: "" });
  });

  it("generate and fork need read access to the code unit (403 without it); an organization caller cannot generate (422)", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("nocode"), template: true });
    await t.db.delete(repoUnit).where(eq(repoUnit.repoId, r.id));
    await t.db.insert(repoUnit).values({ repoId: r.id, type: 2, config: "{}" });
    const refusal = "user should have specific read permission or be a repo admin or a site admin";
    await expectRefusal(gen(alice.name, r.name, bobTok, { owner: bob.name, name: uniq("g"), labels: true }), 403, refusal);
    await expectRefusal(fork(alice.name, r.name, bobTok), 403, refusal);
    const org = await seedOrg(t, alice);
    const tpl = await apiRepo(t, aliceTok, { name: uniq("tp"), template: true });
    const res = await t.request(`/api/v1/repos/${alice.name}/${tpl.name}/generate?sudo=${org.name}`, { method: "POST", headers: token(adminTok), json: { owner: org.name, name: uniq("g"), labels: true } });
    await expectRefusal(res, 422, "not allowed creating repository for organization");
  });

  it("a fork has the code and pull request units only, is not a template, and keeps the base's description and default branch", async () => {
    const base = await apiRepo(t, aliceTok, { name: uniq("fu"), template: true, description: "based", default_branch: "trunk" });
    const res = await fork(alice.name, base.name, bobTok);
    const body = await res.json();
    expect(body).toMatchObject({ template: false, description: "based", default_branch: "trunk", has_issues: false, has_wiki: false, has_pull_requests: true });
    const units = await t.db.select({ type: repoUnit.type }).from(repoUnit).where(eq(repoUnit.repoId, body.id));
    expect(units.map((u) => u.type).sort((a, b) => a - b)).toEqual([1, 3]);
  });

  it("forking into a user named as the organization → 422; a fork the caller owns does not stop forking into an organization", async () => {
    const base = await apiRepo(t, aliceTok, { name: uniq("fo") });
    await expectRefusal(fork(alice.name, base.name, bobTok, { organization: alice.name }), 422, `org does not exist [id: 0, name: ${alice.name}]`);
    expect((await fork(alice.name, base.name, bobTok)).status).toBe(202);
    const org = await seedOrg(t, bob);
    const res = await fork(alice.name, base.name, bobTok, { organization: org.name });
    expect(res.status).toBe(202);
    expect((await res.json()).full_name).toBe(`${org.name}/${base.name}`);
  });

  it("a second fork into the same organization, named in another case and under another name → 409 naming the first fork (before any write)", async () => {
    const base = await apiRepo(t, aliceTok, { name: uniq("f2") });
    const org = await seedOrg(t, bob);
    expect((await fork(alice.name, base.name, bobTok, { organization: org.name })).status).toBe(202);
    const again = await fork(alice.name, base.name, bobTok, { organization: org.name.toUpperCase(), name: uniq("other") });
    await expectRefusal(again, 409, `repository is already forked by user [uname: ${org.name}, repo path: ${alice.name}/${base.name}, fork path: ${org.name}/${base.name}]`);
    expect(roundTrips(again)).toBe(1);
  });

  it("the conflict names the first fork only to a caller who may see it: an organization member outside the fork's teams learns the name is taken, not which repository holds it", async () => {
    const org = await seedOrg(t, alice, { visibility: 2 });
    const base = await apiRepo(t, aliceTok, { name: uniq("fh"), private: true });
    expect((await fork(alice.name, base.name, aliceTok, { organization: org.name, name: uniq("hidden") })).status).toBe(202);
    const dave = await seedUser(t.db);
    const daveTok = await dave.token();
    await seedMember(t, org, dave, { canCreateOrgRepo: true });
    await addCollaborator(t, aliceTok, base.full_name, dave, "read");
    const res = await fork(alice.name, base.name, daveTok, { organization: org.name, name: uniq("mine") });
    await expectRefusal(res, 409, `repository is already forked by user [uname: ${org.name}, repo path: ${alice.name}/${base.name}, fork path: ]`);
  });

  it("rule 8: an external wiki may be an http: URL too", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("hw") });
    const body = await (await patch(alice.name, r.name, aliceTok, { has_wiki: true, external_wiki: { external_wiki_url: "http://wiki.example/" } })).json();
    expect(body.external_wiki).toEqual({ external_wiki_url: "http://wiki.example/" });
  });
});

describe("a repository of an owner the caller may not see (issue 8 A.5)", () => {
  it("a collaborator sees the repository, its owner only as the hidden-user form, by path and by id", async () => {
    const hidden = await seedUser(t.db, { visibility: 2 });
    const htk = await hidden.token();
    const r = await apiRepo(t, htk, { name: uniq("hid"), private: true });
    await addCollaborator(t, htk, `${hidden.name}/${r.name}`, bob, "read");
    for (const path of [`/api/v1/repos/${hidden.name}/${r.name}`, `/api/v1/repositories/${r.id}`]) {
      const res = await t.request(path, { headers: token(bobTok) });
      expect(res.status, path).toBe(200);
      const owner = (await res.json()).owner;
      expect(owner, path).toMatchObject({ login: hidden.name, full_name: "", created: "0001-01-01T00:00:00Z", followers_count: 0 });
    }
    await expectRefusal(t.request(`/api/v1/users/${hidden.name}`, { headers: token(bobTok) }), 404, NOT_FOUND);
  });

  it("a token without the owner's read scope sees a limited or private owner only in the hidden-user form — in a read, a list and a search — as the owner's own routes would not show it", async () => {
    const limited = await seedUser(t.db, { visibility: 1 });
    const ltk = await limited.token();
    const r = await apiRepo(t, ltk, { name: uniq("lim"), private: true });
    await addCollaborator(t, ltk, `${limited.name}/${r.name}`, bob, "read");
    const org = await seedOrg(t, alice, { visibility: 2 });
    const or = await apiRepo(t, aliceTok, { name: uniq("porg") }, org.name);
    await addCollaborator(t, aliceTok, `${org.name}/${or.name}`, bob, "read");
    const shown = async (tk: string, owner: string, name: string) => {
      const read = (await (await t.request(`/api/v1/repos/${owner}/${name}`, { headers: token(tk) })).json()).owner;
      const found = (await (await t.request(`/api/v1/repos/search?q=${name}`, { headers: token(tk) })).json()).data[0].owner;
      expect(found).toEqual(read);
      return read.created !== "0001-01-01T00:00:00Z";
    };
    const repoOnly = await bob.token(["read:repository"]);
    expect(await shown(repoOnly, limited.name, r.name)).toBe(false);
    expect(await shown(repoOnly, org.name, or.name)).toBe(false);
    expect(await shown(await bob.token(["read:repository", "read:user"]), limited.name, r.name)).toBe(true);
    expect(await shown(await bob.token(["read:repository", "read:user"]), org.name, or.name)).toBe(false); // an organization is read:organization's
    expect(await shown(await bob.token(["read:repository", "read:organization"]), org.name, or.name)).toBe(false); // bob may not see the private organization at all
    expect(await shown(bobTok, limited.name, r.name)).toBe(true);
    const member = await seedUser(t.db);
    await seedMember(t, org, member);
    expect(await shown(await member.token(["read:repository"]), org.name, or.name)).toBe(false);
    expect(await shown(await member.token(["read:repository", "read:organization"]), org.name, or.name)).toBe(true);
    expect(await shown(await alice.token(["read:repository"]), alice.name, (await apiRepo(t, aliceTok, { name: uniq("pub") })).name)).toBe(true); // a public owner is shown to every token
  });
});

describe("edit and delete details (rules 4, 12, delete)", () => {
  it("rule 4: on a repository with commits, a missing branch is ignored and an existing one becomes the default", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("dbr"), auto_init: true });
    expect((await (await patch(alice.name, r.name, aliceTok, { default_branch: "nope" })).json()).default_branch).toBe("main");
    expect((await post(`/api/v1/repos/${alice.name}/${r.name}/branches`, aliceTok, { new_branch_name: "dev" })).status).toBe(201);
    expect((await (await patch(alice.name, r.name, aliceTok, { default_branch: "dev" })).json()).default_branch).toBe("dev");
  });

  it("rule 12: the minimum interval is named as Go prints durations (hours, minutes and seconds)", async () => {
    for (const [min, shown] of [["1h", "1h0m0s"], ["90s", "1m30s"]] as const) {
      const t2 = await testApp({ GITEA__mirror__MIN_INTERVAL: min });
      const u = await seedUser(t2.db);
      const ut = await u.token();
      const m = await apiRepo(t2, ut, { name: "mi" });
      await t2.db.update(repository).set({ isMirror: true }).where(eq(repository.id, m.id));
      await t2.db.insert(mirror).values({ repoId: m.id, intervalMs: 28_800_000 });
      await expectRefusal(t2.request(`/api/v1/repos/${u.name}/mi`, { method: "PATCH", headers: token(ut), json: { mirror_interval: "1m" } }), 422, `invalid mirror interval: 1m is below minimum interval: ${shown}`);
      t2.close();
    }
  });

  it("delete: a site admin who is no owner of the organization may delete its repository", async () => {
    const org = await seedOrg(t, alice);
    const r = await apiRepo(t, aliceTok, { name: uniq("adel") }, org.name);
    expect((await t.request(`/api/v1/repos/${org.name}/${r.name}`, { method: "DELETE", headers: token(adminTok) })).status).toBe(204);
    expect(await t.db.select().from(repository).where(eq(repository.id, r.id))).toEqual([]);
  });

  it("delete: the owner's repository count drops, so a user at max_repo_creation may create again", async () => {
    const u = await seedUser(t.db);
    const ut = await u.token();
    const r = await apiRepo(t, ut, { name: uniq("cnt") });
    expect((await t.request(`/api/v1/admin/users/${u.name}`, { method: "PATCH", headers: token(adminTok), json: { max_repo_creation: 1 } })).status).toBe(200);
    await expectRefusal(post("/api/v1/user/repos", ut, { name: uniq("over") }), 403, "You have reached your limit of 1 repositories.");
    expect((await t.request(`/api/v1/repos/${u.name}/${r.name}`, { method: "DELETE", headers: token(ut) })).status).toBe(204);
    expect((await t.db.select({ n: user.numRepos }).from(user).where(eq(user.id, u.id)))[0]!.n).toBe(0);
    expect((await post("/api/v1/user/repos", ut, { name: uniq("again") })).status).toBe(201);
  });
});

describe("unit edits that leave a unit alone (rules 5, 9, 10)", () => {
  it("rule 9: projects_mode without the projects unit is ignored", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("pm") });
    await patch(alice.name, r.name, aliceTok, { has_projects: false });
    const body = await (await patch(alice.name, r.name, aliceTok, { projects_mode: "repo" })).json();
    expect(body.has_projects).toBe(false);
    expect(await t.db.select().from(repoUnit).where(and(eq(repoUnit.repoId, r.id), eq(repoUnit.type, 8)))).toEqual([]);
  });

  it("rule 10: pull request settings without the pull request unit do not bring it back", async () => {
    const r = await apiRepo(t, aliceTok, { name: uniq("np") });
    await patch(alice.name, r.name, aliceTok, { has_pull_requests: false });
    const body = await (await patch(alice.name, r.name, aliceTok, { allow_squash_merge: false })).json();
    expect(body.has_pull_requests).toBe(false);
    expect(await t.db.select().from(repoUnit).where(and(eq(repoUnit.repoId, r.id), eq(repoUnit.type, 3)))).toEqual([]);
  });

  it("rule 5: with the external tracker disabled globally, has_issues with an external tracker enables the internal one", async () => {
    const t2 = await testApp({ GITEA__repository__DISABLED_REPO_UNITS: "repo.ext_issues" });
    const u = await seedUser(t2.db);
    const ut = await u.token();
    await apiRepo(t2, ut, { name: "x" });
    await t2.request(`/api/v1/repos/${u.name}/x`, { method: "PATCH", headers: token(ut), json: { has_issues: false } });
    const body = await (await t2.request(`/api/v1/repos/${u.name}/x`, { method: "PATCH", headers: token(ut), json: { has_issues: true, external_tracker: { external_tracker_url: "https://t.example" } } })).json();
    expect(body).toMatchObject({ has_issues: true, internal_tracker: { enable_time_tracker: true } });
    expect(body.external_tracker).toBeUndefined();
    t2.close();
  });
});

describe("generate: the generated repository's description in .gitea/template expansion", () => {
  it("$REPO_DESCRIPTION expands to the given description, or to nothing when none is given", async () => {
    const tpl = await apiRepo(t, aliceTok, { name: uniq("exp"), template: true, auto_init: true });
    const add = async (path: string, text: string) =>
      expect((await post(`/api/v1/repos/${alice.name}/${tpl.name}/contents/${path}`, aliceTok, { content: Buffer.from(text).toString("base64") })).status).toBe(201);
    await add(".gitea/template", "desc.txt\n");
    await add("desc.txt", "[$REPO_DESCRIPTION]\n");
    const raw = async (json: Record<string, unknown>) => {
      const g = await (await post(`/api/v1/repos/${alice.name}/${tpl.name}/generate`, aliceTok, { owner: alice.name, name: uniq("g"), git_content: true, ...json })).json();
      return (await t.request(`/api/v1/repos/${alice.name}/${g.name}/raw/desc.txt`, { headers: token(aliceTok) })).text();
    };
    expect(await raw({})).toBe("[]\n");
    expect(await raw({ description: "mine" })).toBe("[mine]\n");
  });
});
