/**
 * What a push (or an API commit) changed, for the caller to record as Gitea activity
 * (`commit_repo`, `push_tag`, `delete_branch`, `delete_tag`) and webhook payloads.
 */
import { parseCommit, type Signature } from "./objects/commit.ts";
import { type Commits, isAncestor, rangeWalk } from "./walk.ts";

/** One commit of a pushed range, newest first (Gitea's PushCommit). */
export interface CommitSummary {
  oid: string;
  message: string;
  author: Signature;
  committer: Signature;
}

/** One ref a push changed. `old`/`new` are null for creation/deletion. */
export interface RefChange {
  name: string;
  old: string | null;
  new: string | null;
  kind: "create" | "update" | "delete";
  /** Commits new to the repository on this ref (newest first, at most the configured cap). */
  commits: CommitSummary[];
  /** How many such commits there are in total (may exceed `commits.length`). */
  totalCommits: number;
  /** True when `new` does not contain `old` (a forced update). */
  forced: boolean;
}

/** The changes of one push, in command order. */
export interface PushEvent {
  refs: RefChange[];
}

/** One applied ref update, as the event builder needs it. */
export interface AppliedUpdate {
  name: string;
  old: string | null;
  new: string | null;
}

/**
 * Builds the event of applied updates: per branch the commits new to it (newest first, capped),
 * counted up to `maxCount`; tags and other refs carry no commits (Gitea's push_tag has none).
 * `branchTips` are the branch tips before the push (a new branch lists what no branch had).
 */
export async function buildPushEvent(
  commits: Commits,
  updates: readonly AppliedUpdate[],
  branchTips: readonly string[],
  limits: { maxCommitSummaries: number; maxCommitCount: number },
): Promise<PushEvent> {
  const refs: RefChange[] = [];
  for (const u of updates) {
    const kind = u.old === null ? "create" : u.new === null ? "delete" : "update";
    const change: RefChange = { name: u.name, old: u.old, new: u.new, kind, commits: [], totalCommits: 0, forced: false };
    if (u.new !== null && u.name.startsWith("refs/heads/")) {
      const exclude = u.old !== null ? [u.old] : branchTips.filter((t) => t !== u.new);
      const range = await rangeWalk(commits, { include: [u.new], exclude, stopAfter: limits.maxCommitCount });
      change.totalCommits = range.commits.length;
      for (const oid of range.commits.slice(0, limits.maxCommitSummaries)) {
        const o = await commits.reader.mustRead(oid);
        const c = parseCommit(o.data);
        change.commits.push({ oid, message: c.message, author: c.author, committer: c.committer });
      }
      if (u.old !== null) change.forced = !(await isAncestor(commits, u.old, u.new));
    }
    refs.push(change);
  }
  return { refs };
}
