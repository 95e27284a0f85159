/**
 * The pure pieces of the contents API: the last commit of every entry equals `git log -1 -- <path>`
 * on a history with real merges (one side only, both sides, a merge that differs from both), Go's
 * base64 errors, Gitea's path rules, the served Content-Type and Content-Disposition.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

  it("tree paths: slashes trimmed, `.`/`..`/`.git` components and NUL refused with Gitea's message", () => {
    expect(cleanTreePath("/a//b/")).toBe("a/b");
    expect(cleanTreePath("")).toBe("");
    for (const bad of ["a/../b", "./a", "..", ".git/config", "x/.GiT", "a\0b"]) expect(() => cleanTreePath(bad), bad).toThrow(/^path contains a malformed path component/);
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
