/**
 * Create rules 1–2 (AutoInit) with real git data, the template listings, the repository
 * lifecycle of git data (fork shares packs, delete copies shared packs to forks first, then
 * deletes the files; renames move nothing), and the rules every API-written commit keeps (ident,
 * date) and the commit list's path rule — in-process on the embedded file and a directory store.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import spdx from "spdx-license-list/full.js";
import { LibsqlRefStore } from "../../functions/db/queries/git-refs.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { gitignoreTemplate } from "../../functions/lib/repo-templates.ts";
import { apiRepo, expectRefusal, NOT_FOUND, roundTrips, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";
import { Scratch } from "../git/helpers.ts";

let t: TestApp;
let owner: SeededUser;
let tok: string;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  tok = await owner.token();
});
const scratch = new Scratch("git-content-");
afterAll(() => {
  t.close();
  scratch.cleanup();
});

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

  it("when staging the first commit's files fails, nothing is created (500): no repository, no rows, no files", async () => {
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
    await expectRefusal(t.request(`/api/v1/repos/${owner.name}/${name}`, { headers: token(tok) }), 404, NOT_FOUND);
  });

  it("a create whose batch commits while its answer is lost (a remote database that timed out: 503) leaves a repository whose first commit reads, from the staged pack", async () => {
    let lose = false;
    const lossy = await testApp({}, {
      wrap: (d) => ({
        ...d,
        batch: async (items, mode) => {
          const rows = await d.batch(items, mode);
          if (lose && mode === "write" && items.some((i) => /INSERT INTO git_pack/.test(i.text))) throw Object.assign(new Error("fetch failed"), { code: "ETIMEDOUT" });
          return rows;
        },
      }),
    });
    try {
      const u = await seedUser(lossy.db);
      const utk = await u.token();
      const name = uniq("lost");
      lose = true;
      const res = await lossy.request("/api/v1/user/repos", { method: "POST", headers: token(utk), json: { name, auto_init: true } });
      lose = false;
      expect(res.status).toBe(503);
      const readme = await lossy.request(`/api/v1/repos/${u.name}/${name}/raw/README.md`, { headers: token(utk) });
      expect([readme.status, await readme.text()]).toEqual([200, `# ${name}\n\n\n`]);
      expect((await lossy.request(`/api/v1/repos/${u.name}/${name}/branches`, { headers: token(utk) })).status).toBe(200);
      // a create refused by its batch (the name is taken) keeps nothing staged
      const staged = async () => (await lossy.objects.list("staged")).length;
      const before = await staged();
      expect((await lossy.request("/api/v1/user/repos", { method: "POST", headers: token(utk), json: { name, auto_init: true } })).status).toBe(409);
      expect(await staged()).toBe(before);
      // and one that succeeds moves its pack under its own id
      const fine = await apiRepo(lossy, utk, { name: uniq("fine"), auto_init: true });
      expect(await staged()).toBe(before);
      expect((await lossy.objects.list(String(fine.id))).length).toBe(3);
    } finally {
      lossy.close();
    }
  });

  it("when storing the first commit's files under the new id fails, the create still succeeds: its staged copy is what reads find", async () => {
    const name = uniq("sn");
    const put = t.objects.put.bind(t.objects);
    t.objects.put = (repoId, file, body) => (repoId === "staged" ? put(repoId, file, body) : Promise.reject(new Error("disk full")));
    let res: Response;
    try {
      res = await t.request("/api/v1/user/repos", { method: "POST", headers: token(tok), json: { name, auto_init: true } });
    } finally {
      t.objects.put = put;
    }
    expect(res.status).toBe(201);
    const readme = await t.request(`/api/v1/repos/${owner.name}/${name}/raw/README.md`, { headers: token(tok) });
    expect([readme.status, await readme.text()]).toEqual([200, `# ${name}\n\n\n`]);
  });

  it("leaves a repository without auto_init empty, with no git rows and no files", async () => {
    const body = await apiRepo(t, tok, { name: uniq("plain") });
    expect(body).toMatchObject({ empty: true, size: 0 });
    expect((await open(body.id)).state).toEqual({ head: "refs/heads/main", refs: [], packs: [], unreachable: false });
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

// ---- commits written through the API ----

const b64 = (text: string) => Buffer.from(text).toString("base64");

/** The raw header lines of a stored commit object. */
async function headerLinesOf(repoId: number, oid: string): Promise<string[]> {
  const o = await (await open(repoId)).reader.read(oid);
  return Buffer.from(o!.data).toString("utf8").split("\n\n")[0]!.split("\n");
}

/** `git fsck --strict` over a copy of the repository's packs and refs: what it reports. */
async function fsckStrict(repoId: number): Promise<string> {
  const dir = scratch.path(`fsck-${repoId}`);
  await scratch.git(["init", "-q", "--bare", dir]);
  mkdirSync(`${dir}/objects/pack`, { recursive: true });
  for (const { name } of await t.objects.list(String(repoId))) writeFileSync(`${dir}/objects/${name}`, (await t.objects.get(String(repoId), name))!);
  for (const r of (await open(repoId)).state.refs) await scratch.git(["update-ref", r.name, r.oid], { cwd: dir });
  const r = await scratch.git(["fsck", "--strict", "--no-dangling"], { cwd: dir }).catch((e: { stderr: string }) => ({ stderr: `FAILED ${e.stderr}` }));
  return r.stderr;
}

describe("ident rule: an API commit's author and committer lines are git's, whatever the caller sends", () => {
  it("a name or e-mail carrying newlines and <> is cleaned as git's ident.c does: no forged header line, fsck --strict clean, the API reads back what was stored", async () => {
    const r = await apiRepo(t, tok, { name: uniq("id"), auto_init: true });
    const api = `/api/v1/repos/${owner.name}/${r.name}`;
    const forged = { name: "Eve\ncommitter Mallory <m@x> 1 +0000", email: "e@x" };
    const writes: [string, string, unknown][] = [
      ["POST", "contents/f1.txt", { content: b64("hi"), author: forged }],
      ["PUT", "contents/f1.txt", { content: b64("ho"), sha: "", committer: { name: "Ada", email: "a@x>\nauthor Mallory <m@x" } }],
      ["POST", "contents", { files: [{ operation: "create", path: "f2.txt", content: b64("x") }], author: { name: " .Ada, Jr.; ", email: " <ada@example.com>. " }, signoff: true }],
    ];
    for (const [method, path, json] of writes) {
      // an update names the blob it replaces
      if (method === "PUT") (json as { sha: string }).sha = (await (await t.request(`${api}/${path}`, { headers: token(tok) })).json()).sha;
      const res = await t.request(`${api}/${path}`, { method, headers: token(tok), json });
      expect(res.status, `${method} ${path} ${await res.clone().text()}`).toBeLessThan(300);
      const body = await res.json();
      const lines = await headerLinesOf(r.id, body.commit.sha);
      expect(lines.map((l) => l.split(" ")[0]), JSON.stringify(lines)).toEqual(["tree", "parent", "author", "committer"]);
      const got = await (await t.request(`${api}/git/commits/${body.commit.sha}`, { headers: token(tok) })).json();
      const ident = (l: string) => l.replace(/^\w+ /, "").replace(/ \d+ [+-]\d{4}$/, "");
      expect(`${got.commit.author.name} <${got.commit.author.email}>`).toBe(ident(lines[2]!));
      expect(`${got.commit.committer.name} <${got.commit.committer.email}>`).toBe(ident(lines[3]!));
      expect(body.commit.author).toMatchObject({ name: got.commit.author.name, email: got.commit.author.email });
      for (const who of [got.commit.author, got.commit.committer]) expect(`${who.name}${who.email}`).not.toMatch(/[\n<>]/);
    }
    const first = await (await t.request(`${api}/commits?limit=3`, { headers: token(tok) })).json();
    // one identity given is used for both (Gitea)
    expect(first.map((c: { commit: { author: { name: string; email: string } } }) => c.commit.author)).toMatchObject([
      { name: "Ada, Jr", email: "ada@example.com" },
      { name: "Ada", email: "a@xauthor Mallory m@x" },
      { name: "Evecommitter Mallory m@x 1 +0000", email: "e@x" },
    ]);
    expect(first[0].commit.message).toContain("Signed-off-by: Ada, Jr <ada@example.com>");
    expect(first[1].commit.committer).toMatchObject({ name: "Ada", email: "a@xauthor Mallory m@x" });
    expect(await fsckStrict(r.id)).toBe("");
  });

  it("a name or e-mail that is nothing but characters git drops → 422, nothing written", async () => {
    const r = await apiRepo(t, tok, { name: uniq("id"), auto_init: true });
    const api = `/api/v1/repos/${owner.name}/${r.name}`;
    const tip = async () => (await open(r.id)).state.refs.map((x) => x.oid);
    const before = await tip();
    const packs = await t.objects.list(String(r.id));
    const cases: [string, string, unknown, string][] = [
      ["POST", "contents/a.txt", { content: b64("x"), author: { name: "\n", email: "e@x" } }, "author name consists only of disallowed characters"],
      ["POST", "contents/a.txt", { content: b64("x"), author: { name: "Ada", email: "a@x" }, committer: { name: "Ada", email: " <>;. " } }, "committer email consists only of disallowed characters"],
      ["POST", "contents", { files: [{ operation: "create", path: "b.txt", content: b64("x") }], author: { name: "<<>>", email: "e@x" } }, "author name consists only of disallowed characters"],
    ];
    for (const [method, path, json, message] of cases) {
      const res = await t.request(`${api}/${path}`, { method, headers: token(tok), json });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(body.message).toMatch(new RegExp(`^${message}`));
      expect(body.url).toBe("http://gitea.test/api/swagger");
    }
    expect(await tip()).toEqual(before);
    expect(await t.objects.list(String(r.id))).toEqual(packs);
  });
});

describe("date rule: an API commit's dates are ones git can store", () => {
  it("dates before 1970 or after 9999 → 422 in Gitea's shape, nothing written; offsets are written as git's ±hhmm", async () => {
    const r = await apiRepo(t, tok, { name: uniq("dt"), auto_init: true });
    const api = `/api/v1/repos/${owner.name}/${r.name}`;
    const before = (await open(r.id)).state.refs;
    for (const dates of [{ committer: "0001-01-01T00:00:00Z" }, { author: "0001-01-01T00:00:00Z" }, { author: "1969-12-31T23:59:59Z" }, { committer: "1970-01-01T00:00:00+01:00" }, { author: "9999-12-31T23:59:59-14:00" }, { author: "+010000-01-01T00:00:00Z" }]) {
      const res = await t.request(`${api}/contents/d.txt`, { method: "POST", headers: token(tok), json: { content: b64("x"), dates } });
      const body = await res.json();
      expect(res.status, JSON.stringify([dates, body])).toBe(422);
      expect(body.message).toMatch(/^\[Dates\]: .* is out of range: git commits hold times from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z$/);
      expect(body.url).toBe("http://gitea.test/api/swagger");
    }
    expect((await open(r.id)).state.refs).toEqual(before);

    const ok: [Record<string, string>, string, string][] = [
      [{ author: "2024-05-01T12:00:00+14:00", committer: "2024-05-01T12:00:00-12:00" }, "+1400", "-1200"],
      [{ author: "1970-01-01T00:00:00Z", committer: "9999-12-31T23:59:59Z" }, "+0000", "+0000"],
      [{ author: "2024-05-01T12:00:00+05:30", committer: "2024-05-01T12:00:00-00:00" }, "+0530", "-0000"],
    ];
    for (const [i, [dates, atz, ctz]] of ok.entries()) {
      const res = await t.request(`${api}/contents/ok${i}.txt`, { method: "POST", headers: token(tok), json: { content: b64("x"), dates } });
      expect(res.status, JSON.stringify(dates)).toBe(201);
      const { commit } = await res.json();
      // Gitea's GetFileCommitResponse leaves every CommitMeta's created unset: Go's zero time
      expect([commit.created, commit.tree.created, ...commit.parents.map((p: { created: string }) => p.created)]).toEqual(Array(2 + commit.parents.length).fill("0001-01-01T00:00:00Z"));
      expect(commit.parents).toHaveLength(1);
      const sha = commit.sha;
      const lines = await headerLinesOf(r.id, sha);
      expect(lines[2]).toMatch(new RegExp(`^author .* ${Math.floor(Date.parse(dates.author!) / 1000)} \\${atz}$`));
      expect(lines[3]).toMatch(new RegExp(`^committer .* ${Math.floor(Date.parse(dates.committer!) / 1000)} \\${ctz}$`));
      const got = await (await t.request(`${api}/git/commits/${sha}`, { headers: token(tok) })).json();
      expect(Date.parse(got.commit.author.date)).toBe(Date.parse(dates.author!));
      expect(Date.parse(got.commit.committer.date)).toBe(Date.parse(dates.committer!));
    }
    expect(await fsckStrict(r.id)).toBe("");
  });
});

describe("path rule: the commit list's `path` is normalised as git does, escaping the root is 422", () => {
  it("./x, a//b, a/../x are the file; `.` and x/.. the whole tree; .., ../.., %2e%2e → 422; never 500", async () => {
    const r = await apiRepo(t, tok, { name: uniq("cp"), auto_init: true });
    const api = `/api/v1/repos/${owner.name}/${r.name}`;
    const put = await t.request(`${api}/contents`, { method: "POST", headers: token(tok), json: { files: [{ operation: "create", path: "a/b.txt", content: b64("x") }] } });
    expect(put.status).toBe(201);
    const shas = async (q: string) => {
      const res = await t.request(`${api}/commits?stat=false&files=false&verification=false&${q}`, { headers: token(tok) });
      expect(res.status, `${q} ${await res.clone().text()}`).toBe(200);
      return (await res.json()).map((c: { sha: string }) => c.sha);
    };
    const all = await shas("");
    expect(all.length).toBe(2);
    const readme = await shas("path=README.md");
    expect(readme).toEqual([all[1]]);
    for (const p of ["./README.md", "a/../README.md", "%2e/README.md", "/README.md"]) expect(await shas(`path=${p}`), p).toEqual(readme);
    for (const p of ["a//b.txt", "./a/./b.txt", "a/b.txt/"]) expect(await shas(`path=${p}`), p).toEqual([all[0]]);
    for (const p of [".", "README.md/..", "a/..", "./"]) expect(await shas(`path=${p}`), p).toEqual(all);
    for (const p of ["..", "../..", "%2e%2e", "../README.md", "a/../../README.md"]) {
      const res = await t.request(`${api}/commits?path=${p}`, { headers: token(tok) });
      const body = await res.json();
      expect(res.status, `${p} ${JSON.stringify(body)}`).toBe(422);
      expect(body.message).toBe(`path contains a malformed path component [path: ${decodeURIComponent(p)}]`);
    }
  });
});

describe("escape rule: answering a write never throws after it", () => {
  it("a new_branch sent with a lone surrogate is stored and answered with U+FFFD (201, the URLs escaped), the branch readable", async () => {
    const r = await apiRepo(t, tok, { name: uniq("es"), auto_init: true });
    const api = `/api/v1/repos/${owner.name}/${r.name}`;
    const res = await t.request(`${api}/contents/f1.txt`, { method: "POST", headers: { ...token(tok), "Content-Type": "application/json" }, body: '{"content":"aGk=","new_branch":"nb\\ud800"}' });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.content.url).toBe(`http://gitea.test${api}/contents/f1.txt?ref=nb%EF%BF%BD`);
    expect(body.content.html_url).toBe(`http://gitea.test/${owner.name}/${r.name}/src/branch/nb%EF%BF%BD/f1.txt`);
    expect((await open(r.id)).state.refs.map((x) => x.name)).toContain("refs/heads/nb\uFFFD");
    expect((await t.request(`${api}/branches/nb%EF%BF%BD`, { headers: token(tok) })).status).toBe(200);
  });
});

describe("privacy rule: a commit's e-mail names an account that keeps its address private only to callers shown that address", () => {
  it("anonymous and other callers see the author unlinked; the account itself and site admins see it linked; public addresses and noreply ones stay linked", async () => {
    const secretive = await seedUser(t.db, { keepEmailPrivate: true });
    const open_ = await seedUser(t.db);
    const admin = await seedUser(t.db, { admin: true });
    const other = await seedUser(t.db);
    const repo = await apiRepo(t, tok, { name: uniq("ae"), auto_init: true });
    const commitAs = async (email: string, path: string) => {
      const res = await t.request(`/api/v1/repos/${repo.full_name}/contents/${path}`, { method: "POST", headers: token(tok), json: { content: "eA==", message: path, author: { name: "x", email }, committer: { name: "x", email } } });
      expect(res.status, email).toBe(201);
    };
    await commitAs(`${secretive.name.toLowerCase()}@example.com`, "a.txt");
    await commitAs(`${open_.name.toLowerCase()}@example.com`, "b.txt");
    await commitAs(`${secretive.name.toLowerCase()}@noreply.gitea.test`, "c.txt");
    const authors = async (headers: Record<string, string>) => {
      const res = await t.request(`/api/v1/repos/${repo.full_name}/commits?limit=3&stat=false&files=false&verification=false`, { headers });
      expect(roundTrips(res)).toBe(1);
      return ((await res.json()) as { author: { login: string } | null }[]).map((c) => c.author?.login ?? null);
    };
    // newest first: the noreply commit, the public address, the private one
    const linked = [secretive.name, open_.name, secretive.name];
    const unlinked = [secretive.name, open_.name, null];
    expect(await authors({})).toEqual(unlinked);
    expect(await authors(token(await other.token()))).toEqual(unlinked);
    expect(await authors(token(await secretive.token()))).toEqual(linked);
    expect(await authors(token(await admin.token()))).toEqual(linked);
  });
});
