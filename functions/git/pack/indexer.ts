/**
 * The streaming pack indexer behind push (what `git index-pack --stdin --fix-thin` does):
 *
 * Pass 1, as bytes arrive: parse each entry header, inflate its zlib stream only to find where it
 * ends (and to hash whole objects), CRC32 the raw entry, verify the trailing SHA-1. The bytes are
 * spooled to the ObjectStore as they pass: kept in memory up to `spoolBytes`, streamed to storage
 * beyond that, so a large pack is never held whole.
 * Pass 2: resolve OFS/REF deltas base-first (depth first from each base, only the current chain
 * in memory), reading delta data back from the spool or by range reads of the stored pack.
 * Thin packs: REF_DELTA bases found in the repository's existing packs are appended to the pack
 * (header count and trailer rewritten) so every stored pack is self-contained.
 * Then the `.idx` v2 is written. Any failure deletes what was stored.
 */
import { Buffer } from "node:buffer";
import { createHash, type Hash } from "node:crypto";
import { crc32 } from "node:zlib";
import { type ByteReader, concat, fromHex, toHex } from "../bytes.ts";
import { check, GitError } from "../errors.ts";
import { parseCommitLinks, parseTag } from "../objects/commit.ts";
import { hashObjectBytes, objectHeader, type ObjectType, TYPE_CODE, TYPE_NAME } from "../objects/object.ts";
import { canonicalMode, MODE, modeOf } from "../objects/tree.ts";
import { idxFileName, newPackId, type ObjectStore, packFileName, packFileNames, revFileName } from "../storage/object-store.ts";
import type { PackRecord } from "../storage/ref-store.ts";
import { applyDelta, deltaTargetSize } from "./delta.ts";
import { encodeTypeSize, OBJ_OFS_DELTA, OBJ_REF_DELTA, PACK_HEADER_SIZE, PACK_TRAILER_SIZE, packHeader, parseEntryHeader, parsePackHeader } from "./format.ts";
import { type IdxEntry, PackIndex, writeIdx, writeRev } from "./idx.ts";
import { deflate, inflateExact, inflatePrefix, MAX_BUILT_BYTES, StreamInflater, yielder } from "./inflate.ts";
import { OidSet } from "./oid-set.ts";
import { LruCache, type ObjectReader } from "./reader.ts";

/** Limits of one received pack. */
export interface IndexLimits {
  /** Largest pack accepted, in bytes (the push size limit). */
  maxPackBytes: number;
  /** Largest single object, in bytes (a blob stored whole is hashed as it streams in). */
  maxObjectBytes: number;
  /**
   * Largest object built whole in memory: a delta's base and result, a commit, tree or tag
   * (MAX_BUILT_BYTES: 512 MiB under Node, 48 MiB in a Workers isolate of 128 MB).
   */
  maxBuiltBytes: number;
  /** Packs up to this size are kept in memory until indexed; larger ones stream to storage. */
  spoolBytes: number;
  /** Entries whose inflated size exceeds this are inflated as a stream, not in one call. */
  streamInflateBytes: number;
  /** Inflated entry data kept from pass 1 for pass 2, so most entries are inflated once. */
  resolveCacheBytes: number;
  /**
   * What a pack may expand to — its entries inflated and its deltas resolved, all counted — as a
   * multiple of its own size, with at least two largest objects (`maxObjectBytes`) allowed. A pack
   * of a few hundred bytes chaining deltas that each claim hundreds of MiB made the server build
   * gigabytes (audit: 408 bytes, 3.27 GB of RSS); an honest history expands tens to hundreds of
   * times (a large generated file edited often, more). Resolving also never holds more than two
   * largest objects' worth of bases at once (a chain holds only its current link). Infinity for a
   * pack the server makes from what it stored (compaction): neither bound then.
   */
  maxExpansion: number;
}

export const DEFAULT_INDEX_LIMITS: IndexLimits = {
  maxPackBytes: 100 * 1024 * 1024,
  maxObjectBytes: 512 * 1024 * 1024,
  maxBuiltBytes: MAX_BUILT_BYTES,
  spoolBytes: 8 * 1024 * 1024,
  streamInflateBytes: 8 * 1024 * 1024,
  resolveCacheBytes: 16 * 1024 * 1024,
  maxExpansion: 1024,
};

/** The result of indexing a received pack that is now stored (not yet in the catalog). */
export interface IndexedPack {
  record: PackRecord;
  idx: PackIndex;
  /** Objects the pack references that it does not contain and the repository does not have. */
  missing: string[];
  /** Bases appended to complete a thin pack. */
  thinBases: number;
  /**
   * What the pack builds on: the objects it names (parents, trees, tree entries, tag targets)
   * without containing them, and its thin bases — each in the repository unless in `missing`.
   */
  outside: string[];
  /** The e-mails (lower-cased) the pack's commits name as author or committer, at most MAX_IDENTITIES. */
  identities: string[];
}

/** The most distinct commit e-mails one pack reports (beyond, the API looks them up on demand). */
export const MAX_IDENTITIES = 10_000;

/** What pass 1 collects from the objects it hashes: the ids they refer to, and the commits' e-mails. */
interface Collected {
  links: OidSet;
  identities: Set<string>;
  /** A tree has an entry git's walk refuses (a malformed mode): the pack's objects are not connected. */
  malformed: boolean;
}

/** Growable per-entry columns (typed arrays: tens of bytes per object, no object per entry). */
class Entries {
  n = 0;
  offset = new Float64Array(1024);
  type = new Uint8Array(1024);
  size = new Float64Array(1024);
  headerLength = new Uint8Array(1024);
  crc = new Uint32Array(1024);
  oid = new Uint8Array(1024 * 20);
  resolved = new Uint8Array(1024);
  /** OFS_DELTA: entry index of the base; -1 otherwise. */
  base = new Int32Array(1024);
  /** Pass-1 data kept for pass 2: slab number (-1: not kept) and offset in the arena. */
  keptSlab = new Int32Array(1024);
  keptAt = new Uint32Array(1024);
  /** REF_DELTA base ids by entry index. */
  refBase = new Map<number, string>();

  add(offset: number, type: number, size: number, headerLength: number): number {
    if (this.n === this.type.length) this.grow();
    const i = this.n++;
    this.offset[i] = offset;
    this.type[i] = type;
    this.size[i] = size;
    this.headerLength[i] = headerLength;
    this.base[i] = -1;
    this.keptSlab[i] = -1;
    return i;
  }

  private grow() {
    const m = this.type.length * 2;
    const g = <T extends Float64Array | Uint8Array | Uint32Array | Int32Array>(a: T, k = 1): T => {
      const b = new (a.constructor as new (n: number) => T)(m * k);
      b.set(a);
      return b;
    };
    this.offset = g(this.offset);
    this.type = g(this.type);
    this.size = g(this.size);
    this.headerLength = g(this.headerLength);
    this.crc = g(this.crc);
    this.oid = g(this.oid, 20);
    this.resolved = g(this.resolved);
    this.base = g(this.base);
    this.keptSlab = g(this.keptSlab);
    this.keptAt = g(this.keptAt);
  }

  /** Index of the entry starting at `offset`, or -1 (entries are in offset order). */
  at(offset: number): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.offset[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.n && this.offset[lo] === offset ? lo : -1;
  }

  setOid(i: number, id: Uint8Array) {
    this.oid.set(id, i * 20);
    this.resolved[i] = 1;
  }

  oidHex(i: number): string {
    return toHex(this.oid, i * 20);
  }
}

/** A link's flag for the object type it expects (one bit per type code). */
const expects = (type: ObjectType) => 1 << TYPE_CODE[type];


/**
 * Collects the ids an object refers to, each with the type it must have (connectivity check, as
 * git's receive-pack walks them: a commit's tree and parents, a tree's entries by their mode, a
 * tag's object by its `type` line), skipping submodule commits; and the commits' e-mails.
 */
function collectLinks(type: ObjectType, data: Uint8Array, into: Collected): void {
  const links = into.links;
  if (type === "commit") {
    // git's fsck (missingAuthor, missingCommitter): a commit every reader here can parse, or no push
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.length);
    const blank = bytes.indexOf("\n\n");
    const head = bytes.toString("latin1", 0, blank < 0 ? bytes.length : blank);
    check(/^tree [0-9a-f]{40}\n(parent [0-9a-f]{40}\n)*author [^\n]*\n(?:[^\n]*\n)*?committer /.test(`${head}\n`), "commit without an author or a committer line (git's fsck: missingAuthor, missingCommitter)");
    const c = parseCommitLinks(data);
    links.add(fromHex(c.tree), 0, expects("tree"));
    for (const p of c.parents) links.add(fromHex(p), 0, expects("commit"));
    if (into.identities.size < MAX_IDENTITIES) {
      if (c.authorEmail) into.identities.add(c.authorEmail.toLowerCase());
      if (c.committerEmail) into.identities.add(c.committerEmail.toLowerCase());
    }
  } else if (type === "tree") {
    // raw scan: no string per entry (a large push has hundreds of thousands of entries)
    let p = 0;
    let prev: { start: number; end: number; dir: boolean } | null = null;
    // files a later directory of the same name could follow (git's fsck candidates: only a file
    // whose next entry starts with its name, like `foo` before `foo.bar` and `foo/`)
    let candidates: Set<string> | null = null;
    while (p < data.length) {
      let sp = p;
      while (sp < data.length && data[sp] !== 0x20) sp++;
      let nul = sp + 1;
      while (nul < data.length && data[nul] !== 0) nul++;
      check(sp > p && nul > sp + 1 && nul + 21 <= data.length, "truncated tree entry");
      const name = { start: sp + 1, end: nul, dir: data[p] === 0x34 || (data[p] === 0x30 && data[p + 1] === 0x34) };
      if (prev) candidates = checkOrder(data, prev, name, candidates);
      prev = name;
      // a mode as git reads it (octal, `040000` too); one git's walk refuses ("malformed mode in
      // tree entry") fails the connectivity check, as git's does: the push is refused, not the pack
      let mode: string;
      try {
        mode = canonicalMode(modeOf(data, p, sp));
      } catch {
        into.malformed = true;
        return;
      }
      // a submodule commit is stored in another repository
      if (mode !== MODE.gitlink) links.add(data, nul + 1, expects(mode === MODE.tree ? "tree" : "blob"));
      p = nul + 21;
    }
  } else if (type === "tag") {
    const t = parseTag(data);
    links.add(fromHex(t.object), 0, expects(t.type));
  }
}

/**
 * git's fsck verify_ordered for consecutive entries `a`, `b` (names compared as bytes, a
 * directory's as if it ended in `/`): refused when out of order (treeNotSorted) or the same name
 * twice (duplicateEntries), also a directory named as an earlier file with entries between them.
 * Returns the candidates for that last case. These are git fsck's errors (its default severity):
 * a client that fetches with `transfer.fsckObjects` cannot clone a repository holding such a tree,
 * so a push bringing one is refused (git's receive-pack and Gitea take it unless
 * `receive.fsckObjects`). Names git only warns of (`.`, `..`, `.git`, a `/`) are taken, as there;
 * archives refuse them as `git archive` does.
 */
function checkOrder(data: Uint8Array, a: { start: number; end: number; dir: boolean }, b: { start: number; end: number; dir: boolean }, candidates: Set<string> | null): Set<string> | null {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  const len = Math.min(la, lb);
  const cmp = Buffer.compare(data.subarray(a.start, a.start + len), data.subarray(b.start, b.start + len));
  check(cmp <= 0, "tree entries out of order (git fsck: treeNotSorted)");
  if (cmp === 0) {
    check(la !== lb, "tree with duplicate entries (git fsck: duplicateEntries)");
    const c1 = la > len ? data[a.start + len]! : a.dir ? 0x2f : 0;
    const c2 = lb > len ? data[b.start + len]! : b.dir ? 0x2f : 0;
    check(c1 < c2, "tree entries out of order (git fsck: treeNotSorted)");
    // `a` a file that `b` starts with: a directory of `a`'s name may follow further on
    if (!a.dir && la < lb) {
      candidates ??= new Set();
      candidates.add(Buffer.from(data.subarray(a.start, a.end)).toString("latin1"));
    }
  }
  if (b.dir && candidates) check(!candidates.has(Buffer.from(data.subarray(b.start, b.end)).toString("latin1")), "tree with duplicate entries (git fsck: duplicateEntries)");
  return candidates;
}

/**
 * Where pass 1 puts the bytes: memory first, then a streamed ObjectStore write. Small pieces
 * (entry headers, small objects) are staged into 256 KiB blocks so storage sees few large writes.
 */
class Spool {
  private static readonly BLOCK = 256 * 1024;
  private parts: Uint8Array[] = [];
  private stage = new Uint8Array(Spool.BLOCK);
  private staged = 0;
  private bytes = 0;
  private writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  private upload: Promise<number> | null = null;
  /** Rejects once the upload has ended while the pack has not (failed, or stopped reading). */
  private uploadEnded: Promise<never> | null = null;
  stored = false;

  readonly store: ObjectStore;
  readonly repoId: string;
  readonly packId: string;
  private readonly limit: number;

  constructor(store: ObjectStore, repoId: string, packId: string, limit: number) {
    this.store = store;
    this.repoId = repoId;
    this.packId = packId;
    this.limit = limit;
  }

  /** Stages `b`; returns a promise only when a full block has to go out (keeps the hot loop sync). */
  write(b: Uint8Array): Promise<void> | null {
    const free = this.stage.length - this.staged;
    this.bytes += b.length;
    if (b.length < free) {
      this.stage.set(b, this.staged);
      this.staged += b.length;
      return null;
    }
    return this.writeSlow(b);
  }

  private async writeSlow(b: Uint8Array): Promise<void> {
    let p = 0;
    while (p < b.length) {
      const n = Math.min(b.length - p, this.stage.length - this.staged);
      this.stage.set(b.subarray(p, p + n), this.staged);
      this.staged += n;
      p += n;
      if (this.staged === this.stage.length) await this.flushStage();
    }
  }

  private async flushStage(): Promise<void> {
    if (this.staged === 0) return;
    const block = this.staged === this.stage.length ? this.stage : this.stage.slice(0, this.staged);
    this.stage = new Uint8Array(Spool.BLOCK);
    this.staged = 0;
    if (this.writer) {
      await this.send(block);
      return;
    }
    this.parts.push(block);
    if (this.bytes <= this.limit) return;
    // past the in-memory budget: stream everything so far, and the rest, into storage
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    this.writer = writable.getWriter();
    this.upload = this.store.put(this.repoId, packFileName(this.packId), readable);
    this.stored = true;
    this.upload.catch(() => {});
    this.uploadEnded = this.upload.then(
      (n) => {
        throw new GitError("missing", `object storage ended the upload of the received pack after ${n} bytes`);
      },
      (e: unknown) => {
        throw e;
      },
    );
    this.uploadEnded.catch(() => {});
    const pending = this.parts;
    this.parts = [];
    for (const part of pending) await this.send(part);
  }

  /**
   * Writes a block to the upload, or fails with the upload's error: a store that failed has
   * stopped reading, and a write waiting on it would wait for ever (the push would never answer).
   */
  private async send(block: Uint8Array): Promise<void> {
    await Promise.race([this.writer!.write(block), this.uploadEnded!]);
  }

  /** Finishes the upload (if streaming); returns the whole pack when it stayed in memory. */
  async finish(): Promise<Uint8Array | null> {
    if (!this.writer) {
      if (this.staged > 0) this.parts.push(this.stage.subarray(0, this.staged));
      return concat(this.parts);
    }
    await this.flushStage();
    // the close, or the upload's end (success included) if that comes first
    await Promise.race([this.writer.close(), this.upload]);
    const stored = await this.upload!;
    if (stored !== this.bytes) throw new GitError("missing", `object storage took ${stored} of the received pack's ${this.bytes} bytes`);
    return null;
  }

  async abort(): Promise<void> {
    if (this.writer) {
      // not awaited: with a write still waiting on a store that stopped reading, it never settles
      this.writer.abort().catch(() => {});
      await this.upload?.catch(() => {});
    }
  }

  get size(): number {
    return this.bytes;
  }
}

/** Reads entries of the received pack back in pass 2 (from memory, or stored with a block cache). */
class PackSource {
  private readonly blocks = new LruCache<Uint8Array>(16 * 1024 * 1024);
  private static readonly BLOCK = 256 * 1024;
  private readonly memory: Uint8Array | null;
  private readonly store: ObjectStore;
  private readonly repoId: string;
  private readonly packId: string;
  private readonly total: number;

  constructor(memory: Uint8Array | null, store: ObjectStore, repoId: string, packId: string, total: number) {
    this.memory = memory;
    this.store = store;
    this.repoId = repoId;
    this.packId = packId;
    this.total = total;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    if (this.memory) return this.memory.subarray(offset, offset + length);
    const B = PackSource.BLOCK;
    const first = Math.floor(offset / B);
    const last = Math.floor((offset + length - 1) / B);
    if (last - first >= 4) return this.fetch(offset, length);
    const parts: Uint8Array[] = [];
    for (let b = first; b <= last; b++) {
      let blk = this.blocks.get(String(b));
      if (!blk) {
        blk = await this.fetch(b * B, Math.min(B, this.total - b * B));
        this.blocks.set(String(b), blk, blk.length);
      }
      parts.push(blk);
    }
    const joined = parts.length === 1 ? parts[0]! : concat(parts);
    const s = offset - first * B;
    return joined.subarray(s, s + length);
  }

  private async fetch(offset: number, length: number): Promise<Uint8Array> {
    const b = await this.store.get(this.repoId, packFileName(this.packId), { offset, length });
    if (!b || b.length !== length) throw new GitError("missing", "the received pack could not be read back from storage");
    return b;
  }
}

/**
 * Indexes and stores the pack that `input` yields (positioned at `PACK`). `existing` reads the
 * repository's current objects (thin bases, connectivity). Returns null for an empty pack.
 */
export async function indexPack(
  input: ByteReader,
  opts: { repoId: string; store: ObjectStore; existing: ObjectReader; limits?: Partial<IndexLimits> },
): Promise<IndexedPack | null> {
  const limits = { ...DEFAULT_INDEX_LIMITS, ...opts.limits };
  const { store, repoId } = opts;
  const spool = new Spool(store, repoId, newPackId(), limits.spoolBytes);
  const written: string[] = []; // ids of packs whose files may exist (deleted on failure)
  try {
    const result = await scanAndResolve(input, spool, opts.existing, limits, written);
    return result;
  } catch (e) {
    await spool.abort();
    const names: string[] = [];
    if (spool.stored) names.push(packFileName(spool.packId));
    for (const id of written) names.push(...packFileNames(id));
    await store.delete(repoId, names).catch(() => {});
    throw e;
  }
}

async function scanAndResolve(
  input: ByteReader,
  spool: Spool,
  existing: ObjectReader,
  limits: IndexLimits,
  written: string[],
): Promise<IndexedPack | null> {
  const packHash = createHash("sha1");
  let position = 0;
  let entryCrc = 0;
  // bytes the pack has expanded to so far (entries inflated, deltas resolved): at most
  // maxExpansion times the bytes read, and never less than two largest objects
  let expanded = 0;
  const expand = (n: number) => {
    expanded += n;
    const allowed = Math.max(2 * limits.maxObjectBytes, limits.maxExpansion * position);
    if (expanded > allowed) throw new GitError("too-large", `pack expands to more than ${allowed} bytes (${limits.maxExpansion} times its size)`);
  };
  // consumes n bytes into the pack hash, the entry CRC and the spool; a promise only when the
  // spool must flush a block (awaiting every small piece costs more than inflating it)
  const take = (n: number, hashed = true): Promise<void> | null => {
    const b = input.consume(n);
    if (hashed) packHash.update(b);
    entryCrc = crc32(b, entryCrc);
    position += b.length;
    if (position > limits.maxPackBytes) throw new GitError("too-large", `pack exceeds maximum allowed size (${limits.maxPackBytes} bytes)`);
    return spool.write(b);
  };

  // ---- pass 1: entries as they stream in
  if (!(await input.fill(PACK_HEADER_SIZE))) throw new GitError("corrupt", "pack truncated: no header");
  const count = parsePackHeader(input.buffered());
  await take(PACK_HEADER_SIZE);
  const E = new Entries();
  // sized for what the pack can hold, not what its header claims (it grows as links come): a
  // 12-byte header claiming 50 million objects made the Worker's isolate allocate 3 GB
  const links = new OidSet(Math.min(count, 65_536));
  const collected: Collected = { links, identities: new Set(), malformed: false };
  // inflated data of entries pass 2 will need again (deltas, and whole objects while budget
  // lasts), copied into 1 MiB slabs: no object per entry, and the budget is the real footprint
  const slabs: Uint8Array[] = [];
  let slabUsed = 0;
  let keptBytes = 0;
  const keep = (i: number, data: Uint8Array) => {
    if (keptBytes + data.length > limits.resolveCacheBytes) return;
    let slab = slabs[slabs.length - 1];
    if (!slab || slabUsed + data.length > slab.length) {
      slab = new Uint8Array(Math.max(1024 * 1024, data.length));
      slabs.push(slab);
      slabUsed = 0;
    }
    slab.set(data, slabUsed);
    E.keptSlab[i] = slabs.length - 1;
    E.keptAt[i] = slabUsed;
    slabUsed += data.length;
    keptBytes += data.length;
  };
  const dataOf = async (i: number): Promise<Uint8Array> => {
    const slab = E.keptSlab[i]!;
    if (slab >= 0) return slabs[slab]!.subarray(E.keptAt[i]!, E.keptAt[i]! + E.size[i]!);
    const start = E.offset[i]! + E.headerLength[i]!;
    const end = i + 1 < E.n ? E.offset[i + 1]! : position - PACK_TRAILER_SIZE;
    return inflateExact(await source!.read(start, end - start), E.size[i]!);
  };
  let source: PackSource | null = null;
  const truncated = () => new GitError("corrupt", `pack truncated at byte ${position} (entry ${E.n} of ${count})`);

  const pause = yielder();
  for (let k = 0; k < count; k++) {
    const y = pause();
    if (y) await y;
    const offset = position;
    let h = parseEntryHeader(input.buffered(), 0);
    while (!h) {
      if (!(await input.more())) throw truncated();
      h = parseEntryHeader(input.buffered(), 0);
    }
    if (h.size > limits.maxObjectBytes) throw new GitError("too-large", `object of ${h.size} bytes exceeds the limit of ${limits.maxObjectBytes}`);
    // a whole object inflates to its size; a delta's own data too (what it resolves to is counted then)
    expand(h.size);
    entryCrc = 0;
    const w1 = take(h.headerLength);
    if (w1) await w1;
    const i = E.add(offset, h.type, h.size, h.headerLength);
    const isDelta = h.type === OBJ_OFS_DELTA || h.type === OBJ_REF_DELTA;
    if (h.type === OBJ_OFS_DELTA) {
      const b = E.at(offset - h.baseDistance!);
      if (b < 0) throw new GitError("corrupt", `delta at ${offset} points to no entry (${h.baseDistance} bytes back)`);
      E.base[i] = b;
    } else if (h.type === OBJ_REF_DELTA) {
      E.refBase.set(i, h.baseOid!);
    }
    const type = isDelta ? null : TYPE_NAME[h.type]!;
    // a commit, tree or tag is held whole (its links are read): bounded as a built object, before it is read
    if (type && type !== "blob" && h.size > limits.maxBuiltBytes) throw new GitError("too-large", `${type} of ${h.size} bytes exceeds the limit of ${limits.maxBuiltBytes}`);
    let data: Uint8Array | null = null;
    if (h.size <= limits.streamInflateBytes) {
      for (;;) {
        const buf = input.buffered();
        const r = buf.length > 0 ? inflatePrefix(buf, h.size) : null;
        if (r) {
          if (r.data.length !== h.size) throw new GitError("corrupt", `entry at ${offset} inflated to ${r.data.length} bytes, expected ${h.size}`);
          data = r.data;
          const w2 = take(r.consumed);
          if (w2) await w2;
          break;
        }
        if (input.ended) throw truncated();
        if (buf.length > limits.streamInflateBytes) break; // compressed larger than inflated: stream it
        await input.fill(Math.max(buf.length * 2, 64 * 1024));
      }
    }
    if (data === null) {
      // streaming inflate: hash as it comes, keep bytes only for objects whose links we need
      const hasher: Hash | null = type ? createHash("sha1").update(objectHeader(type, h.size)) : null;
      const chunks: Uint8Array[] | null = type && type !== "blob" ? [] : null;
      const inflater = new StreamInflater((c) => {
        hasher?.update(c);
        chunks?.push(c);
      });
      try {
        for (;;) {
          let buf = input.buffered();
          if (buf.length === 0) {
            if (!(await input.more())) throw truncated();
            buf = input.buffered();
          }
          const used = await inflater.feed(buf);
          if (used >= 0) {
            await take(used);
            break;
          }
          await take(buf.length);
        }
      } finally {
        inflater.close();
      }
      if (inflater.produced !== h.size) throw new GitError("corrupt", `entry at ${offset} inflated to ${inflater.produced} bytes, expected ${h.size}`);
      if (hasher) E.setOid(i, hasher.digest());
      if (chunks) collectLinks(type!, concat(chunks), collected);
    } else if (type) {
      E.setOid(i, hashObjectBytes(type, data));
      collectLinks(type, data, collected);
      keep(i, data);
    } else {
      keep(i, data);
    }
    E.crc[i] = entryCrc >>> 0;
  }
  const digest = packHash.digest();
  if (!(await input.fill(PACK_TRAILER_SIZE))) throw new GitError("corrupt", "pack truncated: no trailing checksum");
  const trailer = input.buffered().slice(0, PACK_TRAILER_SIZE);
  await take(PACK_TRAILER_SIZE, false);
  if (!digest.equals(trailer)) throw new GitError("corrupt", "pack checksum mismatch: the pack is corrupt");
  if (!(await input.atEnd())) throw new GitError("corrupt", "pack has junk at the end");
  if (count === 0) {
    await spool.finish();
    if (spool.stored) throw new GitError("corrupt", "empty pack unexpectedly large");
    return null;
  }
  const memory = await spool.finish();
  const packSize = position;
  source = new PackSource(memory, spool.store, spool.repoId, spool.packId, packSize);

  // ---- pass 2: resolve deltas depth-first from each base
  // OFS children as one sorted array with a start per base (no array per base)
  const kidStart = new Uint32Array(E.n + 1);
  const refKids = new Map<string, number[]>();
  let deltas = 0;
  for (let i = 0; i < E.n; i++) {
    if (E.base[i]! >= 0) {
      deltas++;
      kidStart[E.base[i]! + 1]!++;
    } else if (E.refBase.has(i)) {
      deltas++;
      const b = E.refBase.get(i)!;
      const l = refKids.get(b);
      if (l) l.push(i);
      else refKids.set(b, [i]);
    }
  }
  for (let i = 0; i < E.n; i++) kidStart[i + 1]! += kidStart[i]!;
  const kidList = new Int32Array(kidStart[E.n]!);
  const fill = kidStart.slice(0, E.n);
  for (let i = 0; i < E.n; i++) if (E.base[i]! >= 0) kidList[fill[E.base[i]!]!++] = i;
  const kidsOf = (i: number | null, oid: string): ArrayLike<number> => {
    const out = i === null ? kidList.subarray(0, 0) : kidList.subarray(kidStart[i]!, kidStart[i + 1]!);
    const r = refKids.get(oid);
    if (r) {
      refKids.delete(oid);
      return out.length ? [...out, ...r] : r;
    }
    return out;
  };
  let resolvedDeltas = 0;
  const resolveTree = async (rootType: ObjectType, rootData: Uint8Array, kids: ArrayLike<number>) => {
    const stack: { data: Uint8Array; kids: ArrayLike<number>; k: number }[] = [{ data: rootData, kids, k: 0 }];
    // the bases the stack holds: a level is let go once its last child is taken (a chain holds one
    // link at a time), and what is held at once is bounded like one object pair
    let held = rootData.length;
    const maxHeld = Number.isFinite(limits.maxExpansion) ? 2 * limits.maxBuiltBytes : Number.POSITIVE_INFINITY;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.k >= top.kids.length) {
        stack.pop();
        held -= top.data.length;
        continue;
      }
      const c = top.kids[top.k++]!;
      const y = pause();
      if (y) await y;
      const delta = await dataOf(c);
      // the result's size is in the delta's header: refused before it is built
      expand(deltaTargetSize(delta));
      const data = applyDelta(top.data, delta, limits.maxBuiltBytes);
      E.setOid(c, hashObjectBytes(rootType, data));
      E.type[c] = TYPE_CODE[rootType];
      resolvedDeltas++;
      collectLinks(rootType, data, collected);
      // REF_DELTA children are found by id: build the hex only while such deltas wait
      const next = kidsOf(c, refKids.size > 0 ? E.oidHex(c) : "");
      if (next.length > 0) {
        if (top.k >= top.kids.length) {
          stack.pop();
          held -= top.data.length;
        }
        held += data.length;
        if (held > maxHeld) throw new GitError("too-large", `pack's deltas hold more than ${maxHeld} bytes of bases at once`);
        stack.push({ data, kids: next, k: 0 });
      }
    }
  };
  if (deltas > 0) {
    for (let i = 0; i < E.n; i++) {
      if (E.base[i]! >= 0 || E.refBase.has(i)) continue;
      const kids = kidsOf(i, refKids.size > 0 ? E.oidHex(i) : "");
      if (kids.length === 0) continue;
      // a delta's base is built whole
      if (E.size[i]! > limits.maxBuiltBytes) throw new GitError("too-large", `delta base of ${E.size[i]} bytes exceeds the limit of ${limits.maxBuiltBytes}`);
      await resolveTree(TYPE_NAME[E.type[i]!]!, await dataOf(i), kids);
    }
  }
  // thin pack: the remaining REF_DELTA bases must already be in the repository
  const external: string[] = [];
  const externalTypes: ObjectType[] = [];
  for (const baseOid of [...refKids.keys()]) {
    const kids = refKids.get(baseOid);
    if (!kids) continue; // consumed while resolving another external base's tree
    const base = await existing.read(baseOid);
    if (!base) throw new GitError("missing", `pack has a delta against ${baseOid}, which is neither in the pack nor in the repository`);
    external.push(baseOid);
    externalTypes.push(base.type);
    refKids.delete(baseOid);
    await resolveTree(base.type, base.data, kids);
  }
  if (resolvedDeltas !== deltas) throw new GitError("corrupt", `pack has ${deltas - resolvedDeltas} unresolved deltas`);

  // ---- thin-pack completion: append the external bases, rewrite header and trailer
  const entries: IdxEntry[] = [];
  for (let i = 0; i < E.n; i++) entries.push({ oid: E.oid.subarray(i * 20, i * 20 + 20), crc: E.crc[i]!, offset: E.offset[i]! });
  let finalId = spool.packId;
  let finalSize = packSize;
  let checksum: Uint8Array = trailer;
  if (external.length > 0) {
    const appended: Uint8Array[] = [];
    let at = packSize - PACK_TRAILER_SIZE;
    for (const oid of external) {
      const o = (await existing.read(oid))!;
      const raw = concat([new Uint8Array(encodeTypeSize(TYPE_CODE[o.type], o.data.length)), deflate(o.data)]);
      entries.push({ oid: Buffer.from(oid, "hex"), crc: crc32(raw) >>> 0, offset: at });
      appended.push(raw);
      at += raw.length;
    }
    const fixed = await rewriteThin(spool, memory, packSize, count + external.length, appended);
    finalId = fixed.packId;
    finalSize = fixed.size;
    checksum = fixed.checksum;
    if (fixed.packId !== spool.packId) written.push(fixed.packId);
  } else if (memory) {
    await spool.store.put(spool.repoId, packFileName(finalId), memory);
    spool.stored = true;
  }

  // duplicates would make the index ambiguous; git never sends them
  const idxBytes = writeIdx(entries, checksum);
  const idx = new PackIndex(idxBytes);
  for (let i = 1; i < idx.count; i++) {
    if (Buffer.compare(idx.oidBytes(i - 1), idx.oidBytes(i)) === 0) throw new GitError("corrupt", `pack contains object ${idx.oidHex(i)} twice`);
  }
  written.push(finalId);
  await spool.store.put(spool.repoId, revFileName(finalId), writeRev(idx));
  await spool.store.put(spool.repoId, idxFileName(finalId), idxBytes);

  // connectivity: everything referenced must be in this pack or already in the repository, of the
  // type the reference says (git's walk fails "object … is a tree, not a blob"; a repository with
  // such a link could not be cloned)
  const missing: string[] = collected.malformed ? ["a tree with a malformed mode"] : [];
  const outside: string[] = [];
  const outsideFlags: number[] = [];
  links.forEach((id, flags) => {
    if (idx.find(id) >= 0) return;
    outside.push(toHex(id));
    outsideFlags.push(flags);
  });
  for (let i = 0; i < E.n && missing.length < 10; i++) {
    const flags = links.flagsOf(E.oid, i * 20);
    if (flags > 0 && flags !== 1 << E.type[i]!) missing.push(E.oidHex(i));
  }
  external.forEach((oid, i) => {
    const flags = links.flagsOf(fromHex(oid));
    if (flags > 0 && flags !== expects(externalTypes[i]!) && missing.length < 10) missing.push(oid);
  });
  // A stored object named as a file is only looked up (its type would cost a read of its pack for
  // each of a tree's unchanged entries, and git's walk does not read blobs either); one named as a
  // commit, tree or tag is read as git's walk reads it; one named as two types is wrong either way.
  for (let i = 0; i < outside.length && missing.length < 10; i++) {
    const y = pause();
    if (y) await y;
    const flags = outsideFlags[i]!;
    const oid = outside[i]!;
    if ((flags & (flags - 1)) !== 0) missing.push(oid);
    else if (flags === expects("blob")) {
      if (!existing.has(oid)) missing.push(oid);
    } else {
      const type = await existing.typeOf(oid);
      if (!type || flags !== expects(type)) missing.push(oid);
    }
  }
  outside.push(...external);
  return {
    record: { id: finalId, repoId: spool.repoId, objects: idx.count, size: finalSize, idxSize: idxBytes.length, checksum: toHex(checksum) },
    idx,
    missing,
    thinBases: external.length,
    outside,
    identities: [...collected.identities],
  };
}

/**
 * Writes the completed pack: same entries (offsets unchanged, only the header count differs),
 * the appended bases, and a new trailing SHA-1. In memory when the pack was small, else by
 * streaming the stored copy into a new file and deleting the old one.
 */
async function rewriteThin(
  spool: Spool,
  memory: Uint8Array | null,
  packSize: number,
  newCount: number,
  appended: Uint8Array[],
): Promise<{ packId: string; size: number; checksum: Uint8Array }> {
  const { store, repoId } = spool;
  const hash = createHash("sha1");
  const head = packHeader(newCount);
  if (memory) {
    const body = memory.subarray(PACK_HEADER_SIZE, packSize - PACK_TRAILER_SIZE);
    hash.update(head).update(body);
    for (const a of appended) hash.update(a);
    const checksum = new Uint8Array(hash.digest());
    const all = concat([head, body, ...appended, checksum]);
    await store.put(repoId, packFileName(spool.packId), all);
    spool.stored = true;
    return { packId: spool.packId, size: all.length, checksum };
  }
  const src = await store.stream(repoId, packFileName(spool.packId), { offset: PACK_HEADER_SIZE, length: packSize - PACK_HEADER_SIZE - PACK_TRAILER_SIZE });
  if (!src) throw new GitError("missing", "the received pack could not be read back from storage");
  let checksum = new Uint8Array(0);
  let size = 0;
  async function* pieces(): AsyncGenerator<Uint8Array> {
    yield head;
    const reader = src!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield value;
    }
    yield* appended;
  }
  const it = pieces();
  const out = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      const { done, value } = await it.next();
      if (!done) {
        hash.update(value);
        size += value.length;
        ctl.enqueue(value);
        return;
      }
      checksum = new Uint8Array(hash.digest());
      size += checksum.length;
      ctl.enqueue(checksum);
      ctl.close();
    },
  });
  const packId = newPackId();
  await store.put(repoId, packFileName(packId), out);
  await store.delete(repoId, [packFileName(spool.packId)]);
  return { packId, size, checksum };
}
