/**
 * The smart HTTP engine with the real git CLI as client and oracle, over protocol v2 and v0:
 * clone (empty, shallow), push of branches and tags, fetch of only what is new, deepen, force-push,
 * delete, a push of thousands of delta-compressed commits, concurrent pushes, bad input. Every
 * clone passes `git fsck --full`, and what is cloned equals what was pushed byte for byte.
 */
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZERO_OID } from "../../functions/git/bytes.ts";
import { FLUSH, pkt } from "../../functions/git/pkt-line.ts";
import { commitBarrier, fastImportStream, makeHistory, Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("smart-http-");
let srv: GitServer;
let nextRepo = 100;

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

/** A fresh repository id on the server (HEAD → refs/heads/main). */
function newRepo(): { id: string; url: string } {
  const id = String(nextRepo++);
  srv.refs.create(id);
  return { id, url: `${srv.url}/${id}.git` };
}

/** `git fsck --full` must pass without a single error line. */
async function fsck(dir: string): Promise<void> {
  const r = await s.git(["fsck", "--full", "--no-dangling"], { cwd: dir });
  expect(r.stderr).not.toMatch(/error|missing|broken|bad/i);
}

/** Every object reachable from `revs`, with type and content (git cat-file --batch, sorted by id). */
async function objectDump(dir: string, revs: string[] = ["--all"]): Promise<Buffer> {
  const list = (await s.gitText(["rev-list", "--objects", ...revs], { cwd: dir }))
    .split("\n")
    .filter(Boolean)
    .map((l) => l.slice(0, 40));
  const ids = [...new Set(list)].sort();
  return (await s.git(["cat-file", "--batch"], { cwd: dir, input: `${ids.join("\n")}\n` })).stdout;
}

/** `<oid> <ref>` of branches and tags. */
const refsOf = async (dir: string, pattern = "refs/heads refs/tags"): Promise<string> =>
  s.gitText(["for-each-ref", "--format=%(objectname) %(refname)", ...pattern.split(" ")], { cwd: dir });

const remoteRefsOf = async (dir: string): Promise<string> =>
  s.gitText(["for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes/origin"], { cwd: dir }).then((t) =>
    t
      .split("\n")
      .filter((l) => l && !l.endsWith("/HEAD"))
      .map((l) => l.replace("refs/remotes/origin/", "refs/heads/"))
      .join("\n"),
  );

const PROTOCOLS = [
  ["v2", ["-c", "protocol.version=2"]],
  ["v1", ["-c", "protocol.version=1"]],
  ["v0", ["-c", "protocol.version=0"]],
] as const;

describe.each(PROTOCOLS)("protocol %s", (_name, proto) => {
  it("clones an empty repository (HEAD's unborn branch known)", async () => {
    const { url } = newRepo();
    const dir = s.path(`empty-${_name}`);
    const r = await s.git([...proto, "clone", url, dir]);
    expect(r.stderr).toMatch(/cloned an empty repository/);
    expect(await s.gitText(["rev-parse", "--git-dir"], { cwd: dir })).toBe(".git");
    if (_name === "v2") expect(await s.gitText(["symbolic-ref", "HEAD"], { cwd: dir })).toBe("refs/heads/main"); // ls-refs unborn
  });

  it("pushes branches and tags, clones them byte for byte, then fetches only what is new", async () => {
    const { id, url } = newRepo();
    const src = s.path(`src-${_name}`);
    await makeHistory(s, src, { commits: 120, files: 40 });
    await s.git(["branch", "feature", "main~30"], { cwd: src });
    await s.git(["branch", "ünïcödé/β", "main~40"], { cwd: src });
    await s.git(["tag", "light", "main~10"], { cwd: src });
    await s.git(["tag", "-a", "v1.0", "-m", "release 1.0", "main~5"], { cwd: src });
    await s.git([...proto, "push", url, "main", "feature", "ünïcödé/β", "light", "v1.0"], { cwd: src });
    expect(srv.refs.stats(id).empty).toBe(false);
    const push = srv.pushes.at(-1)!;
    expect(push.commands.every((c) => !c.error)).toBe(true);
    expect(push.event!.refs.map((r) => [r.name, r.kind])).toEqual([
      ["refs/heads/main", "create"],
      ["refs/heads/feature", "create"],
      ["refs/heads/ünïcödé/β", "create"],
      ["refs/tags/light", "create"],
      ["refs/tags/v1.0", "create"],
    ]);
    expect(push.event!.refs[0]!.totalCommits).toBe(120);
    expect(push.event!.refs[0]!.commits[0]!.message).toBe("commit 120\n\nbody of commit 120\n");
    expect(push.refStoreCalls).toBe(2);

    const ls = await s.gitText([...proto, "ls-remote", url], { cwd: src });
    const local = await s.gitText(["show-ref", "--head", "-d"], { cwd: src });
    const norm = (t: string) => t.split("\n").map((l) => l.replace(/\s+/, " ")).sort().join("\n");
    expect(norm(ls)).toBe(norm(local.replace(/^(\w+) HEAD$/m, "$1 HEAD")));

    const dst = s.path(`dst-${_name}`);
    await s.git([...proto, "clone", "--mirror", url, dst]);
    await fsck(dst);
    expect(await refsOf(dst)).toBe(await refsOf(src));
    expect((await objectDump(dst)).equals(await objectDump(src))).toBe(true);

    // a working clone, then three new commits on main: the fetch carries exactly the new objects
    const work = s.path(`work-${_name}`);
    await s.git([...proto, "clone", url, work]);
    expect(await s.gitText(["rev-parse", "HEAD"], { cwd: work })).toBe(await s.gitText(["rev-parse", "main"], { cwd: src }));
    const before = await s.gitText(["rev-parse", "main"], { cwd: src });
    await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportStream({ commits: 3, from: before, startMark: 500, seed: 9, time: 1800000000 }) });
    await s.git([...proto, "push", url, "main"], { cwd: src });
    const expected = (await s.gitText(["rev-list", "--objects", "main", `^${before}`], { cwd: src })).split("\n").length;
    await s.git(["config", "fetch.unpackLimit", "1"], { cwd: work });
    const packsBefore = new Set(readdirSync(`${work}/.git/objects/pack`));
    await s.git([...proto, "fetch", "origin"], { cwd: work });
    const newPack = readdirSync(`${work}/.git/objects/pack`).find((f) => f.endsWith(".idx") && !packsBefore.has(f))!;
    const verify = await s.gitText(["verify-pack", "-v", `.git/objects/pack/${newPack}`], { cwd: work });
    const received = verify.split("\n").filter((l) => /^[0-9a-f]{40} (commit|tree|blob|tag) /.test(l)).length;
    expect(received).toBe(expected);
    await fsck(work);
    expect(await remoteRefsOf(work)).toBe(await refsOf(src, "refs/heads"));
    const push2 = srv.pushes.at(-1)!;
    expect(push2.event!.refs[0]).toMatchObject({ name: "refs/heads/main", kind: "update", old: before, totalCommits: 3, forced: false });
  });

  it("serves a shallow clone, deepens it (absolute and relative) and unshallows it", async () => {
    const { url } = newRepo();
    const src = s.path(`shallow-src-${_name}`);
    await makeHistory(s, src, { commits: 40, files: 20 });
    await s.git(["push", url, "main"], { cwd: src });
    const dir = s.path(`shallow-${_name}`);
    await s.git([...proto, "clone", "--depth", "1", url, dir]);
    expect(await s.gitText(["rev-list", "--count", "HEAD"], { cwd: dir })).toBe("1");
    expect(await s.gitText(["rev-parse", "--is-shallow-repository"], { cwd: dir })).toBe("true");
    await fsck(dir);
    // files of the tip are all there, byte for byte
    expect((await objectDump(dir, ["HEAD^{tree}"])).equals(await objectDump(src, ["main^{tree}"]))).toBe(true);
    await s.git([...proto, "fetch", "--depth", "5", "origin"], { cwd: dir });
    expect(await s.gitText(["rev-list", "--count", "origin/main"], { cwd: dir })).toBe("5");
    await fsck(dir);
    await s.git([...proto, "fetch", "--deepen", "3", "origin"], { cwd: dir });
    expect(await s.gitText(["rev-list", "--count", "origin/main"], { cwd: dir })).toBe("8");
    await s.git([...proto, "fetch", "--unshallow", "origin"], { cwd: dir });
    expect(await s.gitText(["rev-list", "--count", "origin/main"], { cwd: dir })).toBe("40");
    expect(await s.gitText(["rev-parse", "--is-shallow-repository"], { cwd: dir })).toBe("false");
    await fsck(dir);
    expect((await objectDump(dir, ["origin/main"])).equals(await objectDump(src, ["main"]))).toBe(true);
  });

  it("deepen-relative rule: --deepen deepens every shallow commit a ref reaches, whichever branch is fetched, as git's own upload-pack", async () => {
    const { url } = newRepo();
    const src = s.path(`relative-src-${_name}`);
    await makeHistory(s, src, { commits: 10, files: 3 });
    await s.git(["checkout", "-q", "-b", "side", "main~5"], { cwd: src });
    for (let i = 0; i < 3; i++) await s.git(["commit", "-q", "--allow-empty", "-m", `side ${i}`], { cwd: src });
    await s.git(["checkout", "-q", "main"], { cwd: src });
    await s.git(["push", "-q", url, "main", "side"], { cwd: src });
    const state = async (dir: string) => ({
      commits: (await s.gitText(["rev-list", "--all"], { cwd: dir })).split("\n").sort(),
      shallow: readFileSync(`${dir}/${await s.gitText(["rev-parse", "--git-path", "shallow"], { cwd: dir })}`, "utf8").trim().split("\n").sort(),
    });
    const ours = s.path(`relative-${_name}`);
    const git = s.path(`relative-oracle-${_name}`);
    for (const [dir, from] of [[ours, url], [git, `file://${src}`]] as const) {
      await s.git([...proto, "clone", "-q", "--depth=2", "--no-single-branch", from, dir]);
      await s.git([...proto, "fetch", "-q", "--deepen=2", "origin", "side"], { cwd: dir });
    }
    await fsck(ours);
    const want = await state(git);
    expect(want.shallow).toHaveLength(2);
    expect(await state(ours)).toEqual(want);
  });

  it("deepen-since/deepen-not rule: serves --shallow-since and --shallow-exclude exactly as git's own upload-pack", async () => {
    const { url } = newRepo();
    const src = s.path(`since-src-${_name}`);
    await makeHistory(s, src, { commits: 30, files: 10 });
    // a side branch forked from commit 20 (older than the cut) with newer commits, merged into main
    const at = (t: number) => ({ env: { GIT_AUTHOR_DATE: `${t} +0000`, GIT_COMMITTER_DATE: `${t} +0000` } });
    await s.git(["checkout", "-q", "-b", "side", "main~10"], { cwd: src });
    for (let i = 0; i < 3; i++) await s.git(["commit", "-q", "--allow-empty", "-m", `side ${i}`], { cwd: src, ...at(1700003000 + i * 60) });
    await s.git(["checkout", "-q", "main"], { cwd: src });
    await s.git(["merge", "-q", "--no-ff", "side", "-m", "merge side"], { cwd: src, ...at(1700004000) });
    await s.git(["tag", "-a", "v1", "-m", "v1", "main~5"], { cwd: src });
    await s.git(["push", url, "main", "side", "v1"], { cwd: src });
    /** The commits and the shallow boundary of a clone (or fetch) over our server and over git's own upload-pack. */
    const state = async (dir: string) => ({
      commits: (await s.gitText(["rev-list", "--all"], { cwd: dir })).split("\n").sort(),
      shallow: readFileSync(`${dir}/${await s.gitText(["rev-parse", "--git-path", "shallow"], { cwd: dir })}`, "utf8").trim().split("\n").sort(),
    });
    const both = async (name: string, args: string[], then?: string[]) => {
      const ours = s.path(`${name}-${_name}`);
      const git = s.path(`${name}-oracle-${_name}`);
      await s.git([...proto, "clone", "-q", ...args, url, ours]);
      await s.git([...proto, "clone", "-q", ...args, `file://${src}`, git]);
      if (then) {
        await s.git([...proto, "fetch", "-q", ...then, "origin"], { cwd: ours });
        await s.git([...proto, "fetch", "-q", ...then, "origin"], { cwd: git });
      }
      await fsck(ours);
      const want = await state(git);
      expect(want.shallow.length).toBeGreaterThan(0);
      expect(await state(ours)).toEqual(want);
      return want;
    };
    const since = await both("since", ["--shallow-since=1700001200", "--no-single-branch"]);
    expect(since.commits.length).toBe(10 + 3 + 1);
    await both("exclude", ["--shallow-exclude=v1", "--no-single-branch"]);
    await both("exclude-branch", ["--shallow-exclude=refs/heads/side", "--no-single-branch"]);
    // deepening an existing boundary: the client's shallow commits now inside are unshallowed
    await both("since-deeper", ["--shallow-since=1700001500", "--no-single-branch"], ["--shallow-since=1700000900"]);
    // since the epoch (deepen-since 0) is the whole history, as git's upload-pack reads it
    const epoch = s.path(`since-epoch-${_name}`);
    await s.git([...proto, "clone", "-q", "--shallow-since=1970-01-01 00:00:00 +0000", "--no-single-branch", url, epoch]);
    expect((await s.gitText(["rev-list", "--all"], { cwd: epoch })).split("\n").sort()).toEqual((await s.gitText(["rev-list", "main", "side"], { cwd: src })).split("\n").sort());
    const r = await s.gitFail([...proto, "clone", "--shallow-exclude=nope", url, s.path(`exclude-nope-${_name}`)]);
    expect(r.stderr).toMatch(/deepen-not/);
  });
});

describe("push", () => {
  it("refuses a non-fast-forward on the client without --force and applies it with --force", async () => {
    const { id, url } = newRepo();
    const src = s.path("force-src");
    await makeHistory(s, src, { commits: 10, files: 5 });
    await s.git(["push", url, "main"], { cwd: src });
    await s.git(["reset", "-q", "--hard", "main~2"], { cwd: src });
    await s.git(["commit", "-q", "--allow-empty", "-m", "rewritten"], { cwd: src });
    const refused = await s.gitFail(["push", url, "main"], { cwd: src });
    expect(refused.stderr).toMatch(/\[rejected\].*non-fast-forward|fetch first/);
    await s.git(["push", "--force", url, "main"], { cwd: src });
    const event = srv.pushes.at(-1)!.event!.refs[0]!;
    expect(event).toMatchObject({ kind: "update", forced: true, totalCommits: 1 });
    const dst = s.path("force-dst");
    await s.git(["clone", url, dst]);
    await fsck(dst);
    expect(await s.gitText(["rev-parse", "HEAD"], { cwd: dst })).toBe(await s.gitText(["rev-parse", "main"], { cwd: src }));
    expect((await objectDump(dst, ["HEAD"])).equals(await objectDump(src, ["main"]))).toBe(true);
    expect(srv.refs.stats(id).empty).toBe(false);
  });

  it("a push creating many branches walks once per distinct tip and within one budget of commits read; past it a new branch lists its last commits along first parents (Gitea's CommitsBeforeLimit)", async () => {
    const { url } = newRepo();
    const src = s.path("many-src");
    await makeHistory(s, src, { commits: 30, files: 3 });
    await s.git(["push", "-q", url, "main"], { cwd: src });
    // three new commits on a side line, then 40 branches at the same new tip and 3 at older new commits
    await s.git(["checkout", "-q", "-b", "side"], { cwd: src });
    for (const n of [1, 2, 3]) await s.git(["commit", "-q", "--allow-empty", "-m", `side ${n}`], { cwd: src });
    const side = (await s.gitText(["rev-list", "side", "^main"], { cwd: src })).split("\n");
    const refspecs = [...Array.from({ length: 40 }, (_, i) => `side:refs/heads/same/${i}`), "side~1:refs/heads/older", "side~2:refs/heads/oldest", "main:refs/heads/at-main"];
    const walkOf = async (budget: number) => {
      srv.setLimits({ eventWalkBudget: budget });
      try {
        const { url: u } = newRepo();
        await s.git(["push", "-q", u, "main"], { cwd: src });
        await s.git(["push", "-q", u, ...refspecs], { cwd: src });
        return srv.pushes.at(-1)!.event!.refs;
      } finally {
        srv.setLimits({});
      }
    };
    // within the budget: each branch lists what no branch had (git's rev-list <tip> --not --branches)
    const full = await walkOf(1_000_000);
    expect(full.filter((r) => r.name.startsWith("refs/heads/same/")).every((r) => r.totalCommits === 3 && r.commits.map((c) => c.oid).join() === side.join())).toBe(true);
    expect(full.find((r) => r.name === "refs/heads/older")!.commits.map((c) => c.oid)).toEqual(side.slice(1));
    // a branch at an existing tip: main's history (its own tip is not excluded), capped by the count
    expect(full.find((r) => r.name === "refs/heads/at-main")!.totalCommits).toBe(30);
    // no budget left: every created branch lists its first-parent line, as Gitea's CommitsBeforeLimit(20)
    const cut = await walkOf(1);
    const line = async (rev: string) => (await s.gitText(["rev-list", "--first-parent", "-20", rev], { cwd: src })).split("\n");
    expect(cut.find((r) => r.name === "refs/heads/same/7")!.commits.map((c) => c.oid)).toEqual(await line("side"));
    expect(cut.find((r) => r.name === "refs/heads/older")!.commits.map((c) => c.oid)).toEqual(await line("side~1"));
    expect(cut.find((r) => r.name === "refs/heads/older")!.totalCommits).toBe(20);
    await s.git(["checkout", "-q", "main"], { cwd: src });
  });

  it("push options: accepted and without effect (`-o ci.skip`), but a push asking to change the repository's settings (repo.private, repo.template) is refused whole", async () => {
    const { id, url } = newRepo();
    const src = s.path("options-src");
    await makeHistory(s, src, { commits: 3, files: 3 });
    await s.git(["push", "-o", "ci.skip", "-o", "topic=x", url, "main"], { cwd: src });
    expect((await srv.refs.read(id)).refs.map((r) => r.name)).toEqual(["refs/heads/main"]);
    // and a commit no ref names, fetched by id over protocol v0 (allow-reachable-sha1-in-want), as over v2
    const inner = await s.gitText(["rev-parse", "main~1"], { cwd: src });
    for (const v of ["0", "2"]) {
      const dst = s.path(`options-fetch-v${v}`);
      await s.git(["init", "-q", dst]);
      await s.git(["-c", `protocol.version=${v}`, "fetch", "-q", url, inner], { cwd: dst });
      expect(await s.gitText(["rev-parse", "FETCH_HEAD"], { cwd: dst })).toBe(inner);
    }
    await s.git(["branch", "side"], { cwd: src });
    for (const option of ["repo.private=true", "repo.template"]) {
      const r = await s.gitFail(["push", "-o", "ci.skip", "-o", option, url, "side"], { cwd: src });
      expect(r.stderr).toContain(`push option ${option.split("=")[0]} is not supported: change the repository's settings through the API`);
    }
    expect((await srv.refs.read(id)).refs.map((r) => r.name)).toEqual(["refs/heads/main"]);
  });

  it("deletes branches and tags (and refuses to delete the default branch)", async () => {
    const { id, url } = newRepo();
    const src = s.path("delete-src");
    await makeHistory(s, src, { commits: 5, files: 5 });
    await s.git(["branch", "topic"], { cwd: src });
    await s.git(["tag", "-a", "t1", "-m", "tag"], { cwd: src });
    await s.git(["push", url, "main", "topic", "t1"], { cwd: src });
    await s.git(["push", url, "--delete", "topic", "t1"], { cwd: src });
    expect(srv.pushes.at(-1)!.event!.refs.map((r) => [r.name, r.kind])).toEqual([
      ["refs/heads/topic", "delete"],
      ["refs/tags/t1", "delete"],
    ]);
    expect(await s.gitText(["ls-remote", url], { cwd: src })).not.toMatch(/topic|t1/);
    const r = await s.gitFail(["push", url, "--delete", "main"], { cwd: src });
    expect(r.stderr).toMatch(/remote rejected.*main \(branch main is the default branch and cannot be deleted\)/);
    expect(srv.refs.stats(id).empty).toBe(false);
  });

  it("takes a push of 3000 delta-compressed commits and serves it back identically", async () => {
    const { id, url } = newRepo();
    const src = s.path("big-src");
    await makeHistory(s, src, { commits: 3000, files: 60 });
    await s.git(["repack", "-adq", "--depth=50", "--window=10"], { cwd: src });
    await s.git(["push", url, "main"], { cwd: src });
    expect(srv.pushes.at(-1)!.event!.refs[0]!.totalCommits).toBe(1000); // counting stops at the cap
    const dst = s.path("big-dst");
    await s.git(["clone", "--bare", url, dst]);
    await fsck(dst);
    expect((await objectDump(dst)).equals(await objectDump(src, ["main"]))).toBe(true);
    const [pack] = (await srv.objects.list(id)).filter((f) => f.name.endsWith(".pack"));
    const v = await s.gitText(["verify-pack", "-v", srv.objects.path(id, pack!.name.replace(".pack", ".idx"))]);
    expect(v).toMatch(/chain length = 10: /); // really delta-compressed
  });

  it("lets exactly one of two concurrent pushes to the same branch win and tells the other why", async () => {
    const { url } = newRepo();
    const src = s.path("race-src");
    await makeHistory(s, src, { commits: 5, files: 5 });
    await s.git(["push", url, "main"], { cwd: src });
    const a = s.path("race-a");
    const b = s.path("race-b");
    await s.git(["clone", "-q", url, a]);
    await s.git(["clone", "-q", url, b]);
    await s.git(["commit", "-q", "--allow-empty", "-m", "from a"], { cwd: a });
    await s.git(["commit", "-q", "--allow-empty", "-m", "from b"], { cwd: b });
    // hold both pushes at the commit until both are there: each has seen the same old value
    const inner = srv.refs;
    srv.setRefStore(commitBarrier(inner));
    try {
      const results = await Promise.allSettled([s.git(["push", "origin", "main"], { cwd: a }), s.git(["push", "origin", "main"], { cwd: b })]);
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(String(lost[0]!.reason.stderr)).toMatch(/remote rejected\] main -> main \(cannot lock ref 'refs\/heads\/main': is at [0-9a-f]{40} but expected [0-9a-f]{40}\)/);
    } finally {
      srv.setRefStore(inner);
    }
    const tip = (await s.gitText(["ls-remote", url, "refs/heads/main"], { cwd: a })).slice(0, 40);
    expect([await s.gitText(["rev-parse", "HEAD"], { cwd: a }), await s.gitText(["rev-parse", "HEAD"], { cwd: b })]).toContain(tip);
  });

  it("refuses a push over the size limit with a clear message and stores nothing", async () => {
    const { id, url } = newRepo();
    const src = s.path("limit-src");
    await makeHistory(s, src, { commits: 50, files: 30 });
    srv.setLimits({ maxPackBytes: 20_000 });
    try {
      const r = await s.gitFail(["push", url, "main"], { cwd: src });
      expect(r.stderr).toMatch(/pack exceeds maximum allowed size \(20000 bytes\)/);
    } finally {
      srv.setLimits({});
    }
    expect(await srv.objects.list(id)).toEqual([]);
    expect((await srv.refs.read(id)).refs).toEqual([]);
  });
});

describe("bad input over HTTP", () => {
  /** POSTs a raw receive-pack body and returns the report lines. */
  async function receive(url: string, body: Uint8Array): Promise<string[]> {
    const res = await fetch(`${url}/git-receive-pack`, { method: "POST", body: body as Uint8Array<ArrayBuffer>, headers: { "content-type": "application/x-git-receive-pack-request" } });
    expect(res.status).toBe(200);
    const text = Buffer.from(await res.arrayBuffer()).toString("latin1");
    const lines: string[] = [];
    for (let p = 0; p + 4 <= text.length; ) {
      const n = Number.parseInt(text.slice(p, p + 4), 16);
      if (n === 0) {
        p += 4;
        continue;
      }
      lines.push(text.slice(p + 4, p + n).replace(/\n$/, ""));
      p += n;
    }
    return lines;
  }

  async function packFor(src: string): Promise<{ pack: Buffer; tip: string }> {
    const tip = await s.gitText(["rev-parse", "main"], { cwd: src });
    const pack = (await s.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: "main\n" })).stdout;
    return { pack, tip };
  }

  it("rejects a corrupt or truncated pack: unpack error, no ref moved, nothing stored", async () => {
    const src = s.path("corrupt-src");
    await makeHistory(s, src, { commits: 20, files: 10 });
    const { pack, tip } = await packFor(src);
    const cmd = pkt(`${ZERO_OID} ${tip} refs/heads/main\0report-status\n`);
    const flipped = Buffer.from(pack);
    flipped[Math.floor(flipped.length / 2)]! ^= 0x55;
    for (const bad of [pack.subarray(0, pack.length - 100), flipped, pack.subarray(0, 30)]) {
      const { id, url } = newRepo();
      const lines = await receive(url, Buffer.concat([cmd, FLUSH, bad]));
      expect(lines[0]).toMatch(/^unpack (pack truncated|bad zlib|pack checksum|.*corrupt)/);
      expect(lines[1]).toBe("ng refs/heads/main unpacker error");
      expect(await srv.objects.list(id)).toEqual([]);
      expect((await srv.refs.read(id)).refs).toEqual([]);
    }
  });

  it("refuses bad ref names as git check-ref-format does, and accepts the good ones in the same push", async () => {
    const src = s.path("names-src");
    await makeHistory(s, src, { commits: 3, files: 3 });
    const { pack, tip } = await packFor(src);
    const { id, url } = newRepo();
    const names = ["refs/heads/ok", "refs/heads/a..b", "refs/heads/x.lock", "refs/heads/sp ace", "HEAD", "refs/heads/colon:x", "refs/x", "refs/tags/v1", "refs/heads/ok"];
    const body = Buffer.concat([
      pkt(`${ZERO_OID} ${tip} ${names[0]}\0report-status\n`),
      ...names.slice(1).map((n) => pkt(`${ZERO_OID} ${tip} ${n}\n`)),
      FLUSH,
      pack,
    ]);
    const lines = await receive(url, body);
    expect(lines).toEqual([
      "unpack ok",
      "ok refs/heads/ok",
      "ng refs/heads/a..b funny refname",
      "ng refs/heads/x.lock funny refname",
      "ng refs/heads/sp ace funny refname",
      "ng HEAD funny refname",
      "ng refs/heads/colon:x funny refname",
      "ng refs/x funny refname", // one level below refs/ (receive-pack checks what follows refs/)
      "ok refs/tags/v1",
      "ng refs/heads/ok failed to update ref", // a second command for one ref
    ]);
    expect((await srv.refs.read(id)).refs.map((r) => r.name)).toEqual(["refs/heads/ok", "refs/tags/v1"]);
    // HEAD followed the first pushed branch, since refs/heads/main does not exist (Gitea's rule)
    expect((await srv.refs.read(id)).head).toBe("refs/heads/ok");
    // some of the push's refs were refused: what its pack holds for them no ref reaches, so the
    // repository no longer counts as holding only reachable objects (a clone then walks)
    expect((await srv.refs.read(id)).unreachable).toBe(true);
  });

  it("fails every ref of an atomic push when one is refused", async () => {
    const src = s.path("atomic-src");
    await makeHistory(s, src, { commits: 3, files: 3 });
    const { pack, tip } = await packFor(src);
    const { id, url } = newRepo();
    const body = Buffer.concat([pkt(`${ZERO_OID} ${tip} refs/heads/good\0report-status atomic\n`), pkt(`${ZERO_OID} ${tip} refs/heads/bad..name\n`), FLUSH, pack]);
    expect(await receive(url, body)).toEqual(["unpack ok", "ng refs/heads/good atomic push failure", "ng refs/heads/bad..name funny refname"]);
    expect((await srv.refs.read(id)).refs).toEqual([]);
    expect(await srv.objects.list(id)).toEqual([]);
  });

  it("answers a wrong old value with git's lock message and moves nothing", async () => {
    const src = s.path("stale-src");
    await makeHistory(s, src, { commits: 3, files: 3 });
    const { pack, tip } = await packFor(src);
    const { id, url } = newRepo();
    const lines = await receive(url, Buffer.concat([pkt(`${tip} ${tip} refs/heads/main\0report-status\n`), FLUSH, pack]));
    expect(lines).toEqual(["unpack ok", "ng refs/heads/main cannot lock ref 'refs/heads/main': unable to resolve reference 'refs/heads/main'"]);
    expect(await srv.objects.list(id)).toEqual([]);
  });

  it("says 'ready' as soon as every want forks from what the client has (a common tip's parent included, as git's got_oid marks it): one request, one batch of haves, on v2 and v0", async () => {
    const { url } = newRepo();
    const src = s.path("ready-src");
    await makeHistory(s, src, { commits: 10, files: 5 });
    for (let i = 1; i <= 5; i++) {
      await s.git(["branch", `sib${i}`, "main"], { cwd: src });
      await s.git(["commit-tree", "-p", "main", "-m", `sib${i}`, "main^{tree}"], { cwd: src, env: { GIT_COMMITTER_DATE: "1800000000 +0000", GIT_AUTHOR_DATE: "1800000000 +0000" } }).then(async (r) => s.git(["update-ref", `refs/heads/sib${i}`, r.stdout.toString().trim()], { cwd: src }));
    }
    await s.git(["push", "-q", url, "refs/heads/*:refs/heads/*"], { cwd: src });
    // the client has sib1 and 300 unrelated, older commits
    const base = s.path("ready-client");
    await s.git(["init", "-q", base]);
    await s.git(["fetch", "-q", src, "refs/heads/sib1:refs/heads/sib1"], { cwd: base });
    await s.git(["fast-import", "--quiet"], { cwd: base, input: fastImportStream({ commits: 300, files: 3, branch: "refs/heads/unrel", time: 1000000000, seed: 5 }) });
    for (const version of ["2", "0"]) {
      const dir = s.path(`ready-client-v${version}`);
      await s.git(["clone", "-q", "--bare", base, dir]);
      const trace = s.path(`ready-trace-v${version}`);
      await s.git(["-c", `protocol.version=${version}`, "fetch", "-q", url, "refs/heads/sib*:refs/remotes/o/sib*"], { cwd: dir, env: { GIT_TRACE_PACKET: trace } });
      const lines = readFileSync(trace, "utf8").split("\n");
      const haves = lines.filter((l) => / fetch(-pack)?> have /.test(l)).length;
      expect(haves, `v${version}`).toBeGreaterThan(0);
      expect(haves, `v${version}`).toBeLessThanOrEqual(32);
      if (version === "2") expect(lines.filter((l) => / fetch> command=fetch/.test(l))).toHaveLength(1);
      expect(await s.gitText(["rev-parse", "refs/remotes/o/sib5"], { cwd: dir })).toBe(await s.gitText(["rev-parse", "sib5"], { cwd: src }));
      await fsck(dir);
    }
  });

  it("reads a gzip-compressed request (git compresses large negotiations) and filters ls-refs by prefix", async () => {
    const src = s.path("gzip-src");
    await makeHistory(s, src, { commits: 3, files: 3 });
    await s.git(["tag", "t1"], { cwd: src });
    const { url } = newRepo();
    await s.git(["push", url, "main", "t1"], { cwd: src });
    const { gzipSync } = await import("node:zlib");
    const body = Buffer.concat([pkt("command=ls-refs\n"), pkt("agent=test\n"), Buffer.from("0001"), pkt("symrefs\n"), pkt("ref-prefix refs/heads/\n"), FLUSH]);
    const res = await fetch(`${url}/git-upload-pack`, { method: "POST", headers: { "git-protocol": "version=2", "content-encoding": "gzip" }, body: gzipSync(body) as Uint8Array<ArrayBuffer> });
    const tip = await s.gitText(["rev-parse", "main"], { cwd: src });
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe(`${pkt(`${tip} refs/heads/main\n`).length.toString(16).padStart(4, "0")}${tip} refs/heads/main\n0000`);
  });

  it("ignores ref-prefix arguments once there are 65,536 of them and lists every ref, as git's ls-refs", async () => {
    const src = s.path("prefix-src");
    await makeHistory(s, src, { commits: 2, files: 1 });
    await s.git(["tag", "t1"], { cwd: src });
    const { url } = newRepo();
    await s.git(["push", "-q", url, "main", "t1"], { cwd: src });
    const { gzipSync } = await import("node:zlib");
    const lsRefs = async (prefixes: number) => {
      const body = Buffer.concat([pkt("command=ls-refs\n"), Buffer.from("0001"), ...Array.from({ length: prefixes }, (_, i) => pkt(`ref-prefix refs/none/${i}\n`)), FLUSH]);
      const res = await fetch(`${url}/git-upload-pack`, { method: "POST", headers: { "git-protocol": "version=2", "content-encoding": "gzip" }, body: gzipSync(body) as Uint8Array<ArrayBuffer> });
      return (Buffer.from(await res.arrayBuffer()).toString().match(/ refs\/\S+/g) ?? []).map((r) => r.trim());
    };
    expect(await lsRefs(65_535)).toEqual([]);
    expect(await lsRefs(65_536)).toEqual(["refs/heads/main", "refs/tags/t1"]);
  });

  it("ls-refs lists exactly the refs some ref-prefix starts, however the prefixes overlap or repeat", async () => {
    const src = s.path("prefixes-src");
    await makeHistory(s, src, { commits: 2, files: 1 });
    const names = ["refs/heads/a", "refs/heads/ab", "refs/heads/b/c", "refs/heads/main", "refs/tags/v1", "refs/tags/v10", "refs/tags/v2"];
    for (const n of names.filter((n) => n !== "refs/heads/main")) await s.git(["update-ref", n, "main"], { cwd: src });
    const { url } = newRepo();
    await s.git(["push", "-q", url, ...names.map((n) => `${n}:${n}`)], { cwd: src });
    const lsRefs = async (prefixes: string[]) => {
      const body = Buffer.concat([pkt("command=ls-refs\n"), Buffer.from("0001"), ...prefixes.map((p) => pkt(`ref-prefix ${p}\n`)), FLUSH]);
      const res = await fetch(`${url}/git-upload-pack`, { method: "POST", headers: { "git-protocol": "version=2" }, body });
      return (Buffer.from(await res.arrayBuffer()).toString().match(/ refs\/\S+/g) ?? []).map((r) => r.trim());
    };
    const naive = (prefixes: string[]) => names.filter((n) => prefixes.some((p) => n.startsWith(p)));
    for (const prefixes of [
      ["refs/heads/a"],
      ["refs/heads/a", "refs/heads/ab", "refs/heads/a"],
      ["refs/tags/v1", "refs/heads/b/"],
      ["refs/tags/v10", "refs/tags/v2", "refs/heads/m"],
      ["refs/heads/", "refs/heads/b/c", "refs/tags/v1"],
      ["refs/heads/aa", "refs/heads/b"],
      ["refs/", "refs/x"],
      ["refs/z", "refs/a"],
      Array.from({ length: 20_000 }, () => "refs/tags/v1"),
    ]) {
      expect(await lsRefs(prefixes), prefixes.slice(0, 4).join(" ")).toEqual(naive(prefixes));
    }
  });

  it("tells the client on the error band when a stored pack has gone missing", async () => {
    const src = s.path("lost-src");
    await makeHistory(s, src, { commits: 3, files: 3 });
    const { id, url } = newRepo();
    await s.git(["push", "-q", url, "main"], { cwd: src });
    const [pack] = (await srv.refs.read(id)).packs;
    await srv.objects.delete(id, [`pack/pack-${pack!.id}.pack`]);
    const r = await s.gitFail(["clone", url, s.path("lost-clone")]);
    expect(r.stderr).toMatch(/remote: pack [0-9a-f]+ is missing from object storage/);
  });

  it("answers a want that is not in the repository with an ERR line", async () => {
    const { url } = newRepo();
    const res = await fetch(`${url}/git-upload-pack`, {
      method: "POST",
      headers: { "git-protocol": "version=2" },
      body: Buffer.concat([pkt("command=fetch\n"), Buffer.from("0001"), pkt(`want ${"1".repeat(40)}\n`), pkt("done\n"), FLUSH]) as Uint8Array<ArrayBuffer>,
    });
    expect(Buffer.from(await res.arrayBuffer()).toString()).toMatch(/ERR upload-pack: not our ref 1{40}/);
  });

  describe("v2 request-head rule: refused as git's serve.c refuses it, with an ERR line", () => {
    const cases: [string, string[], RegExp][] = [
      ["a second command", ["command=ls-refs", "command=fetch"], /^ERR command 'fetch' requested after already requesting command 'ls-refs'$/],
      ["a command not served", ["command=object-info"], /^ERR invalid command 'object-info'$/],
      ["no command", ["agent=test/1"], /^ERR no command requested$/],
      ["a sha256 client (git's own message, so git says why it cannot fetch)", ["command=ls-refs", "object-format=sha256"], /^ERR mismatched object format: server sha1; client sha256$/],
      ["an unknown object format", ["command=ls-refs", "object-format=md5"], /^ERR unknown object format 'md5'$/],
      ["an object format without a value", ["command=ls-refs", "object-format"], /^ERR object-format capability requires an argument$/],
      ["a capability not advertised", ["command=ls-refs", "session-id=abc"], /^ERR unknown capability 'session-id=abc'$/],
      ["a command sent as a capability", ["command=ls-refs", "fetch"], /^ERR unknown capability 'fetch'$/],
      ["a sha256 client before its command: the command is checked first, as git does", ["object-format=sha256", "agent=x"], /^ERR no command requested$/],
    ];
    for (const [what, head, answer] of cases) {
      it(what, async () => {
        const { url } = newRepo();
        const res = await fetch(`${url}/git-upload-pack`, {
          method: "POST",
          headers: { "git-protocol": "version=2" },
          body: Buffer.concat([...head.map((l) => pkt(`${l}\n`)), FLUSH]) as Uint8Array<ArrayBuffer>,
        });
        const text = Buffer.from(await res.arrayBuffer()).toString();
        expect(text.slice(4).replace(/\n$/, "")).toMatch(answer);
      });
    }

    it("a delimiter without a command is refused; a lone flush gets nothing", async () => {
      const { url } = newRepo();
      const post = async (body: Uint8Array) => Buffer.from(await (await fetch(`${url}/git-upload-pack`, { method: "POST", headers: { "git-protocol": "version=2" }, body: body as Uint8Array<ArrayBuffer> })).arrayBuffer()).toString();
      expect((await post(Buffer.concat([Buffer.from("0001"), FLUSH]))).slice(4)).toBe("ERR no command requested\n");
      expect(await post(FLUSH)).toBe("");
    });

    it("object-format=sha1 and an agent are taken", async () => {
      const { url } = newRepo();
      const res = await fetch(`${url}/git-upload-pack`, {
        method: "POST",
        headers: { "git-protocol": "version=2" },
        body: Buffer.concat([pkt("command=ls-refs\n"), pkt("agent=test/1\n"), pkt("object-format=sha1\n"), FLUSH]) as Uint8Array<ArrayBuffer>,
      });
      expect(Buffer.from(await res.arrayBuffer()).toString()).not.toContain("ERR");
    });
  });
});

describe("partial clone (--filter)", () => {
  let src: string;
  let bare: string;
  let repo: { id: string; url: string };
  const FILTERS = ["blob:none", "blob:limit=2k", "tree:0", "tree:1", "tree:2", "object:type=commit", "combine:tree:3+blob:limit=1500"];

  /** The ids of the objects a repository holds (no lazy fetch: a partial clone's missing ones are absent). */
  const present = async (dir: string): Promise<string[]> =>
    (await s.gitText(["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], { cwd: dir })).split("\n").filter(Boolean).sort();

  beforeAll(async () => {
    src = s.path("partial-src");
    await makeHistory(s, src, { commits: 25, files: 15 });
    await s.git(["checkout", "-q", "-b", "side"], { cwd: src });
    await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportStream({ commits: 5, files: 15, branch: "refs/heads/side", from: "main", startMark: 100, seed: 7 }) });
    await s.git(["checkout", "-q", "main"], { cwd: src });
    await s.git(["tag", "-a", "v1", "-m", "release", "main~3"], { cwd: src });
    // tags of a commit's root tree and of a subtree: a filter judges the first as the commit's
    await s.git(["tag", "-a", "root-tree", "-m", "t", "main^{tree}"], { cwd: src });
    await s.git(["tag", "-a", "sub-tree", "-m", "t", "main~4:dir1"], { cwd: src });
    // a lightweight tag of a commit's root tree: the clone wants the tree itself
    await s.git(["tag", "lw-root", "main~1^{tree}"], { cwd: src });
    repo = newRepo();
    await s.git(["push", "-q", repo.url, "main", "side", "v1", "root-tree", "sub-tree", "lw-root"], { cwd: src });
    // git's own upload-pack, as Gitea configures it, is the oracle
    bare = s.path("partial-bare.git");
    await s.git(["clone", "-q", "--bare", src, bare]);
    // without lw-root: where a filter leaves trees out, git's own upload-pack leaves out the tree that
    // tag names too and its client fails the clone; what it sends otherwise does not change
    await s.git(["update-ref", "-d", "refs/tags/lw-root"], { cwd: bare });
    await s.git(["config", "uploadpack.allowFilter", "true"], { cwd: bare });
    await s.git(["config", "uploadpack.allowAnySHA1InWant", "true"], { cwd: bare });
  });

  describe.each(PROTOCOLS)("protocol %s", (name, proto) => {
    it.each(FILTERS)("filter rule: a clone with --filter=%s holds exactly the objects git's own upload-pack sends", async (filter) => {
      const tag = `${name}-${filter.replace(/[^a-z0-9]/gi, "_")}`;
      const ours = s.path(`partial-ours-${tag}`);
      const theirs = s.path(`partial-theirs-${tag}`);
      const r = await s.git([...proto, "clone", "--no-checkout", `--filter=${filter}`, repo.url, ours]);
      expect(r.stderr).not.toMatch(/filtering not recognized/);
      await s.git([...proto, "clone", "-q", "--no-checkout", `--filter=${filter}`, `file://${bare}`, theirs]);
      const got = await present(ours);
      // where the filter leaves out trees, the root tree a lightweight tag names is still sent here
      const lwRoot = await s.gitText(["rev-parse", "lw-root"], { cwd: src });
      const dropsTrees = filter === "tree:0" || filter === "object:type=commit";
      expect(got).toEqual(dropsTrees ? [...(await present(theirs)), lwRoot].sort() : await present(theirs));
      expect(got.length).toBeLessThan((await present(bare)).length); // something was left out
      expect(await s.gitText(["config", "remote.origin.promisor"], { cwd: ours })).toBe("true");
    });

    it("a partial clone fetches what it left out when it needs it (checkout, log -p, fsck)", async () => {
      for (const filter of ["blob:none", "tree:0"]) {
        const dst = s.path(`partial-lazy-${name}-${filter.replace(":", "_")}`);
        await s.git([...proto, "clone", "-q", `--filter=${filter}`, repo.url, dst]);
        expect(await s.gitText(["ls-files", "-s"], { cwd: dst })).toBe(await s.gitText(["ls-files", "-s"], { cwd: src }));
        expect(await s.gitText(["status", "--porcelain"], { cwd: dst })).toBe("");
        await s.git([...proto, "checkout", "-q", "side"], { cwd: dst });
        const log = await s.gitText([...proto, "log", "-p", "-6", "--format=%H", "origin/side"], { cwd: dst });
        expect(log).toBe(await s.gitText(["log", "-p", "-6", "--format=%H", "side"], { cwd: src }));
        await fsck(dst);
      }
    });
  });

  it("serves an object a ref reaches by id, and not one that only a deleted branch reached", async () => {
    const leak = s.path("partial-leak-src");
    await makeHistory(s, leak, { commits: 5, files: 5 });
    const { id, url } = newRepo();
    await s.git(["push", "-q", url, "main"], { cwd: leak });
    await s.git(["checkout", "-q", "-b", "oops"], { cwd: leak });
    await writeFile(join(leak, "secret.txt"), "password=hunter2\n");
    await s.git(["add", "secret.txt"], { cwd: leak });
    await s.git(["commit", "-q", "-m", "oops"], { cwd: leak });
    await s.git(["push", "-q", url, "oops"], { cwd: leak });
    await s.git(["push", "-q", url, "--delete", "oops"], { cwd: leak });
    expect((await srv.refs.read(id)).unreachable).toBe(true); // the secret is still stored
    const secret = await s.gitText(["rev-parse", "oops:secret.txt"], { cwd: leak });
    const secretTree = await s.gitText(["rev-parse", "oops^{tree}"], { cwd: leak });
    const kept = await s.gitText(["rev-parse", "main~2:dir0"], { cwd: leak });
    const fetchOf = async (want: string) => {
      const res = await fetch(`${url}/git-upload-pack`, {
        method: "POST",
        headers: { "git-protocol": "version=2", "content-type": "application/x-git-upload-pack-request" },
        body: Buffer.concat([pkt("command=fetch\n"), Buffer.from("0001"), pkt(`want ${want}\n`), pkt("filter blob:none\n"), pkt("done\n"), FLUSH]) as Uint8Array<ArrayBuffer>,
      });
      return Buffer.from(await res.arrayBuffer()).toString("latin1");
    };
    expect(await fetchOf(secret)).toMatch(new RegExp(`ERR upload-pack: not our ref ${secret}`));
    expect(await fetchOf(secretTree)).toMatch(new RegExp(`ERR upload-pack: not our ref ${secretTree}`));
    expect(await fetchOf(kept)).toMatch(/packfile\n/);
    // what the refs reach is known per set of ref tips: a ref naming the secret again serves it,
    // and deleting that ref again hides it again
    await s.git(["push", "-q", url, "oops"], { cwd: leak });
    expect(await fetchOf(secret)).toMatch(/packfile\n/);
    await s.git(["push", "-q", url, "--delete", "oops"], { cwd: leak });
    expect(await fetchOf(secret)).toMatch(new RegExp(`ERR upload-pack: not our ref ${secret}`));
    // and through git: a partial clone of the repository works (its lazy fetches walk), the secret stays out
    const dst = s.path("partial-leak-dst");
    await s.git(["clone", "-q", "--filter=blob:none", url, dst]);
    await s.git(["checkout", "-q", "main"], { cwd: leak });
    expect(await s.gitText(["ls-files", "-s"], { cwd: dst })).toBe(await s.gitText(["ls-files", "-s"], { cwd: leak }));
    const r = await s.gitFail(["cat-file", "-p", secret], { cwd: dst });
    expect(r.stderr).toMatch(/not our ref|could not fetch|unable to read/);
  });

  it("answers a filter it does not take with git's message", async () => {
    const { url } = repo;
    const tip = (await s.gitText(["ls-remote", url, "refs/heads/main"])).slice(0, 40);
    const v2 = async (...lines: string[]) => {
      const res = await fetch(`${url}/git-upload-pack`, {
        method: "POST",
        headers: { "git-protocol": "version=2", "content-type": "application/x-git-upload-pack-request" },
        body: Buffer.concat([pkt("command=fetch\n"), Buffer.from("0001"), pkt(`want ${tip}\n`), ...lines.map((l) => pkt(`${l}\n`)), pkt("done\n"), FLUSH]) as Uint8Array<ArrayBuffer>,
      });
      return Buffer.from(await res.arrayBuffer()).toString("latin1");
    };
    expect(await v2("filter blob:limit=lots")).toMatch(/ERR invalid filter-spec 'blob:limit=lots'/);
    expect(await v2("filter tree:x")).toMatch(/ERR expected 'tree:<depth>'/);
    expect(await v2("filter object:type=branch")).toMatch(/ERR 'branch' for 'object:type=<type>' is not a valid object type/);
    expect(await v2("filter sparse:oid=main:.sparse")).toMatch(/ERR filter 'sparse:oid' not supported/);
    expect(await v2("filter combine:blob:none+tree:0 1")).toMatch(/ERR must escape char in sub-filter-spec: ' '/);
    expect(await v2("filter blob:none", "filter tree:0")).toMatch(/ERR multiple filter-specs cannot be combined/);
    expect(await v2("filter combine:%00+tree:0")).toMatch(/ERR invalid filter-spec '%00'\n/);
    expect(await v2("filter combine:blob%3Anone+tree:1")).toMatch(/packfile\n/);
    const v0 = await fetch(`${url}/git-upload-pack`, {
      method: "POST",
      headers: { "content-type": "application/x-git-upload-pack-request" },
      body: Buffer.concat([pkt(`want ${tip} ofs-delta\n`), pkt("filter blob:none\n"), FLUSH, pkt("done\n")]) as Uint8Array<ArrayBuffer>,
    });
    expect(Buffer.from(await v0.arrayBuffer()).toString("latin1")).toMatch(/ERR git upload-pack: filtering capability not negotiated/);
    const caps = await fetch(`${url}/info/refs?service=git-upload-pack`, { headers: { "git-protocol": "version=2" } });
    expect(await caps.text()).toMatch(/fetch=shallow filter\n/);
  });
});
