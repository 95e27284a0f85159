/**
 * Compaction: every push and API commit adds a pack, and each request then searches every pack's
 * index. `compactPacks` merges packs a repository owns into one (entries copied raw, deltas kept,
 * duplicates dropped; the result is indexed like a push) and swaps them in the catalog in one
 * RefStore commit. Which packs: all of them, or — what the app runs after writes — git's geometric
 * roll-up (`git repack --geometric=2`): the small packs merge while the large ones that already
 * grow by a factor of two stay, so a repository keeps O(log objects) packs and each object is
 * rewritten O(log objects) times, never the whole history per push. Objects no ref reaches are
 * kept (as the stored union; a reachability repack is left to a later change). The old files are
 * returned, not deleted: requests that opened them may still be reading, so the caller deletes
 * them after a grace period.
 */
import { ByteReader } from "../bytes.ts";
import { GitError } from "../errors.ts";
import { type IndexLimits, indexPack } from "../pack/indexer.ts";
import { ObjectReader } from "../pack/reader.ts";
import { writeAllPacks } from "../pack/writer.ts";
import { isBranchRef } from "../refname.ts";
import { type ObjectStore, packFileNames } from "../storage/object-store.ts";
import { commitMayHaveLanded, type PackRecord, type RefStore } from "../storage/ref-store.ts";

/** What a compaction did. */
export interface Compaction {
  pack: PackRecord;
  /** Catalog entries replaced; delete their files (`packFileNames`) once no request can use them. */
  removed: PackRecord[];
}

/** The factor of the geometric progression packs are kept in (git's `--geometric=2`). */
export const GEOMETRIC_FACTOR = 2;

/**
 * The packs git's geometric repack would roll up into one: sorted by object count, the largest
 * packs that already form a progression (each at least `factor` times the one below it) stay; the
 * rest merge, and a kept pack smaller than `factor` times that merged size joins it too. Fewer than
 * two packs to merge means nothing to do (an empty list).
 */
export function geometricRollup<P extends { objects: number }>(packs: readonly P[], factor = GEOMETRIC_FACTOR): P[] {
  const sorted = [...packs].sort((a, b) => a.objects - b.objects);
  // from the largest down: the first pair out of progression ends the kept run
  let split = Math.max(0, sorted.length - 1);
  while (split > 0 && sorted[split]!.objects >= factor * sorted[split - 1]!.objects) split--;
  // the smaller pack of that pair is merged, unless the whole list was one progression
  if (split > 0) split++;
  let total = 0;
  for (let i = 0; i < split; i++) total += sorted[i]!.objects;
  while (split < sorted.length && sorted[split]!.objects < factor * total) total += sorted[split++]!.objects;
  return split >= 2 ? sorted.slice(0, split) : [];
}

/** Which of the repository's own packs a compaction merges: all of them, or the geometric roll-up. */
export type CompactionPlan = "all" | "geometric";

/**
 * Merges packs the repository owns (shared fork packs stay shared): all of them when there are at
 * least `minPacks`, or the geometric roll-up (`plan: "geometric"`), whose largest packs are left
 * out while the merge would exceed `maxBytes` of pack data; nothing while the repository owns fewer
 * than `minOwn` packs. Returns null when there was nothing to do or another compaction won the
 * race; a commit that throws (the repository was deleted meanwhile) deletes the new files first.
 */
export async function compactPacks(
  ctx: { repoId: string; objects: ObjectStore; refs: RefStore },
  opts: { minPacks?: number; minOwn?: number; plan?: CompactionPlan; maxBytes?: number; limits?: Partial<IndexLimits> } = {},
): Promise<Compaction | null> {
  const state = await ctx.refs.read(ctx.repoId);
  const own = state.packs.filter((p) => p.repoId === ctx.repoId);
  if (own.length < (opts.minOwn ?? 0)) return null;
  let merge = opts.plan === "geometric" ? geometricRollup(own) : own;
  if (opts.maxBytes !== undefined) {
    // the roll-up is sorted small to large: drop from the top until it fits
    const sorted = [...merge].sort((a, b) => a.objects - b.objects);
    while (sorted.length > 0 && sorted.reduce((n, p) => n + p.size, 0) > opts.maxBytes) sorted.pop();
    merge = sorted;
  }
  if (merge.length < Math.max(2, opts.minPacks ?? 2)) return null;
  // in catalog order, so that the first copy of an object stays the one readers found first
  const chosen = new Set(merge.map((p) => p.id));
  merge = own.filter((p) => chosen.has(p.id));
  const sources = await ObjectReader.open(ctx.objects, merge);
  const all = await ObjectReader.open(ctx.objects, state.packs);
  const merged = await writeAllPacks(sources, { ofsDelta: true });
  const indexed = await indexPack(new ByteReader(merged), {
    repoId: ctx.repoId,
    store: ctx.objects,
    existing: all,
    // what it merges was accepted already: no bound on what the merged pack expands to (a push's
    // bound, checked pack by pack, could refuse the merge of an honest history for good)
    limits: { maxPackBytes: Number.MAX_SAFE_INTEGER, maxExpansion: Number.POSITIVE_INFINITY, ...opts.limits },
  });
  if (!indexed) return null;
  const drop = async () => ctx.objects.delete(ctx.repoId, packFileNames(indexed.record.id)).catch(() => {});
  if (indexed.missing.length > 0) {
    await drop();
    throw new GitError("missing", `compaction found objects referenced but not stored: ${indexed.missing.join(", ")}`);
  }
  const freed = merge.reduce((n, p) => n + p.size + p.idxSize, 0);
  const r = await ctx.refs
    .commit(ctx.repoId, {
      updates: [],
      pack: indexed.record,
      removePacks: merge.map((p) => p.id),
      sizeDelta: indexed.record.size + indexed.record.idxSize - freed,
      empty: !state.refs.some((x) => isBranchRef(x.name)),
    })
    .catch(async (e: unknown) => {
      // a catalog swap whose answer never came may have landed: the merged pack is kept
      if (!commitMayHaveLanded(e)) await drop();
      throw e;
    });
  if (!r.ok) {
    await drop();
    return null;
  }
  return { pack: indexed.record, removed: merge };
}
