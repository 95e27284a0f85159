/**
 * The event seam (issue 9 A.4, a transactional outbox): a write service states what happened —
 * `repository.created`, `repository.renamed`, `repository.visibility`, a push — and this module
 * alone turns each event into the rows it implies, as statements that ride in the write's own batch.
 * The rows exist exactly when the write committed: an event is never lost, and never recorded for a
 * write that failed. An event implies Gitea's activity rows (`action`, shown by the feeds) and, for
 * a repository of an organization, webhook tasks (`hooks.ts`; repository creation and deletion
 * add theirs in services/repos.ts, where the payload's repository is at hand).
 *
 * Pushes are converted by `push.ts` (their rows, activity and webhook tasks, are guarded by the
 * ref store's compare-and-swap).
 */
import { sql } from "drizzle-orm";
import { command, p, type Bound } from "../db/sql.ts";
import { PUSH_OP } from "./push.ts";

/** Gitea's activity op types (models/activities ActionType) this app records. */
export const OP = { createRepo: 1, renameRepo: 2, transferRepo: 8, ...PUSH_OP } as const;
/** The feed's `op_type` names. */
export const OP_NAMES: Record<number, string> = { 1: "create_repo", 2: "rename_repo", 3: "star_repo", 4: "watch_repo", 5: "commit_repo", 8: "transfer_repo", 9: "push_tag", 16: "delete_tag", 17: "delete_branch" };

/** A repository inserted in the same write batch, found by its unique (owner, lower-case name). */
export interface NewRepoRef {
  ownerId: number;
  lowerName: string;
}

/** What a write produced. */
export type RepoEvent =
  | { kind: "repository.created"; repo: NewRepoRef; doerId: number; ownerId: number; isPrivate: boolean }
  | { kind: "repository.renamed"; repoId: number; doerId: number; ownerId: number; isPrivate: boolean; oldName: string }
  | { kind: "repository.visibility"; repoId: number; isPrivate: boolean };

/** Gitea's notifier: activity goes to the actor and, when it is someone else (an organization), the owner. */
const receivers = (e: { doerId: number; ownerId: number }) => [...new Set([e.doerId, e.ownerId])];

type ActivityValues = { uid: number; op: number; actor: number; priv: number; content: string; now: number };

/** The statements, built once. */
const ACTIVITY = {
  /** An activity row of a repository inserted in the same batch. */
  ofNewRepo: command<ActivityValues & { ownerId: number; lowerName: string }>(
    "activityOfNewRepo",
    sql`INSERT INTO action (user_id, op_type, act_user_id, repo_id, is_private, content, created_unix)
      SELECT ${p("uid")}, ${p("op")}, ${p("actor")}, id, ${p("priv")}, ${p("content")}, ${p("now")} FROM repository WHERE owner_id = ${p("ownerId")} AND lower_name = ${p("lowerName")}`,
  ),
  ofRepo: command<ActivityValues & { repoId: number }>(
    "activityOfRepo",
    sql`INSERT INTO action (user_id, op_type, act_user_id, repo_id, is_private, content, created_unix)
      VALUES (${p("uid")}, ${p("op")}, ${p("actor")}, ${p("repoId")}, ${p("priv")}, ${p("content")}, ${p("now")})`,
  ),
  /**
   * A repository made private takes its activity with it. Made public, it leaves its activity as
   * recorded: what happened while it was private (deleted branches, force-pushed commits, old
   * names) stays for those who could see it then (feeds.ts `privateEntryVisible`), as in Gitea.
   */
  madePrivate: command<{ repoId: number }>("activityMadePrivate", sql`UPDATE action SET is_private = 1 WHERE repo_id = ${p("repoId")} AND is_private = 0`),
};

/** The statements each event implies, for the caller's write batch (in event order). */
export function eventStatements(events: readonly RepoEvent[], now: number): Bound<number>[] {
  const out: Bound<number>[] = [];
  for (const e of events) {
    switch (e.kind) {
      case "repository.created":
        for (const uid of receivers(e)) {
          out.push(ACTIVITY.ofNewRepo.bind({ uid, op: OP.createRepo, actor: e.doerId, priv: e.isPrivate ? 1 : 0, content: "", now, ownerId: e.repo.ownerId, lowerName: e.repo.lowerName }));
        }
        break;
      case "repository.renamed":
        // Gitea's content for rename_repo is the old name.
        for (const uid of receivers(e)) {
          out.push(ACTIVITY.ofRepo.bind({ uid, op: OP.renameRepo, actor: e.doerId, priv: e.isPrivate ? 1 : 0, content: e.oldName, now, repoId: e.repoId }));
        }
        break;
      case "repository.visibility":
        if (e.isPrivate) out.push(ACTIVITY.madePrivate.bind({ repoId: e.repoId }));
        break;
    }
  }
  return out;
}
