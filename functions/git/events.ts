/**
 * What a push (or an API commit) changed, for the caller to record as Gitea activity
 * (`commit_repo`, `push_tag`, `delete_branch`, `delete_tag`) and webhook payloads.
 */
import { GitError } from "./errors.ts";
import { parseCommit, type Signature } from "./objects/commit.ts";
import { parseTree, type TreeEntry } from "./objects/tree.ts";
import { diffTrees } from "./repo/diff.ts";
import { type Commits, isAncestor, rangeWalk } from "./walk.ts";

/** One commit of a pushed range, newest first (Gitea's PushCommit). */
export interface CommitSummary {
  oid: string;
  message: string;
  author: Signature;
  committer: Signature;
  parents: string[];
  /** The paths it changed against its first parent (`git log --name-status`), when the event asked for them. */
  files?: { added: string[]; removed: string[]; modified: string[] };
}

/** Commits a created branch's webhook push lists (Gitea's `CommitsBeforeLimit(10)`). */
const NEW_BRANCH_HISTORY = 10;

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
  /** With file lists asked for: a created tag's commit (an annotated tag peeled), a branch's new tip. */
  head?: CommitSummary;
  /** A created branch's head and history (`git log -n 10`), when file lists were asked for: what Gitea's push webhook lists for a new branch. */
  history?: CommitSummary[];
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
  limits: { maxCommitSummaries: number; maxCommitCount: number; commitFiles?: boolean; eventWalkBudget?: number },
): Promise<PushEvent> {
  const refs: RefChange[] = [];
  // A push creating many refs reads each commit's summary once, walks once per distinct new tip,
  // and its walks together queue at most EVENT_WALK_BUDGET commits (the excluded tips and every
  // commit popped on either side): past that, a created branch lists its last commits along first
  // parents, as Gitea's CommitsBeforeLimit does for every new branch. 10,000 created branches beside 55,000
  // walked 55,000 tips each (178 s of blocked server, audit).
  const summaries = new Map<string, Promise<CommitSummary>>();
  const summary = (oid: string): Promise<CommitSummary> => {
    let s = summaries.get(oid);
    if (!s) {
      s = (async () => {
        const o = await commits.reader.mustRead(oid);
        const c = parseCommit(o.data);
        const out: CommitSummary = { oid, message: c.message, author: c.author, committer: c.committer, parents: c.parents };
        if (limits.commitFiles) out.files = await fileStatus(commits, c.tree, c.parents[0] ?? null);
        return out;
      })();
      summaries.set(oid, s);
    }
    return s;
  };
  const createdRanges = new Map<string, string[]>();
  // every commit the walks queue (excluded tips and what they pop included) is charged to one budget
  const work = { left: limits.eventWalkBudget ?? EVENT_WALK_BUDGET };
  const newBranchRange = async (tip: string): Promise<string[]> => {
    let range = createdRanges.get(tip);
    if (range) return range;
    const walk = work.left > 0 ? await rangeWalk(commits, { include: [tip], exclude: branchTips.filter((t) => t !== tip), stopAfter: limits.maxCommitCount, work }) : null;
    range = walk && !walk.exhausted ? walk.commits : await firstParentLine(commits, tip, limits.maxCommitSummaries);
    createdRanges.set(tip, range);
    return range;
  };
  for (const u of updates) {
    const kind = u.old === null ? "create" : u.new === null ? "delete" : "update";
    const change: RefChange = { name: u.name, old: u.old, new: u.new, kind, commits: [], totalCommits: 0, forced: false };
    if (u.new !== null && u.name.startsWith("refs/heads/")) {
      // the usual push: old is on new's first-parent line with no merge in between
      const chain = u.old !== null ? await linearRange(commits, u.new, u.old, limits.maxCommitCount) : null;
      let range: string[];
      if (chain) range = chain;
      else if (u.old === null) range = await newBranchRange(u.new);
      else {
        range = (await rangeWalk(commits, { include: [u.new], exclude: [u.old], stopAfter: limits.maxCommitCount })).commits;
        change.forced = !(await isAncestor(commits, u.old, u.new));
      }
      change.totalCommits = range.length;
      for (const oid of range.slice(0, limits.maxCommitSummaries)) change.commits.push(await summary(oid));
      // Gitea's push payload names the new tip as its head commit, even when no commit is new (a rewind).
      if (limits.commitFiles) change.head = change.commits[0]?.oid === u.new ? change.commits[0] : await summary(u.new).catch(() => undefined);
      if (limits.commitFiles && u.old === null) {
        const log = await rangeWalk(commits, { include: [u.new], exclude: [], stopAfter: NEW_BRANCH_HISTORY });
        change.history = [];
        for (const oid of log.commits.slice(0, NEW_BRANCH_HISTORY)) change.history.push(await summary(oid));
      }
    } else if (u.new !== null && u.name.startsWith("refs/tags/") && u.old === null) {
      const target = await commits.peel(u.new).catch(() => null);
      if (target?.type === "commit") change.head = await summary(target.oid);
    }
    refs.push(change);
  }
  return { refs };
}

/** Commits the walks of one push's created branches read at most (see buildPushEvent). */
export const EVENT_WALK_BUDGET = 1_000_000;

/** `tip` and its first-parent ancestors, at most `max` (Gitea's CommitsBeforeLimit). */
async function firstParentLine(commits: Commits, tip: string, max: number): Promise<string[]> {
  const out: string[] = [];
  for (let cur: string | undefined = tip; cur !== undefined && out.length < max; cur = (await commits.get(cur)).parents[0]) out.push(cur);
  return out;
}

/**
 * The commits from `tip` back to (excluding) `base` along first parents when that line reaches
 * `base` within `max` commits without a merge; null otherwise (the caller walks by date). Cheap,
 * and immune to clock skew, which can make a date-ordered walk read the whole history.
 */
async function linearRange(commits: Commits, tip: string, base: string, max: number): Promise<string[] | null> {
  const out: string[] = [];
  let cur = tip;
  while (cur !== base) {
    if (out.length >= max) return null;
    const c = await commits.get(cur);
    if (c.parents.length !== 1) return null;
    out.push(cur);
    cur = c.parents[0]!;
  }
  return out;
}

/** A commit's changed paths against its parent (Gitea's GetCommitFileStatus; a type change counts as modified). */
async function fileStatus(commits: Commits, tree: string, parent: string | null): Promise<NonNullable<CommitSummary["files"]>> {
  const trees = {
    async readTree(oid: string): Promise<TreeEntry[]> {
      const o = await commits.reader.read(oid);
      if (o?.type !== "tree") throw new GitError("missing", `tree ${oid} not found`);
      return parseTree(o.data);
    },
  };
  const before = parent ? (await commits.get(parent)).tree : null;
  const files = { added: [] as string[], removed: [] as string[], modified: [] as string[] };
  for (const ch of await diffTrees(trees, before, tree)) (ch.status === "added" ? files.added : ch.status === "removed" ? files.removed : files.modified).push(ch.path);
  return files;
}
