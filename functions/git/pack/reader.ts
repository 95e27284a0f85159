/**
 * Reads objects out of a repository's stored packs: finds an id through each pack's `.idx`,
 * range-reads the entry (entry lengths come from the sorted offsets, so a read is exact), inflates
 * it and applies delta chains. Two size-bounded LRU caches keep memory flat: file blocks (so many
 * small entries cost few storage reads, which matters on R2) and inflated objects (delta bases).
 */
import { concatStreams } from "../bytes.ts";
import { GitError } from "../errors.ts";
import { type GitObject, TYPE_NAME } from "../objects/object.ts";
import type { ByteRange, ObjectStore } from "../storage/object-store.ts";
import { idxFileName, packFileName, revFileName } from "../storage/object-store.ts";
import type { PackRecord } from "../storage/ref-store.ts";
import { applyDelta, deltaTargetSize } from "./delta.ts";
import { type EntryHeader, OBJ_OFS_DELTA, OBJ_REF_DELTA, PACK_TRAILER_SIZE, parseEntryHeader } from "./format.ts";
import { PackIndex } from "./idx.ts";
import { compact, inflateExact, inflatePrefix, MAX_BUILT_BYTES } from "./inflate.ts";

/** Tunables of the reader's caches. */
export interface ReaderOptions {
  /** Bytes of pack file blocks kept (default 16 MiB). */
  blockCacheBytes?: number;
  /** Size of one cached block (default 256 KiB). */
  blockBytes?: number;
  /** Bytes of inflated objects kept as delta bases (default 16 MiB). */
  objectCacheBytes?: number;
  /** Largest object the reader will build whole (default MAX_BUILT_BYTES: 512 MiB, git's core.bigFileThreshold; 48 MiB on Workers). */
  maxObjectBytes?: number;
  /** Share loaded pack indexes across readers of this process/isolate (packs are immutable). */
  shareIndexes?: boolean;
}

/** The most zlib's deflate can produce from `n` bytes (deflateBound plus the zlib wrapper). */
const deflateBound = (n: number) => n + Math.floor(n / 4096) + Math.floor(n / 16384) + 64;

/** A size-bounded LRU map (Map keeps insertion order; a hit re-inserts). */
export class LruCache<V> {
  private readonly map = new Map<string, { v: V; n: number }>();
  private bytes = 0;
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  get(k: string): V | undefined {
    const e = this.map.get(k);
    if (!e) return undefined;
    this.map.delete(k);
    this.map.set(k, e);
    return e.v;
  }
  set(k: string, v: V, n: number): void {
    if (n > this.limit / 2) return; // one huge value would flush everything useful
    const old = this.map.get(k);
    if (old) {
      this.bytes -= old.n;
      this.map.delete(k);
    }
    this.map.set(k, { v, n });
    this.bytes += n;
    for (const [key, e] of this.map) {
      if (this.bytes <= this.limit) break;
      this.map.delete(key);
      this.bytes -= e.n;
    }
  }
  get size(): number {
    return this.bytes;
  }
}

/**
 * Pack indexes loaded by any reader of this process (Node) or isolate (Worker), by pack: a pack
 * and its index never change, so a push or clone does not re-read and re-parse them each time.
 * (An index larger than half the budget is not kept, like any LruCache value.)
 */
let SHARED_INDEXES = new LruCache<PackIndex>(32 * 1024 * 1024);

/** Sets the byte budget of the shared pack index cache (default 32 MiB; 0 disables it). */
export function setSharedIndexBudget(bytes: number): void {
  SHARED_INDEXES = new LruCache<PackIndex>(bytes);
}

/** Where an object is stored. */
export interface ObjectLocation {
  pack: StoredPack;
  /** Position in the pack's index (sorted by id). */
  pos: number;
  offset: number;
}

/** One pack of the catalog with its loaded index. */
export class StoredPack {
  readonly record: PackRecord;
  readonly idx: PackIndex;
  /** Position of the pack in the catalog (stable tie-break for duplicate objects). */
  readonly order: number;

  constructor(record: PackRecord, idx: PackIndex, order: number) {
    this.record = record;
    this.idx = idx;
    this.order = order;
  }

  /** End offset (exclusive) of the entry starting at `offset` (needs the offset order loaded). */
  entryEnd(offset: number): number {
    const { offsets } = this.idx.offsetOrder();
    const k = this.idx.orderOfOffset(offset);
    if (k < 0) throw new GitError("corrupt", `no pack entry at offset ${offset} in pack ${this.record.id}`);
    return k + 1 < offsets.length ? offsets[k + 1]! : this.record.size - PACK_TRAILER_SIZE;
  }
}

/**
 * An object to send: its bytes, or — a large object stored whole — its bytes inflated as they are
 * read, so sending it holds a chunk, never the object (Gitea streams blobs from `git cat-file`).
 */
export interface ObjectSource {
  type: GitObject["type"];
  size: number;
  /** The whole object; null when it is streamed. */
  data: Uint8Array | null;
  /** Bytes [start, start + length) of the object. */
  range(start: number, length: number): ReadableStream<Uint8Array>;
}

/** Objects stored whole and larger than this are streamed by `ObjectReader.source`. */
export const STREAM_ABOVE = 1024 * 1024;

/** A raw (still compressed) entry as stored. */
export interface RawEntry {
  header: EntryHeader;
  /** The whole entry: header, base reference and zlib data. */
  bytes: Uint8Array;
}

/** Object access across a repository's packs. Create one per request (caches are per reader). */
export class ObjectReader {
  readonly packs: StoredPack[] = [];
  private readonly blocks: LruCache<Uint8Array>;
  private readonly objects: LruCache<GitObject>;
  private readonly inflight = new Map<string, Promise<Uint8Array>>();
  private readonly blockBytes: number;
  readonly maxObjectBytes: number;
  /** Storage reads issued (for tests and the benchmark). */
  reads = 0;

  readonly store: ObjectStore;

  private constructor(store: ObjectStore, opts: ReaderOptions) {
    this.store = store;
    this.blocks = new LruCache(opts.blockCacheBytes ?? 16 * 1024 * 1024);
    this.objects = new LruCache(opts.objectCacheBytes ?? 16 * 1024 * 1024);
    this.blockBytes = opts.blockBytes ?? 256 * 1024;
    this.maxObjectBytes = opts.maxObjectBytes ?? MAX_BUILT_BYTES;
  }

  /** Opens the packs of a catalog (their indexes are read in parallel). */
  static async open(store: ObjectStore, packs: readonly PackRecord[], opts: ReaderOptions = {}): Promise<ObjectReader> {
    const r = new ObjectReader(store, opts);
    const share = opts.shareIndexes !== false;
    const idxs = await Promise.all(
      packs.map(async (p) => {
        const key = `${p.repoId}/${p.id}`;
        const hit = share ? SHARED_INDEXES.get(key) : undefined;
        if (hit) return hit;
        const bytes = await store.get(p.repoId, idxFileName(p.id));
        if (!bytes) throw new GitError("missing", `index of pack ${p.id} is missing from object storage`);
        const idx = new PackIndex(bytes);
        if (share) SHARED_INDEXES.set(key, idx, idx.byteLength + idx.count * 12);
        return idx;
      }),
    );
    for (const [i, p] of packs.entries()) r.packs.push(new StoredPack(p, idxs[i]!, i));
    return r;
  }

  /** Adds a pack whose index is already in memory (a pack just received). */
  addPack(record: PackRecord, idx: PackIndex): StoredPack {
    const p = new StoredPack(record, idx, this.packs.length);
    this.packs.push(p);
    return p;
  }

  /** Where `oid` is stored (first pack of the catalog that has it), or null. */
  locate(oid: string): ObjectLocation | null {
    for (const pack of this.packs) {
      const pos = pack.idx.find(oid);
      if (pos >= 0) return { pack, pos, offset: pack.idx.offset(pos) };
    }
    return null;
  }

  /**
   * Where a REF_DELTA's base is: in the delta's own pack first. Every stored pack holds its bases
   * (thin packs get theirs appended), while the first pack of the catalog holding the id may
   * store it as a delta too; searching the catalog made each read walk back through one pack per
   * push (one more storage read per pack on every push).
   */
  private locateBase(pack: StoredPack, oid: string): ObjectLocation | null {
    const pos = pack.idx.find(oid);
    return pos >= 0 ? { pack, pos, offset: pack.idx.offset(pos) } : this.locate(oid);
  }

  /** True when some pack holds `oid`. */
  has(oid: string): boolean {
    return this.locate(oid) !== null;
  }

  /** Full ids starting with a hex prefix (up to `limit`, across packs, deduplicated). */
  findPrefix(prefix: string, limit = 2): string[] {
    const out = new Set<string>();
    for (const pack of this.packs) for (const pos of pack.idx.findPrefix(prefix, limit)) out.add(pack.idx.oidHex(pos));
    return [...out].slice(0, limit);
  }

  /** Bytes of a stored pack file, through the block cache. */
  async readPackBytes(pack: StoredPack, offset: number, length: number): Promise<Uint8Array> {
    const bs = this.blockBytes;
    const first = Math.floor(offset / bs);
    const last = Math.floor((offset + length - 1) / bs);
    if (length <= 0) return new Uint8Array(0);
    // large reads bypass the cache: they would only evict the blocks worth keeping
    if (last - first >= 4) return this.fetch(pack, offset, length);
    const parts: Uint8Array[] = [];
    for (let b = first; b <= last; b++) parts.push(await this.block(pack, b));
    if (parts.length === 1) {
      const s = offset - first * bs;
      return parts[0]!.subarray(s, s + length);
    }
    const out = new Uint8Array(length);
    let o = 0;
    for (let i = 0; i < parts.length; i++) {
      const blockStart = (first + i) * bs;
      const s = Math.max(offset, blockStart) - blockStart;
      const e = Math.min(offset + length, blockStart + parts[i]!.length) - blockStart;
      out.set(parts[i]!.subarray(s, e), o);
      o += e - s;
    }
    return out;
  }

  private async block(pack: StoredPack, b: number): Promise<Uint8Array> {
    const key = `${pack.record.repoId}/${pack.record.id}/${b}`;
    const hit = this.blocks.get(key);
    if (hit) return hit;
    let p = this.inflight.get(key);
    if (!p) {
      const start = b * this.blockBytes;
      p = this.fetch(pack, start, Math.min(this.blockBytes, pack.record.size - start)).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    const bytes = await p;
    this.blocks.set(key, bytes, bytes.length);
    return bytes;
  }

  private async fetch(pack: StoredPack, offset: number, length: number): Promise<Uint8Array> {
    this.reads++;
    const bytes = await this.store.get(pack.record.repoId, packFileName(pack.record.id), { offset, length });
    if (!bytes || bytes.length !== length) throw new GitError("missing", `pack ${pack.record.id} is missing or shorter than its index says`);
    return bytes;
  }

  /**
   * Makes the pack's entries addressable in pack order (entry lengths, the id at an offset): from
   * its `.rev` file when stored, else by sorting the index's offsets once.
   */
  async loadOrder(pack: StoredPack): Promise<void> {
    if (pack.idx.hasOffsetOrder) return;
    const rev = await this.store.get(pack.record.repoId, revFileName(pack.record.id)).catch(() => null);
    if (!rev || !pack.idx.useReverseIndex(rev)) pack.idx.offsetOrder();
  }

  /** The raw stored entry at `offset` (for copying into another pack without inflating). */
  async readRaw(pack: StoredPack, offset: number): Promise<RawEntry> {
    await this.loadOrder(pack);
    const end = pack.entryEnd(offset);
    const bytes = await this.readPackBytes(pack, offset, end - offset);
    const header = parseEntryHeader(bytes, 0);
    if (!header) throw new GitError("corrupt", `truncated entry at ${offset} in pack ${pack.record.id}`);
    return { header, bytes };
  }

  /** The object with id `oid`, or null when no pack has it. */
  async read(oid: string): Promise<GitObject | null> {
    const loc = this.locate(oid);
    return loc ? this.readAt(loc.pack, loc.offset) : null;
  }

  /** Like `read` but throws `missing` when absent. */
  async mustRead(oid: string): Promise<GitObject> {
    const o = await this.read(oid);
    if (!o) throw new GitError("missing", `object ${oid} not found`);
    return o;
  }

  /** The object stored at `offset` of `pack`, delta chain resolved (iteratively, bases cached). */
  async readAt(pack: StoredPack, offset: number): Promise<GitObject> {
    const chain: { pack: StoredPack; offset: number; delta: Uint8Array }[] = [];
    let cur = { pack, offset };
    let base: GitObject | undefined;
    for (;;) {
      const key = `${cur.pack.record.repoId}/${cur.pack.record.id}@${cur.offset}`;
      base = this.objects.get(key);
      if (base) break;
      if (chain.length > 10_000) throw new GitError("corrupt", "delta chain too long");
      const { header: h, data } = await this.readEntry(cur.pack, cur.offset);
      if (h.type === OBJ_OFS_DELTA) {
        chain.push({ ...cur, delta: data });
        cur = { pack: cur.pack, offset: cur.offset - h.baseDistance! };
      } else if (h.type === OBJ_REF_DELTA) {
        chain.push({ ...cur, delta: data });
        const loc = this.locateBase(cur.pack, h.baseOid!);
        if (!loc) throw new GitError("missing", `delta base ${h.baseOid} not found`);
        cur = { pack: loc.pack, offset: loc.offset };
      } else {
        base = { type: TYPE_NAME[h.type]!, data: compact(data) };
        this.objects.set(key, base, data.length);
        break;
      }
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const link = chain[i]!;
      base = { type: base.type, data: applyDelta(base.data, link.delta, this.maxObjectBytes) };
      // intermediate results are the bases of other deltas too (sibling versions of a file)
      this.objects.set(`${link.pack.record.repoId}/${link.pack.record.id}@${link.offset}`, base, base.data.length);
    }
    return base;
  }

  /**
   * Header and inflated data of the entry at `offset`. Reads no further than zlib's bound for
   * the declared size (so no entry boundaries are needed), falling back to the exact entry length
   * for a stream that is longer than any zlib encoder writes.
   */
  private async readEntry(pack: StoredPack, offset: number): Promise<{ header: EntryHeader; data: Uint8Array }> {
    const limit = pack.record.size - PACK_TRAILER_SIZE;
    const head = await this.readPackBytes(pack, offset, Math.min(32, limit - offset));
    const h = parseEntryHeader(head, 0);
    if (!h) throw new GitError("corrupt", `truncated entry at ${offset} in pack ${pack.record.id}`);
    if (h.size > this.maxObjectBytes) throw new GitError("too-large", `object of ${h.size} bytes exceeds the limit of ${this.maxObjectBytes}`);
    const bytes = await this.readPackBytes(pack, offset, Math.min(h.headerLength + deflateBound(h.size), limit - offset));
    const r = inflatePrefix(bytes.subarray(h.headerLength), h.size);
    if (r) {
      if (r.data.length !== h.size) throw new GitError("corrupt", `pack entry inflated to ${r.data.length} bytes, expected ${h.size}`);
      return { header: h, data: r.data };
    }
    const raw = await this.readRaw(pack, offset);
    return { header: h, data: inflateExact(raw.bytes.subarray(h.headerLength), h.size) };
  }

  /** The header of the entry at `offset` (its type, size and delta base), from its first bytes. */
  private async entryHeaderAt(pack: StoredPack, offset: number): Promise<EntryHeader> {
    const h = parseEntryHeader(await this.readPackBytes(pack, offset, Math.min(32, pack.record.size - PACK_TRAILER_SIZE - offset)), 0);
    if (!h) throw new GitError("corrupt", "truncated entry header");
    return h;
  }

  /** Type of the object at a location without keeping its data (walks the delta chain to the base). */
  async typeAt(pack: StoredPack, offset: number): Promise<GitObject["type"]> {
    let cur = { pack, offset };
    for (let i = 0; i < 10_000; i++) {
      const cached = this.objects.get(`${cur.pack.record.repoId}/${cur.pack.record.id}@${cur.offset}`);
      if (cached) return cached.type;
      const h = await this.entryHeaderAt(cur.pack, cur.offset);
      if (h.type === OBJ_OFS_DELTA) cur = { pack: cur.pack, offset: cur.offset - h.baseDistance! };
      else if (h.type === OBJ_REF_DELTA) {
        const loc = this.locateBase(cur.pack, h.baseOid!);
        if (!loc) throw new GitError("missing", `delta base ${h.baseOid} not found`);
        cur = loc;
      } else return TYPE_NAME[h.type]!;
    }
    throw new GitError("corrupt", "delta chain too long");
  }

  /**
   * Size in bytes of `oid` without building it (the contents API lists sizes): a whole entry's
   * header holds it, a delta's own header names the size it produces. Null when absent.
   */
  async sizeOf(oid: string): Promise<number | null> {
    const loc = this.locate(oid);
    if (!loc) return null;
    const cached = this.objects.get(`${loc.pack.record.repoId}/${loc.pack.record.id}@${loc.offset}`);
    if (cached) return cached.data.length;
    const h = await this.entryHeaderAt(loc.pack, loc.offset);
    if (h.type !== OBJ_OFS_DELTA && h.type !== OBJ_REF_DELTA) return h.size;
    return deltaTargetSize((await this.readEntry(loc.pack, loc.offset)).data);
  }

  /**
   * `oid` to send, or null when absent: an object stored whole (not a delta) larger than
   * `streamAbove` is inflated from its stored range as it is read, without `maxObjectBytes`
   * (nothing is built); anything else is read as `read` reads it.
   */
  async source(oid: string, streamAbove = STREAM_ABOVE): Promise<ObjectSource | null> {
    const loc = this.locate(oid);
    if (!loc) return null;
    const { pack, offset } = loc;
    let o = this.objects.get(`${pack.record.repoId}/${pack.record.id}@${offset}`);
    if (!o) {
      const h = await this.entryHeaderAt(pack, offset);
      if (h.type !== OBJ_OFS_DELTA && h.type !== OBJ_REF_DELTA && h.size > streamAbove) {
        await this.loadOrder(pack);
        const from = offset + h.headerLength;
        const stored = { offset: from, length: pack.entryEnd(offset) - from };
        return { type: TYPE_NAME[h.type]!, size: h.size, data: null, range: (start, length) => this.inflating(pack, stored, h.size, start, length) };
      }
      o = await this.readAt(pack, offset);
    }
    const data = o.data;
    return { type: o.type, size: data.length, data, range: (start, length) => concatStreams([data.subarray(start, start + length)]) };
  }

  /**
   * Bytes [start, start + length) of the `size` bytes the zlib stream at `stored` inflates to: read
   * and inflated as the stream is pulled, stopped once the range is sent; a stream that inflates to
   * another size fails the stream (`corrupt`).
   */
  private inflating(pack: StoredPack, stored: ByteRange, size: number, start: number, length: number): ReadableStream<Uint8Array> {
    const { repoId, id } = pack.record;
    const end = start + length;
    let seen = 0;
    const window = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        const at = seen;
        seen += chunk.length;
        if (seen > size) return ctl.error(new GitError("corrupt", `pack entry inflates to more than its ${size} bytes`));
        const from = Math.max(start - at, 0);
        const to = Math.min(end - at, chunk.length);
        if (to > from) ctl.enqueue(chunk.subarray(from, to));
        // the rest is not wanted: stop reading and inflating it
        if (seen >= end && end < size) ctl.terminate();
      },
      flush(ctl) {
        if (seen !== size) ctl.error(new GitError("corrupt", `pack entry inflated to ${seen} bytes, expected ${size}`));
      },
    });
    return concatStreams([
      async () => {
        const raw = await this.store.stream(repoId, packFileName(id), stored);
        if (!raw) throw new GitError("missing", `pack ${id} is missing from object storage`);
        return raw.pipeThrough(new DecompressionStream("deflate") as unknown as TransformStream<Uint8Array, Uint8Array>).pipeThrough(window);
      },
    ], 0);
  }

  /** Type of `oid`, or null when absent. */
  async typeOf(oid: string): Promise<GitObject["type"] | null> {
    const loc = this.locate(oid);
    return loc ? this.typeAt(loc.pack, loc.offset) : null;
  }
}
