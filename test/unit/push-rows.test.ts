/**
 * A push's activity rows (events/push.ts) ride in its commit batch as ONE statement, whatever the
 * number of refs: a push creating 50,000 branches sent 200,000 statements, each prepared by sqld,
 * and the Worker's batch outlasted the query timeout (503). The rows and their order are the same.
 */
import { describe, expect, it } from "vitest";
import type { RefChange } from "../../functions/git/events.ts";
import { PUSH_OP, pushEventRows } from "../../functions/events/push.ts";

const guard = { sql: "(SELECT ok FROM git_tx WHERE id = ?)", args: ["tx"] };
const branch = (i: number): RefChange => ({ name: `refs/heads/b${i}`, old: null, new: "1".repeat(40), kind: "create", commits: [], totalCommits: 0, forced: false });

describe("push activity rows", () => {
  it("one statement for every activity of every ref and receiver, in the notifier's order", () => {
    const rows = pushEventRows({ actUserId: 7, ownerId: 9, ownerName: "o", repoName: "r", isPrivate: true }, () => 1000);
    const items = rows(3, { refs: Array.from({ length: 1000 }, (_, i) => branch(i)) }, guard, { defaultBranch: null, empty: false, sizeDelta: 0 });
    expect(items).toHaveLength(1);
    const [item] = items;
    expect(item!.args.slice(0, 4)).toEqual([7, 3, 1, 1000]);
    expect(item!.args.at(-1)).toBe("tx");
    const list = JSON.parse(item!.args[4] as string) as [number, number, string, string][];
    // each branch: CreateRef, then PushCommits, each to the actor and to the owner
    expect(list).toHaveLength(4000);
    expect(list.slice(0, 4).map(([uid, op, ref]) => [uid, op, ref])).toEqual([
      [7, PUSH_OP.commitRepo, "refs/heads/b0"],
      [9, PUSH_OP.commitRepo, "refs/heads/b0"],
      [7, PUSH_OP.commitRepo, "refs/heads/b0"],
      [9, PUSH_OP.commitRepo, "refs/heads/b0"],
    ]);
    expect(list[4]![2]).toBe("refs/heads/b1");
  });

  it("no activity (refs outside heads and tags): no statement", () => {
    const rows = pushEventRows({ actUserId: 7, ownerId: 7, ownerName: "o", repoName: "r", isPrivate: false });
    expect(rows(3, { refs: [{ ...branch(0), name: "refs/pull/1/head" }] }, guard, { defaultBranch: null, empty: false, sizeDelta: 0 })).toEqual([]);
  });
});
