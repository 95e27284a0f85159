/**
 * Rename detection as `git diff -M` does it (git's diffcore-rename.c with diffcore-delta.c's
 * similarity estimate), for the line counts Gitea takes from `git diff --shortstat`: a removed
 * path and an added path are paired when their blobs are identical (exact renames first), when
 * they share a unique basename and are at least 75% similar, or else when they are at least 50%
 * similar, most similar pairs first; beyond git's rename limit only exact and basename renames.
 */
import { MODE } from "../objects/tree.ts";
import type { Pacer } from "../pace.ts";
import type { Change } from "./diff.ts";

/** git's MAX_SCORE (100%) and DEFAULT_RENAME_SCORE (`-M` without a number: 50%). */
const MAX_SCORE = 60_000;
const MIN_SCORE = 30_000;
/** Basename matches need half the way from the minimum to 100% (git's default GIT_BASENAME_FACTOR). */
const MIN_BASENAME_SCORE = MIN_SCORE + Math.trunc(0.5 * (MAX_SCORE - MIN_SCORE));
/** git's diff.renameLimit default: no inexact search over more than 1000 × 1000 pairs. */
const RENAME_LIMIT = 1000;
/** Candidates kept per destination in the similarity matrix (NUM_CANDIDATE_PER_DST). */
const CANDIDATES = 4;
/** diffcore-delta's hash modulus (a prime between 2^16 and 2^17). */
const HASHBASE = 107_927;

/** git's S_ISREG: a blob that is neither a symlink nor a submodule. */
const isRegular = (mode: string | null) => mode !== MODE.symlink && mode !== MODE.gitlink;

const basename = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/** git's basename_same: the two paths end in the same file name. */
const basenameSame = (a: string, b: string) => basename(a) === basename(b);

/**
 * diffcore-delta's hash_chars: the blob cut into chunks ending at LF or after 64 bytes (a CR
 * before LF skipped in text), each hashed into HASHBASE buckets, counting bytes per bucket.
 */
export function spanCounts(data: Uint8Array, isText: boolean): SpanCounts {
  const counts = new Map<number, number>();
  let n = 0;
  let accum1 = 0;
  let accum2 = 0;
  const add = () => {
    const h = ((accum1 + (Math.imul(accum2, 0x61) >>> 0)) >>> 0) % HASHBASE;
    counts.set(h, (counts.get(h) ?? 0) + n);
    n = 0;
    accum1 = 0;
    accum2 = 0;
  };
  for (let i = 0; i < data.length; i++) {
    const c = data[i]!;
    if (isText && c === 0x0d && i + 1 < data.length && data[i + 1] === 0x0a) continue;
    const old1 = accum1;
    accum1 = ((accum1 << 7) ^ (accum2 >>> 25)) >>> 0;
    accum2 = ((accum2 << 7) ^ (old1 >>> 25)) >>> 0;
    accum1 = (accum1 + c) >>> 0;
    if (++n < 64 && c !== 0x0a) continue;
    add();
  }
  if (n > 0) add();
  // as git's spanhash_top: sorted by hash, so two blobs compare in one merge walk
  const hashes = Int32Array.from(counts.keys()).sort();
  return { hashes, bytes: Int32Array.from(hashes, (h) => counts.get(h)!) }; // !: every key has a count
}

/** A blob's chunk hashes in ascending order, with the bytes each counts. */
export interface SpanCounts {
  hashes: Int32Array;
  bytes: Int32Array;
}

/**
 * One side of a candidate pair: its path, mode, size and chunk counts (`spanCounts` of its blob,
 * which the loader reads and lets go: a search over many large files holds their counts, at most
 * HASHBASE buckets each, not their bytes).
 */
export interface RenameSide {
  path: string;
  mode: string;
  oid: string;
  size: number;
  counts: SpanCounts;
}

/** diffcore-rename's estimate_similarity: bytes of `dst` copied from `src` over the larger size, in MAX_SCORE units. */
export function estimateSimilarity(src: RenameSide, dst: RenameSide, minimumScore: number): number {
  // only regular files rename with edits; symlinks and submodules only exactly
  if (!isRegular(src.mode) || !isRegular(dst.mode)) return 0;
  const max = Math.max(src.size, dst.size);
  const base = Math.min(src.size, dst.size);
  // sizes too far apart can't reach the minimum score
  if (max * (MAX_SCORE - minimumScore) < (max - base) * MAX_SCORE) return 0;
  let copied = 0;
  const { hashes: sh, bytes: sb } = src.counts;
  const { hashes: dh, bytes: db } = dst.counts;
  for (let i = 0, j = 0; i < sh.length && j < dh.length; ) {
    if (sh[i]! < dh[j]!) i++;
    else if (sh[i]! > dh[j]!) j++;
    else copied += Math.min(sb[i++]!, db[j++]!);
  }
  if (dst.size === 0) return 0;
  return Math.trunc((copied * MAX_SCORE) / max);
}

interface Score {
  src: number;
  dst: number;
  score: number;
  nameScore: number;
}

/** git's score_compare: unused slots last, then higher score, then same basename first. */
function scoreCompare(a: Score, b: Score): number {
  if (a.dst < 0) return b.dst >= 0 ? 1 : 0;
  if (b.dst < 0) return -1;
  if (a.score === b.score) return b.nameScore - a.nameScore;
  return b.score - a.score;
}

/** git's record_if_better: `o` replaces the worst of the destination's candidates if better. */
function recordIfBetter(m: Score[], o: Score): void {
  let worst = 0;
  for (let i = 1; i < CANDIDATES; i++) if (scoreCompare(m[i]!, m[worst]!) > 0) worst = i;
  if (scoreCompare(m[worst]!, o) > 0) m[worst] = o;
}

/**
 * The renames `git diff -M` finds among `changes` (removed paths as sources, added ones as
 * destinations, in git's path order), as a map from each renamed destination to its source.
 * `side` loads a change's side (its blob and whether it is text).
 */
export async function findRenames(changes: readonly Change[], side: (path: string, oid: string, mode: string) => Promise<RenameSide>, pace?: Pacer): Promise<Map<Change, Change>> {
  const srcChanges = changes.filter((c) => c.status === "removed");
  const dstChanges = changes.filter((c) => c.status === "added");
  const found = new Map<Change, Change>();
  if (srcChanges.length === 0 || dstChanges.length === 0) return found;
  const used = new Set<number>(); // sources renamed already (rename_used)
  const done = new Set<number>(); // destinations renamed already (is_rename)
  const record = (d: number, s: number) => {
    found.set(dstChanges[d]!, srcChanges[s]!);
    used.add(s);
    done.add(d);
  };

  // Exact renames: the same blob (and, unless both are regular files, the same mode). Among
  // several sources the first with the same basename wins, else the first (of at most 100).
  const byOid = new Map<string, number[]>();
  srcChanges.forEach((c, i) => {
    const list = byOid.get(c.oldOid!);
    if (list) list.push(i);
    else byOid.set(c.oldOid!, [i]);
  });
  dstChanges.forEach((d, di) => {
    let best = -1;
    let bestScore = -1;
    let tries = 100;
    for (const si of byOid.get(d.newOid!) ?? []) {
      const s = srcChanges[si]!;
      if ((!isRegular(s.oldMode) || !isRegular(d.newMode)) && s.oldMode !== d.newMode) continue;
      if (used.has(si)) continue;
      const score = 1 + (basenameSame(s.path, d.path) ? 1 : 0);
      if (score > bestScore) {
        best = si;
        bestScore = score;
        if (score === 2) break;
      }
      if (!--tries) break;
    }
    if (best >= 0) record(di, best);
  });

  const sides = new Map<Change, RenameSide>();
  const load = async (c: Change, old: boolean) => {
    let v = sides.get(c);
    if (!v) {
      v = old ? await side(c.path, c.oldOid!, c.oldMode!) : await side(c.path, c.newOid!, c.newMode!);
      sides.set(c, v);
    }
    return v;
  };

  // Basename matches: a source and a destination whose file name is unique among the remaining
  // sources and destinations pair when at least MIN_BASENAME_SCORE similar.
  let sources = srcChanges.map((_, i) => i).filter((i) => !used.has(i));
  const uniqueBy = (indices: number[], list: Change[]) => {
    const m = new Map<string, number>();
    for (const i of indices) {
      const b = basename(list[i]!.path);
      m.set(b, m.has(b) ? -1 : i);
    }
    return m;
  };
  const srcByName = uniqueBy(sources, srcChanges);
  const dstByName = uniqueBy(dstChanges.map((_, i) => i).filter((i) => !done.has(i)), dstChanges);
  for (const si of sources) {
    const b = basename(srcChanges[si]!.path);
    const di = dstByName.get(b);
    if (di === undefined || di === -1 || srcByName.get(b) === -1 || done.has(di)) continue;
    const score = estimateSimilarity(await load(srcChanges[si]!, true), await load(dstChanges[di]!, false), MIN_BASENAME_SCORE);
    if (score >= MIN_BASENAME_SCORE) record(di, si);
  }

  // Inexact renames: each remaining destination keeps its best four sources; all candidates
  // sorted (stably) by score, then basename, pair greedily while at least MIN_SCORE.
  sources = sources.filter((i) => !used.has(i));
  const dests = dstChanges.map((_, i) => i).filter((i) => !done.has(i));
  if (sources.length === 0 || dests.length === 0) return found;
  if (sources.length * dests.length > RENAME_LIMIT * RENAME_LIMIT) return found;
  const mx: Score[] = [];
  for (const di of dests) {
    const m: Score[] = Array.from({ length: CANDIDATES }, () => ({ src: -1, dst: -1, score: 0, nameScore: 0 }));
    const two = await load(dstChanges[di]!, false);
    for (const si of sources) {
      const one = await load(srcChanges[si]!, true);
      // up to a million comparisons: yield between them, in proportion to the sizes compared
      const y = pace?.step(1 + ((one.size + two.size) >> 14));
      if (y) await y;
      recordIfBetter(m, { src: si, dst: di, score: estimateSimilarity(one, two, MIN_SCORE), nameScore: basenameSame(one.path, two.path) ? 1 : 0 });
    }
    mx.push(...m);
  }
  mx.sort(scoreCompare); // Array.prototype.sort is stable, as git's STABLE_QSORT
  for (const c of mx) {
    if (c.dst < 0 || c.score < MIN_SCORE) break;
    if (done.has(c.dst) || used.has(c.src)) continue;
    record(c.dst, c.src);
  }
  return found;
}
