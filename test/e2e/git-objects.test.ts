/**
 * Tags, trees, blobs and annotated tags through the REST API on BOTH targets, cross-checked with
 * the real git CLI: the tag list in Gitea's order (git's `for-each-ref --sort=-*creatordate`, then
 * by creator time) with each tag's fields as git reports them; a tag made through the API is the
 * very object `git tag -a -m` makes; trees as `git ls-tree` lists them; blobs as `git cat-file`
 * shows them; what a force-push left behind answers as missing wherever an id names it; Gitea's
 * refusals; the round trips of each answer.
 */
import { createHash } from "node:crypto";
import { writeFileSync, mkdirSync, symlinkSync, chmodSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { ZERO_OID } from "../../functions/git/bytes.ts";
import { encodeTypeSize, OBJ_COMMIT, OBJ_REF_DELTA, OBJ_TREE, packHeader } from "../../functions/git/pack/format.ts";
import { DELIM, FLUSH, pkt } from "../../functions/git/pkt-line.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { giteaShapeErrors } from "../fixtures/gitea-schema.ts";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";
import { makeHistory, Scratch } from "../git/helpers.ts";

const s = new Scratch("e2e-git-objects-");
afterAll(() => s.cleanup());

type Json = Record<string, any>;
const ZERO_TIME = "0001-01-01T00:00:00Z";
/** git's iso-strict writes UTC as +00:00; Go's RFC 3339 as Z. */
const goIso = (t: string) => t.replace(/\+00:00$/, "Z");
const LFS_OID = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

for (const target of targets()) {
  describe(`tags, trees, blobs and annotated tags through the API on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    const host = target.url.replace(/^http:\/\//, "");
    let owner: { name: string; email: string; token: string };
    let other: { name: string; email: string; token: string };
    let full: string;
    let src: string;
    const api = (path: string, token?: string, init: { method?: string; json?: unknown } = {}) =>
      call(init.method ?? "GET", `/api/v1/repos/${full}${path}`, { headers: token ? tokenAuth(token) : {}, json: init.json });
    const git = (args: string[], env: NodeJS.ProcessEnv = {}) => s.gitText(args, { cwd: src, env });
    const pushUrl = () => `http://${owner.name}:${owner.token}@${host}/${full}.git`;

    async function newUser() {
      const name = uniqName("go");
      const password = "git-objects-password-1";
      const email = `${name}@example.com`;
      expect((await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email, password, must_change_password: false } })).status).toBe(201);
      const tok = await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, password), json: { name: uniqName("t"), scopes: ["all"] } });
      return { name, email, token: (await tok.json()).sha1 as string };
    }

    beforeAll(async () => {
      owner = await newUser();
      other = await newUser();
      const repo = uniqName("gor");
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name: repo } })).status).toBe(201);
      full = `${owner.name}/${repo}`;
      src = s.path(`${target.name}-src`);
      await makeHistory(s, src, { commits: 8, files: 9 });
      // every kind of tree entry: a subdirectory, an executable, a link, a submodule, an LFS pointer, binary bytes
      mkdirSync(`${src}/deep/er`, { recursive: true });
      writeFileSync(`${src}/deep/er/leaf.txt`, "leaf\n");
      writeFileSync(`${src}/run.sh`, "#!/bin/sh\n");
      chmodSync(`${src}/run.sh`, 0o755);
      symlinkSync("run.sh", `${src}/link`);
      writeFileSync(`${src}/big.psd`, `version https://git-lfs.github.com/spec/v1\noid sha256:${LFS_OID}\nsize 12345\n`);
      writeFileSync(`${src}/bin.dat`, Buffer.from([0, 1, 2, 255, 254, 10]));
      await git(["add", "-A"]);
      await git(["update-index", "--add", "--cacheinfo", `160000,${"b".repeat(40)},vendor/lib`]);
      await git(["commit", "-q", "-m", "all kinds"], { GIT_COMMITTER_DATE: "1700100000 +0200" });
      const tagAt = (args: string[], date: string) => git(["tag", ...args], { GIT_COMMITTER_DATE: date });
      await git(["tag", "light", "main~3"]);
      await tagAt(["-a", "rel/v1", "-m", "release one", "main~2"], "1700050000 +0200");
      await tagAt(["-a", "v2", "-m", "release two\n\nwith notes", "main"], "1700200000 -0130");
      await tagAt(["-a", "same-b", "-m", "b", "main~1"], "1700150000 +0200");
      await tagAt(["-a", "same-a", "-m", "a", "main~4"], "1700150000 +0200");
      await tagAt(["-a", "nested", "-m", "a tag of a tag", "v2"], "1700300000 +0200");
      await git(["tag", "tree-tag", "main^{tree}"]);
      // a tag whose message carries a signature block: the message is shown without it
      const commit = await git(["rev-parse", "main~5"]);
      const signed = await s.git(["mktag"], {
        cwd: src,
        input: `object ${commit}\ntype commit\ntag signed\ntagger Ada Lovelace <ada@example.com> 1700000500 +0200\n\nsigned release\n-----BEGIN PGP SIGNATURE-----\n\nnot a real signature\n-----END PGP SIGNATURE-----\n`,
      });
      await git(["update-ref", "refs/tags/signed", signed.stdout.toString().trim()]);
      await s.git(["push", "-q", pushUrl(), "main", "--tags"], { cwd: src });
    }, 120_000);

    it("tag list rule: every tag in Gitea's order — git's for-each-ref --sort=-*creatordate, then newest creator first — with its fields as git reports them; page selects, no page lists all", async () => {
      const lines = (await git(["for-each-ref", "--sort=-*creatordate", "--format=%(refname:lstrip=2)%00%(objectname)%00%(objecttype)%00%(object)%00%(creatordate:unix)%00%(creatordate:iso-strict)", "refs/tags"])).split("\n");
      const rows = lines.map((l) => {
        const [name, id, type, object, unix, iso] = l.split("\0") as string[];
        return { name: name!, id: id!, type: type!, object: object || id!, when: unix ? Number(unix) : Number.NEGATIVE_INFINITY, iso: iso ? goIso(iso!) : ZERO_TIME };
      });
      // Gitea sorts git's order by creator time, newest first (a stable sort for so few tags)
      const order = [...rows].sort((a, b) => (b.when === a.when ? 0 : b.when > a.when ? 1 : -1));
      const res = await api("/tags", other.token);
      expect(res.status).toBe(200);
      expect(roundTrips(res)).toBe(1);
      expect(res.headers.get("X-Total-Count")).toBe(String(rows.length));
      const list = (await res.json()) as Json[];
      expect(list.map((t) => t.name)).toEqual(order.map((r) => r.name));
      for (const t of list) {
        const r = rows.find((x) => x.name === t.name)!;
        const contents = await git(["for-each-ref", "--format=%(contents)", `refs/tags/${t.name}`]);
        const signature = await git(["for-each-ref", "--format=%(contents:signature)", `refs/tags/${t.name}`]);
        // Gitea's message ends before the line break in front of a signature
        const message = r.type === "tree" ? "" : signature ? contents.slice(0, contents.length - signature.length - 1) : `${contents}\n`;
        expect(t, t.name).toEqual({
          name: t.name,
          message,
          id: r.id,
          commit: { url: `${target.url}/api/v1/repos/${full}/git/commits/${r.id}`, sha: r.object, created: r.iso },
          zipball_url: `${target.url}/${full}/archive/${encodeURIComponent(`${t.name}.zip`)}`,
          tarball_url: `${target.url}/${full}/archive/${encodeURIComponent(`${t.name}.tar.gz`)}`,
        });
        expect(giteaShapeErrors("Tag", t), t.name).toEqual([]);
      }
      expect(((await (await api("/tags?page=-1&limit=2", other.token)).json()) as Json[]).length).toBe(rows.length); // page ≤ 0: every tag (PaginateSlice)
      const page2 = (await (await api("/tags?page=2&limit=3", other.token)).json()) as Json[];
      expect(page2.map((t) => t.name)).toEqual(order.slice(3, 6).map((r) => r.name));
      // anonymous readers of a public repository list the same
      expect(((await (await api("/tags")).json()) as Json[]).map((t) => t.name)).toEqual(order.map((r) => r.name));
    });

    it("tag get rule: a tag by name (slashes too) as the list shows it; a missing one 404 \"tag doesn't exist: <name>\"; the archive links work", async () => {
      const list = (await (await api("/tags", owner.token)).json()) as Json[];
      for (const name of ["rel/v1", "light", "nested"]) {
        const res = await api(`/tags/${name}`, owner.token);
        expect(res.status, name).toBe(200);
        expect(roundTrips(res)).toBe(1);
        expect(await res.json()).toEqual(list.find((t) => t.name === name));
      }
      const missing = await api("/tags/no-such-tag", owner.token);
      expect([missing.status, (await missing.json()).message]).toEqual([404, "tag doesn't exist: no-such-tag"]);
      const rel = list.find((t) => t.name === "rel/v1")!;
      const tar = await fetch(rel.tarball_url);
      expect(tar.status).toBe(200);
      const { gunzipSync } = await import("node:zlib");
      const want = (await s.git(["archive", "--format=tar", `--prefix=${full.split("/")[1]!.toLowerCase()}/`, "rel/v1"], { cwd: src })).stdout;
      expect(gunzipSync(Buffer.from(await tar.arrayBuffer())).equals(want)).toBe(true);
    });

    it("create tag rule: a message makes the very object `git tag -a -m` makes (git's cleanup, the caller as tagger); none makes a lightweight tag; both reach clones and the feed", async () => {
      const oracle = s.path(`${target.name}-oracle`);
      await s.git(["clone", "-q", `http://${host}/${full}.git`, oracle]);
      const cases = [
        { name: "api/annotated", message: "Release 1.0\n\n\n# a comment line is dropped\nnotes   \n\n\n", target: "main~1" },
        { name: "api-lead", message: "\n\n  leading blank lines\ttrailing tab\t\n", target: "v2" },
        { name: "api-comments-only", message: "# nothing but a comment\n", target: undefined },
      ];
      for (const c of cases) {
        const res = await api("/tags", owner.token, { method: "POST", json: { tag_name: c.name, message: c.message, target: c.target } });
        expect(res.status, c.name).toBe(201);
        expect(roundTrips(res)).toBe(2);
        const tag = await res.json();
        expect(giteaShapeErrors("Tag", tag)).toEqual([]);
        await s.git(["fetch", "-q", "origin", `refs/tags/${c.name}:refs/tags/${c.name}`], { cwd: oracle });
        const made = await s.gitText(["cat-file", "tag", c.name], { cwd: oracle });
        const tagger = /^tagger (.*) <(.*)> (\d+) ([+-]\d{4})$/m.exec(made)!;
        expect([tagger[1], tagger[2]]).toEqual([owner.name, owner.email]);
        // git itself, with the same tagger and time, makes the same object
        const check = s.path(`${target.name}-oracle-${c.name.replace("/", "-")}`);
        await s.git(["clone", "-q", "--no-tags", `http://${host}/${full}.git`, check]);
        await s.git(["fetch", "-q", "--no-tags", "origin", "refs/tags/v2:refs/tags/v2"], { cwd: check });
        const env = { GIT_COMMITTER_NAME: owner.name, GIT_COMMITTER_EMAIL: owner.email, GIT_COMMITTER_DATE: `${tagger[3]} ${tagger[4]}` };
        await s.git(["tag", "-a", "-m", c.message, c.name, `${c.target ?? "main"}^{commit}`], { cwd: check, env });
        expect(tag.id, c.name).toBe(await s.gitText(["rev-parse", c.name], { cwd: check }));
        expect(tag.commit.sha).toBe(await s.gitText(["rev-parse", `${c.target ?? "main"}^{commit}`], { cwd: check }));
        expect(tag.message).toBe((await s.git(["cat-file", "tag", c.name], { cwd: check })).stdout.toString().split("\n\n").slice(1).join("\n\n"));
      }
      const light = await api("/tags", owner.token, { method: "POST", json: { tag_name: "api-light", target: "rel/v1" } });
      expect(light.status).toBe(201);
      const lt = await light.json();
      const relCommit = await git(["rev-parse", "rel/v1^{commit}"]);
      expect(lt).toMatchObject({ name: "api-light", id: relCommit, commit: { sha: relCommit }, message: `${await git(["log", "-1", "--format=%B", relCommit])}\n` });
      const remote = await s.gitText(["ls-remote", "--tags", `http://${host}/${full}.git`]);
      expect(remote).toContain(`${relCommit}\trefs/tags/api-light`);
      expect(remote).toContain(`${await s.gitText(["rev-parse", "api/annotated^{commit}"], { cwd: oracle })}\trefs/tags/api/annotated^{}`);
      const feeds = (await (await call("GET", `/api/v1/repos/${full}/activities/feeds?limit=10`, { headers: tokenAuth(owner.token) })).json()) as Json[];
      expect(feeds.map((f) => `${f.op_type} ${f.ref_name}`)).toContain("push_tag refs/tags/api-light");
      const fsck = await s.git(["fsck", "--full", "--no-dangling"], { cwd: oracle });
      expect(fsck.stderr).not.toMatch(/error|missing|broken/i);
    });

    it("create tag refusals, in Gitea's order: a target not found 404, a tag of that name in any case 409, a name git refuses 422, readers 403, anonymous 401 — nothing written", async () => {
      const before = await s.gitText(["ls-remote", `http://${host}/${full}.git`]);
      const refuse = async (json: Json, status: number, message: string, token: string | undefined = owner.token) => {
        const res = await api("/tags", token, { method: "POST", json });
        expect({ status: res.status, message: (await res.json()).message }, JSON.stringify(json)).toEqual({ status, message });
        return res;
      };
      expect(roundTrips(await refuse({ tag_name: "x", target: "nope" }, 404, "target not found: object does not exist [id: nope, rel_path: ]"))).toBe(1);
      await refuse({ tag_name: "V2" }, 409, "tag already exists [name: V2]");
      await refuse({ tag_name: "rel" }, 409, "tag rel/v1 exists; cannot create tag rel");
      await refuse({ tag_name: "a..b" }, 422, "release tag name is not valid [tag_name: a..b]");
      await refuse({ tag_name: "-x" }, 422, "release tag name is not valid [tag_name: -x]");
      const long = "c".repeat(256); // a component git cannot store (255 bytes at most)
      await refuse({ tag_name: long }, 422, `release tag name is not valid [tag_name: ${long}]`);
      await refuse({ tag_name: "" }, 422, "[TagName]: Required");
      await refuse({ tag_name: "fresh" }, 403, "user should have a permission to write to a repo", other.token);
      expect((await api("/tags", undefined, { method: "POST", json: { tag_name: "fresh" } })).status).toBe(401);
      expect(await s.gitText(["ls-remote", `http://${host}/${full}.git`])).toBe(before);
    });

    it("create tag rule under concurrency: of tags created at once whose names differ only in letter case, exactly one lands; the others get 409", async () => {
      const names = ["race-x", "RACE-X", "Race-X", "race-X"];
      const answers = await Promise.all(names.map((tag_name) => api("/tags", owner.token, { method: "POST", json: { tag_name, message: tag_name } })));
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      const remote = await s.gitText(["ls-remote", "--tags", `http://${host}/${full}.git`]);
      expect(remote.split("\n").filter((l) => /refs\/tags\/race-x$/i.test(l))).toHaveLength(1);
    });

    it("delete tag rule: 204 and gone from the remote and the feed says delete_tag; a missing tag 404; readers 403", async () => {
      expect((await api("/tags", owner.token, { method: "POST", json: { tag_name: "doomed/tag", message: "bye" } })).status).toBe(201);
      expect((await api("/tags/doomed/tag", other.token, { method: "DELETE" })).status).toBe(403);
      // the name in another letter case finds it, as Gitea's release rows do
      const del = await api("/tags/Doomed/TAG", owner.token, { method: "DELETE" });
      expect(del.status).toBe(204);
      expect(roundTrips(del)).toBe(2);
      expect(await s.gitText(["ls-remote", "--tags", `http://${host}/${full}.git`])).not.toContain("doomed/tag");
      expect((await api("/tags/doomed/tag", owner.token, { method: "DELETE" })).status).toBe(404);
      expect((await api("/tags/doomed/tag", owner.token)).status).toBe(404);
      const feeds = (await (await call("GET", `/api/v1/repos/${full}/activities/feeds?limit=5`, { headers: tokenAuth(owner.token) })).json()) as Json[];
      expect(feeds.map((f) => `${f.op_type} ${f.ref_name}`)[0]).toBe("delete_tag refs/tags/doomed/tag");
    });

    it("tree rule: entries as `git ls-tree -l` lists them (recursive: `ls-tree -r -t -l`), `sha` the object the name resolves to as `git rev-parse` resolves it, pages of per_page", async () => {
      const lsTree = async (args: string[]) =>
        (await s.git(["ls-tree", "-z", "-l", ...args], { cwd: src })).stdout
          .toString()
          .split("\0")
          .filter(Boolean)
          .map((l) => {
            const [meta, path] = l.split("\t") as [string, string];
            const [mode, type, sha, size] = meta.split(/ +/) as [string, string, string, string];
            return { path, mode, type, size: size === "-" ? 0 : Number(size), sha, url: type === "tree" ? `${target.url}/api/v1/repos/${full}/git/trees/${sha}` : type === "commit" ? "" : `${target.url}/api/v1/repos/${full}/git/blobs/${sha}` };
          });
      const mainShort = (await git(["rev-parse", "main"])).slice(0, 7);
      for (const name of ["main", "v2", "light", mainShort, "main:deep", "main~2", await git(["rev-parse", "main^{tree}"]), "nested"]) {
        const res = await api(`/git/trees/${encodeURIComponent(name)}`, other.token);
        expect(res.status, name).toBe(200);
        expect(roundTrips(res)).toBe(1);
        const t = await res.json();
        const entries = await lsTree([name]);
        expect(t, name).toEqual({ sha: await git(["rev-parse", name]), url: `${target.url}/api/v1/repos/${full}/git/trees/${t.sha}`, tree: entries, truncated: false, page: 1, total_count: entries.length });
        expect(res.headers.get("X-Total-Count")).toBe(String(entries.length));
      }
      const all = await lsTree(["-r", "-t", "main"]);
      expect((await (await api("/git/trees/main?recursive=1", owner.token)).json()).tree).toEqual(all);
      const page = await (await api("/git/trees/main?recursive=true&per_page=4&page=2", owner.token)).json();
      expect(page).toMatchObject({ tree: all.slice(4, 8), truncated: true, page: 2, total_count: all.length });
      const last = Math.ceil(all.length / 4);
      expect((await (await api(`/git/trees/main?recursive=1&per_page=4&page=${last}`, owner.token)).json()).truncated).toBe(false);
      expect(await (await api(`/git/trees/main?per_page=4&page=99`, owner.token)).json()).toMatchObject({ tree: null, truncated: false, page: 99 });
      for (const e of all) expect(giteaShapeErrors("GitEntry", e)).toEqual([]);
      const blob = await git(["rev-parse", "main:run.sh"]);
      for (const bad of [blob, "nope", "0".repeat(40)]) {
        const res = await api(`/git/trees/${bad}`, owner.token);
        expect({ status: res.status, message: (await res.json()).message }, bad).toEqual({ status: 400, message: `sha not found [${bad}]` });
      }
    });

    it("blob rule: any object's bytes in base64 as `git cat-file` shows them, its size, an LFS pointer's object; Go's errors for ids that are not full ids", async () => {
      const files = (await git(["ls-tree", "-r", "main"])).split("\n").map((l) => l.split(/\s+/)).filter(([, type]) => type === "blob");
      for (const [, , oid, path] of files as [string, string, string, string][]) {
        const res = await api(`/git/blobs/${oid}`, other.token);
        expect(res.status, path).toBe(200);
        expect(roundTrips(res)).toBe(1);
        const bytes = (await s.git(["cat-file", "blob", oid], { cwd: src })).stdout;
        const b = await res.json();
        const lfs = path === "big.psd" ? { lfs_oid: LFS_OID, lfs_size: 12345 } : {};
        expect(b, path).toEqual({ content: bytes.toString("base64"), encoding: "base64", url: `${target.url}/api/v1/repos/${full}/git/blobs/${oid}`, sha: oid, size: bytes.length, ...lfs });
      }
      const tree = await git(["rev-parse", "main^{tree}"]);
      const raw = (await s.git(["cat-file", "tree", tree], { cwd: src })).stdout;
      expect((await (await api(`/git/blobs/${tree.toUpperCase()}`, owner.token)).json())).toMatchObject({ sha: tree, content: raw.toString("base64"), size: raw.length });
      const refuse = async (sha: string, message: string) => {
        const res = await api(`/git/blobs/${sha}`, owner.token);
        expect({ status: res.status, message: (await res.json()).message }, sha).toEqual({ status: 400, message });
      };
      await refuse("abc123", "length 6 has no matched object format: abc123");
      await refuse("z".repeat(40), "encoding/hex: invalid byte: U+007A 'z'");
      await refuse("1".repeat(40), `object does not exist [id: ${"1".repeat(40)}, rel_path: ]`);
    });

    it("annotated tag rule: git/tags/{sha} shows the tag object — its ref's name, tagger in UTC, message without signature — and the commit it peels to; a lightweight tag's commit is 400", async () => {
      for (const name of ["v2", "nested", "signed", "rel/v1"]) {
        const sha = await git(["rev-parse", name]);
        const res = await api(`/git/tags/${sha}`, other.token);
        expect(res.status, name).toBe(200);
        expect(roundTrips(res)).toBe(1);
        const t = await res.json();
        const commit = await git(["rev-parse", `${name}^{commit}`]);
        const [taggerName, taggerEmail, unix] = (await git(["for-each-ref", "--format=%(taggername)%00%(taggeremail:trim)%00%(taggerdate:unix)", `refs/tags/${name}`])).split("\0") as [string, string, string];
        const contents = await git(["for-each-ref", "--format=%(contents)", `refs/tags/${name}`]);
        const signature = await git(["for-each-ref", "--format=%(contents:signature)", `refs/tags/${name}`]);
        expect(t, name).toEqual({
          tag: name,
          sha,
          url: `${target.url}/api/v1/repos/${full}/git/tags/${sha}`,
          message: signature ? contents.slice(0, contents.length - signature.length - 1) : `${contents}\n`,
          tagger: { name: taggerName, email: taggerEmail, date: new Date(Number(unix) * 1000).toISOString().replace(/\.000Z$/, "Z") },
          object: { type: "commit", url: `${target.url}/api/v1/repos/${full}/git/commits/${commit}`, sha: commit },
          verification: { verified: false, reason: "gpg.error.not_signed_commit", signature: "", signer: null, payload: "" },
        });
        expect(giteaShapeErrors("AnnotatedTag", { ...t, verification: { ...t.verification, signer: { name: "", email: "a@example.com", username: "" } } })).toEqual([]);
      }
      const lightCommit = await git(["rev-parse", "light"]);
      const res = await api(`/git/tags/${lightCommit}`, owner.token);
      expect({ status: res.status, message: (await res.json()).message }).toEqual({ status: 400, message: `object does not exist [id: ${lightCommit}, rel_path: ]` });
      expect((await api("/git/tags/v2", owner.token)).status).toBe(400);
    });

    it("left-behind rule: what a force-push left behind answers as missing wherever an id names it — blobs, trees, commits, contents, raw, archives, the commit list — as on the wire", async () => {
      const name = uniqName("gol");
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, auto_init: true } })).status).toBe(201);
      const at = (p: string) => call("GET", `/api/v1/repos/${owner.name}/${name}${p}`, { headers: tokenAuth(owner.token) });
      const work = s.path(`${target.name}-left-behind`);
      const url = `http://${owner.name}:${owner.token}@${host}/${owner.name}/${name}.git`;
      await s.git(["clone", "-q", url, work]);
      writeFileSync(`${work}/secret.txt`, `TOKEN=${uniqName("s")}\n`);
      await s.git(["add", "secret.txt"], { cwd: work });
      await s.git(["commit", "-q", "-m", "oops"], { cwd: work });
      await s.git(["push", "-q", url, "main"], { cwd: work });
      const commit = await s.gitText(["rev-parse", "HEAD"], { cwd: work });
      const blob = await s.gitText(["rev-parse", "HEAD:secret.txt"], { cwd: work });
      const tree = await s.gitText(["rev-parse", "HEAD^{tree}"], { cwd: work });
      const probes = [`/git/blobs/${blob}`, `/git/trees/${tree}`, `/git/trees/${commit}`, `/git/trees/${commit.slice(0, 10)}`, `/git/commits/${commit}`, `/git/commits/${commit.slice(0, 10)}`, `/contents/secret.txt?ref=${commit}`, `/raw/secret.txt?ref=${commit}`, `/archive/${commit}.tar.gz`, `/commits?sha=${commit}`];
      // reachable: served
      for (const p of probes) {
        const res = await at(p);
        expect(res.status, p).toBe(200);
        await res.arrayBuffer();
      }
      await s.git(["reset", "-q", "--hard", "HEAD~1"], { cwd: work });
      await s.git(["push", "-q", "-f", url, "main"], { cwd: work });
      for (const p of probes) {
        const res = await at(p);
        expect(res.status, p).toBeGreaterThanOrEqual(400);
        expect(res.status, p).toBeLessThan(500);
        await res.arrayBuffer();
      }
      // and exactly as an id that never existed answers
      const never = "1234567890abcdef1234567890abcdef12345678";
      // on the wire: a have of it is not acknowledged, a ref cannot be made to name it
      const raw = (path: string, type: string, body: Buffer<ArrayBuffer>, extra: Record<string, string> = {}) =>
        fetch(`${target.url}/${owner.name}/${name}.git/${path}`, { method: "POST", headers: { Authorization: `token ${owner.token}`, "Content-Type": `application/x-${type}-request`, ...extra }, body });
      const tip = await s.gitText(["rev-parse", "HEAD"], { cwd: work });
      const have = async (id: string) =>
        (await (await raw("git-upload-pack", "git-upload-pack", Buffer.concat([pkt("command=fetch\n"), pkt("object-format=sha1\n"), DELIM, pkt(`want ${tip}\n`), pkt(`have ${id}\n`), FLUSH]), { "Git-Protocol": "version=2" })).text()).replaceAll(id, "<id>");
      expect(await have(commit)).toBe(await have(never));
      expect(await have(commit)).toContain("NAK");
      const emptyPack = (() => {
        const body = Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0]);
        return Buffer.concat([body, createHash("sha1").update(body).digest()]);
      })();
      const create = async (id: string) =>
        (await (await raw("git-receive-pack", "git-receive-pack", Buffer.concat([pkt(`${ZERO_OID} ${id} refs/heads/revived\0report-status\n`), FLUSH, emptyPack]))).text()).replaceAll(id, "<id>");
      expect(await create(commit)).toBe(await create(never));
      expect(await create(commit)).toContain("ng refs/heads/revived missing necessary objects");
      // an abbreviated id: what was left behind does not make a prefix ambiguous
      let filler = 0;
      let twin = "";
      for (; !twin.startsWith(tip.slice(0, 4)); filler++) twin = createHash("sha1").update(`blob ${String(filler).length + 1}\0${filler}\n`).digest("hex");
      writeFileSync(`${work}/twin.txt`, `${filler - 1}\n`);
      await s.git(["checkout", "-q", "-b", "twin"], { cwd: work });
      await s.git(["add", "twin.txt"], { cwd: work });
      await s.git(["commit", "-q", "-m", "twin"], { cwd: work });
      expect(await s.gitText(["rev-parse", "HEAD:twin.txt"], { cwd: work })).toBe(twin);
      await s.git(["push", "-q", url, "twin"], { cwd: work });
      const short = tip.slice(0, 4);
      expect((await at(`/git/commits/${short}`)).status).toBe(404); // ambiguous while both are reachable, as in git
      expect((await call("DELETE", `/api/v1/repos/${owner.name}/${name}/branches/twin`, { headers: tokenAuth(owner.token) })).status).toBe(204);
      for (const p of [`/git/commits/${short}`, `/git/trees/${short}`, `/commits?sha=${short}`, `/archive/${short}.tar.gz`]) {
        const res = await at(p);
        expect(res.status, p).toBe(200);
        await res.arrayBuffer();
      }
      // 40 hex digits are an id, never a branch's name: a branch named like a hidden id or a never-stored one changes nothing
      for (const id of [commit, never]) {
        expect((await call("POST", `/api/v1/repos/${owner.name}/${name}/branches`, { headers: tokenAuth(owner.token), json: { new_branch_name: id, old_ref_name: "main" } })).status).toBe(201);
      }
      for (const [p, q] of [[`/git/commits/${commit}`, `/git/commits/${never}`], [`/git/trees/${commit}`, `/git/trees/${never}`]] as const) {
        const a = await at(p);
        const b = await at(q);
        expect({ status: a.status, body: (await a.text()).replaceAll(commit, never) }, p).toEqual({ status: b.status, body: await b.text() });
      }
      const tagAt = async (id: string) => {
        const res = await call("POST", `/api/v1/repos/${owner.name}/${name}/tags`, { headers: tokenAuth(owner.token), json: { tag_name: `t-${id.slice(0, 6)}`, target: id } });
        return { status: res.status, message: String((await res.json()).message).replaceAll(id, "<id>") };
      };
      expect(await tagAt(commit)).toEqual(await tagAt(never));
      expect((await tagAt(never)).status).toBe(404); // Gitea's ConvertToGitID: 40 hex digits are an id
      for (const [p, q] of [[`/git/blobs/${blob}`, `/git/blobs/${never}`], [`/git/commits/${commit}`, `/git/commits/${never}`], [`/contents/secret.txt?ref=${commit}`, `/contents/secret.txt?ref=${never}`]] as const) {
        const a = await at(p);
        const b = await at(q);
        expect({ status: a.status, body: (await a.text()).replaceAll(blob, never).replaceAll(commit, never) }, p).toEqual({ status: b.status, body: await b.text() });
      }
    });

    it("left-behind rule on push: a pack cannot build on what the refs left behind — a parent, a tree entry or a thin-pack base naming it is refused as missing, in the repository and in anyone's fork of it; building on what the refs reach is accepted", async () => {
      const name = uniqName("gob");
      expect((await call("POST", "/api/v1/user/repos", { headers: tokenAuth(owner.token), json: { name, auto_init: true } })).status).toBe(201);
      const work = s.path(`${target.name}-build-on-hidden`);
      const url = `http://${owner.name}:${owner.token}@${host}/${owner.name}/${name}.git`;
      await s.git(["clone", "-q", url, work]);
      const g = (args: string[], input?: string) => s.git(args, { cwd: work, ...(input === undefined ? {} : { input }) }).then((r) => r.stdout.toString().trim());
      const secret = Array.from({ length: 60 }, (_, i) => `line ${i}: TOKEN=${uniqName("s")}`).join("\n");
      writeFileSync(`${work}/kept.txt`, "kept on a branch\n");
      await g(["add", "kept.txt"]);
      await g(["commit", "-q", "-m", "kept"]);
      await g(["push", "-q", url, "HEAD:refs/heads/keep"]);
      const keptBlob = await g(["rev-parse", "HEAD:kept.txt"]);
      writeFileSync(`${work}/secret.txt`, `${secret}\n`);
      await g(["add", "secret.txt"]);
      await g(["commit", "-q", "-m", "oops"]);
      await g(["push", "-q", url, "main"]);
      const hidden = await g(["rev-parse", "HEAD"]);
      const hiddenBlob = await g(["rev-parse", "HEAD:secret.txt"]);
      await g(["reset", "-q", "--hard", "HEAD~2"]);
      await g(["push", "-q", "-f", url, "main"]);
      const tip = await g(["rev-parse", "HEAD"]);
      const date = { GIT_AUTHOR_DATE: "1700000000 +0000", GIT_COMMITTER_DATE: "1700000000 +0000" };
      const commitTree = (tree: string, parent: string, msg: string) => s.git(["commit-tree", tree, "-p", parent, "-m", msg], { cwd: work, env: date }).then((r) => r.stdout.toString().trim());
      // a pack of exactly these objects
      const packOf = async (ids: string[]) => (await s.git(["pack-objects", "--stdout", "-q"], { cwd: work, input: `${ids.join("\n")}\n` })).stdout;
      const push = async (repoPath: string, token: string, commit: string, pack: Buffer) => {
        const res = await fetch(`${target.url}/${repoPath}.git/git-receive-pack`, {
          method: "POST",
          headers: { Authorization: `token ${token}`, "Content-Type": "application/x-git-receive-pack-request" },
          body: Buffer.concat([pkt(`${ZERO_OID} ${commit} refs/heads/b-${commit.slice(0, 8)}\0report-status\n`), FLUSH, pack]),
        });
        const text = await res.text();
        return text.includes(`ok refs/heads/b-${commit.slice(0, 8)}`) ? "ok" : text.includes("missing necessary objects") ? "missing" : text;
      };
      const emptyTree = await g(["mktree"], "");
      // 1. a parent the refs left behind
      const onHidden = await commitTree(emptyTree, hidden, "child of a hidden commit");
      const parentPack = await packOf([emptyTree, onHidden]);
      // 2. a tree entry naming a hidden blob (the pack holds the tree and the commit only)
      const namesBlob = await g(["mktree"], `100644 blob ${hiddenBlob}\tsecret.txt\n`);
      const entryCommit = await commitTree(namesBlob, tip, "names a hidden blob");
      const entryPack = await packOf([namesBlob, entryCommit]);
      // 3. a new blob sent as a delta against a hidden blob (thin): the copy would carry the secret
      writeFileSync(`${work}/secret.txt`, `${secret}\nand one more line\n`);
      const similar = await g(["hash-object", "-w", "secret.txt"]);
      const thinTree = await g(["mktree"], `100644 blob ${similar}\tcopy.txt\n`);
      const thinCommit = await commitTree(thinTree, tip, "a delta against a hidden blob");
      // the pack as git's --thin writes one (by hand: git deltifies only against a boundary commit's objects)
      const base = Buffer.from(`${secret}\n`);
      const extra = Buffer.from("and one more line\n");
      const varint = (n: number) => {
        const out: number[] = [];
        for (let more = true; more; ) {
          more = n > 0x7f;
          out.push((n & 0x7f) | (more ? 0x80 : 0));
          n >>>= 7;
        }
        return out;
      };
      // copy the whole base (offset 0, a 2-byte size), then insert the extra line
      const delta = Buffer.from([...varint(base.length), ...varint(base.length + extra.length), 0xb0, base.length & 0xff, base.length >> 8, extra.length, ...extra]);
      const entry = (type: number, data: Buffer, baseId?: string) => Buffer.concat([Buffer.from(encodeTypeSize(type, data.length)), baseId ? Buffer.from(baseId, "hex") : Buffer.alloc(0), deflateSync(data)]);
      const catFile = async (type: string, id: string) => (await s.git(["cat-file", type, id], { cwd: work })).stdout;
      const body = Buffer.concat([Buffer.from(packHeader(3)), entry(OBJ_TREE, await catFile("tree", thinTree)), entry(OBJ_COMMIT, await catFile("commit", thinCommit)), entry(OBJ_REF_DELTA, delta, hiddenBlob)]);
      const thinPack = Buffer.concat([body, createHash("sha1").update(body).digest()]);
      // the pack is thin and well formed: git indexes it only with the hidden blob, into the same object
      const bare = s.path(`${target.name}-thin-probe`);
      await s.git(["init", "-q", "--bare", bare]);
      await expect(s.git(["index-pack", "--stdin"], { cwd: bare, input: thinPack })).rejects.toThrow(/unresolved delta/);
      await s.git(["hash-object", "-w", "--stdin"], { cwd: bare, input: base });
      await s.git(["index-pack", "--stdin", "--fix-thin"], { cwd: bare, input: thinPack });
      expect((await s.git(["cat-file", "blob", similar], { cwd: bare })).stdout.toString()).toBe(`${secret}\nand one more line\n`);
      expect(await push(`${owner.name}/${name}`, owner.token, onHidden, parentPack)).toBe("missing");
      expect(await push(`${owner.name}/${name}`, owner.token, entryCommit, entryPack)).toBe("missing");
      expect(await push(`${owner.name}/${name}`, owner.token, thinCommit, thinPack)).toBe("missing");
      // anyone may fork a public repository; the fork reads its base's stored packs, and refuses the same
      const fork = await call("POST", `/api/v1/repos/${owner.name}/${name}/forks`, { headers: tokenAuth(other.token), json: { name: uniqName("fk") } });
      expect(fork.status).toBe(202);
      const forkPath = String((await fork.json()).full_name);
      for (const [c, p] of [[onHidden, parentPack], [entryCommit, entryPack], [thinCommit, thinPack]] as const) expect(await push(forkPath, other.token, c, p)).toBe("missing");
      for (const p of ["", `?ref=${onHidden}`]) expect((await call("GET", `/api/v1/repos/${forkPath}/raw/secret.txt${p}`)).status).toBe(404);
      // what the refs reach is fine to build on: the tip, and a blob only another branch reaches
      const keptTree = await g(["mktree"], `100644 blob ${keptBlob}\tkept.txt\n`);
      const keptCommit = await commitTree(keptTree, tip, "names a blob another branch reaches");
      expect(await push(`${owner.name}/${name}`, owner.token, keptCommit, await packOf([keptTree, keptCommit]))).toBe("ok");
      // a commit without an author line (git's fsck: missingAuthor) is refused as an unpack error, not a 500
      const noAuthor = (await s.git(["hash-object", "-t", "commit", "-w", "--literally", "--stdin"], { cwd: work, input: `tree ${emptyTree}\nparent ${tip}\ncommitter x <x@x> 1700000000 +0000\n\nno author\n` })).stdout.toString().trim();
      const bad = await fetch(`${target.url}/${owner.name}/${name}.git/git-receive-pack`, {
        method: "POST",
        headers: { Authorization: `token ${owner.token}`, "Content-Type": "application/x-git-receive-pack-request" },
        body: Buffer.concat([pkt(`${ZERO_OID} ${noAuthor} refs/heads/no-author\0report-status\n`), FLUSH, await packOf([emptyTree, noAuthor])]),
      });
      expect(bad.status).toBe(200);
      const report = await bad.text();
      expect(report).toContain("unpack commit without an author or a committer line");
      expect(report).toContain("ng refs/heads/no-author unpacker error");
      writeFileSync(`${work}/more.txt`, "more\n");
      await g(["add", "more.txt"]);
      await g(["commit", "-q", "-m", "a plain push"]);
      await g(["push", "-q", url, "main"]);
      expect((await call("GET", `/api/v1/repos/${owner.name}/${name}/raw/more.txt`, { headers: tokenAuth(owner.token) })).status).toBe(200);
    });
  });
}
