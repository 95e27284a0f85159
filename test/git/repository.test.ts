/**
 * The object-level API against git: what it reads equals what git shows (rev-parse, cat-file,
 * ls-tree, log with path filters and paging, rev-list --count); what it writes (auto-init,
 * contents create/update/delete, a template copied as one commit) clones cleanly and is exactly
 * what git sees; stale expectations and concurrent writes are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitError } from "../../functions/git/errors.ts";
import { createCommit } from "../../functions/git/repo/commit.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { makeHistory, Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("repo-api-");
let srv: GitServer;
let src: string;
const ada = { name: "Ada Lovelace", email: "ada@example.com", timestamp: 1700000000, timezone: "+0000" };

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  // history with a side branch merged twice, tags, an executable and a nested tree
  src = s.path("src");
  await makeHistory(s, src, { commits: 30, files: 12 });
  const g = (args: string[]) => s.git(args, { cwd: src });
  await g(["checkout", "-q", "-b", "side", "main~10"]);
  for (let i = 0; i < 3; i++) {
    await s.git(["commit", "-q", "--allow-empty", "-m", `side ${i}`], { cwd: src });
  }
  const { writeFileSync, mkdirSync, chmodSync } = await import("node:fs");
  mkdirSync(`${src}/docs/deep`, { recursive: true });
  writeFileSync(`${src}/docs/deep/guide.md`, "# guide\n");
  writeFileSync(`${src}/run.sh`, "#!/bin/sh\necho hi\n");
  chmodSync(`${src}/run.sh`, 0o755);
  await g(["add", "."]);
  await g(["commit", "-q", "-m", "docs and script"]);
  await g(["checkout", "-q", "main"]);
  await g(["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
  writeFileSync(`${src}/docs/deep/guide.md`, "# guide\n\nmore\n");
  await g(["add", "."]);
  await g(["commit", "-q", "-m", "guide edit"]);
  await g(["tag", "-a", "v2", "-m", "v2"]);
  await g(["tag", "light", "main~3"]);
  srv.refs.create("1");
  await s.git(["push", `${srv.url}/1.git`, "main", "side", "v2", "light"], { cwd: src });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

const open = (id: string) => Repository.open({ repoId: id, objects: srv.objects, refs: srv.refs });
const lines = async (args: string[], cwd = src) => (await s.gitText(args, { cwd })).split("\n").filter(Boolean);

describe("reading", () => {
  it("resolves revisions as Gitea does (HEAD, full refs, branch, tag, full and short ids)", async () => {
    const repo = await open("1");
    for (const rev of ["HEAD", "main", "side", "v2", "light", "refs/heads/side", "refs/tags/v2"]) {
      const want = await s.gitText(["rev-parse", `${rev}^{commit}`], { cwd: src });
      expect((await repo.resolve(rev))?.oid).toBe(want);
    }
    expect(await repo.resolve("v2")).toMatchObject({ ref: "refs/tags/v2", kind: "tag" });
    const id = await s.gitText(["rev-parse", "main~4"], { cwd: src });
    expect(await repo.resolve(id)).toEqual({ oid: id, ref: null, kind: "commit" });
    expect((await repo.resolve(id.slice(0, 8)))?.oid).toBe(id);
    expect(await repo.resolve("nope")).toBeNull();
    expect(await repo.resolve("0000000000000000000000000000000000000000")).toBeNull();
  });

  it("rev-parse order (the commits API's sha and not): a name that is a branch and a tag is the tag, as git rev-parse reads it; Gitea's ref order takes the branch", async () => {
    const short = (await s.gitText(["rev-parse", "main~6"], { cwd: src })).slice(0, 7);
    const dst = s.path("ambiguous");
    await s.git(["clone", "-q", src, dst]);
    const g = (args: string[]) => s.git(args, { cwd: dst });
    await g(["branch", "twin", "main~5"]);
    await g(["tag", "twin", "main~7"]);
    await g(["branch", short, "main~8"]); // a branch named like an abbreviated commit id
    await g(["branch", "heads/x", "main~9"]);
    srv.refs.create("ambiguous");
    await s.git(["push", "-q", `${srv.url}/ambiguous.git`, "main", "v2", "refs/heads/twin:refs/heads/twin", "refs/tags/twin:refs/tags/twin", `refs/heads/${short}:refs/heads/${short}`, "refs/heads/heads/x:refs/heads/heads/x"], { cwd: dst });
    const repo = await open("ambiguous");
    for (const rev of ["twin", "heads/twin", "tags/twin", short, "heads/x", "main", "v2", "HEAD"]) {
      const want = await s.gitText(["rev-parse", "--verify", "-q", `${rev}^{commit}`], { cwd: dst }).catch(() => null);
      expect((await repo.resolve(rev, "rev-parse"))?.oid ?? null, rev).toBe(want);
    }
    expect((await repo.resolve("twin"))?.oid).toBe(await s.gitText(["rev-parse", "refs/heads/twin"], { cwd: dst }));
  });

  it("reads commits, trees, entries and blobs as git does", async () => {
    const repo = await open("1");
    const head = (await repo.resolve("main"))!.oid;
    const c = await repo.readCommit(head);
    expect(c.message).toBe("guide edit\n");
    expect(c.parents).toEqual(await lines(["rev-parse", "main^@"]));
    const root = await repo.listDir(head, "");
    const lsTree = await lines(["ls-tree", "main"]);
    expect(root!.map((e) => `${e.mode.padStart(6, "0")} ${e.type} ${e.oid}\t${e.name}`)).toEqual(lsTree);
    const guide = await repo.entryAt(head, "docs/deep/guide.md");
    expect(guide).toMatchObject({ path: "docs/deep/guide.md", name: "guide.md", type: "blob", mode: "100644" });
    expect(Buffer.from(await repo.readBlob(guide!.oid)).toString()).toBe("# guide\n\nmore\n");
    expect((await repo.entryAt(head, "run.sh"))!.mode).toBe("100755");
    expect(await repo.entryAt(head, "docs/missing")).toBeNull();
    expect(await repo.entryAt(head, "run.sh/x")).toBeNull();
    expect(await repo.listDir(head, "run.sh")).toBeNull();
    await expect(repo.entryAt(head, "../etc/passwd")).rejects.toThrow(GitError);
    const files: string[] = [];
    for await (const f of repo.files(c.tree)) files.push(f.path);
    expect(files.sort()).toEqual((await lines(["ls-tree", "-r", "--name-only", "main"])).sort());
  });

  it("walks history with path filters and pages exactly like git log", async () => {
    const repo = await open("1");
    const head = (await repo.resolve("main"))!.oid;
    for (const path of [undefined, "docs", "docs/deep/guide.md", "dir1", "run.sh", "dir0/sub0/file0.txt"]) {
      const want = await lines(["log", "--format=%H", "main", ...(path ? ["--", path] : [])]);
      const all = await repo.log({ from: head, path, limit: 1000 });
      expect(all.commits.map((x) => x.oid)).toEqual(want);
      expect(all.hasMore).toBe(false);
      expect(await repo.countCommits({ from: head, path })).toBe(want.length);
      const page = await repo.log({ from: head, path, skip: 2, limit: 3 });
      expect(page.commits.map((x) => x.oid)).toEqual(want.slice(2, 5));
      expect(page.hasMore).toBe(want.length > 5);
    }
  });

  it("a full commit count is kept per commit and path: counted again by another reader, it reads nothing", async () => {
    const head = (await (await open("1")).resolve("main"))!.oid;
    for (const path of [undefined, "dir1", "nowhere"]) {
      const want = (await lines(["log", "--format=%H", "main", ...(path ? ["--", path] : [])])).length;
      await (await open("1")).countCommits({ from: head, path });
      const again = await open("1");
      const before = again.reader.reads;
      expect(await again.countCommits({ from: head, path })).toBe(want);
      expect(again.reader.reads - before, path).toBe(0);
      // with a filter (not/since/until) it walks
      expect(await again.countCommits({ from: head, path, keep: () => true })).toBe(want);
    }
  });
});

describe("writing", () => {
  it("auto-inits an empty repository with one commit that git clones cleanly", async () => {
    srv.refs.create("2", "refs/heads/trunk");
    const out = await createCommit(
      { repoId: "2", objects: srv.objects, refs: srv.refs },
      {
        branch: "trunk",
        message: "Initial commit",
        author: ada,
        changes: [
          { op: "put", path: "README.md", content: "# demo\n\ndescription\n" },
          { op: "put", path: ".gitignore", content: "# ---> Node\nnode_modules/\n" },
          { op: "put", path: "LICENSE", content: "MIT License\n" },
        ],
      },
    );
    expect(out.parent).toBeNull();
    expect(srv.refs.stats("2").empty).toBe(false);
    expect(out.event.refs[0]).toMatchObject({ name: "refs/heads/trunk", kind: "create", totalCommits: 1 });
    const dir = s.path("autoinit");
    await s.git(["clone", `${srv.url}/2.git`, dir]);
    await s.git(["fsck", "--full"], { cwd: dir });
    expect(await s.gitText(["log", "--format=%H %an <%ae> %at %s"], { cwd: dir })).toBe(`${out.commit} Ada Lovelace <ada@example.com> 1700000000 Initial commit`);
    expect(await s.gitText(["symbolic-ref", "HEAD"], { cwd: dir })).toBe("refs/heads/trunk");
    expect(await s.gitText(["show", "HEAD:README.md"], { cwd: dir })).toBe("# demo\n\ndescription");
    expect(await lines(["ls-files"], dir)).toEqual([".gitignore", "LICENSE", "README.md"]);
  });

  it("creates, updates and deletes files with Gitea's sha checks; git agrees with every tree", async () => {
    srv.refs.create("3");
    const ctx = { repoId: "3", objects: srv.objects, refs: srv.refs };
    const c1 = await createCommit(ctx, { branch: "main", message: "add", author: ada, changes: [{ op: "put", path: "a/b/c.txt", content: "one\n", expect: "absent" }] });
    await expect(createCommit(ctx, { branch: "main", message: "again", author: ada, changes: [{ op: "put", path: "a/b/c.txt", content: "x", expect: "absent" }] })).rejects.toMatchObject({ code: "conflict" });
    const blob = c1.blobs.get("a/b/c.txt")!;
    await expect(createCommit(ctx, { branch: "main", message: "stale", author: ada, changes: [{ op: "put", path: "a/b/c.txt", content: "two\n", expect: "0".repeat(40) }] })).rejects.toMatchObject({ code: "conflict" });
    const c2 = await createCommit(ctx, { branch: "main", message: "update", author: ada, changes: [{ op: "put", path: "a/b/c.txt", content: "two\n", expect: blob }, { op: "put", path: "top.txt", content: "top\n", mode: "100755" }] });
    expect(c2.parent).toBe(c1.commit);
    await expect(createCommit(ctx, { branch: "main", message: "del", author: ada, changes: [{ op: "delete", path: "nope.txt" }] })).rejects.toMatchObject({ code: "not-found" });
    const c3 = await createCommit(ctx, { branch: "main", message: "delete", author: ada, changes: [{ op: "delete", path: "a/b/c.txt", expect: c2.blobs.get("a/b/c.txt")! }] });
    const c4 = await createCommit(ctx, { branch: "feature", startFrom: "main", message: "on a new branch", author: ada, changes: [{ op: "put", path: "f.txt", content: "f\n" }] });
    expect(c4.parent).toBe(c3.commit);
    await expect(createCommit(ctx, { branch: "feature", startFrom: "main", message: "x", author: ada, changes: [{ op: "put", path: "g", content: "" }] })).rejects.toMatchObject({ code: "conflict" });
    for (const bad of ["../x", "a/../../x", ".git/config", "a//b/"]) {
      await expect(createCommit(ctx, { branch: "main", message: "x", author: ada, changes: [{ op: "put", path: bad, content: "" }] })).rejects.toMatchObject({ code: "invalid" });
    }
    const dir = s.path("contents");
    await s.git(["clone", "-q", `${srv.url}/3.git`, dir]);
    await s.git(["fetch", "-q", "origin", "feature"], { cwd: dir });
    await s.git(["fsck", "--full"], { cwd: dir });
    expect(await lines(["log", "--format=%s", "origin/feature"], dir)).toEqual(["on a new branch", "delete", "update", "add"]);
    expect(await lines(["ls-tree", "-r", "--name-only", "HEAD"], dir)).toEqual(["top.txt"]); // a/b/ went away with its last file
    expect(await s.gitText(["ls-tree", `${c2.commit}`, "top.txt"], { cwd: dir })).toMatch(/^100755 blob /);
    expect(await s.gitText(["rev-parse", `${c3.commit}^{tree}`], { cwd: dir })).toBe(c3.tree);
  });

  it("copies a template's tree as one new commit (same tree id) without copying its history", async () => {
    const tpl = await open("1");
    const head = (await tpl.resolve("main"))!.oid;
    const tree = (await tpl.readCommit(head)).tree;
    const changes = [];
    for await (const f of tpl.files(tree)) changes.push({ op: "copy" as const, path: f.path, from: tpl, oid: f.oid, mode: f.mode });
    srv.refs.create("4");
    const out = await createCommit({ repoId: "4", objects: srv.objects, refs: srv.refs }, { branch: "main", message: "Initial commit", author: ada, changes });
    expect(out.tree).toBe(tree);
    const dir = s.path("generated");
    await s.git(["clone", "-q", `${srv.url}/4.git`, dir]);
    await s.git(["fsck", "--full"], { cwd: dir });
    expect(await s.gitText(["rev-list", "--count", "HEAD"], { cwd: dir })).toBe("1");
    expect(await s.gitText(["rev-parse", "HEAD^{tree}"], { cwd: dir })).toBe(await s.gitText(["rev-parse", "main^{tree}"], { cwd: src }));
  });

  it("lets one of two concurrent API commits on a branch win; the other is a conflict and stores nothing", async () => {
    srv.refs.create("5");
    const ctx = { repoId: "5", objects: srv.objects, refs: srv.refs };
    await createCommit(ctx, { branch: "main", message: "base", author: ada, changes: [{ op: "put", path: "x", content: "0" }] });
    const state = await srv.refs.read("5");
    const filesBefore = (await srv.objects.list("5")).length;
    const results = await Promise.allSettled([1, 2].map((i) => createCommit({ ...ctx, state }, { branch: "main", message: `w${i}`, author: ada, changes: [{ op: "put", path: "x", content: String(i) }] })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason).toMatchObject({ code: "conflict" });
    expect((await srv.objects.list("5")).length).toBe(filesBefore + 3); // the winner's pack, rev and idx only
  });
});
