/**
 * What a commit changed against its first parent, as Gitea's commit API reports it: the changed
 * paths (`git log --name-status --no-renames -1`: added, removed, modified) and the line counts
 * (`git diff --shortstat`: insertions and deletions with git's default rename detection, binary
 * files counted as 0). Line counts come from a Myers diff of the two blobs' lines, as git's
 * default algorithm.
 */
import { GitError } from "../errors.ts";
import { MODE, type TreeEntry } from "../objects/tree.ts";
import type { Pacer } from "../pace.ts";
import { findRenames, spanCounts } from "./rename.ts";
import type { Repository } from "./repository.ts";

/** One changed path between two trees. `type-change`: a file became a symlink or a submodule, or back. */
export interface Change {
  path: string;
  status: "added" | "removed" | "modified" | "type-change";
  oldOid: string | null;
  newOid: string | null;
  oldMode: string | null;
  newMode: string | null;
}

/** Line counts of a diff. */
export interface LineStats {
  additions: number;
  deletions: number;
}

/** git's file kinds: a mode change within a kind is a modification, across kinds a type change. */
const kind = (mode: string) => (mode === MODE.symlink ? "link" : mode === MODE.gitlink ? "gitlink" : "file");

/** What a diff reads: trees by id (a Repository, or a push's object reader). */
export interface Trees {
  readTree(oid: string): Promise<TreeEntry[]>;
  /** A request's pacing (a Repository's): the walk yields between entries and stops for a client gone. */
  pace?: Pacer;
}

/** Sort key of an entry in git's tree order (directories compare as `name/`). */
const orderKey = (e: TreeEntry) => (e.mode === MODE.tree ? `${e.name}/` : e.name);

/**
 * The files that differ between trees `a` (null: the empty tree) and `b`, in git's path order,
 * without rename detection (a file replaced by a directory is a removal plus additions).
 */
export async function diffTrees(repo: Trees, a: string | null, b: string | null, prefix = ""): Promise<Change[]> {
  if (a === b) return [];
  const left = a ? await repo.readTree(a) : [];
  const right = b ? await repo.readTree(b) : [];
  const byName = new Map<string, { l?: TreeEntry; r?: TreeEntry }>();
  for (const e of left) byName.set(orderKey(e), { l: e });
  for (const e of right) {
    const k = orderKey(e);
    byName.set(k, { ...byName.get(k), r: e });
  }
  const out: Change[] = [];
  // git compares paths as bytes; UTF-8 byte order equals code point order, which Buffer.compare keeps.
  const keys = [...byName.keys()].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  for (const k of keys) {
    const y = repo.pace?.step();
    if (y) await y;
    const { l, r } = byName.get(k)!;
    const name = (l ?? r)!.name;
    const path = prefix ? `${prefix}/${name}` : name;
    const lTree = l?.mode === MODE.tree;
    const rTree = r?.mode === MODE.tree;
    if (lTree || rTree) {
      out.push(...(await diffTrees(repo, lTree ? l!.oid : null, rTree ? r!.oid : null, path)));
      continue;
    }
    if (l && r) {
      if (l.oid === r.oid && l.mode === r.mode) continue;
      out.push({ path, status: kind(l.mode) === kind(r.mode) ? "modified" : "type-change", oldOid: l.oid, newOid: r.oid, oldMode: l.mode, newMode: r.mode });
    } else if (r) out.push({ path, status: "added", oldOid: null, newOid: r.oid, oldMode: null, newMode: r.mode });
    else if (l) out.push({ path, status: "removed", oldOid: l.oid, newOid: null, oldMode: l.mode, newMode: null });
  }
  // A name that is a file on one side and a directory on the other sorts apart (`x` vs `x/`):
  // git lists both the file and the directory's files, which the two keys above already do.
  return out;
}

/** The changes of a commit against its first parent (every file added for a root commit). */
export async function commitChanges(repo: Repository, oid: string): Promise<Change[]> {
  const c = await repo.commits.get(oid);
  const parent = c.parents[0] ? (await repo.commits.get(c.parents[0])).tree : null;
  return diffTrees(repo, parent, c.tree);
}

/** git's binary check (`buffer_is_binary`): a NUL byte in the first 8000 bytes. */
export const isBinary = (b: Uint8Array) => b.subarray(0, 8000).includes(0);

/** A blob as a Buffer view (no copy): its native `indexOf` and ranged `compare`. */
const bufferOf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** The number of lines of `b` (a last line without a terminator counts), without making them. */
function lineCount(b: Uint8Array): number {
  const buf = bufferOf(b);
  let n = 0;
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) n++;
  return n + (b.length > 0 && b[b.length - 1] !== 10 ? 1 : 0);
}

/**
 * The lines of `b`, each with its terminator (a last line without one differs from one with), as
 * offsets: line `i` is bytes `at[i]` to `at[i + 1]`. No string is made: a large file's lines
 * cost 4 bytes each, not a string each.
 */
function lineOffsets(b: Uint8Array): Uint32Array {
  const buf = bufferOf(b);
  const n = lineCount(b);
  const at = new Uint32Array(n + 1);
  let k = 1;
  for (let i = buf.indexOf(10); i >= 0 && k < n; i = buf.indexOf(10, i + 1)) at[k++] = i + 1;
  at[n] = b.length;
  return at;
}

/** A side of a line diff: its bytes and line offsets. */
interface Side {
  buf: Buffer;
  at: Uint32Array;
}
const sideLines = (b: Uint8Array): Side => ({ buf: bufferOf(b), at: lineOffsets(b) });

/** Whether line `i` of `x` and line `j` of `y` have the same bytes. */
const sameLine = (x: Side, i: number, y: Side, j: number) => {
  const xs = x.at[i]!;
  const xe = x.at[i + 1]!;
  const ys = y.at[j]!;
  const ye = y.at[j + 1]!;
  return xe - xs === ye - ys && x.buf.compare(y.buf, ys, ye, xs, xe) === 0;
};

/** FNV-1a over line `i`'s bytes: a first guess at equal lines, confirmed by comparing the bytes. */
function lineHash(x: Side, i: number): number {
  let h = 0x811c9dc5;
  for (let p = x.at[i]!, e = x.at[i + 1]!; p < e; p++) h = Math.imul(h ^ x.buf[p]!, 0x01000193);
  return h >>> 0;
}

/**
 * Numbers equal lines alike across both sides (`git`'s xdl_classify_record): each distinct line
 * gets an id. Lines are found by their hash and confirmed byte for byte against the first line
 * that took the id; the rare different line with a taken hash is numbered by its text.
 */
class LineIds {
  private readonly byHash = new Map<number, number>();
  private readonly collided = new Map<string, number>();
  private readonly firstSide: Side[] = [];
  private readonly firstLine: number[] = [];

  /** The id of line `i` of `x`, whose hash is `h`. */
  of(x: Side, i: number, h: number): number {
    const id = this.byHash.get(h);
    if (id === undefined) return this.add(x, i, (n) => this.byHash.set(h, n));
    if (sameLine(this.firstSide[id]!, this.firstLine[id]!, x, i)) return id;
    const text = x.buf.toString("latin1", x.at[i]!, x.at[i + 1]!);
    return this.collided.get(text) ?? this.add(x, i, (n) => this.collided.set(text, n));
  }

  private add(x: Side, i: number, keep: (id: number) => void): number {
    const id = this.firstLine.length;
    this.firstSide.push(x);
    this.firstLine.push(i);
    keep(id);
    return id;
  }
}

/** Edit cost above which the diff stops searching and counts the rest as changed. */
const MAX_COST = 20_000;
/** Steps (diagonals visited and lines compared) the search may take before it stops likewise. */
const MAX_WORK = 100_000_000;

/**
 * Length of the longest common subsequence of `a` and `b` (Myers' O(ND) greedy search), so that
 * deletions = |a| − lcs and additions = |b| − lcs as in a minimal diff. Lines only one side has
 * are left out first (they cannot be common; git's xdl_cleanup_records discards them likewise), so
 * a file added or removed whole, or rewritten, costs one pass. Past MAX_COST edits or MAX_WORK
 * steps the search stops where its furthest path got and counts everything after as changed — a
 * valid diff that is not minimal, as git's own cost limit gives for such files.
 */
function lcsLength(a0: Int32Array, b0: Int32Array, meter?: { steps: number }): number {
  if (a0.length === 0 || b0.length === 0) return 0;
  const inA = new Set(a0);
  const inB = new Set(b0);
  const a = a0.filter((t) => inB.has(t));
  const b = b0.filter((t) => inA.has(t));
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return 0;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const limit = Math.min(max, MAX_COST);
  let work = 0;
  // the common lines on the furthest path found: (x + y − d) / 2 at its end
  let best = 0;
  for (let d = 0; d <= limit; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      const x0 = x;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      work += 1 + x - x0;
      if (x >= n && y >= m) {
        if (meter) meter.steps += work;
        return (n + m - d) / 2;
      }
      if (x <= n && y >= 0 && y <= m) best = Math.max(best, (x + y - d) / 2);
    }
    if (work > MAX_WORK) break;
  }
  if (meter) meter.steps += work;
  return best;
}

/**
 * Lines added and deleted from `a` to `b`; null when either side is binary (git counts nothing).
 * `meter` counts the search's steps (a test bounds them: the work grows with the edits, never
 * with the square of a file's length).
 */
export function lineStats(a: Uint8Array, b: Uint8Array, meter?: { steps: number }): LineStats | null {
  if (isBinary(a) || isBinary(b)) return null;
  // A file added or removed whole: its lines counted, none made.
  if (a.length === 0) return { additions: lineCount(b), deletions: 0 };
  if (b.length === 0) return { additions: 0, deletions: lineCount(a) };
  const la = sideLines(a);
  const lb = sideLines(b);
  const na = la.at.length - 1;
  const nb = lb.at.length - 1;
  // common prefix and suffix first: most edits touch a few lines of a long file
  let start = 0;
  while (start < na && start < nb && sameLine(la, start, lb, start)) start++;
  let ea = na;
  let eb = nb;
  while (ea > start && eb > start && sameLine(la, ea - 1, lb, eb - 1)) {
    ea--;
    eb--;
  }
  // A line whose hash the other side lacks has no equal there: it is a change and never takes
  // part in the search (as lcsLength's own discard), so a rewritten file numbers no line at all.
  const ha = lineHashes(la, start, ea);
  const hb = lineHashes(lb, start, eb);
  const both = sharedValues(ha, hb);
  const ids = new LineIds();
  const candidates = (x: Side, h: Uint32Array) => {
    const out: number[] = [];
    for (let i = 0; i < h.length; i++) if (hasSorted(both, h[i]!)) out.push(ids.of(x, start + i, h[i]!));
    return Int32Array.from(out);
  };
  const lcs = lcsLength(candidates(la, ha), candidates(lb, hb), meter);
  return { additions: eb - start - lcs, deletions: ea - start - lcs };
}

/** The hashes of lines `from` to `to` of `x`. */
function lineHashes(x: Side, from: number, to: number): Uint32Array {
  const out = new Uint32Array(to - from);
  for (let i = from; i < to; i++) out[i - from] = lineHash(x, i);
  return out;
}

/** The values both arrays hold, sorted. */
function sharedValues(a: Uint32Array, b: Uint32Array): Uint32Array {
  const sa = a.slice().sort();
  const sb = b.slice().sort();
  const out: number[] = [];
  for (let i = 0, j = 0; i < sa.length && j < sb.length; ) {
    if (sa[i]! < sb[j]!) i++;
    else if (sa[i]! > sb[j]!) j++;
    else {
      const v = sa[i]!;
      out.push(v);
      while (i < sa.length && sa[i] === v) i++;
      while (j < sb.length && sb[j] === v) j++;
    }
  }
  return Uint32Array.from(out);
}

/** Whether sorted `values` holds `v`. */
function hasSorted(values: Uint32Array, v: number): boolean {
  let lo = 0;
  let hi = values.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const m = values[mid]!;
    if (m === v) return true;
    if (m < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

const EMPTY = new Uint8Array(0);
const gitlinkText = (oid: string) => new TextEncoder().encode(`Subproject commit ${oid}\n`);

/**
 * What stands for a blob larger than the reader builds whole (512 MiB, 48 MiB on the Worker): git's
 * diff treats a file over core.bigFileThreshold as binary (no lines counted), and so does this.
 */
const TOO_BIG = new Uint8Array(1);

/** The content git diffs for an entry: a blob's bytes, or a submodule's `Subproject commit` line. */
async function sideOf(repo: Repository, oid: string | null, mode: string | null): Promise<Uint8Array> {
  if (!oid || !mode) return EMPTY;
  if (mode === MODE.gitlink) return gitlinkText(oid);
  return repo.readBlob(oid).catch((e: unknown) => {
    if (e instanceof GitError && e.code === "too-large") return TOO_BIG;
    throw e;
  });
}

/**
 * `git diff --shortstat` of a commit against its first parent (the empty tree for a root commit),
 * which Gitea's commit stats read: with git's default rename detection (`-M`), so a renamed file
 * counts only the lines its content changed (none for a pure rename).
 */
export async function changeStats(repo: Repository, changes: readonly Change[]): Promise<LineStats> {
  // Each blob is read for the rename search (which keeps its chunk counts, not its bytes) and again
  // for its file's stats, then let go: a commit of many large files holds two of them at a time.
  const renames = await findRenames(
    changes,
    async (path, oid, mode) => {
      const data = await sideOf(repo, oid, mode);
      const y = repo.pace.step(1 + (data.length >> 12));
      if (y) await y;
      // a blob too large to build is scored as sharing nothing (renamed only when exact)
      if (data === TOO_BIG) return { path, oid, mode, size: (await repo.reader.sizeOf(oid)) ?? 0, counts: spanCounts(EMPTY, false) };
      return { path, oid, mode, size: data.length, counts: spanCounts(data, !isBinary(data)) };
    },
    repo.pace,
  );
  const renamed = new Set(renames.values());
  const total: LineStats = { additions: 0, deletions: 0 };
  for (const ch of changes) {
    if (renamed.has(ch)) continue; // counted with its destination
    if (ch.status === "type-change") {
      // git shows a type change as the old file deleted and the new one added
      for (const [o, m, side] of [[ch.oldOid, ch.oldMode, "deletions"], [ch.newOid, ch.newMode, "additions"]] as const) {
        const s = lineStats(EMPTY, await sideOf(repo, o, m));
        if (s) total[side] += s.additions;
      }
      continue;
    }
    const src = renames.get(ch);
    const a = src ? await sideOf(repo, src.oldOid, src.oldMode) : await sideOf(repo, ch.oldOid, ch.oldMode);
    const b = await sideOf(repo, ch.newOid, ch.newMode);
    // a file's line diff runs at once: the yield comes after it, in proportion to what it read
    const y = repo.pace.step(1 + ((a.length + b.length) >> 12));
    if (y) await y;
    const s = lineStats(a, b);
    if (s) {
      total.additions += s.additions;
      total.deletions += s.deletions;
    }
  }
  return total;
}
