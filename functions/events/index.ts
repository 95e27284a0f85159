/**
 * The event seam (issue 9 A.4, a transactional outbox): a write service states what happened —
 * `repository.created`, `repository.renamed`, `repository.visibility`, a push — and this module
 * alone turns each event into the rows it implies, as statements that ride in the write's own batch.
 * The rows exist exactly when the write committed: an event is never lost, and never recorded for a
 * write that failed. Today an event implies Gitea's activity rows (`action`, shown by the feeds);
 * webhook tasks for the organization's hooks are the next rows an event implies, added here.
 *
 * Pushes are converted by `push.ts` (their rows are guarded by the ref store's compare-and-swap).
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { action } from "../db/schema.ts";
import { PUSH_OP } from "./push.ts";

/** Gitea's activity op types (models/activities ActionType) this app records. */
export const OP = { createRepo: 1, renameRepo: 2, transferRepo: 8, ...PUSH_OP } as const;
/** The feed's `op_type` names. */
export const OP_NAMES: Record<number, string> = { 1: "create_repo", 2: "rename_repo", 3: "star_repo", 4: "watch_repo", 5: "commit_repo", 8: "transfer_repo", 9: "push_tag", 16: "delete_tag", 17: "delete_branch" };

/** What a write produced. Ids may be SQL (a repository inserted in the same batch). */
export type RepoEvent =
  | { kind: "repository.created"; repoId: SQL | number; doerId: number; ownerId: number; isPrivate: boolean }
  | { kind: "repository.renamed"; repoId: number; doerId: number; ownerId: number; isPrivate: boolean; oldName: string }
  | { kind: "repository.visibility"; repoId: number; isPrivate: boolean };

/** Gitea's notifier: activity goes to the actor and, when it is someone else (an organization), the owner. */
const receivers = (e: { doerId: number; ownerId: number }) => [...new Set([e.doerId, e.ownerId])];

/** The statements each event implies, for the caller's write batch (in event order). */
export function eventStatements(db: Db, events: readonly RepoEvent[], now: number) {
  const out = [];
  for (const e of events) {
    switch (e.kind) {
      case "repository.created":
        out.push(db.insert(action).values(receivers(e).map((uid) => ({ userId: uid, opType: OP.createRepo, actUserId: e.doerId, repoId: e.repoId, isPrivate: e.isPrivate, createdUnix: now }))));
        break;
      case "repository.renamed":
        // Gitea's content for rename_repo is the old name.
        out.push(db.insert(action).values(receivers(e).map((uid) => ({ userId: uid, opType: OP.renameRepo, actUserId: e.doerId, repoId: e.repoId, isPrivate: e.isPrivate, content: e.oldName, createdUnix: now }))));
        break;
      case "repository.visibility":
        // Activity is as private as its repository, so feeds filter it with the repository.
        out.push(db.run(sql`UPDATE action SET is_private = ${e.isPrivate ? 1 : 0} WHERE repo_id = ${e.repoId}`));
        break;
    }
  }
  return out;
}
