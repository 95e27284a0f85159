/**
 * Archives of trees whose names git takes without fsck but cannot check out (`..`, `.git` in any
 * case, absolute and empty components, NTFS synonyms of `.git`, a link named `.gitmodules`):
 * `git archive` refuses them before writing a byte (`error: invalid path '…'`, its unpack_trees into
 * a scratch index runs verify_path), whatever paths are asked for; so does the archive here — the
 * tar and zip streams fail before their first byte, and the ArchiveContext the service awaits
 * before answering fails with git's message. Every other tree is archived as git archives it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitError } from "../../functions/git/errors.ts";
import { ArchiveContext, tarArchive, zipArchive } from "../../functions/git/repo/archive.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("archive-paths-");
let srv: GitServer;
let src: string;
let blob: string;
let link: string;
let inner: string;
let empty: string;

const treeBytes = (entries: [string, string | Buffer, string][]) =>
  Buffer.concat(entries.map(([m, n, id]) => Buffer.concat([Buffer.from(`${m} `), Buffer.from(n), Buffer.from([0]), Buffer.from(id, "hex")])));
const hashLiterally = async (type: string, data: Buffer | string) => (await s.git(["hash-object", "-t", type, "-w", "--literally", "--stdin"], { cwd: src, input: data })).stdout.toString().trim();
const bytesOf = async (stream: ReadableStream<Uint8Array>) => Buffer.from(await new Response(stream).arrayBuffer());
/** The first chunk a stream gives, or what it fails with. */
const firstRead = async (stream: ReadableStream<Uint8Array>) => {
  const r = stream.getReader();
  try {
    return { chunk: (await r.read()).value };
  } catch (e) {
    return { error: e as Error };
  }
};

let nextBranch = 0;
/** A commit of a root tree of `entries`, pushed to the server as its own branch, and the repository after. */
async function commitOf(entries: [string, string | Buffer, string][]): Promise<{ commit: string; repo: Repository }> {
  const tree = await hashLiterally("tree", treeBytes(entries));
  const commit = await s.gitText(["commit-tree", tree, "-m", "paths"], { cwd: src });
  await s.git(["push", "-q", `${srv.url}/ap.git`, `${commit}:refs/heads/b${nextBranch++}`], { cwd: src });
  return { commit, repo: await Repository.open({ repoId: "ap", objects: srv.objects, refs: srv.refs }) };
}

/** What git archive does with the commit: its tar, or its error line. */
async function gitArchive(commit: string, paths: string[] = []): Promise<{ tar: Buffer } | { error: string }> {
  try {
    return { tar: (await s.git(["archive", "--format=tar", "--prefix=ap/", commit, ...(paths.length ? ["--", ...paths] : [])], { cwd: src })).stdout };
  } catch (e) {
    return { error: String((e as { stderr: string }).stderr).trim() };
  }
}

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  srv.refs.create("ap");
  src = s.path("src");
  await s.git(["init", "-q", "-b", "main", src]);
  blob = await hashLiterally("blob", "evil payload\n");
  link = await hashLiterally("blob", "../x");
  inner = await hashLiterally("tree", treeBytes([["100644", "pwned.txt", blob]]));
  empty = await hashLiterally("tree", "");
  const { commit } = await commitOf([["100644", "README", blob]]);
  await s.git(["update-ref", "refs/heads/main", commit], { cwd: src });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

/** Entries of a root tree, named for the report; `refused`: the path git archive names in its error (null: it archives the tree), checked against git too. */
const CASES: { name: string; entries: () => [string, string | Buffer, string][]; refused: string | null }[] = [
  { name: "a file named ..", entries: () => [["100644", "..", blob]], refused: ".." },
  { name: "a directory named ..", entries: () => [["40000", "..", inner]], refused: "../pwned.txt" },
  { name: "nested .. directories", entries: () => [["40000", "..", "NESTED"]], refused: "../../pwned.txt" },
  { name: "a directory named .", entries: () => [["40000", ".", inner]], refused: "./pwned.txt" },
  { name: "a directory named .git", entries: () => [["40000", ".git", inner]], refused: ".git/pwned.txt" },
  { name: "a directory named .GIT", entries: () => [["40000", ".GIT", inner]], refused: ".GIT/pwned.txt" },
  { name: "a directory named .Git", entries: () => [["40000", ".Git", inner]], refused: ".Git/pwned.txt" },
  { name: "a file named .git", entries: () => [["100644", ".git", blob]], refused: ".git" },
  { name: "a submodule named .git", entries: () => [["160000", ".git", blob]], refused: ".git" },
  { name: "a name with ../ in it (the tester's zip-slip)", entries: () => [["100644", "../../../../tmp/zipslip-proof", blob]], refused: "../../../../tmp/zipslip-proof" },
  { name: "an absolute name", entries: () => [["100644", "/etc/x", blob]], refused: "/etc/x" },
  { name: "an empty component", entries: () => [["100644", "a//b", blob]], refused: "a//b" },
  { name: "a trailing slash", entries: () => [["100644", "a/", blob]], refused: "a/" },
  { name: "NTFS: .git followed by spaces and periods", entries: () => [["40000", ".git. .", inner]], refused: ".git. ./pwned.txt" },
  { name: "NTFS: the 8.3 name git~1", entries: () => [["40000", "GIT~1", inner]], refused: "GIT~1/pwned.txt" },
  { name: "NTFS: an alternate data stream of .git", entries: () => [["100644", ".git:x", blob]], refused: ".git:x" },
  { name: "NTFS: .git after a backslash", entries: () => [["100644", "a\\.git", blob]], refused: "a\\.git" },
  { name: "a link named .gitmodules", entries: () => [["120000", ".gitmodules", link]], refused: ".gitmodules" },
  { name: "a link named .GITMODULES . (NTFS)", entries: () => [["120000", ".GITMODULES .", link]], refused: ".GITMODULES ." },
  { name: "a link named gitmod~1", entries: () => [["120000", "gitmod~1", link]], refused: "gitmod~1" },
  { name: "a link named gi7eba~9", entries: () => [["120000", "gi7eba~9", link]], refused: "gi7eba~9" },
  { name: "a link in a directory named .gitmodules", entries: () => [["40000", ".gitmodules", "LINKDIR"]], refused: ".gitmodules/l" },
  { name: "a file named .gitmodules", entries: () => [["100644", ".gitmodules", blob]], refused: null },
  { name: "an empty directory named .. (git writes nothing of it)", entries: () => [["40000", "..", empty], ["100644", "f", blob]], refused: null },
  { name: "a name with a / (two components, both fine)", entries: () => [["100644", "a/b", blob]], refused: null },
  // (in git's tree order: a tree out of order is refused on push, git fsck's treeNotSorted)
  { name: "names that only look close", entries: () => [["100644", "...", blob], ["100644", ".gitx", blob], ["40000", ".git~1", inner], ["100644", "\\.git", blob], ["100644", "git~2", blob], ["100644", "x:.git", blob], ["100644", "x\\..\\y", blob]], refused: null },
];

describe("archive paths", () => {
  it("path rule: an archive of a tree git archive refuses fails with git's `invalid path '…'` before any byte (tar, zip, and the service's first await); every other tree is git's tar byte for byte", async () => {
    const nested = await hashLiterally("tree", treeBytes([["40000", "..", inner]]));
    const linkDir = await hashLiterally("tree", treeBytes([["120000", "l", link]]));
    const resolve = (id: string) => (id === "NESTED" ? nested : id === "LINKDIR" ? linkDir : id);
    for (const c of CASES) {
      const { commit, repo } = await commitOf(c.entries().map(([m, n, id]) => [m, n, resolve(id)]));
      const git = await gitArchive(commit);
      if (c.refused === null) {
        expect(git, c.name).toHaveProperty("tar");
        const want = (git as { tar: Buffer }).tar;
        expect((await bytesOf(tarArchive(repo, commit, "ap/"))).equals(want), c.name).toBe(true);
        await expect(new ArchiveContext(repo, commit).substitutions(), c.name).resolves.toBeNull();
        continue;
      }
      const message = `invalid path '${c.refused}'`;
      expect(git, c.name).toEqual({ error: `error: ${message}` });
      await expect(new ArchiveContext(repo, commit).substitutions(), c.name).rejects.toThrow(message);
      await expect(new ArchiveContext(repo, commit).checkPaths(), c.name).rejects.toBeInstanceOf(GitError);
      for (const stream of [tarArchive(repo, commit, "ap/"), zipArchive(repo, commit, "ap/")]) {
        const r = await firstRead(stream);
        expect(r.chunk, c.name).toBeUndefined();
        expect(r.error?.message, c.name).toBe(message);
      }
    }
  });

  it("pathspec rule: the whole tree is checked, as git's unpack_trees reads it whole — asking only for a good directory is refused too", async () => {
    const good = await hashLiterally("tree", treeBytes([["100644", "ok.txt", blob]]));
    const { commit, repo } = await commitOf([["40000", "..", inner], ["40000", "good", good]]);
    expect(await gitArchive(commit, ["good"])).toEqual({ error: "error: invalid path '../pwned.txt'" });
    const ctx = new ArchiveContext(repo, commit, ["good"]);
    await expect(ctx.substitutions()).rejects.toThrow("invalid path '../pwned.txt'");
    expect((await firstRead(zipArchive(repo, commit, "ap/", ["good"]))).error?.message).toBe("invalid path '../pwned.txt'");
  });

  it("error rule: the refusal is a `corrupt` GitError (the API's 500 in Gitea's shape, as Gitea answers a failed git archive), thrown each time it is asked", async () => {
    const { commit, repo } = await commitOf([["40000", ".git", inner]]);
    for (let i = 0; i < 2; i++) {
      const e = await new ArchiveContext(repo, commit).substitutions().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GitError);
      expect((e as GitError).code).toBe("corrupt");
    }
  });
});
