/**
 * A push's event → Gitea's activity rows (services/feed/notifier.go PushCommits, CreateRef,
 * DeleteRef, with services/repository/push.go's order), as statements that ride in the ref
 * commit's own write batch and apply only when its compare-and-swap held. One function, so the
 * event outbox can take it over whole.
 */
import type { BatchItem } from "../db/driver.ts";
import type { EventRows, Guard, RepoAfter } from "../db/queries/git-refs.ts";
import type { CommitSummary, PushEvent, RefChange } from "../git/events.ts";
import { goTime } from "../convert/time.ts";
import { pushHookRows, type HookSource } from "./hooks.ts";

/** Activity op types of a push (Gitea models/activities ActionType). */
export const PUSH_OP = { commitRepo: 5, pushTag: 9, deleteTag: 16, deleteBranch: 17 } as const;

const ZERO = "0".repeat(40);

/** Who pushed into which repository: what the rows need beyond the event. */
export interface PushActor {
  actUserId: number;
  ownerId: number;
  ownerName: string;
  repoName: string;
  isPrivate: boolean;
  /** The repository and pusher as webhook payloads show them (the organization's hooks get tasks). */
  hooks?: HookSource;
}


/** Gitea's PushCommit. */
const pushCommit = (c: CommitSummary) => ({
  Sha1: c.oid,
  Message: c.message,
  AuthorEmail: c.author.email,
  AuthorName: c.author.name,
  CommitterEmail: c.committer.email,
  CommitterName: c.committer.name,
  Timestamp: goTime(c.committer),
});

/**
 * Gitea's PushCommits JSON: a deleted ref's is `NewPushCommits()`; a new tag's names no commits
 * but its commit as the head and a compare from the zero id (services/repository/push.go).
 */
function pushCommitsJson(a: PushActor, r: RefChange): string {
  if (r.kind === "delete") return JSON.stringify({ Commits: [], HeadCommit: null, CompareURL: "", Len: 0 });
  if (r.name.startsWith("refs/tags/")) {
    return JSON.stringify({ Commits: [], HeadCommit: r.head ? pushCommit(r.head) : null, CompareURL: `${a.ownerName}/${a.repoName}/compare/${ZERO}...${r.new}`, Len: 0 });
  }
  if (!r.name.startsWith("refs/heads/")) return JSON.stringify({ Commits: [], HeadCommit: null, CompareURL: "", Len: 0 });
  const commits = r.commits.map(pushCommit);
  return JSON.stringify({
    Commits: commits,
    HeadCommit: commits[0] ?? null,
    CompareURL: `${a.ownerName}/${a.repoName}/compare/${r.old ?? ZERO}...${r.new}`,
    Len: r.totalCommits,
  });
}

/** The (op type, content) rows Gitea's notifier writes for one ref change, in its order. */
export function pushActivities(a: PushActor, r: RefChange): { opType: number; content: string }[] {
  const tag = r.name.startsWith("refs/tags/");
  if (tag) return [{ opType: r.kind === "delete" ? PUSH_OP.deleteTag : PUSH_OP.pushTag, content: pushCommitsJson(a, r) }];
  if (!r.name.startsWith("refs/heads/")) return [];
  if (r.kind === "delete") return [{ opType: PUSH_OP.deleteBranch, content: "" }];
  const out = [];
  // CreateRef of a new branch, then its PushCommits.
  if (r.kind === "create") out.push({ opType: PUSH_OP.commitRepo, content: "" });
  out.push({ opType: PUSH_OP.commitRepo, content: pushCommitsJson(a, r) });
  return out;
}

/**
 * The repository as the push leaves it, as Gitea notifies after pushNewBranch: the first branch
 * pushed into an empty repository is its default branch, and it is no longer empty.
 */
function hookSourceAfter(s: HookSource, after: RepoAfter): HookSource {
  const repo = s.repo.repo;
  const defaultBranch = after.defaultBranch ?? repo.defaultBranch;
  const size = Math.max(0, repo.size + after.sizeDelta);
  if (defaultBranch === repo.defaultBranch && after.empty === repo.isEmpty && size === repo.size) return s;
  return { ...s, repo: { ...s.repo, repo: { ...repo, defaultBranch, isEmpty: after.empty, size } } };
}

/** The event→rows conversion for LibsqlRefStore: one `action` row per activity and receiver (actor, owner). */
export function pushEventRows(a: PushActor, now: () => number = () => Math.floor(Date.now() / 1000)): EventRows {
  return (repoId: number, event: PushEvent, guard: Guard, after: RepoAfter): BatchItem[] => {
    const receivers = [...new Set([a.actUserId, a.ownerId])];
    const hooks = a.hooks && hookSourceAfter(a.hooks, after);
    const hookItems: BatchItem[] = [];
    const t = now();
    // every activity row of the push in one statement, in order (a push creating 50,000 branches
    // sent 200,000 statements, each prepared by sqld: its batch outlasted the query timeout)
    const rows: [number, number, string, string][] = [];
    for (const r of event.refs) {
      for (const act of pushActivities(a, r)) for (const uid of receivers) rows.push([uid, act.opType, r.name, act.content]);
      if (hooks) hookItems.push(...pushHookRows(hooks, r, guard, t));
    }
    if (rows.length === 0) return hookItems;
    const activity: BatchItem = {
      text: `INSERT INTO action (user_id, op_type, act_user_id, repo_id, ref_name, is_private, content, created_unix)
        SELECT json_extract(e.value, '$[0]'), json_extract(e.value, '$[1]'), ?, ?, json_extract(e.value, '$[2]'), ?, json_extract(e.value, '$[3]'), ? FROM json_each(?) e WHERE ${guard.sql} ORDER BY e.key`,
      args: [a.actUserId, repoId, a.isPrivate ? 1 : 0, t, JSON.stringify(rows), ...guard.args],
    };
    return [activity, ...hookItems];
  };
}
