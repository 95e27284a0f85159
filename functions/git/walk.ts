/**
 * History and object walks over an ObjectReader: what to send for a fetch (commits reachable from
 * the wants but not from the client's common commits, then their trees minus what the boundary
 * commits already give the client), shallow boundaries (`deepen N`), fast-forward checks and the
 * commit ranges a push introduced. All walks read objects on demand; nothing is loaded whole.
 */
import { GitError } from "./errors.ts";
import { parseCommitLinks, parseTag } from "./objects/commit.ts";
import { forEachTreeEntry, MODE } from "./objects/tree.ts";
import type { ObjectType } from "./objects/object.ts";
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

/**
 * A max-heap of commits by committer time (git walks newest first); commits of the same time come
 * out in the order they went in, as from git's prio_queue (its insertion counter breaks ties).
 */
export class DateQueue {
  private readonly items: { oid: string; time: number; seq: number }[] = [];
  private seq = 0;
  get length(): number {
    return this.items.length;
  }
  push(oid: string, time: number) {
    const a = this.items;
    a.push({ oid, time, seq: this.seq++ });
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(a[i]!, a[p]!)) break;
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
        if (l < a.length && before(a[l]!, a[m]!)) m = l;
        if (r < a.length && before(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }
  /** Whether `fn` holds for every queued commit. */
  every(fn: (oid: string) => boolean): boolean {
    return this.items.every((i) => fn(i.oid));
  }
}

/** Newer first; of the same time, the one queued first. */
const before = (a: { time: number; seq: number }, b: { time: number; seq: number }) => a.time > b.time || (a.time === b.time && a.seq < b.seq);

/** Result of a range walk: commits to include (newest first) and the excluded commits touching them. */
export interface RangeResult {
  commits: string[];
  /** Excluded commits that are parents of included ones (their trees are what the client has). */
  edges: string[];
  /** The walk stopped because `work` ran out (its commits are then incomplete). */
  exhausted?: true;
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
  opts: {
    include: readonly string[];
    exclude: readonly string[];
    parentless?: ReadonlySet<string>;
    limit?: number;
    stopAfter?: number;
    since?: number;
    /** Commits the walk may read, shared by several walks (each commit queued costs one); none left → `exhausted`. */
    work?: { left: number };
  },
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
    if (opts.work && --opts.work.left < 0) throw OUT_OF_WORK;
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
  try {
    for (const oid of opts.exclude) await add(oid, true);
    for (const oid of opts.include) await add(oid, false);
  } catch (e) {
    if (e === OUT_OF_WORK) return { commits: [], edges: [], exhausted: true };
    throw e;
  }
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
      try {
        for (const p of (await commits.get(oid)).parents) await add(p, uninteresting);
      } catch (e) {
        if (e === OUT_OF_WORK) return { commits: [], edges: [], exhausted: true };
        throw e;
      }
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

/** rangeWalk's signal that its shared `work` ran out. */
const OUT_OF_WORK = Symbol("out of work");

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
 * What a partial clone leaves out (`--filter`, parsed by protocol/filter.ts). Objects the fetch
 * names itself are sent whatever the filter says.
 */
export interface ObjectFilter {
  /** Blobs of at least this many bytes are left out (`blob:none` is 0). */
  blobLimit?: number;
  /** Trees and blobs at least this deep are left out (a commit's tree is at depth 0, its entries at 1). */
  treeDepth?: number;
  /** Only objects of these types are sent (`object:type`). */
  types?: ReadonlySet<ObjectType>;
}

/**
 * Every object to send: the commits given, their trees and blobs, minus everything reachable from
 * the trees of `edgeCommits` (which the client has). `trees`: trees the fetch named itself (sent,
 * with what they hold); `taggedTrees`: trees a wanted tag names (the same, unless one is a sent
 * commit's root tree — then the filter judges it as that). `filter` leaves objects out as git's list-objects filters do — an
 * object's depth is the least it is found at (the walk is breadth first), what a fetch names
 * itself (`given`, `trees`) is always sent, and a named tree's entries are at depth 0. Order:
 * commits, then trees and blobs as met (writePack orders the pack by storage anyway).
 */
export async function objectsToSend(
  reader: ObjectReader,
  commits: Commits,
  sendCommits: readonly string[],
  edgeCommits: readonly string[],
  opts: { filter?: ObjectFilter | null; trees?: readonly string[]; taggedTrees?: readonly string[]; given?: ReadonlySet<string> } = {},
): Promise<string[]> {
  const f = opts.filter ?? {};
  const seen = new Set<string>();
  const out: string[] = [];
  const readTree = async (t: string) => {
    const o = await reader.read(t);
    if (!o) throw new GitError("missing", `tree ${t} not found`);
    if (o.type !== "tree") throw new GitError("corrupt", `${t} is a ${o.type}, expected a tree`);
    return o.data;
  };
  for (const e of edgeCommits) {
    // everything the client has, unfiltered
    const root = (await commits.get(e)).tree;
    if (seen.has(root)) continue;
    seen.add(root);
    const stack = [root];
    while (stack.length) {
      // modes come canonical: a zero-padded `040000` is a directory here too (git's canon_mode)
      forEachTreeEntry(await readTree(stack.pop()!), (mode, oid) => {
        if (mode === MODE.gitlink || seen.has(oid)) return; // submodule commits live elsewhere
        seen.add(oid);
        if (mode === MODE.tree) stack.push(oid);
      });
    }
  }
  const keepType = (t: ObjectType) => !f.types || f.types.has(t);
  const shallowEnough = (depth: number) => f.treeDepth === undefined || depth < f.treeDepth;
  for (const c of sendCommits) {
    if (seen.has(c)) continue;
    seen.add(c);
    if (keepType("commit") || opts.given?.has(c)) out.push(c);
  }
  // breadth first, so each object is judged at the least depth it has
  const queue: { oid: string; depth: number }[] = [];
  const drain = async () => {
    for (let i = 0; i < queue.length; i++) {
      const { oid, depth } = queue[i]!;
      const child = depth + 1;
      if (!shallowEnough(child)) continue; // all it holds is too deep (and met nowhere shallower)
      const blobs: string[] = [];
      forEachTreeEntry(await readTree(oid), (mode, e) => {
        if (mode === MODE.gitlink || seen.has(e)) return;
        seen.add(e);
        if (mode !== MODE.tree) blobs.push(e);
        else {
          if (keepType("tree")) out.push(e);
          queue.push({ oid: e, depth: child });
        }
      });
      if (!keepType("blob") || f.blobLimit === 0) continue;
      for (const b of blobs) if (f.blobLimit === undefined || ((await reader.sizeOf(b)) ?? Infinity) < f.blobLimit) out.push(b);
    }
  };
  /** Trees sent whatever the filter says, their entries at depth 0. */
  const named = (trees: readonly string[]) => {
    for (const t of trees) {
      if (seen.has(t)) continue;
      seen.add(t);
      out.push(t);
      queue.push({ oid: t, depth: -1 });
    }
  };
  // a tree the fetch names, itself or through a tag, is sent whatever the filter says — unless it is
  // a sent commit's root tree, which the filter judges as such, entries and all (as git's
  // upload-pack does)
  const roots = new Set<string>();
  if (opts.trees?.length || opts.taggedTrees?.length) for (const c of sendCommits) roots.add((await commits.get(c)).tree);
  named([...(opts.trees ?? []), ...(opts.taggedTrees ?? [])].filter((t) => !roots.has(t)));
  for (const c of sendCommits) {
    const t = (await commits.get(c)).tree;
    if (seen.has(t)) continue;
    seen.add(t);
    // a root tree a ref names itself (a lightweight tag) is sent even where the filter leaves trees
    // out: the client needs every object a ref it fetches names — git's upload-pack leaves it out
    // there, and git's client then fails the clone ("did not send all necessary objects")
    if ((keepType("tree") && shallowEnough(0)) || opts.trees?.includes(t)) out.push(t);
    queue.push({ oid: t, depth: 0 });
  }
  await drain();
  return out;
}

/** True when `ancestor` is reachable from `descendant` (a fast-forward from ancestor). */
export async function isAncestor(commits: Commits, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant) return true;
  const r = await rangeWalk(commits, { include: [ancestor], exclude: [descendant] });
  return r.commits.length === 0;
}

/**
 * For v0/v2 negotiation ("ready"): true when from every want some commit the client has is
 * reachable (git's ok_to_give_up). What the client has: the common commits and, as git's got_oid
 * marks them THEY_HAVE, their parents — so a want that forks from the parent of a common tip (a
 * sibling branch) is ready at once, not after the client has sent its whole history. The walk is
 * bounded by `budget` commits over all wants, so a hostile or huge request stays cheap; running
 * out means "not ready yet" (the client keeps negotiating).
 */
export async function allWantsReachCommon(commits: Commits, wants: readonly string[], common: ReadonlySet<string>, budget = 4000): Promise<boolean> {
  if (common.size === 0) return false;
  const theyHave = new Set(common);
  for (const c of common) {
    // a common tag, tree or blob has no parents to mark
    const links = await commits.get(c).catch(() => null);
    for (const p of links?.parents ?? []) theyHave.add(p);
  }
  let remaining = budget;
  for (const w of wants) {
    if (theyHave.has(w)) continue;
    const seen = new Set<string>([w]);
    const q = new DateQueue();
    q.push(w, (await commits.get(w)).time);
    let found = false;
    while (q.length > 0 && !found) {
      if (--remaining < 0) return false;
      const { oid } = q.pop()!;
      for (const p of (await commits.get(oid)).parents) {
        if (theyHave.has(p)) {
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
