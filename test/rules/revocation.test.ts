/**
 * Rule: revoked access is revoked at once on every surface (GHSA-2vgv-hgv4-22mh: Gitea showed a
 * repository's data after its access was taken away). For each way access is granted — a
 * collaborator, a team member, a team's repository, an organization member — every surface answers
 * before the revocation and, on the very next request, answers as for a repository that does not
 * exist: the API's reads, the web archive path, the lists, and git smart HTTP. A downgrade (write →
 * read) keeps every read and refuses every write at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALL_UNITS,
  addCollaborator,
  addTeamMember,
  apiRepo,
  basic,
  expectRefusal,
  NOT_FOUND,
  seedOrg,
  seedTeam,
  seedUser,
  testApp,
  token,
  uniq,
  type SeededOrg,
  type SeededUser,
  type TestApp,
} from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
let ownerTok: string;
let org: SeededOrg;
/** Private repositories with content (auto_init): one of the organization, one of its owner. */
let orgRepo: Repo;
let userRepo: Repo;
/** A public repository of the (public) organization: the organization's list is never empty. */
let orgPublic: Repo;

interface Repo {
  owner: string;
  name: string;
  full: string;
}

/** A user whose access is granted then taken away, with each credential the surfaces take. */
interface Who {
  user: SeededUser;
  tok: string;
}

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  ownerTok = await owner.token();
  org = await seedOrg(t, owner, { visibility: 0 });
  const make = async (prefix: string, isPrivate: boolean, inOrg: boolean): Promise<Repo> => {
    const r = await apiRepo(t, inOrg ? org.ownerToken : ownerTok, { name: uniq(prefix), private: isPrivate, auto_init: true }, inOrg ? org.name : undefined);
    expect(r).toMatchObject({ private: isPrivate, empty: false, default_branch: "main" });
    return { owner: r.owner.login, name: r.name, full: r.full_name };
  };
  orgRepo = await make("rvorg", true, true);
  userRepo = await make("rvusr", true, false);
  orgPublic = await make("rvpub", false, true);
});
afterAll(() => t.close());

const who = async (): Promise<Who> => {
  const user = await seedUser(t.db);
  return { user, tok: await user.token() };
};

/**
 * The repository reads of the API (token) and the web archive path (basic, password); `held` adds,
 * per surface, the validators of the copy the caller kept (a revalidation).
 */
function readSurfaces(r: Repo, w: Who, held: Held = new Map()): [string, () => Promise<Response>][] {
  const get = (name: string, path: string, auth: Record<string, string>) =>
    [name, () => t.request(path, { headers: { ...auth, ...held.get(name) } })] as [string, () => Promise<Response>];
  const api = (name: string, path: string) => get(name, `/api/v1/repos/${r.full}${path}`, token(w.tok));
  return [
    api("GET repo", ""),
    api("GET contents/README.md", "/contents/README.md"),
    api("GET raw/README.md", "/raw/README.md"),
    api("GET archive/main.zip (API)", "/archive/main.zip"),
    get("GET /{o}/{r}/archive/main.zip (web)", `/${r.full}/archive/main.zip`, basic(w.user.name, w.user.password)),
    api("GET branches", "/branches"),
    api("GET commits", "/commits"),
    api("GET git/refs", "/git/refs"),
    api("GET activities/feeds", "/activities/feeds"),
  ];
}

/** Per read surface, the conditional headers of the copy a caller holds (If-None-Match, If-Modified-Since). */
type Held = Map<string, Record<string, string>>;

/** Every smart HTTP credential form a git client sends: user:password and user:token. */
const gitAuths = (w: Who): [string, Record<string, string>][] => [
  ["basic user:password", basic(w.user.name, w.user.password)],
  ["basic user:token", basic(w.user.name, w.tok)],
];

/** A smart HTTP answer as a client sees it. */
async function answer(res: Response) {
  return { status: res.status, body: await res.text(), challenge: res.headers.get("WWW-Authenticate") };
}

const infoRefs = (full: string, service: "git-upload-pack" | "git-receive-pack", headers: Record<string, string>) =>
  t.request(`/${full}.git/info/refs?service=${service}`, { headers });
/** An empty push (a flush packet, no command): git's probe, which changes nothing. */
const receivePack = (full: string, headers: Record<string, string>) =>
  t.request(`/${full}.git/git-receive-pack`, { method: "POST", body: "0000", headers: { ...headers, "Content-Type": "application/x-git-receive-pack-request" } });

/** The names a paged list shows the user, and the X-Total-Count it states (all of them on one page). */
async function listed(path: string, w: Who) {
  const res = await t.request(`${path}${path.includes("?") ? "&" : "?"}limit=50`, { headers: token(w.tok) });
  expect(res.status, path).toBe(200);
  const body = await res.json();
  const items: { full_name: string }[] = Array.isArray(body) ? body : body.data;
  const total = Number(res.headers.get("X-Total-Count"));
  // the count states exactly what the list shows (fewer than a page)
  expect(total, `${path} X-Total-Count`).toBe(items.length);
  return items.map((i) => i.full_name);
}

const listPaths = (r: Repo) => [
  "/api/v1/user/repos",
  `/api/v1/repos/search?q=${r.name}`,
  ...(r.owner === org.name ? [`/api/v1/orgs/${org.name}/repos`] : []),
];

/**
 * Everything the user reaches of `r` while holding (at least) read access; returns the validators
 * of what it received. None of it may be stored by a shared cache (`public`), which would go on
 * serving it after the revocation.
 */
async function expectReadable(r: Repo, w: Who, label: string): Promise<Held> {
  const held: Held = new Map();
  for (const [name, req] of readSurfaces(r, w)) {
    const res = await req();
    expect(res.status, `${label}: ${name}`).toBe(200);
    expect(res.headers.get("Cache-Control") ?? "", `${label}: ${name} Cache-Control`).not.toMatch(/public/);
    const etag = res.headers.get("ETag");
    const modified = res.headers.get("Last-Modified");
    held.set(name, { ...(etag ? { "If-None-Match": etag } : {}), ...(modified ? { "If-Modified-Since": modified } : {}) });
    await res.arrayBuffer();
  }
  for (const path of listPaths(r)) expect(await listed(path, w), `${label}: ${path}`).toContain(r.full);
  for (const [name, h] of gitAuths(w)) {
    const res = await infoRefs(r.full, "git-upload-pack", h);
    expect(res.status, `${label}: info/refs upload-pack, ${name}`).toBe(200);
    expect(await res.text(), `${label}: info/refs upload-pack, ${name}`).toContain("refs/heads/main");
  }
  return held;
}

/** Writes the user may make while holding write access (each succeeds). */
async function expectWritable(r: Repo, w: Who, label: string) {
  const perms = (await (await t.request(`/api/v1/repos/${r.full}`, { headers: token(w.tok) })).json()).permissions;
  expect(perms, label).toMatchObject({ push: true, pull: true });
  const content = Buffer.from("granted\n").toString("base64");
  const file = await t.request(`/api/v1/repos/${r.full}/contents/${uniq("f")}.txt`, { method: "POST", headers: token(w.tok), json: { content, message: "m" } });
  expect(file.status, `${label}: POST contents`).toBe(201);
  const created = await t.request(`/api/v1/repos/${r.full}/labels`, { method: "POST", headers: token(w.tok), json: { name: uniq("l"), color: "#00aabb" } });
  expect(created.status, `${label}: POST labels`).toBe(201);
  for (const [name, h] of gitAuths(w)) {
    expect((await infoRefs(r.full, "git-receive-pack", h)).status, `${label}: info/refs receive-pack, ${name}`).toBe(200);
    expect((await receivePack(r.full, h)).status, `${label}: POST git-receive-pack, ${name}`).toBe(200);
  }
}

/**
 * After the revocation, on the very next request: every surface answers as for a missing
 * repository — also to a revalidation of the copy the caller kept (no 304 confirming it).
 */
async function expectGone(r: Repo, w: Who, label: string, held: Held) {
  expect(held.size, "validators were collected before the revocation").toBe(readSurfaces(r, w).length);
  expect([...held.values()].filter((h) => h["If-None-Match"]).length, "the reads carry ETags").toBeGreaterThan(0);
  for (const [name, req] of readSurfaces(r, w)) await expectRefusal(req(), 404, NOT_FOUND, `${label}: ${name}`);
  for (const [name, req] of readSurfaces(r, w, held)) await expectRefusal(req(), 404, NOT_FOUND, `${label}: ${name}, revalidating`);
  for (const path of listPaths(r)) expect(await listed(path, w), `${label}: ${path}`).not.toContain(r.full);
  const missing = `${r.owner}/${uniq("nosuch")}`;
  for (const [name, h] of gitAuths(w)) {
    const gone = await answer(await infoRefs(missing, "git-upload-pack", h));
    expect(gone.status, "a missing repository's answer to a signed-in git client").toBe(404);
    expect(await answer(await infoRefs(r.full, "git-upload-pack", h)), `${label}: info/refs upload-pack, ${name}`).toEqual(gone);
    expect(await answer(await infoRefs(r.full, "git-receive-pack", h)), `${label}: info/refs receive-pack, ${name}`).toEqual(await answer(await infoRefs(missing, "git-receive-pack", h)));
    expect(await answer(await receivePack(r.full, h)), `${label}: POST git-receive-pack, ${name}`).toEqual(await answer(await receivePack(missing, h)));
  }
}

/** After a downgrade to read: every read still answers, every write is refused (may see, may not act → 403). */
async function expectReadOnly(r: Repo, w: Who, label: string) {
  await expectReadable(r, w, label);
  const repo = await (await t.request(`/api/v1/repos/${r.full}`, { headers: token(w.tok) })).json();
  expect(repo.permissions, label).toEqual({ admin: false, push: false, pull: true });
  const sha = (await (await t.request(`/api/v1/repos/${r.full}/contents/README.md`, { headers: token(w.tok) })).json()).sha;
  const content = Buffer.from("revoked\n").toString("base64");
  const WRITER = "user should have a permission to write to a repo";
  await expectRefusal(t.request(`/api/v1/repos/${r.full}/contents/README.md`, { method: "PUT", headers: token(w.tok), json: { content, sha, message: "m" } }), 403, WRITER, `${label}: PUT contents`);
  await expectRefusal(t.request(`/api/v1/repos/${r.full}/contents/${uniq("f")}.txt`, { method: "POST", headers: token(w.tok), json: { content, message: "m" } }), 403, WRITER, `${label}: POST contents`);
  await expectRefusal(t.request(`/api/v1/repos/${r.full}/labels`, { method: "POST", headers: token(w.tok), json: { name: uniq("l"), color: "#00aabb" } }), 403, WRITER, `${label}: POST labels`);
  for (const [name, h] of gitAuths(w)) {
    const denied = { status: 403, body: "User permission denied for writing.\n", challenge: null };
    expect(await answer(await infoRefs(r.full, "git-receive-pack", h)), `${label}: info/refs receive-pack, ${name}`).toEqual(denied);
    expect(await answer(await receivePack(r.full, h)), `${label}: POST git-receive-pack, ${name}`).toEqual(denied);
  }
  // nothing was written: README.md is as it was
  expect((await (await t.request(`/api/v1/repos/${r.full}/contents/README.md`, { headers: token(ownerTok) })).json()).sha, label).toBe(sha);
}

/** A write team of the organization holding `r`, with the user in it. */
async function writeTeam(r: Repo, w: Who) {
  const team = await seedTeam(t, org, { permission: "write", units: ALL_UNITS });
  expect((await t.request(`/api/v1/teams/${team.id}/repos/${org.name}/${r.name}`, { method: "PUT", headers: token(org.ownerToken) })).status).toBe(204);
  await addTeamMember(t, org, team.id, w.user);
  return team;
}

describe("revoked access is revoked at once on every surface (GHSA-2vgv-hgv4-22mh)", () => {
  it("a write collaborator removed (DELETE /repos/{o}/{r}/collaborators/{u}): the user's and the organization's repository", async () => {
    for (const r of [userRepo, orgRepo]) {
      const w = await who();
      await addCollaborator(t, ownerTok, r.full, w.user, "write");
      const held = await expectReadable(r, w, `collaborator on ${r.full}`);
      await expectWritable(r, w, `collaborator on ${r.full}`);
      expect((await t.request(`/api/v1/repos/${r.full}/collaborators/${w.user.name}`, { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
      await expectGone(r, w, `removed collaborator on ${r.full}`, held);
    }
  });

  it("a member of a write team removed from the team (DELETE /teams/{id}/members/{u}), still a member of the organization", async () => {
    const w = await who();
    // another team without the repository keeps the user in the organization
    await seedTeam(t, org, { permission: "read" }).then((other) => addTeamMember(t, org, other.id, w.user));
    const team = await writeTeam(orgRepo, w);
    const held = await expectReadable(orgRepo, w, "team member");
    await expectWritable(orgRepo, w, "team member");
    expect((await t.request(`/api/v1/teams/${team.id}/members/${w.user.name}`, { method: "DELETE", headers: token(org.ownerToken) })).status).toBe(204);
    expect((await t.request(`/api/v1/orgs/${org.name}/members/${w.user.name}`, { headers: token(org.ownerToken) })).status, "still an organization member").toBe(204);
    await expectGone(orgRepo, w, "removed team member", held);
  });

  it("the repository removed from the team (DELETE /teams/{id}/repos/{org}/{repo})", async () => {
    const w = await who();
    const team = await writeTeam(orgRepo, w);
    const held = await expectReadable(orgRepo, w, "team repository");
    await expectWritable(orgRepo, w, "team repository");
    expect((await t.request(`/api/v1/teams/${team.id}/repos/${org.name}/${orgRepo.name}`, { method: "DELETE", headers: token(org.ownerToken) })).status).toBe(204);
    await expectGone(orgRepo, w, "repository removed from team", held);
  });

  it("a user removed from the organization (DELETE /orgs/{org}/members/{u}) loses every team's access", async () => {
    const w = await who();
    await writeTeam(orgRepo, w);
    await writeTeam(orgRepo, w);
    const held = await expectReadable(orgRepo, w, "organization member");
    await expectWritable(orgRepo, w, "organization member");
    expect((await t.request(`/api/v1/orgs/${org.name}/members/${w.user.name}`, { method: "DELETE", headers: token(org.ownerToken) })).status).toBe(204);
    await expectGone(orgRepo, w, "removed organization member", held);
    // the organization's public repository is still there for the user: only the access went
    expect(await listed(`/api/v1/orgs/${org.name}/repos`, w)).toEqual([orgPublic.full]);
  });

  it("downgrade: a team PATCHed from write to read keeps its reads and loses every write at once", async () => {
    const w = await who();
    const team = await writeTeam(orgRepo, w);
    await expectReadable(orgRepo, w, "write team");
    await expectWritable(orgRepo, w, "write team");
    const res = await t.request(`/api/v1/teams/${team.id}`, { method: "PATCH", headers: token(org.ownerToken), json: { permission: "read", units: ALL_UNITS } });
    expect(res.status).toBe(200);
    expect((await res.json()).permission).toBe("read");
    await expectReadOnly(orgRepo, w, "team downgraded to read");
  });

  it("downgrade: a collaborator PUT from write to read keeps the reads and loses every write at once", async () => {
    for (const r of [userRepo, orgRepo]) {
      const w = await who();
      await addCollaborator(t, ownerTok, r.full, w.user, "write");
      await expectReadable(r, w, `write collaborator on ${r.full}`);
      await expectWritable(r, w, `write collaborator on ${r.full}`);
      await addCollaborator(t, ownerTok, r.full, w.user, "read");
      await expectReadOnly(r, w, `collaborator downgraded to read on ${r.full}`);
    }
  });
});
