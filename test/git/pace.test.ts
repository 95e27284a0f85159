/**
 * Pacing rule (git/pace.ts): a request's long work — a commit's diff and line stats over
 * thousands of files, a history walk — yields to the event loop as it goes (other requests run in
 * between: one request held the whole server for 130 s before) and stops once its client is gone.
 */
import { appendFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeStats, commitChanges } from "../../functions/git/repo/diff.ts";
import { Repository } from "../../functions/git/repo/repository.ts";
import { Pacer } from "../../functions/git/pace.ts";
import { makeHistory, Scratch } from "./helpers.ts";
import { type GitServer, startGitServer } from "./server.ts";

const s = new Scratch("pace-");
let srv: GitServer;
let tip: string;

beforeAll(async () => {
  srv = await startGitServer({ dataDir: s.path("data") });
  const src = s.path("src");
  // 2,000 files, then a commit editing every one of them
  await makeHistory(s, src, { commits: 1, files: 2000 });
  for (const f of readdirSync(src, { recursive: true, encoding: "utf8" })) if (f.endsWith(".txt")) appendFileSync(join(src, f), "one more line\n");
  await s.git(["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qam", "edit every file"], { cwd: src });
  srv.refs.create("p");
  await s.git(["push", "-q", `${srv.url}/p.git`, "main"], { cwd: src });
  tip = await s.gitText(["rev-parse", "main"], { cwd: src });
});
afterAll(async () => {
  await srv.close();
  s.cleanup();
});

const open = (pace: Pacer) => Repository.open({ repoId: "p", objects: srv.objects, refs: srv.refs, pace });

/** Counts the macrotasks that run while `work` runs. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await work();
  done = true;
  return turns;
}

describe("pacing rule", () => {
  it("a commit's diff and line stats over 2,000 files yield to the event loop as they go", async () => {
    // read once, so that the measured run reads from the caches (no I/O turns the loop for it)
    const warm = await open(new Pacer(undefined, Number.POSITIVE_INFINITY));
    await changeStats(warm, await commitChanges(warm, tip));
    const unpaced = await turnsDuring(async () => changeStats(warm, await commitChanges(warm, tip)));
    const repo = await open(new Pacer(undefined, 20));
    await changeStats(repo, await commitChanges(repo, tip)); // warm this reader's caches too
    const changed = (await commitChanges(warm, tip)).length;
    const paced = await turnsDuring(async () => changeStats(repo, await commitChanges(repo, tip)));
    // every changed file is a diffed entry and a counted file, a yield every 20 units
    expect(changed).toBeGreaterThan(1000);
    expect(paced).toBeGreaterThanOrEqual(Math.floor((2 * changed) / 20));
    expect(paced).toBeGreaterThan(unpaced * 10);
  });

  it("the work stops at its next yield once the request's client is gone", async () => {
    const gone = new AbortController();
    const repo = await open(new Pacer(gone.signal, 20));
    const changes = commitChanges(repo, tip);
    gone.abort();
    await expect(changes.then((c) => changeStats(repo, c))).rejects.toThrow("the request was cancelled: its client went away");
    const walk = await open(new Pacer(gone.signal, 1));
    await expect(walk.countCommits({ from: tip, path: "dir1" })).rejects.toMatchObject({ code: "aborted" });
  });
});
