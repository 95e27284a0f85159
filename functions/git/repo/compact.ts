/**
 * Compaction: every push and API commit adds a pack, and each request then searches every pack's
 * index. `compactPacks` merges the packs a repository owns into one (entries copied raw, deltas
 * kept, duplicates dropped; the result is indexed like a push) and swaps them in the catalog in one
 * RefStore commit. Objects no ref reaches are kept (as the stored union; a reachability repack is
 * left to a later change). The old files are returned, not deleted: requests that opened them may
 * still be reading, so the caller deletes them after a grace period.
 */
import { ByteReader } from "../bytes.ts";
import { GitError } from "../errors.ts";
import { type IndexLimits, indexPack } from "../pack/indexer.ts";
import { ObjectReader } from "../pack/reader.ts";
import { writeAllPacks } from "../pack/writer.ts";
import { isBranchRef } from "../refname.ts";
import { type ObjectStore, packFileNames } from "../storage/object-store.ts";
import type { PackRecord, RefStore } from "../storage/ref-store.ts";

/** What a compaction did. */
export interface Compaction {
  pack: PackRecord;
  /** Catalog entries replaced; delete their files (`packFileNames`) once no request can use them. */
  removed: PackRecord[];
}

/**
 * Merges the repository's own packs (shared fork packs stay shared) when there are at least
 * `minPacks`. Returns null when there was nothing to do or another compaction won the race.
 */
export async function compactPacks(ctx: { repoId: string; objects: ObjectStore; refs: RefStore }, opts: { minPacks?: number; limits?: Partial<IndexLimits> } = {}): Promise<Compaction | null> {
  const state = await ctx.refs.read(ctx.repoId);
  const own = state.packs.filter((p) => p.repoId === ctx.repoId);
  if (own.length < Math.max(2, opts.minPacks ?? 2)) return null;
  const sources = await ObjectReader.open(ctx.objects, own);
  const all = await ObjectReader.open(ctx.objects, state.packs);
  const merged = await writeAllPacks(sources, { ofsDelta: true });
  const indexed = await indexPack(new ByteReader(merged), {
    repoId: ctx.repoId,
    store: ctx.objects,
    existing: all,
    limits: { maxPackBytes: Number.MAX_SAFE_INTEGER, ...opts.limits },
  });
  if (!indexed) return null;
  const drop = async () => ctx.objects.delete(ctx.repoId, packFileNames(indexed.record.id)).catch(() => {});
  if (indexed.missing.length > 0) {
    await drop();
    throw new GitError("missing", `compaction found objects referenced but not stored: ${indexed.missing.join(", ")}`);
  }
  const freed = own.reduce((n, p) => n + p.size + p.idxSize, 0);
  const r = await ctx.refs.commit(ctx.repoId, {
    updates: [],
    pack: indexed.record,
    removePacks: own.map((p) => p.id),
    sizeDelta: indexed.record.size + indexed.record.idxSize - freed,
    empty: !state.refs.some((x) => isBranchRef(x.name)),
  });
  if (!r.ok) {
    await drop();
    return null;
  }
  return { pack: indexed.record, removed: own };
}
