/**
 * Create rules 1–2 (AutoInit) with real git data, the template listings, and the repository
 * lifecycle of git data (fork shares packs, delete copies shared packs to forks first, then
 * deletes the files; renames move nothing) — in-process on the embedded file and a directory store.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import spdx from "spdx-license-list/full.js";
import { LibsqlRefStore } from "../../functions/db/queries/git-refs.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { gitignoreTemplate } from "../../functions/lib/repo-templates.ts";
import { apiRepo, expectRefusal, NOT_FOUND, roundTrips, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
let tok: string;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  tok = await owner.token();
});
afterAll(() => t.close());

const open = (id: number) => Repository.open({ repoId: String(id), objects: t.objects, refs: new LibsqlRefStore(t.driver) });
const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function fileAt(id: number, path: string): Promise<string | null> {
  const repo = await open(id);
  const head = await repo.resolve("HEAD");
  const entry = await repo.entryAt(head!.oid, path);
  return entry ? text(await repo.readBlob(entry.oid)) : null;
}

describe("AutoInit (create rules 1–2)", () => {
  it("makes one commit 'Initial commit' on the default branch, the caller as author, README from Default; 2 round trips", async () => {
    const name = uniq("ai");
    const res = await t.request("/api/v1/user/repos", { method: "POST", headers: token(tok), json: { name, description: "a description", auto_init: true, default_branch: "trunk" } });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const body = await res.json();
    expect(body).toMatchObject({ empty: false, default_branch: "trunk" });
    expect(body.size).toBeGreaterThanOrEqual(0);
    const repo = await open(body.id);
    expect(repo.state.head).toBe("refs/heads/trunk");
    expect(repo.state.refs.map((r) => r.name)).toEqual(["refs/heads/trunk"]);
    const c = await repo.readCommit(repo.state.refs[0]!.oid);
    expect(c.message).toBe("Initial commit\n");
    expect(c.parents).toEqual([]);
    expect(c.author).toMatchObject({ name: owner.name, email: `${owner.name}@example.com` });
    expect(c.committer).toEqual(c.author);
    expect((await repo.listDir(c.oid, ""))?.map((e) => e.name)).toEqual(["README.md"]);
    expect(await fileAt(body.id, "README.md")).toBe(`# ${name}\n\na description\n`);
    const got = await (await t.request(`/api/v1/repos/${owner.name}/${name}`, { headers: token(tok) })).json();
    expect(got).toMatchObject({ empty: false });
    expect(got.size).toBe(Math.floor((repo.state.packs[0]!.size + repo.state.packs[0]!.idxSize) / 1024));
  });

  it("writes .gitignore from each named template under '# ---> Name' and LICENSE with Gitea's placeholders filled", async () => {
    const name = uniq("ai");
    const body = await apiRepo(t, tok, { name, auto_init: true, gitignores: "Go,Node", license: "MIT" });
    expect(await fileAt(body.id, ".gitignore")).toBe(`# ---> Go\n${await gitignoreTemplate("Go")}\n# ---> Node\n${await gitignoreTemplate("Node")}\n`);
    const year = String(new Date().getUTCFullYear());
    const license = (await fileAt(body.id, "LICENSE"))!;
    expect(license).toBe(`${spdx.MIT!.licenseText.replace("<year>", year).replace("<copyright holders>", owner.name).replace(/\n?$/, "\n")}`);
    expect(license).toContain(`Copyright (c) ${year} ${owner.name}`);
  });

  it("fills 0BSD only on its copyright line", async () => {
    const body = await apiRepo(t, tok, { name: uniq("ai"), auto_init: true, license: "0BSD" });
    const license = (await fileAt(body.id, "LICENSE"))!;
    expect(license).toContain(`Copyright (C) ${new Date().getUTCFullYear()} by ${owner.name} ${owner.name}@example.com`);
    expect(license).toContain("THE SOFTWARE IS PROVIDED \"AS IS\" AND THE AUTHOR DISCLAIMS");
  });

  it("refuses unknown template names before anything is written", async () => {
    const name = uniq("ai");
    const create = (json: Record<string, unknown>) => t.request("/api/v1/user/repos", { method: "POST", headers: token(tok), json: { name, auto_init: true, ...json } });
    await expectRefusal(create({ readme: "Nope" }), 400, "readme template does not exist, available templates: [Default]");
    await expectRefusal(create({ gitignores: "Go,NoSuchThing" }), 422, "GetRepoInitFile[NoSuchThing]: failed to load gitignore template");
    await expectRefusal(create({ license: "NoSuchLicense" }), 422, "GetRepoInitFile[NoSuchLicense]: failed to load license template");
    await expectRefusal(t.request(`/api/v1/repos/${owner.name}/${name}`, { headers: token(tok) }), 404, NOT_FOUND);
  });

  it("without a description the README has an empty description line; a private e-mail or none is the no-reply address in LICENSE", async () => {
    const name = uniq("nd");
    const body = await apiRepo(t, tok, { name, auto_init: true });
    expect(await fileAt(body.id, "README.md")).toBe(`# ${name}\n\n\n`);
    const hidden = await seedUser(t.db, { keepEmailPrivate: true });
    const year = new Date().getUTCFullYear();
    const mine = await apiRepo(t, await hidden.token(), { name: uniq("pe"), auto_init: true, license: "0BSD" });
    expect(await fileAt(mine.id, "LICENSE")).toContain(`Copyright (C) ${year} by ${hidden.name} ${hidden.name.toLowerCase()}@noreply.gitea.test`);
    const orgName = uniq("org");
    expect((await t.request("/api/v1/orgs", { method: "POST", headers: token(tok), json: { username: orgName } })).status).toBe(201);
    const theirs = await apiRepo(t, tok, { name: uniq("oe"), auto_init: true, license: "0BSD" }, orgName);
    expect(await fileAt(theirs.id, "LICENSE")).toContain(`Copyright (C) ${year} by ${orgName} ${orgName.toLowerCase()}@noreply.gitea.test`);
  });

  it("when storing the first commit's files fails, the repository is left empty: no refs, no packs (500)", async () => {
    const name = uniq("sf");
    const put = t.objects.put;
    t.objects.put = () => Promise.reject(new Error("disk full"));
    let res: Response;
    try {
      res = await t.request("/api/v1/user/repos", { method: "POST", headers: token(tok), json: { name, auto_init: true } });
    } finally {
      t.objects.put = put;
    }
    expect(res.status).toBe(500);
    const got = await (await t.request(`/api/v1/repos/${owner.name}/${name}`, { headers: token(tok) })).json();
    expect(got).toMatchObject({ empty: true, size: 0 });
    expect((await open(got.id)).state).toEqual({ head: "refs/heads/main", refs: [], packs: [] });
  });

  it("leaves a repository without auto_init empty, with no git rows and no files", async () => {
    const body = await apiRepo(t, tok, { name: uniq("plain") });
    expect(body).toMatchObject({ empty: true, size: 0 });
    expect((await open(body.id)).state).toEqual({ head: "refs/heads/main", refs: [], packs: [] });
    expect(await t.objects.list(String(body.id))).toEqual([]);
  });
});

describe("template listings", () => {
  it("GET /gitignore/templates and /gitignore/templates/{name} answer Gitea's names and texts (404 when unknown)", async () => {
    const list = (await (await t.request("/api/v1/gitignore/templates")).json()) as string[];
    expect(list.length).toBeGreaterThan(200);
    expect(list).toContain("Go");
    expect([...list].sort((a, b) => (a < b ? -1 : 1))).toEqual(list);
    const res = await t.request("/api/v1/gitignore/templates/Go");
    expect(roundTrips(res)).toBe(0);
    expect(await res.json()).toEqual({ name: "Go", source: await gitignoreTemplate("Go") });
    await expectRefusal(t.request("/api/v1/gitignore/templates/go"), 404, NOT_FOUND);
  });

  it("GET /licenses lists Gitea's preferred licenses first; /licenses/{name} answers the SPDX text", async () => {
    const list = (await (await t.request("/api/v1/licenses")).json()) as { key: string; name: string; url: string }[];
    expect(list.slice(0, 2)).toEqual([
      { key: "Apache-2.0", name: "Apache-2.0", url: "http://gitea.test/api/v1/licenses/Apache-2.0" },
      { key: "MIT", name: "MIT", url: "http://gitea.test/api/v1/licenses/MIT" },
    ]);
    expect(list.length).toBe(Object.keys(spdx).length);
    expect(await (await t.request("/api/v1/licenses/MIT")).json()).toEqual({
      key: "MIT",
      name: "MIT",
      url: "http://gitea.test/api/v1/licenses/MIT",
      implementation: "Create a text file (typically named LICENSE or LICENSE.txt) in the root of your source code and copy the text of the license into the file",
      body: spdx.MIT!.licenseText,
    });
    await expectRefusal(t.request("/api/v1/licenses/NoSuchLicense"), 404, NOT_FOUND);
  });
});

describe("lifecycle of git data", () => {
  it("a fork shares its base's packs and copies its refs; deleting the base copies them to the fork first, then deletes its files", async () => {
    const other = await seedUser(t.db);
    const otherTok = await other.token();
    const base = await apiRepo(t, tok, { name: uniq("base"), auto_init: true, license: "MIT" });
    const fres = await t.request(`/api/v1/repos/${owner.name}/${base.name}/forks`, { method: "POST", headers: token(otherTok), json: {} });
    expect(fres.status).toBe(202);
    expect(roundTrips(fres)).toBe(2);
    const fork = await fres.json();
    expect(fork).toMatchObject({ empty: false, size: base.size });
    const baseState = (await open(base.id)).state;
    const forkState = (await open(fork.id)).state;
    expect(forkState.refs).toEqual(baseState.refs);
    expect(forkState.packs).toEqual(baseState.packs); // shared: still the base's storage
    expect(await t.objects.list(String(fork.id))).toEqual([]);

    const del = await t.request(`/api/v1/repos/${owner.name}/${base.name}`, { method: "DELETE", headers: token(tok) });
    expect(del.status).toBe(204);
    expect(roundTrips(del)).toBe(2);
    expect(await t.objects.list(String(base.id))).toEqual([]);
    const after = (await open(fork.id)).state;
    expect(after.packs.map((p) => p.repoId)).toEqual([String(fork.id)]);
    expect(await fileAt(fork.id, "LICENSE")).toContain(`Copyright (c) ${new Date().getUTCFullYear()} ${owner.name}`);
    expect((await open(base.id)).state.refs).toEqual([]);
  });

  it("a rename moves nothing: the same files serve the new name", async () => {
    const r = await apiRepo(t, tok, { name: uniq("ren"), auto_init: true });
    const files = await t.objects.list(String(r.id));
    const newName = uniq("renamed");
    expect((await t.request(`/api/v1/repos/${owner.name}/${r.name}`, { method: "PATCH", headers: token(tok), json: { name: newName } })).status).toBe(200);
    expect(await t.objects.list(String(r.id))).toEqual(files);
    const info = await t.request(`/${owner.name}/${newName}.git/info/refs?service=git-upload-pack`);
    expect(info.status).toBe(200);
    expect(await info.text()).toContain("refs/heads/main");
    const old = await t.request(`/${owner.name}/${r.name}.git/info/refs?service=git-upload-pack`);
    expect(old.status).toBe(307);
    expect(old.headers.get("Location")).toBe(`/${owner.name}/${newName}.git/info/refs?service=git-upload-pack`);
  });
});
