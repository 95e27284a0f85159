/**
 * The pure pieces of the contents API: the last commit of every entry equals `git log -1 -- <path>`
 * on a history with real merges (one side only, both sides, a merge that differs from both), Go's
 * base64 errors, Gitea's path rules, the served Content-Type and Content-Disposition; the ident
 * and date rules of the commit serialiser against git's own `commit-tree` and `fsck --strict`;
 * the URL escapers on any JS string.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { goQueryEscape, toContentsResponse } from "../../functions/convert/contents.ts";
import { goPathEscape, pathEscapeSegments } from "../../functions/convert/escape.ts";
import { repoUrls, toReference } from "../../functions/convert/git.ts";
import { GitError } from "../../functions/git/errors.ts";
import { parseCommit, serializeCommit, serializeTag, type Signature } from "../../functions/git/objects/commit.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { contentDisposition, sniffContentType } from "../../functions/routes/contents.ts";
import { cleanTreePath, decodeBase64, lastCommits } from "../../functions/services/contents.ts";
import { fastImportStream, makeHistory, Scratch } from "../git/helpers.ts";
import { type GitServer, startGitServer } from "../git/server.ts";

const s = new Scratch("contents-unit-");
let srv: GitServer;
let src: string;
const IDENT = ["-c", "user.name=Merger", "-c", "user.email=merger@example.com"];

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  src = s.path("src");
  await makeHistory(s, src, { commits: 40, files: 15, touch: 2 });
  const g = (args: string[]) => s.git(args, { cwd: src });
  const base = await s.gitText(["rev-parse", "main~20"], { cwd: src });
  // a side branch edited in parallel, merged with conflicts resolved for the side: some files
  // come from one parent only, some differ from both parents (the merge is their last commit)
  await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportStream({ commits: 12, files: 15, touch: 2, branch: "refs/heads/side", from: base, startMark: 500, seed: 7, time: 1700000600 }) });
  await g(["reset", "-q", "--hard", "main"]);
  await g([...IDENT, "merge", "-q", "--no-ff", "-X", "theirs", "-m", "merge side", "side"]);
  const merged = await s.gitText(["rev-parse", "HEAD"], { cwd: src });
  await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportStream({ commits: 5, files: 15, touch: 1, from: merged, startMark: 900, seed: 3, time: 1800000000 }) });
  await g(["reset", "-q", "--hard", "main"]);
  srv.refs.create("1");
  await s.git(["push", "-q", `${srv.url}/1.git`, "main"], { cwd: src });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

describe("last commits", () => {
  it("every entry of every directory: the commit `git log -1 -- <path>` names, at the tip and before the merge", async () => {
    const repo = await Repository.open({ repoId: "1", objects: srv.objects, refs: srv.refs });
    const seen = new Set<string>();
    for (const rev of ["main", "main~5", "main~5^2", "main~6"]) {
      const commit = await s.gitText(["rev-parse", rev], { cwd: src });
      const dirs = ["", ...(await s.gitText(["ls-tree", "-r", "-d", "--name-only", commit], { cwd: src })).split("\n").filter(Boolean)];
      for (const dir of dirs) {
        const names = (await s.gitText(["ls-tree", "--name-only", dir ? `${commit}:${dir}` : commit], { cwd: src })).split("\n");
        const got = await lastCommits(repo, commit, dir, names);
        for (const name of names) {
          const path = dir ? `${dir}/${name}` : name;
          expect(got.get(name)?.oid, `${rev} ${path}`).toBe(await s.gitText(["log", "-1", "--format=%H", commit, "--", path], { cwd: src }));
          seen.add(got.get(name)!.oid);
        }
      }
    }
    // the history exercised all three cases: the merge itself, a side commit, a main commit before the merge
    const sideOnly = (await s.gitText(["rev-list", "main~5^2", "^main~6"], { cwd: src })).split("\n");
    const mainOnly = (await s.gitText(["rev-list", "main~6", "^main~5^2"], { cwd: src })).split("\n");
    expect(seen.has(await s.gitText(["rev-parse", "main~5"], { cwd: src }))).toBe(true);
    expect(sideOnly.some((c) => seen.has(c))).toBe(true);
    expect(mainOnly.some((c) => seen.has(c))).toBe(true);
  });
});

describe("last commits, known before", () => {
  it("a walk stops where an earlier answer is known: after new commits a listing reads only them (and their parents), and still answers as git log -1 does", async () => {
    const work = s.path("incremental");
    await s.git(["clone", "-q", src, work]);
    const tipBefore = await s.gitText(["rev-parse", "main"], { cwd: work });
    srv.refs.create("incr");
    await s.git(["push", "-q", `${srv.url}/incr.git`, "main"], { cwd: work });
    const dirsOf = async (commit: string) => ["", ...(await s.gitText(["ls-tree", "-r", "-d", "--name-only", commit], { cwd: work })).split("\n").filter(Boolean)];
    const namesOf = async (commit: string, dir: string) => (await s.gitText(["ls-tree", "--name-only", dir ? `${commit}:${dir}` : commit], { cwd: work })).split("\n");
    const before = await Repository.open({ repoId: "incr", objects: srv.objects, refs: srv.refs });
    for (const dir of await dirsOf(tipBefore)) await lastCommits(before, tipBefore, dir, await namesOf(tipBefore, dir));
    await s.git(["fast-import", "--quiet"], { cwd: work, input: fastImportStream({ commits: 6, files: 15, touch: 1, from: tipBefore, startMark: 2000, seed: 11, time: 1900000000 }) });
    await s.git(["push", "-q", `${srv.url}/incr.git`, "main"], { cwd: work });
    const tip = await s.gitText(["rev-parse", "main"], { cwd: work });
    const after = await Repository.open({ repoId: "incr", objects: srv.objects, refs: srv.refs });
    const read = new Set<string>();
    const get = after.commits.get.bind(after.commits);
    after.commits.get = (oid: string) => {
      read.add(oid);
      return get(oid);
    };
    for (const dir of await dirsOf(tip)) {
      const names = await namesOf(tip, dir);
      const got = await lastCommits(after, tip, dir, names);
      for (const name of names) {
        const path = dir ? `${dir}/${name}` : name;
        expect(got.get(name)?.oid, path).toBe(await s.gitText(["log", "-1", "--format=%H", tip, "--", path], { cwd: work }));
      }
    }
    // the six new commits and the old tip, where every name's answer was known: nothing older
    expect([...read].sort()).toEqual((await s.gitText(["rev-list", `${tipBefore}^..main`], { cwd: work })).split("\n").sort());
  });
});

describe("blob sizes", () => {
  it("sizeOf names every blob's size without building it, deltas included (git cat-file -s)", async () => {
    const repo = await Repository.open({ repoId: "1", objects: srv.objects, refs: srv.refs });
    const blobs = (await s.gitText(["rev-list", "--objects", "--all"], { cwd: src })).split("\n").map((l) => l.slice(0, 40));
    const sizes = (await s.git(["cat-file", "--batch-check=%(objecttype) %(objectsize)"], { cwd: src, input: `${blobs.join("\n")}\n` })).stdout.toString().trim().split("\n");
    let checked = 0;
    for (const [i, oid] of blobs.entries()) {
      const [type, size] = sizes[i]!.split(" ");
      if (type !== "blob") continue;
      expect(await repo.reader.sizeOf(oid), oid).toBe(Number(size));
      checked++;
    }
    expect(checked).toBeGreaterThan(50);
    expect(await repo.reader.sizeOf("0".repeat(40))).toBeNull();
  });
});

describe("helpers", () => {
  it("base64 decodes as Go's StdEncoding does, failing at the byte Go names", () => {
    expect(Buffer.from(decodeBase64("AAEC/w==") as Uint8Array)).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(Buffer.from(decodeBase64("AA\r\nEC") as Uint8Array)).toEqual(Buffer.from([0, 1, 2]));
    expect(decodeBase64("not base64!")).toBe("illegal base64 data at input byte 3");
    expect(decodeBase64("abc")).toBe("illegal base64 data at input byte 0");
    expect(decodeBase64("abcde")).toBe("illegal base64 data at input byte 4");
    expect(decodeBase64("")).toEqual(new Uint8Array(0));
  });

  it("path rule: tree paths are normalised as git does (slashes trimmed and collapsed, `.` and `..` resolved inside the tree); a path leaving the root, `.git` components and NUL are refused with Gitea's message", () => {
    const cases: [string, string][] = [
      ["/a//b/", "a/b"],
      ["", ""],
      [".", ""],
      ["./README.md", "README.md"],
      ["a/../README.md", "README.md"],
      ["README.md/..", ""],
      ["a/./b/../c", "a/c"],
      ["a//b", "a/b"],
      ["...", "..."],
      ["a..b/.c", "a..b/.c"],
    ];
    for (const [raw, clean] of cases) expect(cleanTreePath(raw), raw).toBe(clean);
    for (const bad of ["..", "../..", "../README.md", "a/../../b", "./..", ".git/config", "x/.GiT", "a/../.git", "a\0b"]) expect(() => cleanTreePath(bad), bad).toThrow(/^path contains a malformed path component/);
  });

  it("Content-Type: text is never HTML, binary is octet-stream, images and PDF as such", () => {
    expect(sniffContentType(Buffer.from("# hello\n"))).toBe("text/plain; charset=utf-8");
    expect(sniffContentType(Buffer.from("<html><script>alert(1)</script></html>"))).toBe("text/plain; charset=utf-8");
    expect(sniffContentType(new Uint8Array(0))).toBe("text/plain; charset=utf-8");
    expect(sniffContentType(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))).toBe("text/plain; charset=iso-8859-1");
    expect(sniffContentType(Buffer.from([1, 2, 3, 0]))).toBe("application/octet-stream");
    expect(sniffContentType(Buffer.from("\x89PNG\r\n\x1a\n rest", "latin1"))).toBe("image/png");
    expect(sniffContentType(Buffer.from("%PDF-1.7"))).toBe("application/pdf");
    expect(sniffContentType(Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe("image/svg+xml");
  });

  it("Content-Disposition as Go's mime.FormatMediaType writes it", () => {
    expect(contentDisposition("README.md")).toBe("inline; filename=README.md");
    expect(contentDisposition("deep name.txt")).toBe('inline; filename="deep name.txt"');
    expect(contentDisposition("ünï.txt")).toBe("inline; filename=_n_.txt; filename*=utf-8''%C3%BCn%C3%AF.txt");
  });
});

// ---- the commit serialiser: the one place ident lines are written ----

const sig = (name: string, email: string, timestamp = 1700000000, timezone = "+0000"): Signature => ({ name, email, timestamp, timezone });
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const commitOf = (author: Signature, committer = sig("C", "c@x")) => serializeCommit({ tree: EMPTY_TREE, parents: [], author, committer, message: "m\n" });
const headerLines = (data: Uint8Array) => Buffer.from(data).toString("utf8").split("\n\n")[0]!.split("\n");

/** Runs `git fsck --strict` on one commit object (written loose, its empty tree too): every message it prints. */
async function fsckStrict(data: Uint8Array): Promise<string> {
  const dir = s.path(`fsck-${Math.random().toString(36).slice(2)}`);
  await s.git(["init", "-q", "--bare", dir]);
  await s.git(["hash-object", "-w", "-t", "tree", "--stdin"], { cwd: dir, input: "" });
  const oid = (await s.git(["hash-object", "-w", "-t", "commit", "--literally", "--stdin"], { cwd: dir, input: data })).stdout.toString().trim();
  await s.git(["update-ref", "refs/heads/main", oid], { cwd: dir });
  const r = await s.git(["fsck", "--strict", "--no-dangling"], { cwd: dir }).catch((e: { stderr: string }) => ({ stderr: `FAILED ${e.stderr}` }));
  return r.stderr;
}

describe("ident rule: commit and tag ident lines are written as git's ident.c writes them", () => {
  const hostile: [string, string][] = [
    ["Eve\ncommitter Mallory <m@x> 1 +0000", "e@x"],
    ["Ada", "a@x>\ncommitter Mallory <m@x> 1 +0000"],
    ["  .Ada Lovelace, Jr.; ", " <.ada@example.com.> "],
    ["A<d>a", "a<@>x"],
    ["\"'Ada'\"", "'a@x'"],
    ["Ünï \t cødé", "ü@x"],
    ["Ada\r\nX", "a@x\r"],
  ];

  it("name and e-mail as `git commit-tree` writes them from the same values: crud trimmed at both ends, every \\n < > dropped inside", async () => {
    const dir = s.path("ident-ref");
    await s.git(["init", "-q", "--bare", dir]);
    const tree = (await s.git(["hash-object", "-w", "-t", "tree", "--stdin"], { cwd: dir, input: "" })).stdout.toString().trim();
    for (const [name, email] of hostile) {
      const env = { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_AUTHOR_DATE: "1700000000 +0000" };
      const oid = await s.gitText(["commit-tree", tree, "-m", "m"], { cwd: dir, env });
      const viaGit = (await s.gitText(["cat-file", "commit", oid], { cwd: dir })).split("\n").find((l) => l.startsWith("author "));
      const ours = headerLines(commitOf(sig(name, email))).find((l) => l.startsWith("author "));
      expect(ours, JSON.stringify([name, email])).toBe(viaGit);
    }
  });

  it("whatever the caller gives, the object has exactly its tree, author and committer lines and passes `git fsck --strict`", async () => {
    for (const [name, email] of [...hostile, ["a\0b", "c\0@x"] as [string, string]]) {
      const data = commitOf(sig(name, email), sig(email, name));
      const lines = headerLines(data);
      expect(lines.map((l) => l.split(" ")[0]), JSON.stringify([name, email])).toEqual(["tree", "author", "committer"]);
      const c = parseCommit(data);
      for (const who of [c.author, c.committer]) {
        expect(`${who.name}${who.email}`).not.toMatch(/[\n<>\0]/);
        expect(who.timestamp).toBe(1700000000);
      }
      expect(await fsckStrict(data), JSON.stringify([name, email])).toBe("");
    }
  });

  it("a name or e-mail that is nothing but crud is refused (GitError invalid) instead of written", () => {
    for (const [name, email] of [["", "a@x"], [" ;. ", "a@x"], ["<>", "a@x"], ["Ada", ""], ["Ada", " <> "], ["Ada", "\n"]]) {
      const err = (() => {
        try {
          commitOf(sig(name!, email!));
        } catch (e) {
          return e;
        }
      })();
      expect(err, JSON.stringify([name, email])).toBeInstanceOf(GitError);
      expect((err as GitError).code).toBe("invalid");
      expect((err as GitError).message).toMatch(/^author (name|email) consists only of disallowed characters/);
    }
    expect(() => serializeTag({ object: EMPTY_TREE, type: "tree", tag: "v1", tagger: sig("\n", "t@x"), message: "" })).toThrow(/^tagger name consists only of disallowed characters/);
  });
});

describe("date rule: signature times are what git's fsck and Gitea's JSON can hold", () => {
  it("0 … 9999-12-31T23:59:59Z in whole seconds are written; earlier, later or fractional times are refused (GitError invalid)", async () => {
    for (const t of [0, 1, 253402300799]) expect(await fsckStrict(commitOf(sig("A", "a@x", t))), String(t)).toBe("");
    for (const t of [-1, -62135596800, 253402300800, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => commitOf(sig("A", "a@x", t)), String(t)).toThrow(GitError);
      expect(() => commitOf(sig("A", "a@x", t)), String(t)).toThrow(/^author date .* is out of range/);
    }
  });

  it("offsets are git's ±hhmm (+1400, -1200, -0000 kept); anything else is refused", async () => {
    for (const tz of ["+1400", "-1200", "+0530", "-0000", "+2359"]) {
      const data = commitOf(sig("A", "a@x", 1700000000, tz));
      expect(headerLines(data)[1]).toBe(`author A <a@x> 1700000000 ${tz}`);
      expect(await fsckStrict(data), tz).toBe("");
    }
    for (const tz of ["+14:00", "1400", "+140", "+14000", "Z", "", "+ab00"]) expect(() => commitOf(sig("A", "a@x", 1700000000, tz)), tz).toThrow(/^author timezone .* is not git's/);
  });
});

describe("path escape rule: goPathEscape is Go's url.PathEscape, pathEscapeSegments Gitea's util.PathEscapeSegments", () => {
  it("keeps unreserved characters and $&+:=@, escapes the rest (!'()*,; too) — Go 1.x's output for the same input", () => {
    // go run: fmt.Println(url.PathEscape("a!b'c(d)e*f+g,h;i:j=k@l$m&n o~p%q/r?s#t[u]v\"w<x"))
    expect(goPathEscape("a!b'c(d)e*f+g,h;i:j=k@l$m&n o~p%q/r?s#t[u]v\"w<x")).toBe("a%21b%27c%28d%29e%2Af+g%2Ch%3Bi:j=k@l$m&n%20o~p%25q%2Fr%3Fs%23t%5Bu%5Dv%22w%3Cx");
    expect(goPathEscape("ü")).toBe("%C3%BC");
    expect(pathEscapeSegments("refs/heads/a+b/c d!")).toBe("refs/heads/a+b/c%20d%21");
  });

  it("git/refs url: a ref's path escaped per segment as Gitea's (a + stays)", () => {
    const ref = toReference({ api: "http://h/api/v1/repos/o/r", html: "http://h/o/r" }, { name: "refs/heads/feat+x/y(1)", oid: "a".repeat(40) }, "commit");
    expect(ref.url).toBe("http://h/api/v1/repos/o/r/git/refs/heads/feat+x/y%281%29");
  });
});

describe("escape rule: the URL escapers answer for any JS string, a lone surrogate as U+FFFD (Go's JSON decoder's)", () => {
  it("goQueryEscape, goPathEscape and pathEscapeSegments never throw", () => {
    for (const bad of ["nb\ud800", "\udc00x", "a\ud800/b\udfff"]) {
      expect(goQueryEscape(bad)).toBe(goQueryEscape(bad.toWellFormed()));
      expect(goPathEscape(bad)).toBe(goPathEscape(bad.toWellFormed()));
      expect(pathEscapeSegments(bad)).toBe(pathEscapeSegments(bad.toWellFormed()));
    }
    expect(goQueryEscape("nb\ud800 x")).toBe("nb%EF%BF%BD+x");
    expect(goPathEscape("nb\ud800")).toBe("nb%EF%BF%BD");
    expect(repoUrls("http://h/", "o\ud800", "r").api).toBe("http://h/api/v1/repos/o%EF%BF%BD/r");
  });

  it("toContentsResponse of a ref named with a lone surrogate answers (no URIError after a write)", () => {
    const urls = { api: "http://h/api/v1/repos/o/r", html: "http://h/o/r" };
    const entry = { path: "f\ud800.txt", name: "f\ud800.txt", mode: "100644", type: "blob" as const, oid: "a".repeat(40) };
    const out = toContentsResponse(urls, { inputRef: "nb\ud800", kind: "branch", name: "nb\ud800", commit: "b".repeat(40) }, entry, { size: 2, content: "aGk=" });
    expect(out.url).toBe("http://h/api/v1/repos/o/r/contents/f%EF%BF%BD.txt?ref=nb%EF%BF%BD");
    expect(out.html_url).toBe("http://h/o/r/src/branch/nb%EF%BF%BD/f%EF%BF%BD.txt");
  });
});
