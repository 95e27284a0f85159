/**
 * File contents through the REST API on BOTH targets (Node + DATA_DIR; workerd + sqld + local R2),
 * cross-checked with the real git CLI: reading entries, directories, symlinks and submodules at
 * branches, tags and commits with their last commits; raw bytes with Gitea's headers; writing files
 * (create, update, rename, delete, several at once) as single commits a clone shows byte for byte
 * with the given author, committer and message; Gitea's refusals; round trips; a race.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";
import { Scratch } from "../git/helpers.ts";

const s = new Scratch("e2e-contents-");
afterAll(() => s.cleanup());

const IDENT = ["-c", "user.name=Ada Pusher", "-c", "user.email=ada@example.com"];
const b64 = (b: Uint8Array | string) => Buffer.from(b).toString("base64");

async function fsck(dir: string): Promise<void> {
  const r = await s.git(["fsck", "--full", "--no-dangling"], { cwd: dir });
  expect(r.stderr).not.toMatch(/error|missing|broken|bad/i);
}

for (const target of targets()) {
  describe(`contents API on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    const host = target.url.replace(/^http:\/\//, "");

    async function newUser() {
      const name = uniqName("cu");
      const password = "contents-password-1";
      await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email: `${name}@example.com`, password, must_change_password: false } });
      const tok = await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, password), json: { name: uniqName("t"), scopes: ["all"] } });
      return { name, password, token: (await tok.json()).sha1 as string };
    }
    async function newRepo(owner: { name: string; token: string }, opts: Record<string, unknown> = {}) {
      const name = uniqName("cr");
      const res = await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, ...opts } });
      expect(res.status).toBe(201);
      return { name, full: `${owner.name}/${name}`, api: `/api/v1/repos/${owner.name}/${name}`, push: `http://${encodeURIComponent(owner.name)}:${owner.token}@${host}/${owner.name}/${name}.git` };
    }
    const as = (u: { token: string }) => ({ headers: tokenAuth(u.token) });

    it("reads files, directories, symlinks and submodules at branches, tags and commits, as git sees them, in one round trip", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const src = s.path(`${target.name}-read`);
      mkdirSync(`${src}/dir/sub`, { recursive: true });
      mkdirSync(`${src}/lib`); // an uninitialised submodule's directory (absent, `commit -a` would drop it)
      await s.git(["init", "-q", src]);
      const binary = randomBytes(3000);
      binary[10] = 0;
      writeFileSync(`${src}/README.md`, "# hello\n");
      writeFileSync(`${src}/dir/a.txt`, "a\n");
      writeFileSync(`${src}/dir/sub/deep name.txt`, "ünïcødé\n");
      writeFileSync(`${src}/bin.dat`, binary);
      writeFileSync(`${src}/run.sh`, "#!/bin/sh\necho hi\n", { mode: 0o755 });
      symlinkSync("README.md", `${src}/link`);
      writeFileSync(`${src}/.gitmodules`, '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n');
      await s.git(["add", "-A"], { cwd: src });
      await s.git(["update-index", "--add", "--cacheinfo", `160000,${"ab".repeat(20)},lib`], { cwd: src });
      await s.git([...IDENT, "commit", "-q", "-m", "first"], { cwd: src });
      await s.git(["tag", "v1"], { cwd: src });
      writeFileSync(`${src}/dir/a.txt`, "a changed\n");
      await s.git([...IDENT, "commit", "-q", "-am", "second"], { cwd: src });
      await s.git(["push", "-q", r.push, "main", "v1"], { cwd: src });
      const head = await s.gitText(["rev-parse", "HEAD"], { cwd: src });
      const first = await s.gitText(["rev-parse", "HEAD~1"], { cwd: src });

      // the root listing: git's entries, order, ids, types and last commits
      const res = await call("GET", `${r.api}/contents`, as(u));
      expect(res.status).toBe(200);
      expect(roundTrips(res)).toBe(1);
      const list = (await res.json()) as Record<string, unknown>[];
      const lsTree = (await s.gitText(["ls-tree", "HEAD"], { cwd: src })).split("\n").map((l) => l.split(/\s+/, 3).concat(l.split("\t")[1]!));
      expect(list.map((e) => [e.name, e.sha])).toEqual(lsTree.map((l) => [l[3], l[2]]));
      const typeOf: Record<string, string> = { "100644": "file", "100755": "file", "120000": "symlink", "040000": "dir", "160000": "submodule" };
      expect(list.map((e) => e.type)).toEqual(lsTree.map((l) => typeOf[l[0]!]));
      for (const e of list) {
        expect(e.last_commit_sha, String(e.path)).toBe(await s.gitText(["log", "-1", "--format=%H", "--", String(e.path)], { cwd: src }));
        if (e.type === "file" || e.type === "symlink") expect(e.size, String(e.path)).toBe(Number(await s.gitText(["cat-file", "-s", String(e.sha)], { cwd: src })));
        expect(e.content).toBeNull();
        expect(e.encoding).toBeNull();
      }
      const dir = list.find((e) => e.name === "dir")!;
      expect(dir).toMatchObject({ type: "dir", size: 0, last_commit_sha: head, download_url: null, html_url: `${target.url}/${r.full}/src/branch/main/dir` });
      const sub = list.find((e) => e.name === "lib")!;
      expect(sub).toMatchObject({ type: "submodule", sha: "ab".repeat(20), submodule_git_url: "https://example.com/lib.git", html_url: null, git_url: null, download_url: null });
      // Gitea's FileLinksResponse has no omitempty: git and html are there, null
      expect(sub._links).toEqual({ self: `${target.url}/api/v1/repos/${r.full}/contents/lib?ref=main`, git: null, html: null });

      // one file, with its bytes and Gitea's URLs
      const file = await call("GET", `${r.api}/contents/dir/sub/deep%20name.txt`, as(u));
      expect(file.status).toBe(200);
      expect(roundTrips(file)).toBe(1);
      const f = await file.json();
      expect(Buffer.from(f.content, "base64")).toEqual(readFileSync(`${src}/dir/sub/deep name.txt`));
      expect(f).toMatchObject({
        name: "deep name.txt",
        path: "dir/sub/deep name.txt",
        sha: await s.gitText(["rev-parse", "HEAD:dir/sub/deep name.txt"], { cwd: src }),
        last_commit_sha: first,
        type: "file",
        encoding: "base64",
        size: Buffer.byteLength("ünïcødé\n"),
        target: null,
        submodule_git_url: null,
        url: `${target.url}/api/v1/repos/${r.full}/contents/dir/sub/deep%20name.txt?ref=main`,
        html_url: `${target.url}/${r.full}/src/branch/main/dir/sub/deep%20name.txt`,
        download_url: `${target.url}/${r.full}/raw/branch/main/dir/sub/deep%20name.txt`,
      });
      expect(f._links).toEqual({ self: f.url, git: f.git_url, html: f.html_url });
      const bin = await (await call("GET", `${r.api}/contents/bin.dat`, as(u))).json();
      expect(Buffer.from(bin.content, "base64").equals(binary)).toBe(true);
      const link = await (await call("GET", `${r.api}/contents/link`, as(u))).json();
      expect(link).toMatchObject({ type: "symlink", target: "README.md", content: null });

      // a directory, at a tag and at a commit: that revision's tree
      const atTag = (await (await call("GET", `${r.api}/contents/dir?ref=v1`, as(u))).json()) as { name: string; sha: string; url: string; html_url: string }[];
      expect(atTag.map((e) => e.sha)).toEqual((await s.gitText(["ls-tree", "v1:dir"], { cwd: src })).split("\n").map((l) => l.split(/\s+/)[2]));
      expect(atTag[0]!.html_url).toBe(`${target.url}/${r.full}/src/tag/v1/dir/a.txt`);
      const atCommit = await (await call("GET", `${r.api}/contents/dir/a.txt?ref=${first}`, as(u))).json();
      expect(Buffer.from(atCommit.content, "base64").toString()).toBe("a\n");
      expect(atCommit.download_url).toBe(`${target.url}/${r.full}/raw/commit/${first}/dir/a.txt`);
      const full = await (await call("GET", `${r.api}/contents/dir/a.txt?ref=refs/heads/main`, as(u))).json();
      expect(Buffer.from(full.content, "base64").toString()).toBe("a changed\n");

      // missing ref, missing path: Gitea's 404s, still one round trip
      const noRef = await call("GET", `${r.api}/contents/README.md?ref=nope`, as(u));
      expect(noRef.status).toBe(404);
      expect(roundTrips(noRef)).toBe(1);
      expect(await noRef.json()).toMatchObject({ message: "The target couldn't be found.", errors: ["object does not exist [id: nope, rel_path: ]"] });
      const noPath = await call("GET", `${r.api}/contents/dir/nope.txt`, as(u));
      expect(noPath.status).toBe(404);
      expect(roundTrips(noPath)).toBe(1);
      expect(await noPath.json()).toMatchObject({ message: "GetContentsOrList", errors: ["object does not exist [id: , rel_path: dir/nope.txt]"] });
      for (const bad of [".git/config", "dir/.GIT/x"]) {
        const t = await call("GET", `${r.api}/contents/${bad}`, as(u));
        expect(t.status, bad).toBe(422);
        expect((await t.json()).message).toMatch(/^path contains a malformed path component/);
      }
    });

    it("file-contents: several files' contents in one round trip, in request order — null for what is not there — at most [api] DEFAULT_PAGING_NUM, by POST (a write scope) or GET (body in the query)", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const src = s.path(`${target.name}-file-contents`);
      mkdirSync(`${src}/dir`, { recursive: true });
      await s.git(["init", "-q", "-b", "main", src]);
      for (let i = 0; i < 32; i++) writeFileSync(`${src}/dir/f${i}.txt`, `file ${i}\n`);
      writeFileSync(`${src}/README.md`, "# files\n");
      await s.git(["add", "-A"], { cwd: src });
      await s.git([...IDENT, "commit", "-q", "-m", "files"], { cwd: src });
      await s.git(["tag", "v1"], { cwd: src });
      writeFileSync(`${src}/README.md`, "# changed\n");
      await s.git([...IDENT, "commit", "-q", "-am", "change"], { cwd: src });
      await s.git(["push", "-q", r.push, "main", "v1"], { cwd: src });
      const files = ["README.md", "no/such/file", "dir", "../escape", "dir/f3.txt"];
      const post = await call("POST", `${r.api}/file-contents`, { ...as(u), json: { files } });
      expect(post.status).toBe(200);
      expect(roundTrips(post)).toBe(1);
      const got = (await post.json()) as (Record<string, unknown> | null)[];
      expect(got.map((f) => (f ? `${f.type} ${f.path}` : null))).toEqual(["file README.md", null, "dir dir", null, "file dir/f3.txt"]);
      // each file as the contents route shows it, without the last-commit fields
      const single = await (await call("GET", `${r.api}/contents/README.md`, as(u))).json();
      const { last_commit_sha: _sha, last_committer_date: _cd, last_author_date: _ad, ...rest } = single;
      expect(got[0]).toEqual(rest);
      expect(Buffer.from(String(got[0]!.content), "base64").toString()).toBe("# changed\n");
      // at a ref, and by GET with the body in the query
      const body = encodeURIComponent(JSON.stringify({ files: ["README.md"] }));
      const atTag = await (await call("GET", `${r.api}/file-contents?ref=v1&body=${body}`, as(u))).json();
      expect(Buffer.from(atTag[0].content, "base64").toString()).toBe("# files\n");
      // at most DEFAULT_PAGING_NUM (30) of 33 asked for
      const many = await (await call("POST", `${r.api}/file-contents`, { ...as(u), json: { files: ["README.md", ...Array.from({ length: 32 }, (_, i) => `dir/f${i}.txt`)] } })).json();
      expect(many).toHaveLength(30);
      const bad = await call("GET", `${r.api}/file-contents?body=not-json`, as(u));
      expect([bad.status, (await bad.json()).message]).toEqual([400, "invalid body parameter"]);
      const none = await call("GET", `${r.api}/file-contents`, as(u));
      expect([none.status, (await none.json()).message]).toEqual([400, "invalid body parameter"]);
      // POST binds the body: its files are Required (a missing, null or empty list), after the repository is found
      for (const json of [{}, { files: [] }, { files: null }]) {
        const res = await call("POST", `${r.api}/file-contents`, { ...as(u), json });
        expect([res.status, (await res.json()).message], JSON.stringify(json)).toEqual([422, "[Files]: Required"]);
      }
      expect((await call("POST", `/api/v1/repos/${u.name}/${uniqName("none")}/file-contents`, { ...as(u), json: {} })).status).toBe(404);
      const noRef = await call("POST", `${r.api}/file-contents?ref=nope`, { ...as(u), json: { files } });
      expect(noRef.status).toBe(404);
      // POST asks a write scope of a token (as Gitea's tokenRequiresScopes does for every POST); GET a read one
      const readOnly = (await (await call("POST", `/api/v1/users/${u.name}/tokens`, { headers: basicAuth(u.name, u.password), json: { name: uniqName("t"), scopes: ["read:repository"] } })).json()).sha1 as string;
      expect((await call("POST", `${r.api}/file-contents`, { headers: tokenAuth(readOnly), json: { files } })).status).toBe(403);
      expect((await call("GET", `${r.api}/file-contents?body=${body}`, { headers: tokenAuth(readOnly) })).status).toBe(200);
    });

    it("contents-ext: a file as {file_contents} (content, LFS metadata, last commit and its message only when asked), a directory as {dir_contents}; unknown includes 400", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const src = s.path(`${target.name}-contents-ext`);
      mkdirSync(`${src}/dir`, { recursive: true });
      await s.git(["init", "-q", "-b", "main", src]);
      writeFileSync(`${src}/README.md`, "# ext\n");
      writeFileSync(`${src}/dir/a.txt`, "a\n");
      const lfsOid = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";
      writeFileSync(`${src}/dir/big.bin`, `version https://git-lfs.github.com/spec/v1\noid sha256:${lfsOid}\nsize 42\n`);
      await s.git(["add", "-A"], { cwd: src });
      await s.git([...IDENT, "commit", "-q", "-m", "ext files\n\nwith a body"], { cwd: src });
      await s.git(["push", "-q", r.push, "main"], { cwd: src });
      const head = await s.gitText(["rev-parse", "HEAD"], { cwd: src });
      const ext = (p: string) => call("GET", `${r.api}/contents-ext/${p}`, as(u));
      const plain = await (await call("GET", `${r.api}/contents/README.md`, as(u))).json();
      const { last_commit_sha: _s, last_committer_date: _c, last_author_date: _a, content: _x, encoding: _e, ...meta } = plain;
      const file = await ext("README.md");
      expect(file.status).toBe(200);
      expect(roundTrips(file)).toBe(1);
      expect(await file.json()).toEqual({ file_contents: { ...meta, encoding: null, content: null } });
      const full = await (await ext("README.md?includes=file_content,commit_metadata,commit_message")).json();
      expect(full.file_contents).toMatchObject({ content: plain.content, encoding: "base64", last_commit_sha: head, last_commit_message: "ext files\n\nwith a body\n" });
      const lfs = await (await ext("dir/big.bin?includes=lfs_metadata")).json();
      expect(lfs.file_contents).toMatchObject({ lfs_oid: lfsOid, lfs_size: 42, content: null });
      const dir = await (await ext("dir?includes=commit_metadata")).json();
      expect(Object.keys(dir)).toEqual(["dir_contents"]);
      expect(dir.dir_contents.map((e: { name: string; last_commit_sha: string; content: unknown }) => [e.name, e.last_commit_sha, e.content])).toEqual([
        ["a.txt", head, null],
        ["big.bin", head, null],
      ]);
      const bad = await ext("README.md?includes=everything");
      expect([bad.status, (await bad.json()).message]).toEqual([400, 'unknown include option "everything"']);
      expect((await ext("no/such")).status).toBe(404);
    });

    it("serves raw bytes with Gitea's headers, the ref from the query or the path, ETag revalidation", async () => {
      const u = await newUser();
      const r = await newRepo(u, { auto_init: true, private: true });
      const binary = randomBytes(200_000);
      binary[0] = 0;
      const put = await call("POST", `${r.api}/contents/data/blob.bin`, { ...as(u), json: { content: b64(binary) } });
      expect(put.status).toBe(201);
      const sha = (await put.json()).content.sha as string;

      const raw = await call("GET", `${r.api}/raw/data/blob.bin`, as(u));
      expect(raw.status).toBe(200);
      expect(roundTrips(raw)).toBe(1);
      expect(Buffer.from(await raw.arrayBuffer()).equals(binary)).toBe(true);
      expect(raw.headers.get("Content-Type")).toBe("application/octet-stream");
      expect(raw.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(raw.headers.get("Content-Security-Policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
      expect(raw.headers.get("Content-Disposition")).toBe("inline; filename=blob.bin");
      expect(raw.headers.get("X-Gitea-Object-Type")).toBe("file");
      expect(raw.headers.get("ETag")).toBe(`"${sha}"`);
      expect(raw.headers.get("Cache-Control")).toMatch(/^private, max-age=21600, no-transform$/);
      expect(raw.headers.get("Last-Modified")).toBeTruthy();

      const text = await call("GET", `${r.api}/raw/main/README.md`, as(u));
      expect(text.status).toBe(200);
      expect(text.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
      expect(await text.text()).toMatch(new RegExp(`^# ${r.name}`));
      const viaQuery = await call("GET", `${r.api}/media/README.md?ref=main`, as(u));
      expect(viaQuery.status).toBe(200);
      expect(await viaQuery.text()).toMatch(new RegExp(`^# ${r.name}`));

      const again = await call("GET", `${r.api}/raw/data/blob.bin`, { headers: { ...tokenAuth(u.token), "If-None-Match": `"${sha}"` } });
      expect(again.status).toBe(304);
      expect(roundTrips(again)).toBe(1);

      // byte ranges (a resumed download), as Go's ServeContent in Gitea serves them
      expect(raw.headers.get("Accept-Ranges")).toBe("bytes");
      const ranged = (range: string, extra: Record<string, string> = {}) => call("GET", `${r.api}/raw/data/blob.bin`, { headers: { ...tokenAuth(u.token), Range: range, ...extra } });
      const part = await ranged("bytes=100-199");
      expect({ status: part.status, range: part.headers.get("Content-Range"), length: part.headers.get("Content-Length") }).toEqual({ status: 206, range: "bytes 100-199/200000", length: "100" });
      expect(Buffer.from(await part.arrayBuffer()).equals(binary.subarray(100, 200))).toBe(true);
      const tail = await ranged("bytes=-5", { "If-Range": `"${sha}"` });
      expect(Buffer.from(await tail.arrayBuffer()).equals(binary.subarray(-5))).toBe(true);
      const stale = await ranged("bytes=0-9", { "If-Range": '"0000"' });
      expect(stale.status).toBe(200);
      expect((await stale.arrayBuffer()).byteLength).toBe(200_000);
      // If-Modified-Since (ServeContent's, without If-None-Match): not changed since → 304
      const lastModified = raw.headers.get("Last-Modified")!;
      const since = await call("GET", `${r.api}/raw/data/blob.bin`, { headers: { ...tokenAuth(u.token), "If-Modified-Since": lastModified } });
      expect(since.status).toBe(304);
      const before = await call("GET", `${r.api}/raw/data/blob.bin`, { headers: { ...tokenAuth(u.token), "If-Modified-Since": new Date(Date.parse(lastModified) - 1000).toUTCString() } });
      expect(before.status).toBe(200);
      await before.arrayBuffer();
      const past = await ranged("bytes=300000-");
      expect({ status: past.status, range: past.headers.get("Content-Range") }).toEqual({ status: 416, range: "bytes */200000" });
      await past.arrayBuffer();

      // a directory is no raw file; a missing file and a missing repository answer alike
      const asDir = await call("GET", `${r.api}/raw/data`, as(u));
      expect(asDir.status).toBe(404);
      expect((await asDir.json()).message).toBe("getBlobForEntry");
      const missing = await call("GET", `${r.api}/raw/nope.txt`, as(u));
      const noRepo = await call("GET", `/api/v1/repos/${u.name}/${uniqName("none")}/raw/nope.txt`, as(u));
      expect([missing.status, noRepo.status]).toEqual([404, 404]);
      expect(roundTrips(missing)).toBe(1);
      expect(await missing.json()).toEqual(await noRepo.json());
      // a private repository: anonymous callers get what a missing one gives
      const anon = await call("GET", `${r.api}/raw/data/blob.bin`);
      expect(anon.status).toBe(404);
    });

    it("large-raw rule: a file over 1 MiB stored whole is streamed with the same headers, ranges and sniffing as a small one", async () => {
      const u = await newUser();
      const r = await newRepo(u, { auto_init: true });
      const binary = randomBytes(3 * 1024 * 1024 + 17);
      binary[0] = 0;
      const line = "text that is UTF-8: \u00e9t\u00e9 \u2014 and more\n";
      const textual = Buffer.from(line.repeat(Math.ceil((2 * 1024 * 1024) / line.length)));
      for (const [path, bytes] of [["big/blob.bin", binary], ["big/notes.txt", textual]] as const) {
        const put = await call("POST", `${r.api}/contents/${path}`, { ...as(u), json: { content: b64(bytes) } });
        expect(put.status).toBe(201);
      }
      const raw = await call("GET", `${r.api}/raw/big/blob.bin`, as(u));
      expect(raw.status).toBe(200);
      expect(roundTrips(raw)).toBe(1);
      expect(raw.headers.get("Content-Type")).toBe("application/octet-stream");
      expect(raw.headers.get("Content-Length")).toBe(String(binary.length));
      expect(Buffer.from(await raw.arrayBuffer()).equals(binary)).toBe(true);
      const txt = await call("GET", `${r.api}/media/big/notes.txt`, as(u));
      expect(txt.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
      expect(Buffer.from(await txt.arrayBuffer()).equals(textual)).toBe(true);
      const ranged = (range: string) => call("GET", `${r.api}/raw/big/blob.bin`, { headers: { ...tokenAuth(u.token), Range: range } });
      const mid = await ranged("bytes=2000000-2000099");
      expect({ status: mid.status, range: mid.headers.get("Content-Range"), length: mid.headers.get("Content-Length") }).toEqual({ status: 206, range: `bytes 2000000-2000099/${binary.length}`, length: "100" });
      expect(Buffer.from(await mid.arrayBuffer()).equals(binary.subarray(2_000_000, 2_000_100))).toBe(true);
      const tail = await ranged("bytes=-7");
      expect(Buffer.from(await tail.arrayBuffer()).equals(binary.subarray(-7))).toBe(true);
      const parts = await ranged("bytes=0-1,3000000-3000001");
      const body = Buffer.from(await parts.arrayBuffer());
      expect(parts.headers.get("Content-Length")).toBe(String(body.length));
      expect(body.includes(binary.subarray(3_000_000, 3_000_002))).toBe(true);
      // ranges out of order or overlapping: the whole file, read once (RFC 9110 lets a server ignore such sets)
      const overlapping = await ranged("bytes=-1,-1,-1");
      expect([overlapping.status, (await overlapping.arrayBuffer()).byteLength]).toEqual([200, binary.length]);
      const head = await call("HEAD", `${r.api}/raw/big/blob.bin`, as(u));
      expect([head.status, head.headers.get("Content-Length")]).toEqual([200, String(binary.length)]);
      const headRange = await call("HEAD", `${r.api}/raw/big/blob.bin`, { headers: { ...tokenAuth(u.token), Range: "bytes=-10" } });
      expect([headRange.status, headRange.headers.get("Content-Length"), headRange.headers.get("Content-Range")]).toEqual([206, "10", `bytes ${binary.length - 10}-${binary.length - 1}/${binary.length}`]);
      // archives stream them too (tar as git writes it; zip members deflated as they inflate)
      const dir = s.path(`${target.name}-large-archive`);
      mkdirSync(dir, { recursive: true });
      for (const format of ["zip", "tar.gz"]) {
        const res = await call("GET", `${r.api}/archive/main.${format}`, as(u));
        expect(res.status, format).toBe(200);
        const file = `${dir}/a.${format}`;
        writeFileSync(file, Buffer.from(await res.arrayBuffer()));
        const out = `${dir}/${format}`;
        mkdirSync(out);
        execFileSync(format === "zip" ? "unzip" : "tar", format === "zip" ? ["-q", file, "-d", out] : ["-xzf", file, "-C", out]);
        expect(readFileSync(`${out}/${r.name}/big/blob.bin`).equals(binary), format).toBe(true);
        expect(readFileSync(`${out}/${r.name}/big/notes.txt`).equals(textual), format).toBe(true);
      }
    });

    it("web raw rule: download_url and Gitea's /raw and /media paths (a branch with slashes by its first matching prefix, HEAD, tag, commit, blob id) answer as the API's raw route, in one round trip; /raw/* redirects; hidden ≡ missing; scopes apply", async () => {
      const u = await newUser();
      const other = await newUser();
      const r = await newRepo(u, { auto_init: true, private: true });
      const web = (path: string, headers: Record<string, string> = basicAuth(u.name, u.token)) => call("GET", `/${r.full}/${path}`, { headers });
      const put = async (path: string, text: string, newBranch?: string) => {
        const res = await call("POST", `${r.api}/contents/${path}`, { ...as(u), json: { content: b64(text), ...(newBranch ? { new_branch: newBranch } : {}) } });
        expect(res.status, path).toBe(201);
        return res.json();
      };
      const made = await put("dir/a b+c.txt", "on main\n");
      // a branch with a slash: Gitea's getRefNameFromPath takes the first prefix that names one
      await put("file.txt", "feat/x's file.txt\n", "feat/x");
      const tag = await call("POST", `${r.api}/tags`, { ...as(u), json: { tag_name: "rel/v1", target: "main" } });
      expect(tag.status).toBe(201);
      const head = made.commit.sha as string;
      const sha = made.content.sha as string;

      // download_url, fetched as it is, answers what the API's raw route answers
      const download = made.content.download_url as string;
      expect(download).toBe(`${target.url}/${r.full}/raw/branch/main/dir/a%20b+c.txt`);
      const viaLink = await fetch(download, { headers: basicAuth(u.name, u.token) });
      const viaApi = await call("GET", `${r.api}/raw/dir/a%20b%2Bc.txt`, as(u));
      expect(viaLink.status).toBe(200);
      expect(roundTrips(viaLink)).toBe(1);
      expect(await viaLink.text()).toBe("on main\n");
      for (const h of ["Content-Type", "Content-Disposition", "Content-Security-Policy", "X-Content-Type-Options", "ETag", "Cache-Control", "Last-Modified", "X-Gitea-Object-Type", "Accept-Ranges"]) expect(viaLink.headers.get(h), h).toBe(viaApi.headers.get(h));
      await viaApi.arrayBuffer();
      // a token in the Authorization header, as the API takes it
      expect((await fetch(download, { headers: tokenAuth(u.token) })).status).toBe(200);
      const again = await fetch(download, { headers: { ...basicAuth(u.name, u.token), "If-None-Match": `"${sha}"` } });
      expect([again.status, roundTrips(again)]).toEqual([304, 1]);

      const text = async (res: Response) => [res.status, res.status === 200 ? await res.text() : (await res.arrayBuffer(), "")];
      expect(await text(await web("raw/branch/feat/x/file.txt"))).toEqual([200, "feat/x's file.txt\n"]);
      expect(await text(await web("raw/branch/feat%2Fx/file.txt"))).toEqual([200, "feat/x's file.txt\n"]);
      expect(await text(await web("raw/branch/HEAD/dir/a%20b+c.txt"))).toEqual([200, "on main\n"]);
      expect(await text(await web("media/branch/main/dir/a%20b+c.txt"))).toEqual([200, "on main\n"]);
      expect(await text(await web("raw/tag/rel/v1/dir/a%20b+c.txt"))).toEqual([200, "on main\n"]);
      expect(await text(await web(`raw/commit/${head}/dir/a%20b+c.txt`))).toEqual([200, "on main\n"]);
      expect(await text(await web(`raw/commit/${head.slice(0, 7)}/dir/a%20b+c.txt`))).toEqual([200, "on main\n"]);
      const blob = await web(`raw/blob/${sha}`);
      expect([blob.status, blob.headers.get("ETag"), await blob.text()]).toEqual([200, `"${sha}"`, "on main\n"]);
      expect(await text(await web(`media/blob/${sha}`))).toEqual([200, "on main\n"]);
      // what does not resolve in its kind: 404
      for (const p of ["raw/branch/rel/v1/dir/a%20b+c.txt", "raw/tag/main/dir/a%20b+c.txt", "raw/commit/main/dir/a%20b+c.txt", `raw/blob/${head}`, "raw/branch/main/dir", "raw/branch/main/nope"]) {
        const res = await web(p);
        expect(res.status, p).toBe(404);
        await res.arrayBuffer();
      }
      // the deprecated /raw/* and /media/*: Gitea redirects (303) to the typed path
      const legacy = async (p: string) => {
        const res = await web(p);
        await res.arrayBuffer();
        return [res.status, res.headers.get("Location")];
      };
      expect(await legacy("raw/dir/a%20b+c.txt")).toEqual([303, `/${r.full}/raw/branch/main/dir/a%20b+c.txt`]);
      expect(await legacy("raw/feat/x/file.txt")).toEqual([303, `/${r.full}/raw/branch/feat/x/file.txt`]);
      expect(await legacy("media/rel/v1/dir/a%20b+c.txt")).toEqual([303, `/${r.full}/media/tag/rel/v1/dir/a%20b+c.txt`]);
      expect(await legacy(`raw/${head}/dir/a%20b+c.txt`)).toEqual([303, `/${r.full}/raw/commit/${head}/dir/a%20b+c.txt`]);
      // the query goes along, never a token given in it (Location ends up in logs and Referer)
      expect(await legacy(`raw/dir/a%20b+c.txt?token=${u.token}&x=1&access_token=${u.token}`)).toEqual([303, `/${r.full}/raw/branch/main/dir/a%20b+c.txt?x=1`]);

      // a private repository answers others, and anonymous callers, as a missing one
      const missing = await call("GET", `/${u.name}/${uniqName("none")}/raw/branch/main/dir/a%20b+c.txt`, { headers: basicAuth(other.name, other.token) });
      const hidden = await web("raw/branch/main/dir/a%20b+c.txt", basicAuth(other.name, other.token));
      expect([hidden.status, await hidden.json()]).toEqual([missing.status, await missing.json()]);
      expect(hidden.status).toBe(404);
      expect(roundTrips(hidden)).toBe(1);
      const anon = await call("GET", `/${r.full}/raw/branch/main/dir/a%20b+c.txt`);
      expect(anon.status).toBe(404);
      await anon.arrayBuffer();
      const legacyHidden = await web("raw/dir/a%20b+c.txt", basicAuth(other.name, other.token));
      expect(legacyHidden.status).toBe(404);
      await legacyHidden.arrayBuffer();
      // token scopes: read:repository is needed
      const tok = await call("POST", `/api/v1/users/${u.name}/tokens`, { headers: basicAuth(u.name, u.password), json: { name: uniqName("t"), scopes: ["read:user"] } });
      const noScope = await web("raw/branch/main/dir/a%20b+c.txt", tokenAuth((await tok.json()).sha1));
      expect(noScope.status).toBe(403);
      await noScope.arrayBuffer();
    });

    it("writes files as single commits that a clone shows byte for byte, with the given author, committer, dates and message", async () => {
      const u = await newUser();
      const r = await newRepo(u, { auto_init: true });
      const big = randomBytes(2_500_000);
      const odd = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x0a, 0x00]);
      const author = { name: "Grace Author", email: "grace@example.com" };
      const committer = { name: "Linus Committer", email: "linus@example.com" };
      const dates = { author: "2024-01-02T03:04:05+02:00", committer: "2024-02-03T04:05:06Z" };
      const c1 = await call("POST", `${r.api}/contents/bin/big.bin`, { ...as(u), json: { content: b64(big), message: "add big", author, committer, dates } });
      expect(c1.status).toBe(201);
      expect(roundTrips(c1)).toBe(2);
      const b1 = await c1.json();
      expect(b1.content).toMatchObject({ path: "bin/big.bin", type: "file", size: big.length, last_commit_sha: b1.commit.sha });
      expect(b1.commit).toMatchObject({ message: "add big\n", author: { ...author, date: "2024-01-02T01:04:05Z" }, committer: { ...committer, date: "2024-02-03T04:05:06Z" } });
      expect(b1.verification).toEqual({ verified: false, reason: "gpg.error.not_signed_commit", signature: "", signer: null, payload: "" });

      const c2 = await call("POST", `${r.api}/contents/odd.bin`, { ...as(u), json: { content: b64(odd), signoff: true } });
      expect(c2.status).toBe(201);
      const b2 = await c2.json();
      expect(b2.commit.message).toBe(`Add odd.bin\n\nSigned-off-by: ${u.name} <${u.name}@example.com>`); // no newline after the trailer (Gitea's CommitTreeWithDate)
      expect(b2.commit.parents).toEqual([{ url: `${target.url}/api/v1/repos/${r.full}/git/commits/${b1.commit.sha}`, sha: b1.commit.sha, created: "0001-01-01T00:00:00Z" }]);

      // update with the current sha, then a rename
      const newOdd = Buffer.concat([odd, odd]);
      const up = await call("PUT", `${r.api}/contents/odd.bin`, { ...as(u), json: { content: b64(newOdd), sha: b2.content.sha } });
      expect(up.status).toBe(200);
      expect(roundTrips(up)).toBe(2);
      const bu = await up.json();
      expect(bu.commit.message).toBe("Update odd.bin\n");
      const mv = await call("PUT", `${r.api}/contents/moved/odd.bin`, { ...as(u), json: { content: b64(newOdd), sha: bu.content.sha, from_path: "odd.bin" } });
      expect(mv.status).toBe(200);
      // PUT without sha creates a file (Gitea, as GitHub: an empty sha creates) — never replaces one
      const upload = await call("PUT", `${r.api}/contents/new.txt`, { ...as(u), json: { content: b64("new\n") } });
      expect(upload.status).toBe(201);
      const uploaded = await upload.json();
      expect(uploaded.commit.message).toBe("Add new.txt\n");
      const again = await call("PUT", `${r.api}/contents/new.txt`, { ...as(u), json: { content: b64("overwritten\n") } });
      expect([again.status, (await again.json()).message]).toEqual([422, "repository file already exists [path: new.txt]"]);
      expect((await (await call("GET", `${r.api}/contents/new.txt`, as(u))).json()).sha).toBe(uploaded.content.sha);
      // delete
      const readme = await (await call("GET", `${r.api}/contents/README.md`, as(u))).json();
      const del = await call("DELETE", `${r.api}/contents/README.md`, { ...as(u), json: { sha: readme.sha, message: "  drop readme  " } });
      expect(del.status).toBe(200);
      expect(roundTrips(del)).toBe(2);
      const bd = await del.json();
      expect(bd.content).toBeNull();
      expect(bd.commit.message).toBe("drop readme\n");
      // several files in one commit
      const multi = await call("POST", `${r.api}/contents`, {
        ...as(u),
        json: { message: "many", files: [{ operation: "create", path: "m/one.txt", content: b64("1") }, { operation: "delete", path: "new.txt", sha: uploaded.content.sha }] },
      });
      expect(multi.status).toBe(201);
      const bm = await multi.json();
      expect(bm.files.map((f: { path: string } | null) => f?.path ?? null)).toEqual(["m/one.txt", null]);

      // the real git CLI: every commit, every byte, a clean repository
      const work = s.path(`${target.name}-written`);
      await s.git(["clone", "-q", r.push, work]);
      await fsck(work);
      expect(readFileSync(`${work}/bin/big.bin`).equals(big)).toBe(true);
      expect(readFileSync(`${work}/moved/odd.bin`).equals(newOdd)).toBe(true);
      expect(readFileSync(`${work}/m/one.txt`, "utf8")).toBe("1");
      for (const gone of ["README.md", "odd.bin", "new.txt"]) expect(await s.gitFail(["cat-file", "-e", `HEAD:${gone}`], { cwd: work })).toMatchObject({ code: 128 });
      expect(await s.gitText(["rev-parse", "HEAD"], { cwd: work })).toBe(bm.commit.sha);
      const log = (await s.gitText(["log", "--format=%s|%an <%ae> %aI|%cn <%ce> %cI"], { cwd: work })).split("\n");
      expect(log.map((l) => l.split("|")[0])).toEqual(["many", "drop readme", "Add new.txt", "Update moved/odd.bin", "Update odd.bin", "Add odd.bin", "add big", "Initial commit"]);
      expect(log[6]).toBe("add big|Grace Author <grace@example.com> 2024-01-02T03:04:05+02:00|Linus Committer <linus@example.com> 2024-02-03T04:05:06+00:00");
      expect(await s.gitText(["ls-tree", "HEAD", "moved/odd.bin"], { cwd: work })).toMatch(/^100644 blob /);
      // the commits are pushes in the feed: Gitea's commit_repo
      const feeds = (await (await call("GET", `/api/v1/repos/${r.full}/activities/feeds?limit=50`, as(u))).json()) as { op_type: string }[];
      expect(feeds.filter((f) => f.op_type === "commit_repo").length).toBeGreaterThanOrEqual(7);
    });

    it("refuses what Gitea refuses, with its status and message, within two round trips, writing nothing", async () => {
      const u = await newUser();
      const other = await newUser();
      const r = await newRepo(u, { auto_init: true });
      const readme = await (await call("GET", `${r.api}/contents/README.md`, as(u))).json();
      const tip = async () => (await s.gitText(["ls-remote", r.push, "refs/heads/main"])).split("\t")[0];
      const before = await tip();
      const cases: [string, string, unknown, number, string | RegExp][] = [
        ["POST", "README.md", { content: b64("x") }, 422, "repository file already exists [path: README.md]"],
        ["PUT", "README.md", { content: b64("x"), sha: "0".repeat(40) }, 422, `sha does not match [given: ${"0".repeat(40)}, expected: ${readme.sha}]`],
        ["PUT", "nope.md", { content: b64("x"), sha: readme.sha }, 404, "object does not exist [id: , rel_path: nope.md]"],
        ["DELETE", "nope.md", { sha: readme.sha }, 404, "object does not exist [id: , rel_path: nope.md]"],
        ["POST", "x.txt", { content: b64("x"), branch: "nope" }, 404, /^branch does not exist \[repo_id: \d+ name: nope\]$/],
        ["POST", "x.txt", { content: b64("x"), new_branch: "main", branch: "main" }, 201, ""],
        ["POST", "y.txt", { content: "not base64!" }, 422, "illegal base64 data at input byte 3"],
        ["POST", "README.md/inner.txt", { content: b64("x") }, 422, "a file exists where you’re trying to create a subdirectory [path: README.md]"],
        ["POST", ".git/hooks/x", { content: b64("x") }, 422, /^path contains a malformed path component/],
        ["DELETE", "README.md", {}, 422, "[SHA]: Required"],
      ];
      for (const [method, path, json, status, message] of cases) {
        const res = await call(method, `${r.api}/contents/${path}`, { ...as(u), json });
        const body = await res.json();
        expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
        expect(roundTrips(res)).toBeLessThanOrEqual(2);
        if (status >= 400) expect(body.message).toMatch(message instanceof RegExp ? message : new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
      }
      // `..` never reaches a route through the URL (clients and the server resolve dot segments); in bodies it is resolved
      // inside the tree as git does, and one that leaves the root is refused
      for (const files of [[{ operation: "create", path: "a/../../b.txt", content: b64("x") }], [{ operation: "rename", path: "b.txt", from_path: "../README.md", sha: readme.sha }]]) {
        const res = await call("POST", `${r.api}/contents`, { ...as(u), json: { files } });
        expect(res.status, JSON.stringify(files)).toBe(422);
        expect((await res.json()).message).toMatch(/^path contains a malformed path component/);
      }
      const after = await tip();
      expect(after).not.toBe(before); // x.txt went in (the one write above)
      // a new branch that exists already
      await call("POST", `${r.api}/contents/b1.txt`, { ...as(u), json: { content: b64("x"), new_branch: "topic" } });
      const dup = await call("POST", `${r.api}/contents/b2.txt`, { ...as(u), json: { content: b64("x"), new_branch: "topic" } });
      expect(dup.status).toBe(422);
      expect((await dup.json()).message).toBe("branch already exists [name: topic]");
      // a reader without write: 403; archived: 423 for everyone
      await call("PUT", `/api/v1/repos/${r.full}/collaborators/${other.name}`, { ...as(u), json: { permission: "read" } });
      const reader = await call("POST", `${r.api}/contents/r.txt`, { ...as(other), json: { content: b64("x") } });
      expect(reader.status).toBe(403);
      expect((await reader.json()).message).toBe("user should have a permission to write to a repo");
      await call("PATCH", r.api, { ...as(u), json: { archived: true } });
      const archived = await call("POST", `${r.api}/contents/z.txt`, { ...as(u), json: { content: b64("x") } });
      expect(archived.status).toBe(423);
      expect(roundTrips(archived)).toBe(1);
      expect((await archived.json()).message).toBe("repo is not allowed to edit");
      expect(await tip()).toBe(after);
    });

    it("an empty repository: contents answer 404, the first file makes the first commit on the default branch", async () => {
      const u = await newUser();
      const r = await newRepo(u);
      const list = await call("GET", `${r.api}/contents`, as(u));
      expect(list.status).toBe(404);
      expect(await list.json()).toMatchObject({ errors: ["object does not exist [id: main, rel_path: ]"] });
      const del = await call("DELETE", `${r.api}/contents/a.txt`, { ...as(u), json: { sha: "0".repeat(40) } });
      expect(del.status).toBe(404);
      const res = await call("POST", `${r.api}/contents/docs/first.txt`, { ...as(u), json: { content: b64("first\n") } });
      expect(res.status).toBe(201);
      const body = await res.json();
      expect(body.commit.parents).toEqual([]);
      const repo = await (await call("GET", r.api, as(u))).json();
      expect(repo).toMatchObject({ empty: false, default_branch: "main" });
      const work = s.path(`${target.name}-first`);
      await s.git(["clone", "-q", r.push, work]);
      await fsck(work);
      expect(await s.gitText(["log", "--format=%H %s"], { cwd: work })).toBe(`${body.commit.sha} Add docs/first.txt`);
      expect(readFileSync(`${work}/docs/first.txt`, "utf8")).toBe("first\n");
    });

    it("two concurrent updates with the same sha: exactly one wins, the other is told why", async () => {
      const u = await newUser();
      const r = await newRepo(u, { auto_init: true });
      const readme = await (await call("GET", `${r.api}/contents/README.md`, as(u))).json();
      const results = await Promise.all(
        ["one\n", "two\n", "three\n"].map((t) => call("PUT", `${r.api}/contents/README.md`, { ...as(u), json: { content: b64(t), sha: readme.sha } })),
      );
      const statuses = results.map((x) => x.status).sort();
      expect(statuses.filter((st) => st === 200), statuses.join()).toHaveLength(1);
      expect(statuses.every((st) => st === 200 || st === 409 || st === 422), statuses.join()).toBe(true);
      const work = s.path(`${target.name}-race`);
      await s.git(["clone", "-q", r.push, work]);
      await fsck(work);
      expect(await s.gitText(["rev-list", "--count", "HEAD"], { cwd: work })).toBe("2");
    });
  });
}
