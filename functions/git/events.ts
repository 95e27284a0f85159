/**
 * What a push (or an API commit) changed, for the caller to record as Gitea activity
 * (`commit_repo`, `push_tag`, `delete_branch`, `delete_tag`) and webhook payloads.
 */
import type { Signature } from "./objects/commit.ts";

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
