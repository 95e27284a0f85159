/**
 * What the refs reach: the one rule for serving an object by its id. A ref tip, a commit a tip
 * reaches, or a tree, blob or tag a ref reaches is served; what a force-push or a deleted ref left
 * behind answers as missing — on the wire (upload-pack's wants) and through the REST API alike.
 * While no ref was ever deleted or moved back (`state.unreachable` false), everything stored is
 * reachable and nothing is walked.
 */
import { createHash } from "node:crypto";
import { compareOid, fromHex } from "./bytes.ts";
import { parseTag } from "./objects/commit.ts";
import { forEachTreeEntry, MODE } from "./objects/tree.ts";
import type { ObjectType } from "./objects/object.ts";
import { LruCache, type ObjectReader } from "./pack/reader.ts";
import type { RepoState } from "./storage/ref-store.ts";
import { type Commits, objectsToSend, rangeWalk } from "./walk.ts";

/**
 * A set of object ids kept as their sorted 20-byte forms: 20 bytes an id, where a Set of hex
 * strings took ~100 — so the caches below keep the reach of repositories of up to ~800,000 objects
 * (a Set's was refused past ~160,000, and such a repository was walked again on every request).
 */
export class SortedOids {
  readonly size: number;
  private readonly ids: Uint8Array;

  constructor(oids: Iterable<string>) {
    const sorted = [...new Set(oids)].sort(); // hex order is byte order
    this.ids = new Uint8Array(sorted.length * 20);
    for (let i = 0; i < sorted.length; i++) this.ids.set(fromHex(sorted[i]!), i * 20);
    this.size = sorted.length;
  }

  has(oid: string): boolean {
    const key = fromHex(oid);
    if (key.length !== 20) return false;
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareOid(this.ids, mid * 20, key, 0);
      if (c === 0) return true;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** Bytes held (a cache's budget). */
  get bytes(): number {
    return this.ids.length + 64;
  }
}

/** Objects the refs reach, by the set of their ids (objects are content: the same ids reach the same objects anywhere). */
const REACHED = new LruCache<SortedOids>(32 * 1024 * 1024);
/** Commits the refs reach, by the same key: what an id in a REST route needs (a permalink to an old commit). */
const HISTORY = new LruCache<SortedOids>(16 * 1024 * 1024);

/** What the refs name, peeled: the commits, the trees, and every other object (tags on the way, blobs). */
export async function refEnds(state: RepoState, commits: Commits): Promise<{ commits: string[]; trees: string[]; others: string[] }> {
  const out = { commits: [] as string[], trees: [] as string[], others: [] as string[] };
  for (const r of state.refs) {
    let cur = r.oid;
    for (let i = 0; i < 100; i++) {
      const o = await commits.reader.read(cur);
      if (!o) break;
      if (o.type === "commit") out.commits.push(cur);
      else if (o.type === "tree") out.trees.push(cur);
      else out.others.push(cur);
      if (o.type !== "tag") break;
      cur = parseTag(o.data).object;
    }
  }
  return out;
}

/**
 * The ids the refs name directly (and, for annotated tags, what they peel to), made once per
 * state read (a RefStore's state is a snapshot): a push checks each of its commands against them,
 * and 10,000 commands beside 55,000 refs built the set 10,000 times.
 */
function tipsOf(state: RepoState): Set<string> {
  let tips = TIPS.get(state);
  if (!tips) {
    tips = new Set<string>();
    for (const r of state.refs) {
      tips.add(r.oid);
      if (r.peeled) tips.add(r.peeled);
    }
    TIPS.set(state, tips);
  }
  return tips;
}
const TIPS = new WeakMap<RepoState, Set<string>>();

/**
 * The first of `oids` no ref reaches (null: every one is reached). Each must exist — one that
 * does not is returned as unreached. Only when some ref was ever deleted or moved back is anything
 * walked: against the set of objects the refs reach when it is known (walked once per set of ref
 * tips, when a tree, blob or tag was asked for: a partial clone's lazy fetches ask again and again
 * while the refs stay where they are), else commits against the history the refs reach (walked
 * once per set of ref tips too).
 */
export async function firstUnreached(oids: readonly string[], state: RepoState, reader: ObjectReader, commits: Commits): Promise<string | null> {
  const tips = tipsOf(state);
  const otherCommits: string[] = [];
  const otherObjects: string[] = [];
  for (const oid of oids) {
    if (tips.has(oid)) continue;
    const type: ObjectType | null = await reader.typeOf(oid);
    if (!type) return oid;
    if (type === "commit") otherCommits.push(oid);
    else otherObjects.push(oid);
  }
  // while no ref was ever deleted or moved back, everything stored is reachable (a fork starts
  // `unreachable` when its base's packs hold what its refs do not reach: queries/repos.ts forkGit)
  if ((otherCommits.length === 0 && otherObjects.length === 0) || !state.unreachable) return null;
  const key = tipsKey(state);
  const known = REACHED.get(key);
  if (known) return [...otherCommits, ...otherObjects].find((o) => !known.has(o)) ?? null;
  const ends = await refEnds(state, commits);
  if (otherCommits.length > 0) {
    let history = HISTORY.get(key);
    if (!history) {
      history = new SortedOids((await rangeWalk(commits, { include: ends.commits, exclude: [] })).commits);
      HISTORY.set(key, history, history.bytes);
    }
    const missing = otherCommits.find((c) => !history!.has(c));
    if (missing) return missing;
  }
  if (otherObjects.length === 0) return null;
  const reached = await reachedObjects(state, reader, commits, key, ends);
  return otherObjects.find((o) => !reached.has(o)) ?? null;
}

/** The caches' key: the set of ref tips (objects are content: the same tips reach the same objects). */
const tipsKey = (state: RepoState) => {
  let key = TIPS_KEYS.get(state);
  if (key === undefined) {
    key = createHash("sha1").update(state.refs.map((r) => r.oid).sort().join("\n")).digest("hex");
    TIPS_KEYS.set(state, key);
  }
  return key;
};
/** tipsKey's answers, once per state read. */
const TIPS_KEYS = new WeakMap<RepoState, string>();

/** Every object the refs reach (walked once per set of ref tips, then kept). */
async function reachedObjects(state: RepoState, reader: ObjectReader, commits: Commits, key = tipsKey(state), known?: Awaited<ReturnType<typeof refEnds>>): Promise<SortedOids> {
  const cached = REACHED.get(key);
  if (cached) return cached;
  const ends = known ?? (await refEnds(state, commits));
  const all = await rangeWalk(commits, { include: ends.commits, exclude: [] });
  const reached = new SortedOids([...ends.others, ...(await objectsToSend(reader, commits, all.commits, [], { trees: ends.trees }))]);
  REACHED.set(key, reached, reached.bytes);
  return reached;
}

/**
 * How many objects the repository holds as far as an answer may tell: every stored one while
 * nothing was left behind, else those the refs reach (what git's approximate object count would
 * be after a prune) — so a count never tells that hidden objects are still stored.
 */
export async function visibleObjectCount(state: RepoState, reader: ObjectReader, commits: Commits): Promise<number> {
  if (!state.unreachable) return state.packs.reduce((n, p) => n + p.objects, 0);
  return (await reachedObjects(state, reader, commits)).size;
}

/**
 * The first object a pushed pack builds on (`IndexedPack.outside`: parents, trees, entries and tag
 * targets it names without containing them, its thin bases) that no ref reaches — null when every
 * one is reached. git's receive-pack takes any stored object here; this one does not, or a push
 * (into a fork, which reads its base's stored packs) could name what a force-push or deleted
 * branch left behind and make it readable again. Commits are judged against the history the refs
 * reach; other objects first against the trees of the commits the pack builds on (where what a new
 * tree keeps unchanged lives), then, for any not found there, against everything the refs reach.
 */
export async function firstUnreachedOutside(outside: readonly string[], state: RepoState, reader: ObjectReader, commits: Commits): Promise<string | null> {
  if (outside.length === 0 || !state.unreachable) return null;
  const tips = tipsOf(state);
  const bases: string[] = [];
  const others = new Set<string>();
  for (const oid of outside) {
    const type = await reader.typeOf(oid);
    if (!type) return oid;
    // a commit is a base even when a ref names it: a push builds on the tips it updates
    if (type === "commit") bases.push(oid);
    else if (!tips.has(oid)) others.add(oid);
  }
  const commit = await firstUnreached(bases, state, reader, commits);
  if (commit !== null || others.size === 0) return commit;
  const seen = new Set<string>();
  const stack: string[] = [];
  for (const c of bases) stack.push((await commits.get(c)).tree);
  while (stack.length > 0 && others.size > 0) {
    const tree = stack.pop()!;
    if (seen.has(tree)) continue;
    seen.add(tree);
    others.delete(tree);
    const o = await reader.read(tree);
    if (o?.type !== "tree") continue;
    forEachTreeEntry(o.data, (mode, oid) => {
      if (mode === MODE.gitlink) return;
      others.delete(oid);
      if (mode === MODE.tree && !seen.has(oid)) stack.push(oid);
    });
  }
  return others.size === 0 ? null : firstUnreached([...others], state, reader, commits);
}
