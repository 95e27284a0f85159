/**
 * History and object walks over an ObjectReader: what to send for a fetch (commits reachable from
 * the wants but not from the client's common commits, then their trees minus what the boundary
 * commits already give the client), shallow boundaries (`deepen N`), fast-forward checks and the
 * commit ranges a push introduced. All walks read objects on demand; nothing is loaded whole.
 */
import { GitError } from "./errors.ts";
import { parseCommitLinks, parseTag } from "./objects/commit.ts";
import { forEachTreeEntry } from "./objects/tree.ts";
import type { ObjectReader } from "./pack/reader.ts";

/** The parts of a commit a walk needs. */
export interface CommitLinks {
  tree: string;
  parents: string[];
  time: number;
}

/** Parsed-commit cache for one request (commits are small; a walk revisits them). */
export class Commits {
  private readonly cache = new Map<string, CommitLinks>();
  readonly reader: ObjectReader;

  constructor(reader: ObjectReader) {
    this.reader = reader;
  }

  /** The commit's tree, parents and committer time; throws `missing`/`corrupt` otherwise. */
  async get(oid: string): Promise<CommitLinks> {
    let c = this.cache.get(oid);
    if (!c) {
      const o = await this.reader.read(oid);
      if (!o) throw new GitError("missing", `commit ${oid} not found`);
      if (o.type !== "commit") throw new GitError("invalid", `${oid} is a ${o.type}, not a commit`);
      c = parseCommitLinks(o.data);
      this.cache.set(oid, c);
    }
    return c;
  }

  /** Follows annotated tags to what they finally point at: [oid, type]. */
  async peel(oid: string): Promise<{ oid: string; type: string }> {
    let cur = oid;
    for (let i = 0; i < 100; i++) {
      const o = await this.reader.read(cur);
      if (!o) throw new GitError("missing", `object ${cur} not found`);
      if (o.type !== "tag") return { oid: cur, type: o.type };
      cur = parseTag(o.data).object;
    }
    throw new GitError("corrupt", "tag chain too long");
  }
}

/** A max-heap of commits by committer time (git walks newest first). */
export class DateQueue {
  private readonly items: { oid: string; time: number }[] = [];
  get length(): number {
    return this.items.length;
  }
  push(oid: string, time: number) {
    const a = this.items;
    a.push({ oid, time });
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]!.time >= a[i]!.time) break;
      [a[p], a[i]] = [a[i]!, a[p]!];
      i = p;
    }
  }
  pop(): { oid: string; time: number } | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l]!.time > a[m]!.time) m = l;
        if (r < a.length && a[r]!.time > a[m]!.time) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }
}

/** Result of a range walk: commits to include (newest first) and the excluded commits touching them. */
export interface RangeResult {
  commits: string[];
  /** Excluded commits that are parents of included ones (their trees are what the client has). */
  edges: string[];
}

/**
 * Commits reachable from `include` and not from `exclude` (git rev-list `A --not B`), in date
 * order. `parentless` commits are treated as roots (shallow boundaries). Stops once only excluded
 * commits remain queued (with git's slop of a few extra commits for clock skew). `limit` caps the
 * included commits returned (the walk of excluded history is not capped); `stopAfter` ends the
 * walk after that many included commits (cheap, approximate: for push summaries only). `since`
 * leaves out commits whose committer time is older (rev-list `--max-age`): without `exclude` the
 * walk does not go past them; with it they are excluded like `exclude`'s, ancestors and all (git
 * runs the walk limited then).
 */
export async function rangeWalk(
  commits: Commits,
  opts: { include: readonly string[]; exclude: readonly string[]; parentless?: ReadonlySet<string>; limit?: number; stopAfter?: number; since?: number },
): Promise<RangeResult> {
  const flags = new Map<string, number>();
  const SEEN = 1;
  const UNINTERESTING = 2;
  const POPPED = 4;
  const q = new DateQueue();
  const interesting: string[] = [];
  let queuedInteresting = 0; // interesting commits still queued: the walk ends when none are left
  const add = async (oid: string, uninteresting: boolean) => {
    const f = flags.get(oid);
    if (f !== undefined) {
      if (uninteresting && !(f & UNINTERESTING)) await markUninteresting(oid);
      return;
    }
    const c = await commits.get(oid);
    flags.set(oid, SEEN | (uninteresting ? UNINTERESTING : 0));
    if (!uninteresting) queuedInteresting++;
    q.push(oid, c.time);
  };
  // propagate through already-seen ancestry (git's mark_parents_uninteresting)
  const markUninteresting = async (oid: string) => {
    const stack = [oid];
    while (stack.length) {
      const o = stack.pop()!;
      const f = flags.get(o);
      if (f === undefined || f & UNINTERESTING) continue;
      flags.set(o, f | UNINTERESTING);
      if (!(f & POPPED)) queuedInteresting--;
      if (opts.parentless?.has(o)) continue;
      for (const p of (await commits.get(o)).parents) if (flags.has(p)) stack.push(p);
    }
  };
  for (const oid of opts.exclude) await add(oid, true);
  for (const oid of opts.include) await add(oid, false);
  let slop = 5;
  while (q.length > 0) {
    const { oid, time } = q.pop()!;
    const f = flags.get(oid)!;
    flags.set(oid, f | POPPED);
    let uninteresting = (f & UNINTERESTING) !== 0;
    if (!uninteresting && opts.since !== undefined && time < opts.since) {
      queuedInteresting--;
      if (opts.exclude.length === 0) continue; // rev-list --max-age unlimited: not shown, parents not walked
      await markUninteresting(oid); // limited: uninteresting, and so is all it reaches
      uninteresting = true;
    }
    if (!uninteresting) {
      queuedInteresting--;
      interesting.push(oid);
      // approximate early stop (push summaries only): later exclusions could still drop some
      if (opts.stopAfter !== undefined && interesting.length >= opts.stopAfter) break;
    }
    if (!opts.parentless?.has(oid)) {
      for (const p of (await commits.get(oid)).parents) await add(p, uninteresting);
    }
    if (queuedInteresting === 0) {
      if (--slop <= 0) break;
    } else slop = 5;
  }
  const result = interesting.filter((o) => !(flags.get(o)! & UNINTERESTING));
  const edges = new Set<string>();
  for (const o of result) {
    if (opts.parentless?.has(o)) continue;
    for (const p of (await commits.get(o)).parents) if (flags.get(p)! & UNINTERESTING) edges.add(p);
  }
  return { commits: opts.limit === undefined ? result : result.slice(0, opts.limit), edges: [...edges] };
}

/**
 * Shallow boundary for `deepen depth` from `wants` (git's get_shallow_commits): commits whose
 * minimal distance from a want is `depth` are shallow; nearer ones are not. Client-shallow commits
 * that are now nearer than `depth` are "unshallowed".
 */
export async function shallowBoundary(
  commits: Commits,
  wants: readonly string[],
  depth: number,
  clientShallow: ReadonlySet<string>,
): Promise<{ shallow: string[]; unshallow: string[]; notShallow: Set<string>; boundary: Set<string> }> {
  const dist = new Map<string, number>();
  let frontier: string[] = [];
  for (const w of wants) {
    if (!dist.has(w)) {
      dist.set(w, 1);
      frontier.push(w);
    }
  }
  const boundary = new Set<string>();
  const notShallow = new Set<string>();
  for (let d = 1; frontier.length > 0; d++) {
    const next: string[] = [];
    for (const oid of frontier) {
      if (d >= depth) {
        boundary.add(oid);
        continue;
      }
      notShallow.add(oid);
      for (const p of (await commits.get(oid)).parents) {
        if (!dist.has(p)) {
          dist.set(p, d + 1);
          next.push(p);
        }
      }
    }
    frontier = next;
  }
  return {
    shallow: [...boundary].filter((o) => !clientShallow.has(o)),
    unshallow: [...clientShallow].filter((o) => notShallow.has(o)),
    notShallow,
    boundary,
  };
}

/**
 * Shallow boundary for `deepen-since` / `deepen-not` (git's get_shallow_commits_by_rev_list): the
 * commits of `rev-list --max-age=<since> <wants> --not <not>` are sent; those of them with a parent
 * outside are shallow. Client-shallow commits now inside and not on the boundary are "unshallowed".
 */
export async function shallowByRevList(
  commits: Commits,
  wants: readonly string[],
  opts: { since?: number; not: readonly string[] },
  clientShallow: ReadonlySet<string>,
): Promise<{ shallow: string[]; unshallow: string[]; notShallow: Set<string>; boundary: Set<string> }> {
  const inside = new Set((await rangeWalk(commits, { include: wants, exclude: opts.not, since: opts.since })).commits);
  if (inside.size === 0) throw new GitError("bad-request", "no commits selected for shallow requests");
  const boundary = new Set<string>();
  const notShallow = new Set<string>();
  for (const oid of inside) {
    if ((await commits.get(oid)).parents.some((p) => !inside.has(p))) boundary.add(oid);
    else notShallow.add(oid);
  }
  return {
    shallow: [...boundary].filter((o) => !clientShallow.has(o)),
    unshallow: [...clientShallow].filter((o) => notShallow.has(o)),
    notShallow,
    boundary,
  };
}

/**
 * Every object to send: the commits given, their trees and blobs, minus everything reachable from
 * the trees of `edgeCommits` (which the client has). Order: commits, then trees and blobs as met.
 */
export async function objectsToSend(reader: ObjectReader, commits: Commits, sendCommits: readonly string[], edgeCommits: readonly string[]): Promise<string[]> {
  const seen = new Set<string>();
  const out: string[] = [];
  const walkTree = async (root: string, collect: boolean) => {
    if (seen.has(root)) return;
    seen.add(root);
    if (collect) out.push(root);
    const stack = [root];
    while (stack.length) {
      const t = stack.pop()!;
      const o = await reader.read(t);
      if (!o) throw new GitError("missing", `tree ${t} not found`);
      if (o.type !== "tree") throw new GitError("corrupt", `${t} is a ${o.type}, expected a tree`);
      forEachTreeEntry(o.data, (mode, oid) => {
        if (mode === "160000" || seen.has(oid)) return; // submodule commits live elsewhere
        seen.add(oid);
        if (collect) out.push(oid);
        if (mode === "40000") stack.push(oid);
      });
    }
  };
  for (const e of edgeCommits) await walkTree((await commits.get(e)).tree, false);
  for (const c of sendCommits) {
    if (!seen.has(c)) {
      seen.add(c);
      out.push(c);
    }
  }
  for (const c of sendCommits) await walkTree((await commits.get(c)).tree, true);
  return out;
}

/** True when `ancestor` is reachable from `descendant` (a fast-forward from ancestor). */
export async function isAncestor(commits: Commits, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant) return true;
  const r = await rangeWalk(commits, { include: [ancestor], exclude: [descendant] });
  return r.commits.length === 0;
}

/**
 * For v0/v2 negotiation ("ready"): true when from every want some common commit is reachable
 * (git's ok_to_give_up). The walk is bounded by `budget` commits over all wants, so a hostile or
 * huge request stays cheap; running out means "not ready yet" (the client keeps negotiating).
 */
export async function allWantsReachCommon(commits: Commits, wants: readonly string[], common: ReadonlySet<string>, budget = 4000): Promise<boolean> {
  if (common.size === 0) return false;
  let remaining = budget;
  for (const w of wants) {
    if (common.has(w)) continue;
    const seen = new Set<string>([w]);
    const q = new DateQueue();
    q.push(w, (await commits.get(w)).time);
    let found = false;
    while (q.length > 0 && !found) {
      if (--remaining < 0) return false;
      const { oid } = q.pop()!;
      for (const p of (await commits.get(oid)).parents) {
        if (common.has(p)) {
          found = true;
          break;
        }
        if (!seen.has(p)) {
          seen.add(p);
          q.push(p, (await commits.get(p)).time);
        }
      }
    }
    if (!found) return false;
  }
  return true;
}
