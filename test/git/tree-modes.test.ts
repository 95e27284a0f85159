/**
 * Tree modes as git reads them (tree-walk.c get_mode + canon_mode): octal, leading zeros allowed —
 * `040000` is a directory and `0100644` a file (git's fsck only warns, zeroPaddedFilemode; old
 * repositories have them). History holding them is pushed with the real git CLI, cloned back
 * (before and after a deletion marks the repository unreachable, when clones walk the trees), read
 * as trees, files and archives; a mode that is not octal is refused cleanly, as git refuses it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZERO_OID } from "../../functions/git/bytes.ts";
import { GitError } from "../../functions/git/errors.ts";
import { forEachTreeEntry, MODE, parseTree, typeOfMode } from "../../functions/git/objects/tree.ts";
import { FLUSH, pkt } from "../../functions/git/pkt-line.ts";
import { tarArchive } from "../../functions/git/repo/archive.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("tree-modes-");
let srv: GitServer;
let src: string;
let tip: string;

/** A tree's bytes from [mode, name, id] entries written as given (no git rule applied). */
const treeBytes = (entries: [string, string, string][]) => Buffer.concat(entries.map(([m, n, id]) => Buffer.concat([Buffer.from(`${m} ${n}\0`, "latin1"), Buffer.from(id, "hex")])));
const hashLiterally = async (type: string, data: Buffer | string) => (await s.git(["hash-object", "-t", type, "-w", "--literally", "--stdin"], { cwd: src, input: data })).stdout.toString().trim();
const bytesOf = async (stream: ReadableStream<Uint8Array>) => Buffer.from(await new Response(stream).arrayBuffer());
/** git fsck's findings, less what depends on which refs the repository has (dangling objects). */
const fsck = async (dir: string) => {
  const r = await s.git(["fsck", "--no-dangling", "--no-progress"], { cwd: dir }).catch((e: { stderr: string; stdout: Buffer }) => ({ stderr: e.stderr, stdout: e.stdout }));
  return `${r.stdout.toString()}${r.stderr}`.split("\n").filter(Boolean).sort();
};

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  src = s.path("src");
  await s.git(["init", "-q", "-b", "main", src]);
  const inner = await hashLiterally("blob", "only reachable through a zero-padded directory\n");
  const padded = await hashLiterally("blob", "a zero-padded file mode\n");
  const top = await hashLiterally("blob", "top\n");
  const sub = await hashLiterally("tree", treeBytes([["100644", "inner.txt", inner], ["0100644", "padded.txt", padded]]));
  const root = await hashLiterally("tree", treeBytes([["040000", "sub", sub], ["100644", "top.txt", top]]));
  const first = await s.gitText(["commit-tree", root, "-m", "zero-padded modes"], { cwd: src });
  // a second commit: a new file at the top, and one in the padded directory (so what the push
  // changed is read through both commits' padded trees)
  const more = await hashLiterally("blob", "more\n");
  const sub2 = await hashLiterally("tree", treeBytes([["100644", "inner.txt", inner], ["0100644", "more.txt", more], ["0100644", "padded.txt", padded]]));
  const root2 = await hashLiterally("tree", treeBytes([["100644", "more.txt", more], ["040000", "sub", sub2], ["100644", "top.txt", top]]));
  tip = (await s.git(["commit-tree", root2, "-p", first, "-m", "more"], { cwd: src })).stdout.toString().trim();
  await s.git(["update-ref", "refs/heads/main", tip], { cwd: src });
  await s.git(["update-ref", "refs/heads/tmp", first], { cwd: src });
  srv.refs.create("zp");
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

describe("tree modes", () => {
  it("mode rule: modes are read as octal numbers and canonicalised as git's canon_mode (040000 a tree, 0100644 a file, 100664 → 100644, 0160000 a submodule, a mode of no file type a submodule)", () => {
    const id = "a".repeat(40);
    const cases: [string, string][] = [
      ["40000", MODE.tree],
      ["040000", MODE.tree],
      ["0100644", MODE.file],
      ["100664", MODE.file],
      ["0100755", MODE.executable],
      ["0120000", MODE.symlink],
      ["0160000", MODE.gitlink],
      ["644", MODE.gitlink],
      ["1000000040000", MODE.tree], // git's unsigned int wraps
    ];
    for (const [raw, want] of cases) {
      expect(parseTree(treeBytes([[raw, "x", id]]))[0]!.mode, raw).toBe(want);
      const seen: string[] = [];
      forEachTreeEntry(treeBytes([[raw, "x", id]]), (m) => seen.push(m));
      expect(seen, raw).toEqual([want]);
    }
    expect(typeOfMode("040000")).toBe("tree");
    expect(typeOfMode("0160000")).toBe("commit");
    expect(typeOfMode("0100644")).toBe("blob");
    for (const bad of ["10064x", "8", "", "-1"]) {
      const data = treeBytes([[bad, "x", id]]);
      expect(() => parseTree(data), bad).toThrow(GitError);
      expect(() => parseTree(data), bad).toThrow("malformed mode in tree entry");
      expect(() => forEachTreeEntry(data, () => {}), bad).toThrow("malformed mode in tree entry");
    }
    expect(() => parseTree(treeBytes([["100644", "", id]]))).toThrow("empty filename in tree entry");
  });

  it("push rule: history with 040000 and 0100644 entries is accepted; a clone has every object and git fsck finds what it finds in the source", async () => {
    // the first commit, then the second on top of it: the push event diffs the padded trees
    await s.git(["push", "-q", `${srv.url}/zp.git`, "tmp:refs/heads/main", "tmp"], { cwd: src });
    await s.git(["push", "-q", `${srv.url}/zp.git`, "main"], { cwd: src });
    expect((await srv.refs.read("zp")).refs.map((r) => r.name).sort()).toEqual(["refs/heads/main", "refs/heads/tmp"]);
    const clone = s.path("clone1");
    await s.git(["clone", "-q", `${srv.url}/zp.git`, clone]);
    expect(await s.gitText(["rev-parse", "HEAD"], { cwd: clone })).toBe(tip);
    expect(await fsck(clone)).toEqual(await fsck(src));
    expect(await fsck(clone)).toEqual(expect.arrayContaining([expect.stringContaining("zeroPaddedFilemode")]));
  });

  it("read rule: a 040000 entry is a tree (trees, contents, archives see its files); a 0100644 entry a file", async () => {
    const repo = await Repository.open({ repoId: "zp", objects: srv.objects, refs: srv.refs });
    const sub = await repo.entryAt(tip, "sub");
    expect(sub).toMatchObject({ type: "tree", mode: MODE.tree });
    const dir = await repo.listDir(tip, "sub");
    expect(dir?.map((e) => [e.name, e.type, e.mode])).toEqual([
      ["inner.txt", "blob", "100644"],
      ["more.txt", "blob", "100644"],
      ["padded.txt", "blob", "100644"],
    ]);
    const file = await repo.entryAt(tip, "sub/padded.txt");
    expect(Buffer.from(await repo.readBlob(file!.oid)).toString()).toBe("a zero-padded file mode\n");
    const files = [];
    for await (const f of repo.files((await repo.commits.get(tip)).tree)) files.push(f.path);
    expect(files).toEqual(["more.txt", "sub/inner.txt", "sub/more.txt", "sub/padded.txt", "top.txt"]);
    const want = (await s.git(["archive", "--format=tar", "--prefix=zp/", tip], { cwd: src })).stdout;
    expect((await bytesOf(tarArchive(repo, tip, "zp/"))).equals(want)).toBe(true);
  });

  it("unreachable rule: after a branch is deleted (clones then walk the trees) a clone still has every object", async () => {
    await s.git(["push", "-q", `${srv.url}/zp.git`, ":tmp"], { cwd: src });
    expect((await srv.refs.read("zp")).unreachable).toBe(true);
    const clone = s.path("clone2");
    await s.git(["clone", "-q", `${srv.url}/zp.git`, clone]);
    expect(await s.gitText(["rev-parse", "HEAD"], { cwd: clone })).toBe(tip);
    expect(await s.gitText(["cat-file", "-p", "HEAD:sub/inner.txt"], { cwd: clone })).toBe("only reachable through a zero-padded directory");
    expect(await fsck(clone)).toEqual(await fsck(src));
  });

  it("malformed rule: a tree whose mode is not octal (10064x, 8) is refused as git refuses it — `unpack ok`, the ref `ng … missing necessary objects` — never a 500", async () => {
    const blob = await hashLiterally("blob", "x\n");
    for (const bad of ["10064x", "8"]) {
      const tree = await hashLiterally("tree", treeBytes([[bad, "f", blob]]));
      const commit = await s.gitText(["commit-tree", tree, "-m", `mode ${bad}`], { cwd: src });
      // pack-objects given ids (not --revs) packs the tree without reading it
      const pack = (await s.git(["pack-objects", "--stdout", "-q"], { cwd: src, input: `${blob}\n${tree}\n${commit}\n` })).stdout;
      const ref = `refs/heads/bad${bad}`;
      const body = Buffer.concat([pkt(Buffer.from(`${ZERO_OID} ${commit} ${ref}\0report-status\n`)), FLUSH, pack]);
      const res = await fetch(`${srv.url}/zp.git/git-receive-pack`, { method: "POST", body, headers: { "content-type": "application/x-git-receive-pack-request" } });
      expect(res.status, bad).toBe(200);
      const report = Buffer.from(await res.arrayBuffer()).toString("latin1");
      // git 2.39's receive-pack (receive.fsckObjects off): the pack unpacks, the connectivity walk
      // dies on "malformed mode in tree entry", the ref is refused
      expect(report, bad).toContain(`ng ${ref} `);
      expect((await srv.refs.read("zp")).refs.map((r) => r.name), bad).not.toContain(ref);
      expect(report, bad).toContain("unpack ok");
      expect(report, bad).toContain(`ng ${ref} missing necessary objects`);
    }
  });
});

describe("tree order (git fsck's errors)", () => {
  it("a push bringing a tree out of git's order or with a name twice is refused whole, as git fsck flags it (treeNotSorted, duplicateEntries); git's own order is taken", async () => {
    const blob = await hashLiterally("blob", "x\n");
    const dir = await hashLiterally("tree", treeBytes([["100644", "in", blob]]));
    const cases: { name: string; entries: [string, string, string][]; fsck: string | null }[] = [
      { name: "unsorted", entries: [["100644", "b", blob], ["100644", "a", blob]], fsck: "treeNotSorted" },
      { name: "a name twice", entries: [["100644", "a", blob], ["100644", "a", blob]], fsck: "duplicateEntries" },
      { name: "a file and a directory of one name", entries: [["100644", "a", blob], ["40000", "a", dir]], fsck: "duplicateEntries" },
      { name: "a file and a directory of one name, apart", entries: [["100644", "foo", blob], ["100644", "foo.bar", blob], ["40000", "foo", dir]], fsck: "duplicateEntries" },
      { name: "a directory sorts as if it ended in /", entries: [["40000", "foo", dir], ["100644", "foo.bar", blob]], fsck: "treeNotSorted" },
      { name: "git's order", entries: [["100644", "foo", blob], ["100644", "foo.bar", blob], ["40000", "foo0", dir], ["40000", "fop", dir]], fsck: null },
      { name: "git's order, a directory before a longer file", entries: [["100644", "foo.bar", blob], ["40000", "foo", dir], ["100644", "foo0", blob]], fsck: null },
    ];
    let n = 0;
    for (const c of cases) {
      const tree = await hashLiterally("tree", treeBytes(c.entries));
      const commit = await s.gitText(["commit-tree", tree, "-m", c.name], { cwd: src });
      const repoId = `order${n++}`;
      srv.refs.create(repoId);
      // git's own verdict on the tree, in a repository of its own (fsck reads every stored object)
      const alone = s.path(`order-fsck-${n}`);
      await s.git(["init", "-q", "--bare", alone]);
      await s.git(["push", "-q", alone, `${commit}:refs/heads/main`], { cwd: src });
      const fsckOut = (await s.git(["fsck", "--no-dangling", "--no-progress"], { cwd: alone }).catch((e: { stderr: string }) => ({ stderr: e.stderr }))).stderr.toString();
      if (c.fsck) expect(fsckOut, c.name).toContain(c.fsck);
      else expect(fsckOut, `${c.name}: ${fsckOut}`).not.toMatch(/treeNotSorted|duplicateEntries/);
      const pushed = await s.git(["push", "-q", `${srv.url}/${repoId}.git`, `${commit}:refs/heads/main`], { cwd: src }).then(() => "ok", (e: { stderr: string }) => String(e.stderr));
      if (c.fsck) {
        expect(pushed, c.name).toContain(`git fsck: ${c.fsck}`);
        expect((await srv.refs.read(repoId)).refs, c.name).toEqual([]);
      } else expect(pushed, c.name).toBe("ok");
    }
  });
});

