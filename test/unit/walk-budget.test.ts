/**
 * rangeWalk's shared work budget (git/walk.ts): every commit a walk queues — excluded tips and what
 * either side pops — is charged, so walks that must pop many excluded commits newer than their tip
 * (a push creating branches at old commits) stop when the budget is spent instead of reading the
 * history once per branch (review: 200 branches over 20,000 commits read 7.9 million).
 */
import { describe, expect, it } from "vitest";
import { type Commits, rangeWalk } from "../../functions/git/walk.ts";

/** A linear history c0 ← c1 ← … ← c(n-1), newest last, counting reads. */
function linear(n: number) {
  const reads = { n: 0 };
  const commits = {
    async get(oid: string) {
      reads.n++;
      const i = Number(oid.slice(1));
      return { oid, tree: "t", parents: i > 0 ? [`c${i - 1}`] : [], time: 1_000_000 + i };
    },
  } as unknown as Commits;
  return { commits, reads };
}

describe("rangeWalk work budget", () => {
  it("an old tip beside a new excluded tip: without a budget the walk pops every newer commit; with one it stops when spent", async () => {
    const { commits, reads } = linear(5_000);
    const full = await rangeWalk(commits, { include: ["c100"], exclude: ["c4999"] });
    expect(full.commits).toEqual([]);
    expect(reads.n).toBeGreaterThan(4_800);
    reads.n = 0;
    const work = { left: 500 };
    const cut = await rangeWalk(commits, { include: ["c100"], exclude: ["c4999"], work });
    expect(cut.exhausted).toBe(true);
    expect(reads.n).toBeLessThanOrEqual(1_000);
    // the budget is shared: a later walk finds nothing left
    reads.n = 0;
    expect((await rangeWalk(commits, { include: ["c200"], exclude: ["c4999"], work })).exhausted).toBe(true);
    expect(reads.n).toBeLessThanOrEqual(2);
  });

  it("within its budget a walk answers as without one", async () => {
    const { commits } = linear(300);
    const work = { left: 10_000 };
    const a = await rangeWalk(commits, { include: ["c299"], exclude: ["c250"], work });
    const b = await rangeWalk(commits, { include: ["c299"], exclude: ["c250"] });
    expect(a).toEqual(b);
    expect(a.commits).toHaveLength(49);
  });
});
