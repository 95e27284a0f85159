/**
 * A commit's line stats against git's own `git diff --shortstat` (Gitea's commit stats: the first
 * parent, git's default rename detection `-M`): pure renames, renames with small and big edits,
 * identical files, binaries, moves across directories, competing candidates, merges, and random
 * renames; the file list stays without renames (`--no-renames`).
 */
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeStats, commitChanges, lineStats } from "../../functions/git/repo/diff.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("diff-stats-");
let srv: GitServer;
let src: string;
/** Commit ids by scenario name. */
const commits = new Map<string, string>();

const g = (args: string[]) => s.git(args, { cwd: src });
const put = (path: string, body: string | Uint8Array) => {
  mkdirSync(dirname(`${src}/${path}`), { recursive: true });
  writeFileSync(`${src}/${path}`, body);
};
const rm = (path: string) => rmSync(`${src}/${path}`);
const numbered = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} line ${i} of the file\n`).join("");
async function commit(name: string) {
  await g(["add", "-A"]);
  await g(["commit", "-q", "--allow-empty", "-m", name]);
  commits.set(name, await s.gitText(["rev-parse", "HEAD"], { cwd: src }));
}

/** A small deterministic generator, so the random scenario is the same on every run. */
function rng(seed: number) {
  let x = seed;
  return () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 2 ** 32;
  };
}

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  src = s.path("src");
  await s.git(["init", "-q", src]);
  put("a.txt", numbered("a", 20));
  put("edit.txt", numbered("edit", 20));
  put("big.txt", numbered("big", 20));
  put("twin1.txt", numbered("twin", 10));
  put("twin2.txt", numbered("twin", 10));
  put("bin.dat", new Uint8Array(Array.from({ length: 300 }, (_, i) => i % 7)));
  put("dir/moved.txt", numbered("moved", 30));
  put("dir/nested/keep.txt", numbered("keep", 5));
  put("crlf.txt", numbered("crlf", 12).replaceAll("\n", "\r\n"));
  put("empty.txt", "");
  put("tool.sh", numbered("tool", 8));
  put("p.txt", `${numbered("p", 10)}${numbered("q", 10)}`);
  put("q.txt", `${numbered("q", 10)}${numbered("r", 10)}`);
  put("lines.txt", `${"x".repeat(200)}\n${"y".repeat(150)}`);
  symlinkSync("a.txt", `${src}/link`);
  await commit("base");

  await g(["mv", "a.txt", "b.txt"]);
  await commit("pure rename");

  rm("edit.txt");
  put("edited.txt", numbered("edit", 20).replace("edit line 7 of the file", "edit line seven"));
  await commit("rename with a small edit");

  rm("big.txt");
  put("bigger.txt", numbered("big", 20).split("\n").map((l, i) => (i % 5 === 0 ? l : `${l} changed`)).join("\n"));
  await commit("rename with a big edit");

  await g(["mv", "twin1.txt", "twin-a.txt"]);
  await g(["mv", "twin2.txt", "twin-b.txt"]);
  await commit("identical files renamed");

  rm("bin.dat");
  put("bin2.dat", new Uint8Array(Array.from({ length: 300 }, (_, i) => (i === 100 ? 9 : i % 7))));
  await commit("binary rename with an edit");

  await g(["mv", "bin2.dat", "bin3.dat"]);
  await commit("binary rename");

  rm("dir/moved.txt");
  put("elsewhere/deep/moved.txt", numbered("moved", 30).replace("moved line 3", "MOVED line 3"));
  await commit("rename into another directory");

  await g(["mv", "crlf.txt", "crlf2.txt"]);
  put("crlf2.txt", numbered("crlf", 12));
  await commit("rename dropping CRs");

  await g(["mv", "empty.txt", "empty2.txt"]);
  await g(["mv", "link", "link2"]);
  await g(["mv", "tool.sh", "tool2.sh"]);
  chmodSync(`${src}/tool2.sh`, 0o755);
  await commit("empty file, symlink and mode-changing renames");

  // p and q share half their lines; the new files take after both
  rm("p.txt");
  rm("q.txt");
  put("n1.txt", `${numbered("p", 10)}${numbered("q", 8)}`);
  put("n2.txt", `${numbered("q", 10)}${numbered("r", 9)}`);
  put("lines2.txt", `${"x".repeat(200)}\n${"y".repeat(149)}z`);
  rm("lines.txt");
  await commit("competing candidates and long lines");

  // one removed file, two added copies: one of them is the rename
  put("copy-base.txt", numbered("copy", 10));
  await commit("copy base");
  rm("copy-base.txt");
  put("copy1.txt", numbered("copy", 10));
  put("copy2.txt", numbered("copy", 10));
  await commit("one source, two identical destinations");

  // a merge: the side branch renames, the first parent edits; stats are against the first parent
  await g(["checkout", "-q", "-b", "side"]);
  await g(["mv", "b.txt", "side.txt"]);
  put("side.txt", numbered("a", 20).replace("a line 1 ", "a line ONE "));
  await commit("side rename");
  await g(["checkout", "-q", "main"]);
  put("edited.txt", `${numbered("edit", 20)}more\n`);
  await commit("main edit");
  await g(["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
  commits.set("merge", await s.gitText(["rev-parse", "HEAD"], { cwd: src }));

  // lines the line diff must tell apart or pair: equal FNV-1a hashes (costarring/liquid,
  // declinate/macallums, altarage/zinke), repeated lines, a last line without a newline
  put("collide.txt", "costarring\nliquid\ndeclinate\naltarage\nsame\nsame\nsame\nend");
  await commit("colliding lines base");
  put("collide.txt", "liquid\nmacallums\ncostarring\nzinke\nsame\nother\nsame\nend\n");
  await commit("colliding lines edited");

  // random files renamed with random edits, some past the 50% threshold
  const r = rng(7);
  const word = () => Math.floor(r() * 1e6).toString(36);
  const bodies: string[] = [];
  for (let i = 0; i < 24; i++) {
    const lines = Array.from({ length: 5 + Math.floor(r() * 40) }, () => Array.from({ length: 1 + Math.floor(r() * 12) }, word).join(" "));
    bodies.push(`${lines.join("\n")}\n`);
    put(`rand/f${i}.txt`, bodies[i]!);
  }
  await commit("random base");
  for (let i = 0; i < 24; i++) {
    rm(`rand/f${i}.txt`);
    const p = r();
    // some take after another file, so sources compete for destinations
    const body = r() < 0.3 ? `${bodies[Math.floor(r() * 24)]}${r() < 0.5 ? bodies[i] : ""}` : bodies[i]!;
    const lines = body.split("\n").map((l) => (r() < p ? `${l} ${word()}` : l));
    if (r() < 0.3) lines.splice(Math.floor(r() * lines.length), 0, word());
    put(`${r() < 0.5 ? "rand" : "moved"}/g${Math.floor(r() * 1000)}-${i}.txt`, lines.join("\n"));
  }
  await commit("random renames");

  srv.refs.create("1");
  await s.git(["push", `${srv.url}/1.git`, "main"], { cwd: src });
}, 120_000);
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

/** git's own numbers: `git diff --shortstat -M <first parent> <commit>`. */
async function gitShortstat(sha: string) {
  const out = await s.gitText(["diff", "--shortstat", "-M", `${sha}^1`, sha], { cwd: src });
  return { additions: Number(/(\d+) insertion/.exec(out)?.[1] ?? 0), deletions: Number(/(\d+) deletion/.exec(out)?.[1] ?? 0) };
}

describe("commit stats", () => {
  it("stats rule: line counts are git diff --shortstat -M against the first parent (renames count only their edits)", async () => {
    const repo = await Repository.open({ repoId: "1", objects: srv.objects, refs: srv.refs });
    for (const [name, sha] of commits) {
      if (name === "base") continue;
      const got = await changeStats(repo, await commitChanges(repo, sha));
      expect(got, name).toEqual(await gitShortstat(sha));
    }
    // the cases the rule is about, by number: a pure rename counts nothing
    expect(await gitShortstat(commits.get("pure rename")!)).toEqual({ additions: 0, deletions: 0 });
  });

  it("a blob larger than the reader builds whole (48 MiB on the Worker) counts as binary, as git's diff counts a file over core.bigFileThreshold", async () => {
    // above every tree and commit of the history, below its largest blobs
    const sizes = (await s.gitText(["cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectsize)"], { cwd: src })).split("\n").map((l) => l.split(" "));
    const limit = Math.max(...sizes.filter(([t]) => t !== "blob").map(([, n]) => Number(n)));
    expect(sizes.filter(([t, n]) => t === "blob" && Number(n) > limit).length).toBeGreaterThan(0);
    const repo = await Repository.open({ repoId: "1", objects: srv.objects, refs: srv.refs, reader: { maxObjectBytes: limit } });
    let differs = 0;
    for (const [name, sha] of commits) {
      if (name === "base") continue;
      // renames aside (git still scores a big file's similarity; here it is scored as sharing nothing)
      const renames = await s.gitText(["diff", "--name-status", "-M", `${sha}^1`, sha], { cwd: src });
      if (/^R/m.test(renames)) continue;
      const out = await s.gitText(["-c", `core.bigFileThreshold=${limit}`, "diff", "--shortstat", "-M", `${sha}^1`, sha], { cwd: src });
      const want = { additions: Number(/(\d+) insertion/.exec(out)?.[1] ?? 0), deletions: Number(/(\d+) deletion/.exec(out)?.[1] ?? 0) };
      const got = await changeStats(repo, await commitChanges(repo, sha));
      expect(got, name).toEqual(want);
      if (JSON.stringify(want) !== JSON.stringify(await gitShortstat(sha))) differs++;
    }
    expect(differs).toBeGreaterThan(0); // the limit changed some commit's stats
  });

  it("stats rule: the file list stays without rename detection (git log --name-status --no-renames)", async () => {
    const repo = await Repository.open({ repoId: "1", objects: srv.objects, refs: srv.refs });
    const changes = await commitChanges(repo, commits.get("pure rename")!);
    expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(["removed a.txt", "added b.txt"]);
  });

  it("the line diff's work grows with the edits, never with the square of a file's length: a file added or removed whole, or rewritten, is one pass", () => {
    const enc = (t: string) => new TextEncoder().encode(t);
    const big = enc(numbered("big", 20_000));
    const other = enc(numbered("other", 20_000));
    const edited = enc(numbered("big", 20_000).replace("big line 10000 of the file", "an edited line"));
    const cases: [string, Uint8Array, Uint8Array, { additions: number; deletions: number }][] = [
      ["added whole", new Uint8Array(0), big, { additions: 20_000, deletions: 0 }],
      ["removed whole", big, new Uint8Array(0), { additions: 0, deletions: 20_000 }],
      ["rewritten", big, other, { additions: 20_000, deletions: 20_000 }],
      ["one line edited", big, edited, { additions: 1, deletions: 1 }],
    ];
    for (const [what, a, b, want] of cases) {
      const meter = { steps: 0 };
      expect(lineStats(a, b, meter), what).toEqual(want);
      expect(meter.steps, what).toBeLessThanOrEqual(10);
    }
  });

  it("lines with equal hashes are told apart byte for byte; equal lines pair whatever their number", () => {
    const enc = (t: string) => new TextEncoder().encode(t);
    // FNV-1a 32 collisions: the same hash, different bytes
    expect(lineStats(enc("costarring\n"), enc("liquid\n"))).toEqual({ additions: 1, deletions: 1 });
    expect(lineStats(enc("a\ncostarring\nb\n"), enc("a\nliquid\nb\n"))).toEqual({ additions: 1, deletions: 1 });
    expect(lineStats(enc("costarring\nliquid\nx\n"), enc("liquid\ncostarring\ny\n"))).toEqual({ additions: 2, deletions: 2 });
    expect(lineStats(enc("declinate\nx\nzinke\n"), enc("macallums\nx\naltarage\n"))).toEqual({ additions: 2, deletions: 2 });
    // a last line with and without its newline differ; CR is part of the line
    expect(lineStats(enc("a\nb"), enc("a\nb\n"))).toEqual({ additions: 1, deletions: 1 });
    expect(lineStats(enc("a\r\nb\n"), enc("a\nb\n"))).toEqual({ additions: 1, deletions: 1 });
    expect(lineStats(enc("same\nsame\nsame\n"), enc("same\nx\nsame\n"))).toEqual({ additions: 1, deletions: 1 });
    expect(lineStats(enc(""), enc("a\nb"))).toEqual({ additions: 2, deletions: 0 });
    expect(lineStats(enc("a\n\n\n"), enc(""))).toEqual({ additions: 0, deletions: 3 });
  });

  it("a reordered file is counted as git counts it: exact within the search's bound, and past it a valid diff (every line a change, never a line counted twice), never 0/0", () => {
    const enc = (t: string) => new TextEncoder().encode(t);
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `row ${i}\n`);
    const four = lines(4_000);
    // git diff --numstat of a reversed 4,000-line file: 3999 3999 (one line stays common)
    expect(lineStats(enc(four.join("")), enc([...four].reverse().join("")))).toEqual({ additions: 3_999, deletions: 3_999 });
    // 30,000 lines reversed: past MAX_COST; what stays common is at most the one line
    const big = lines(30_000);
    const meter = { steps: 0 };
    const got = lineStats(enc(big.join("")), enc([...big].reverse().join("")), meter)!;
    expect(got.additions).toBe(got.deletions);
    expect(got.additions).toBeGreaterThanOrEqual(29_999);
    expect(got.additions).toBeLessThanOrEqual(30_000);
  });
});
