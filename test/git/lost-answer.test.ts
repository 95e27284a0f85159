/**
 * A commit whose answer never came (the database's query timeout, a connection lost mid-request)
 * may still have landed: the pack it names is kept, or a repository whose refs name it would be
 * broken. A commit the store refused (answered) wrote nothing: its pack is deleted. For each writer
 * of packs: a push, an API commit, a compaction.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseUnavailable } from "../../functions/db/driver.ts";
import { createCommit } from "../../functions/git/repo/commit.ts";
import { compactPacks } from "../../functions/git/repo/compact.ts";
import { packFileNames } from "../../functions/git/storage/object-store.ts";
import type { CommitResult, RefStore, RefTransaction } from "../../functions/git/storage/ref-store.ts";
import { fastImportStream, makeHistory, Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("lost-answer-");
let srv: GitServer;
let src: string;
let nextRepo = 900;
beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  src = s.path("src");
  await makeHistory(s, src, { commits: 6, files: 4 });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

/** A RefStore over `inner` whose commits land, but whose answers are lost: the caller sees the query timeout. */
const answerLost = (inner: RefStore): RefStore => ({
  read: (r) => inner.read(r),
  commit: async (r: string, tx: RefTransaction): Promise<CommitResult> => {
    await inner.commit(r, tx);
    throw new DatabaseUnavailable("no answer within 10 ms");
  },
});
/** A RefStore that refuses every commit with an answered failure (nothing written). */
const refusing = (inner: RefStore): RefStore => ({
  read: (r) => inner.read(r),
  commit: async () => {
    throw new Error("SQLITE_CONSTRAINT: FOREIGN KEY constraint failed");
  },
});

const newRepo = () => {
  const id = String(nextRepo++);
  srv.refs.create(id);
  return { id, url: `${srv.url}/${id}.git` };
};
const files = async (id: string) => (await srv.objects.list(id)).map((f) => f.name).sort();
const ada = { name: "Ada", email: "ada@example.com", timestamp: 1900000000, timezone: "+0000" };

/** Clones the repository and checks every object the refs reach is there (git's connectivity check). */
async function cloneWhole(url: string, dir: string) {
  await s.git(["clone", "-q", "--mirror", url, s.path(dir)]);
  await s.git(["fsck", "--connectivity-only", "--no-dangling"], { cwd: s.path(dir) });
}

describe("a commit whose answer never came keeps its pack; an answered refusal deletes it", () => {
  it("push", async () => {
    const lost = newRepo();
    srv.setRefStore(answerLost(srv.refs));
    try {
      await expect(s.git(["push", "-q", lost.url, "main"], { cwd: src })).rejects.toThrow();
    } finally {
      srv.setRefStore(srv.refs);
    }
    // The commit landed: the branch is there, and so is every object it reaches.
    const state = await srv.refs.read(lost.id);
    expect(state.refs.map((r) => r.name)).toEqual(["refs/heads/main"]);
    expect(await files(lost.id)).toEqual(packFileNames(state.packs[0]!.id).sort());
    await cloneWhole(lost.url, "push-lost");

    const refused = newRepo();
    srv.setRefStore(refusing(srv.refs));
    try {
      await expect(s.git(["push", "-q", refused.url, "main"], { cwd: src })).rejects.toThrow();
    } finally {
      srv.setRefStore(srv.refs);
    }
    expect((await srv.refs.read(refused.id)).refs).toEqual([]);
    expect(await files(refused.id)).toEqual([]);
  });

  it("API commit", async () => {
    const { id, url } = newRepo();
    await s.git(["push", "-q", url, "main"], { cwd: src });
    const before = await files(id);
    const change = (n: string) => ({ branch: "main", message: n, author: ada, changes: [{ op: "put" as const, path: `${n}.txt`, content: `${n}\n` }] });
    await expect(createCommit({ repoId: id, objects: srv.objects, refs: answerLost(srv.refs) }, change("lost"))).rejects.toBeInstanceOf(DatabaseUnavailable);
    const after = await files(id);
    expect(after.length).toBe(before.length + packFileNames("x").length);
    await cloneWhole(url, "commit-lost");
    expect((await s.gitText(["show", "main:lost.txt"], { cwd: s.path("commit-lost") })).trim()).toBe("lost");

    await expect(createCommit({ repoId: id, objects: srv.objects, refs: refusing(srv.refs) }, change("refused"))).rejects.toThrow(/FOREIGN KEY/);
    expect(await files(id)).toEqual(after);
  });

  it("compaction", async () => {
    const { id, url } = newRepo();
    await s.git(["push", "-q", url, "main"], { cwd: src });
    let tip = await s.gitText(["rev-parse", "main"], { cwd: src });
    const work = s.path("compact-src");
    await s.git(["clone", "-q", src, work]);
    for (let i = 0; i < 3; i++) {
      await s.git(["fast-import", "--quiet"], { cwd: work, input: fastImportStream({ commits: 2, from: tip, startMark: 5000 + i * 10, seed: 40 + i, time: 1800000000 + i * 1000 }) });
      tip = await s.gitText(["rev-parse", "main"], { cwd: work });
      await s.git(["push", "-q", url, "main"], { cwd: work });
    }
    expect((await srv.refs.read(id)).packs).toHaveLength(4);
    await expect(compactPacks({ repoId: id, objects: srv.objects, refs: refusing(srv.refs) })).rejects.toThrow(/FOREIGN KEY/);
    const unchanged = await files(id);
    expect(unchanged).toHaveLength(4 * packFileNames("x").length);
    await expect(compactPacks({ repoId: id, objects: srv.objects, refs: answerLost(srv.refs) })).rejects.toBeInstanceOf(DatabaseUnavailable);
    const state = await srv.refs.read(id);
    expect(state.packs).toHaveLength(1);
    expect(await files(id)).toEqual(expect.arrayContaining(packFileNames(state.packs[0]!.id)));
    await cloneWhole(url, "compact-lost");
  });
});
