/**
 * Archives honour the archived tree's `.gitattributes` as `git archive` does in a bare repository
 * (Gitea's): every archive here is compared byte for byte with git's own, run in a bare mirror of
 * the repository the engine serves (same commits, same refs, same HEAD), with no user or system
 * configuration. export-ignore (pattern kinds, nested files, macros, precedence, directories,
 * submodules, paths), eol/ident conversion, export-subst (pretty placeholders, decorations,
 * %(describe) on merge histories, setuptools_scm's .git_archival.txt), zip, and the pieces alone
 * (wildmatch, attribute lookup) against git's check-attr.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attributesOf, BUILTIN_FRAME, parseAttributes } from "../../functions/git/attributes.ts";
import { abbreviate, describe as gitDescribe } from "../../functions/git/describe.ts";
import { ArchiveContext, tarArchive, zipArchive } from "../../functions/git/repo/archive.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("attributes-");
let srv: GitServer;
let src: string;
let oracle: string;
const bytesOf = async (stream: ReadableStream<Uint8Array>) => Buffer.from(await new Response(stream).arrayBuffer());
const open = () => Repository.open({ repoId: "at", objects: srv.objects, refs: srv.refs });

let time = 1_700_000_000;
/** Writes files (null deletes), commits them at the next second (author in +0530, committer in -0800). */
async function commit(files: Record<string, string | Buffer | null>, message: string, opts: { cwd?: string } = {}): Promise<string> {
  const cwd = opts.cwd ?? src;
  for (const [p, body] of Object.entries(files)) {
    if (body === null) await s.git(["rm", "-q", "-r", "--cached", p], { cwd });
    else {
      mkdirSync(dirname(join(cwd, p)), { recursive: true });
      writeFileSync(join(cwd, p), body);
      await s.git(["add", "-f", p], { cwd });
    }
  }
  time += 1000;
  const env = { GIT_AUTHOR_DATE: `${time - 500} +0530`, GIT_COMMITTER_DATE: `${time} -0800` };
  await s.git(["commit", "-q", "--allow-empty", "-m", message], { cwd, env });
  return s.gitText(["rev-parse", "HEAD"], { cwd });
}
const tag = async (name: string, rev: string, annotated: string | null, at = time) => {
  const args = annotated === null ? ["tag", name, rev] : ["tag", "-a", "-m", annotated, name, rev];
  await s.git(args, { cwd: src, env: { GIT_COMMITTER_DATE: `${at} +0000` } });
};

/** The members of a tar: name, type, size, body (a readable diff before the byte comparison). */
function untar(b: Buffer): string[] {
  const out: string[] = [];
  for (let at = 0; at + 512 <= b.length; ) {
    const h = b.subarray(at, at + 512);
    if (h.every((x) => x === 0)) break;
    const name = h.toString("latin1", 0, 100).replace(/\0.*$/s, "");
    const pre = h.toString("latin1", 345, 500).replace(/\0.*$/s, "");
    const size = Number.parseInt(h.toString("latin1", 124, 136), 8);
    const body = b.subarray(at + 512, at + 512 + size).toString("latin1");
    out.push(`${pre ? `${pre}/` : ""}${name} ${String.fromCharCode(h[156]!)} ${size} ${JSON.stringify(body)}`);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

async function expectSameTar(commitId: string, paths: string[] = []) {
  const want = (await s.git(["archive", "--format=tar", "--prefix=at/", commitId, ...(paths.length ? ["--", ...paths] : [])], { cwd: oracle })).stdout;
  const got = await bytesOf(tarArchive(await open(), commitId, "at/", paths));
  expect(untar(got)).toEqual(untar(want));
  expect(got.equals(want)).toBe(true);
  return got;
}

const ROOT_ATTRS = [
  "# export-ignore by every kind of pattern",
  "[attr]hidden export-ignore -text",
  "*.secret hidden",
  "/build export-ignore",
  "tmp/ export-ignore",
  "**/cache export-ignore",
  "docs/**/draft-* export-ignore",
  '"name with space.txt" export-ignore',
  '"q\\165oted.txt" export-ignore',
  "!negated.txt export-ignore",
  "*.log export-ignore",
  "keep.log -export-ignore",
  "valued.txt export-ignore=true",
  "unset.txt export-ignore",
  "unset.txt !export-ignore",
  "vendor/lib export-ignore",
  "only-dir-slash/ export-ignore",
  "   indented.txt\texport-ignore   ",
  "bad.txt export-ignore -bad name",
  "[attr]binary -diff -merge -text export-ignore",
  "macro-binary.dat binary",
  "sub/ignored-by-root.txt export-ignore",
  "nested/all-ignored/* export-ignore",
  "*.crlf text eol=crlf",
  "*.auto text=auto eol=crlf",
  "*.eolonly eol=crlf",
  "*.legacy crlf eol=crlf",
  "*.notext -text eol=crlf",
  "*.id ident",
  ".git_archival.txt export-subst",
  "subst/* export-subst",
  "",
].join("\n");

const SUB_ATTRS = [
  "[attr]notallowed export-ignore",
  "uses-notallowed.txt notallowed",
  "*.txt export-ignore",
  "keep.txt -export-ignore",
  "x/y.txt export-ignore",
  "/anchored.txt export-ignore",
  "ignored-by-root.txt -export-ignore",
  "",
].join("\r\n");

const ARCHIVAL = "node: $Format:%H$\nnode-date: $Format:%cI$\ndescribe-name: $Format:%(describe:tags=true,match=*[0-9]*)$\nref-names: $Format:%D$\n";
const PLACEHOLDERS = [
  "$Format:%H|%h|%T|%t|%P|%p$",
  "$Format:%an|%ae|%al|%ad|%aD|%at|%ai|%aI|%as$",
  "$Format:%cn|%ce|%cl|%cd|%cD|%ct|%ci|%cI|%cs$",
  "$Format:%aN|%aE|%aL|%cN|%cE|%cL$",
  "$Format:[%s]%n[%f]%n[%b]%n[%B]$",
  "$Format:%d|%D|%m|%e|%G?|%GG|%GT|%gd|%gs|%gn$",
  "$Format:%N|%S|%Q|%x41%x4g|%%|%C(red)%Cred%Cgreen%C(auto)%Creset|%Cxyz$",
  "$Format:%<(20)%s|%>(12)%h|%><(11)%an|%<(9,trunc)%s|%<(9,ltrunc)%s|%<(9,mtrunc)%s|$",
  "$Format:%w(20,2,4)%B%w(0,0,0)[%s]%w(12,1)%b$",
  "$Format:%w(,3)%s|%w(x)|%w(5,1,2,3)$",
  "$Format:%+d%+an% ae%-N$ unterminated $Format:%H",
  "",
  "before\n\n$Format:%-d$after",
].join("\n");

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  src = s.path("src");
  await s.git(["init", "-q", "-b", "main", src]);
  const base: Record<string, string | Buffer> = {
    ".gitattributes": ROOT_ATTRS,
    "a.secret": "x\n",
    "build/out.txt": "x\n",
    "src/build/kept.txt": "not anchored: kept\n",
    "tmp/t.txt": "x\n",
    "other/tmp": "a file named tmp: kept\n",
    "deep/er/cache/c.txt": "x\n",
    "cache/c.txt": "x\n",
    "docs/a/b/draft-1.md": "x\n",
    "docs/draft-top.md": "x: kept (** needs a directory? no: matches zero)\n",
    "docs/final.md": "kept\n",
    "name with space.txt": "x\n",
    "quoted.txt": "x\n",
    "negated.txt": "kept: negative patterns are ignored\n",
    "x.log": "x\n",
    "keep.log": "kept\n",
    "valued.txt": "kept: export-ignore=true is a value, not set\n",
    "unset.txt": "kept\n",
    "only-dir-slash": "a file: kept\n",
    "indented.txt": "x\n",
    "bad.txt": "kept: the line has an invalid name\n",
    "macro-binary.dat": "kept: the builtin binary macro is redefined only at the top\n",
    "sub/.gitattributes": SUB_ATTRS,
    "sub/a.txt": "x\n",
    "sub/keep.txt": "kept\n",
    "sub/x/y.txt": "x\n",
    "sub/deeper/x/y.txt": "kept: x/y.txt is anchored to sub/\n",
    "sub/anchored.txt": "x\n",
    "sub/deeper/anchored.txt": "kept\n",
    "sub/ignored-by-root.txt": "kept: the deeper file wins\n",
    "sub/uses-notallowed.txt": "x (by *.txt)\n",
    "sub/deeper/.gitattributes": "*.txt -export-ignore\nz.md export-ignore\n",
    "sub/deeper/z.md": "x\n",
    "sub/deeper/w.txt": "kept again\n",
    "nested/all-ignored/one": "x\n",
    "nested/all-ignored/two": "x\n",
    "file.crlf": "one\ntwo\r\nthree\n",
    "file.auto": "one\ntwo\n",
    "has-cr.auto": "one\r\ntwo\n",
    "binary.auto": "one\n\0two\n",
    "file.eolonly": "one\ntwo\n",
    "file.legacy": "one\ntwo\n",
    "file.notext": "one\ntwo\n",
    "file.id": "$Id$ and $Id: old $ and $Id: keep this one$\n",
    ".mailmap": "Mapped Author <mapped@example.com> <ada@example.com>\n",
  };
  // a symlinked .gitattributes: git reads the link's blob (its target) as the file
  mkdirSync(join(src, "linked"), { recursive: true });
  symlinkSync("*.txt export-ignore", join(src, "linked/.gitattributes"));
  base["linked/a.txt"] = "x\n";
  base["linked/b.md"] = "kept\n";
  // a BOM is not stripped from a .gitattributes blob: the first pattern starts with it
  base["bom/.gitattributes"] = Buffer.from("\ufeffbom.txt export-ignore\n");
  base["bom/bom.txt"] = "kept\n";
  await s.git(["add", "linked/.gitattributes"], { cwd: src });
  await commit(base, "first\n\nwith a body\n");
  await tag("v1.0", "HEAD", "release 1.0", time);
  await commit({ "b.txt": "b\n" }, "second");
  const second = await s.gitText(["rev-parse", "HEAD"], { cwd: src });
  await s.git(["checkout", "-q", "-b", "side", "HEAD~1"], { cwd: src });
  await commit({ "side.txt": "s\n" }, "side one");
  await tag("v1.1-rc1", "HEAD", null);
  await commit({ "side2.txt": "s\n" }, "side two");
  await tag("not-a-version", "HEAD", "no digits", time);
  await s.git(["checkout", "-q", "main"], { cwd: src });
  await commit({ "c.txt": "c\n" }, "third");
  time += 1000;
  await s.git(["merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side"], { cwd: src, env: { GIT_AUTHOR_DATE: `${time} +0000`, GIT_COMMITTER_DATE: `${time} +0000` } });
  await tag("v1.0-again", second, "same commit, later", time + 50);
  await tag("v1.0-earlier", second, "same commit, earlier", time - 50);
  // the archived commit: export-subst files, a submodule, a .git_archival.txt
  await s.git(["update-index", "--add", "--cacheinfo", `160000,${"a".repeat(40)},vendor/lib`], { cwd: src });
  await s.git(["update-index", "--add", "--cacheinfo", `160000,${"b".repeat(40)},vendor/other`], { cwd: src });
  await commit(
    {
      ".git_archival.txt": ARCHIVAL,
      "subst/placeholders.txt": PLACEHOLDERS,
      "subst/second-describe.txt": "$Format:%(describe)$ $Format:%(describe:tags)$\n",
      "subst/crlf.crlf": "$Format:%s$\nline\n",
    },
    "Add archival: a subject\n\nbody line one\nbody line two\n\nSigned-off-by: A <a@example.com>\n",
  );
  await tag("v2.0", "HEAD", "release 2.0", time + 10);
  srv.refs.create("at");
  await s.git(["push", "-q", `${srv.url}/at.git`, "main"], { cwd: src });
  await s.git(["push", "-q", `${srv.url}/at.git`, "--tags", "side"], { cwd: src });
  oracle = s.path("oracle.git");
  await s.git(["clone", "-q", "--mirror", `${srv.url}/at.git`, oracle]);
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

const rev = (r: string) => s.gitText(["rev-parse", `${r}^{commit}`], { cwd: oracle });

describe("archive attributes", () => {
  it("export-ignore rule: files, directories and submodules export-ignore'd by every pattern kind are left out, byte for byte as git archive", async () => {
    const tar = await expectSameTar(await rev("v1.0"));
    const names = untar(tar).map((l) => l.split(" ")[0]);
    expect(names).not.toContain("at/build/");
    expect(names).toContain("at/src/build/kept.txt");
    expect(names).toContain("at/other/tmp");
    expect(names).toContain("at/sub/deeper/x/y.txt");
    expect(names).toContain("at/nested/all-ignored/"); // its files are ignored, the directory is written
    expect(names).not.toContain("at/nested/all-ignored/one");
    expect(names).not.toContain("at/linked/a.txt");
    expect(names).toContain("at/bom/bom.txt");
  });

  it("export-ignore rule: a submodule (gitlink) can be export-ignore'd", async () => {
    const tar = await expectSameTar(await rev("main"));
    const names = untar(tar).map((l) => l.split(" ")[0]);
    expect(names).not.toContain("at/vendor/lib/");
    expect(names).toContain("at/vendor/other/");
  });

  it("path rule: with paths, export-ignore applies to what they name (an ignored directory named by a path writes nothing)", async () => {
    const head = await rev("main");
    for (const paths of [["sub"], ["build"], ["sub/x/y.txt", "sub/keep.txt"], ["nested"], ["vendor"], [".git_archival.txt"]]) await expectSameTar(head, paths);
  });

  it("conversion rule: eol=crlf, text=auto (text without CR only), -text, binary, the legacy crlf attribute and ident, as git archive converts", async () => {
    const tar = await expectSameTar(await rev("v1.0"));
    expect(untar(tar).find((l) => l.startsWith("at/file.crlf "))).toContain(JSON.stringify("one\r\ntwo\r\nthree\r\n"));
  });

  it("export-subst rule: .git_archival.txt (setuptools_scm) and every placeholder expand as git's, with the expanded size in the tar header", async () => {
    const tar = await expectSameTar(await rev("main"));
    const archival = untar(tar).find((l) => l.startsWith("at/.git_archival.txt "))!;
    expect(archival).toContain("describe-name: v2.0");
    expect(archival).toContain("ref-names: HEAD -> main, tag: v2.0");
  });

  it("decoration rule: %d/%D and %(describe) of older commits — lightweight and annotated tags, merges, a commit with two annotated tags", async () => {
    for (const r of ["main~1", "v1.0", "side", "side~1", "main~2", "v1.0-again"]) {
      const c = await rev(r);
      const repo = await open();
      for (const args of [[], ["--tags"], ["--tags", "--match=*[0-9]*"], ["--abbrev=0"], ["--abbrev=12", "--tags"], ["--exclude=v1.0*"], ["--match=nothing"]]) {
        const want = await s.gitText(["describe", ...args, c], { cwd: oracle }).catch(() => "");
        expect(await gitDescribe(repo, c, args), `${r} ${args.join(" ")}`).toBe(want);
      }
    }
  });

  it("zip rule: the zip holds the same export-ignore'd, converted and substituted files as git's", async () => {
    const head = await rev("main");
    const ours = s.path("ours.zip");
    writeFileSync(ours, await bytesOf(zipArchive(await open(), head, "at/")));
    const theirs = s.path("theirs.zip");
    writeFileSync(theirs, (await s.git(["archive", "--format=zip", "--prefix=at/", head], { cwd: oracle })).stdout);
    const listing = (zip: string) =>
      execFileSync("unzip", ["-Z1", zip])
        .toString("latin1")
        .split("\n")
        .filter(Boolean)
        .sort()
        .map((name) => `${name} ${name.endsWith("/") ? "" : execFileSync("unzip", ["-p", zip, name]).toString("base64")}`);
    expect(listing(ours)).toEqual(listing(theirs));
  });

  it("etag rule: the substitution digest is null without export-subst files and follows what the expansions show", async () => {
    const repo = await open();
    expect(await new ArchiveContext(repo, await rev("v1.0")).substitutions()).toBeNull();
    const head = await rev("main");
    const before = await new ArchiveContext(repo, head).substitutions();
    expect(before).toMatch(/^[0-9a-f]{40}$/);
    expect(await new ArchiveContext(repo, head).substitutions()).toBe(before);
    // a new tag on the commit changes %D
    await tag("v2.0-final", head, null);
    await s.git(["push", "-q", `${srv.url}/at.git`, "v2.0-final"], { cwd: src });
    expect(await new ArchiveContext(await open(), head).substitutions()).not.toBe(before);
    await s.git(["fetch", "-q", "--tags", `${srv.url}/at.git`], { cwd: oracle });
    await expectSameTar(head);
  });
});

describe("describe and abbreviations", () => {
  it("describe rule: more than 10 candidate tags on a merge history — git's 10-candidate search, depths and tie-breaks", async () => {
    await s.git(["checkout", "-q", "-b", "many", "v1.0"], { cwd: src });
    for (let i = 0; i < 6; i++) {
      await commit({ [`m${i}.txt`]: `${i}\n` }, `many ${i}`);
      await tag(`m${i}`, "HEAD", i % 2 ? null : `m ${i}`, time);
    }
    await s.git(["checkout", "-q", "-b", "many2", "v1.0"], { cwd: src });
    for (let i = 0; i < 6; i++) {
      await commit({ [`n${i}.txt`]: `${i}\n` }, `many2 ${i}`);
      await tag(`n${i}`, "HEAD", `n ${i}`, time);
    }
    time += 1000;
    await s.git(["merge", "-q", "--no-ff", "-m", "merge many", "many"], { cwd: src, env: { GIT_AUTHOR_DATE: `${time} +0000`, GIT_COMMITTER_DATE: `${time} +0000` } });
    await commit({ "after.txt": "x\n" }, "after the merge");
    await s.git(["push", "-q", "-f", `${srv.url}/at.git`, "many", "many2", "--tags"], { cwd: src });
    await s.git(["fetch", "-q", "-f", "--tags", `${srv.url}/at.git`, "+refs/heads/*:refs/heads/*"], { cwd: oracle });
    const repo = await open();
    for (const r of ["many2", "many2~1", "many2~2", "many", "many~3", "n0"]) {
      const c = await rev(r);
      for (const args of [[], ["--tags"], ["--tags", "--abbrev=5"], ["--match=n*"], ["--exclude=n*", "--tags"]]) {
        const want = await s.gitText(["describe", ...args, c], { cwd: oracle }).catch(() => "");
        expect(await gitDescribe(repo, c, args), `${r} ${args.join(" ")}`).toBe(want);
      }
    }
  });

  it("abbreviation rule: 7 hex digits, one more per doubling past 2^13 objects (git's approximate count), longer while another object the refs reach shares the prefix — not for one they left behind", async () => {
    const fake = (objects: number, ids: string[], hidden: string[] = []) =>
      ({
        state: { packs: [{ objects }] },
        reader: { findPrefix: (p: string, limit: number) => ids.filter((i) => i.startsWith(p)).slice(0, limit) },
        reaches: async (o: string) => !hidden.includes(o),
      }) as unknown as Repository;
    const oid = "abcdef0123456789abcdef0123456789abcdef01";
    const twin = "abcdef0123ffffffffffffffffffffffffffffff";
    expect(await abbreviate(fake(100, [oid]), oid)).toBe("abcdef0");
    expect(await abbreviate(fake(16383, [oid]), oid)).toBe("abcdef0");
    expect(await abbreviate(fake(16384, [oid]), oid)).toBe("abcdef01");
    expect(await abbreviate(fake(1 << 20, [oid]), oid)).toBe("abcdef01234");
    expect(await abbreviate(fake(100, [oid, twin]), oid)).toBe("abcdef01234");
    expect(await abbreviate(fake(100, [oid, twin], [twin]), oid)).toBe("abcdef0");
    expect(await abbreviate(fake(100, [oid]), oid, 0)).toBe(oid);
    expect(await abbreviate(fake(100, [oid]), oid, 4)).toBe("abcd");
  });
});

describe("attribute lookup", () => {
  it("lookup rule: attributes of paths agree with git check-attr (macros, precedence, directories with a trailing slash)", async () => {
    const top = parseAttributes(Buffer.from(ROOT_ATTRS), true);
    const sub = parseAttributes(Buffer.from(SUB_ATTRS), false);
    const deeper = parseAttributes(Buffer.from("*.txt -export-ignore\nz.md export-ignore\n"), false);
    const frames = (p: string) => {
      const f = [BUILTIN_FRAME, { origin: Buffer.alloc(0), rules: top }];
      if (p.startsWith("sub/") && p.length > 4) f.push({ origin: Buffer.from("sub"), rules: sub });
      if (p.startsWith("sub/deeper/") && p.length > 11) f.push({ origin: Buffer.from("sub/deeper"), rules: deeper });
      return f;
    };
    const paths = ["a.secret", "build/", "src/build/", "tmp/", "other/tmp", "deep/er/cache/", "macro-binary.dat", "file.crlf", "sub/a.txt", "sub/keep.txt", "sub/x/y.txt", "sub/deeper/x/y.txt", "sub/ignored-by-root.txt", "sub/uses-notallowed.txt", "sub/deeper/z.md", "valued.txt", "unset.txt", "x.log"];
    const names = ["export-ignore", "text", "diff", "eol", "binary", "hidden", "notallowed"];
    const idx = s.path("check-index");
    const env = { GIT_INDEX_FILE: idx };
    await s.git(["read-tree", "v1.0"], { cwd: oracle, env });
    const out = (await s.git(["check-attr", "--cached", ...names, "--", ...paths], { cwd: oracle, env })).stdout.toString();
    const show = (v: unknown) => (v === true ? "set" : v === false ? "unset" : v === null || v === undefined ? "unspecified" : String(v));
    const ours = paths.flatMap((p) => {
      const a = attributesOf(frames(p), Buffer.from(p));
      return names.map((n) => `${p}: ${n}: ${show(a.get(n))}`);
    });
    // check-attr strips the trailing slash of a path it is given; a directory's own answer differs only there
    expect(ours.map((l) => l.replace(/^([^:]*)\/:/, "$1:"))).toEqual(out.trim().split("\n").map((l) => l.replace(/^([^:]*)\/:/, "$1:")));
  });
});

describe("abbreviation and what the refs left behind", () => {
  it("abbreviation rule: once a branch was deleted, the length counts what the refs reach — the objects left behind neither lengthen ids nor show that they are still stored", async () => {
    const dir = s.path("abbr-src");
    await s.git(["init", "-q", "-b", "main", dir]);
    await commit({ "a.txt": "a\n" }, "first", { cwd: dir });
    // a branch of 16,400 blobs: past 2^14 objects git's default abbreviation grows to 8 digits
    const n = 16_400;
    const stream: string[] = [];
    for (let i = 0; i < n; i++) stream.push(`blob\nmark :${i + 1}\ndata ${String(i).length + 1}\n${i}\n`);
    stream.push(`commit refs/heads/big\ncommitter x <x@example.com> 1700000000 +0000\ndata 4\nbig\nfrom refs/heads/main\n`);
    for (let i = 0; i < n; i++) stream.push(`M 100644 :${i + 1} f/${i}\n`);
    stream.push("\n");
    await s.git(["fast-import", "--quiet"], { cwd: dir, input: stream.join("") });
    await s.git(["push", "-q", `${srv.url}/abbr.git`, "main", "big"], { cwd: dir });
    const main = await s.gitText(["rev-parse", "main"], { cwd: dir });
    const repo = () => Repository.open({ repoId: "abbr", objects: srv.objects, refs: srv.refs });
    expect(await abbreviate(await repo(), main)).toHaveLength(8);
    await s.git(["push", "-q", `${srv.url}/abbr.git`, ":big"], { cwd: dir });
    expect(await abbreviate(await repo(), main)).toHaveLength(7);
  });
});
