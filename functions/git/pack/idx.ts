/**
 * Git's pack index, version 2 (gitformat-pack "pack-*.idx files have the following format"):
 * magic `\377tOc`, version 2, a 256-entry fan-out, sorted object ids, CRC32s, 31-bit offsets with a
 * table of 64-bit offsets for packs past 2 GiB, then the pack's and the index's own SHA-1.
 * Written in git's exact layout so `git verify-pack` / `git index-pack` can cross-check it.
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { asBuffer, compareOid, fromHex, toHex } from "../bytes.ts";
import { GitError } from "../errors.ts";

const MAGIC = [0xff, 0x74, 0x4f, 0x63];

/** One object of a pack, as the index records it. */
export interface IdxEntry {
  /** 20 raw bytes. */
  oid: Uint8Array;
  crc: number;
  offset: number;
}

/** Builds a v2 `.idx` for `entries` of the pack whose trailing checksum is `packChecksum`. */
export function writeIdx(entries: readonly IdxEntry[], packChecksum: Uint8Array): Uint8Array {
  const sorted = [...entries].sort((a, b) => compareOid(a.oid, 0, b.oid, 0));
  const n = sorted.length;
  const large = sorted.filter((e) => e.offset >= 0x80000000).length;
  const size = 8 + 1024 + n * 28 + large * 8 + 40;
  const out = Buffer.alloc(size);
  out.set(MAGIC, 0);
  out.writeUInt32BE(2, 4);
  let p = 8;
  let i = 0;
  for (let b = 0; b < 256; b++) {
    while (i < n && sorted[i]!.oid[0]! <= b) i++;
    out.writeUInt32BE(i, p);
    p += 4;
  }
  for (const e of sorted) {
    out.set(e.oid, p);
    p += 20;
  }
  for (const e of sorted) {
    out.writeUInt32BE(e.crc >>> 0, p);
    p += 4;
  }
  let li = 0;
  const largeAt = p + n * 4;
  for (const e of sorted) {
    if (e.offset >= 0x80000000) {
      out.writeUInt32BE((0x80000000 | li) >>> 0, p);
      out.writeBigUInt64BE(BigInt(e.offset), largeAt + li * 8);
      li++;
    } else {
      out.writeUInt32BE(e.offset, p);
    }
    p += 4;
  }
  p = largeAt + large * 8;
  out.set(packChecksum, p);
  p += 20;
  out.set(createHash("sha1").update(out.subarray(0, p)).digest(), p);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

/** A loaded `.idx`: lookups by object id (fan-out + binary search) and by position. */
export class PackIndex {
  readonly count: number;
  private readonly buf: Buffer;
  private readonly oidsAt: number;
  private readonly crcAt: number;
  private readonly offAt: number;
  private readonly largeAt: number;
  private byOffset: { offsets: Float64Array; positions: Uint32Array } | null = null;

  constructor(bytes: Uint8Array) {
    const buf = asBuffer(bytes);
    if (buf.length < 8 + 1024 + 40 || MAGIC.some((m, i) => buf[i] !== m) || buf.readUInt32BE(4) !== 2) {
      throw new GitError("corrupt", "not a version 2 pack index");
    }
    this.buf = buf;
    this.count = buf.readUInt32BE(8 + 255 * 4);
    this.oidsAt = 8 + 1024;
    this.crcAt = this.oidsAt + this.count * 20;
    this.offAt = this.crcAt + this.count * 4;
    this.largeAt = this.offAt + this.count * 4;
    if (this.largeAt + 40 > buf.length) throw new GitError("corrupt", "truncated pack index");
  }

  /** The checksum of the pack this index describes. */
  get packChecksum(): string {
    return toHex(this.buf, this.buf.length - 40);
  }

  /** Position of `oid` (hex or 20 bytes), or -1. */
  find(oid: string | Uint8Array): number {
    const key = typeof oid === "string" ? fromHex(oid) : oid;
    if (key.length !== 20) return -1;
    const b = key[0]!;
    let lo = b === 0 ? 0 : this.buf.readUInt32BE(8 + (b - 1) * 4);
    let hi = this.buf.readUInt32BE(8 + b * 4);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareOid(this.buf, this.oidsAt + mid * 20, key, 0);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /** Positions whose id starts with the hex `prefix` (at most `limit`). */
  findPrefix(prefix: string, limit = 2): number[] {
    const out: number[] = [];
    const even = prefix.length & ~1;
    const head = fromHex(prefix.slice(0, even));
    const b = prefix.length >= 2 ? head[0]! : -1;
    let lo = b <= 0 ? 0 : this.buf.readUInt32BE(8 + (b - 1) * 4);
    const hi = b < 0 ? this.count : this.buf.readUInt32BE(8 + b * 4);
    // binary search for the first id >= prefix, then scan while it matches
    let l = lo;
    let h = hi;
    while (l < h) {
      const mid = (l + h) >>> 1;
      if (this.oidHex(mid) < prefix) l = mid + 1;
      else h = mid;
    }
    for (lo = l; lo < hi && out.length < limit; lo++) {
      if (!this.oidHex(lo).startsWith(prefix)) break;
      out.push(lo);
    }
    return out;
  }

  /** The id at position `i` as hex. */
  oidHex(i: number): string {
    return this.buf.toString("hex", this.oidsAt + i * 20, this.oidsAt + i * 20 + 20);
  }

  /** The id at position `i` as 20 bytes (a view, not a copy). */
  oidBytes(i: number): Uint8Array {
    return this.buf.subarray(this.oidsAt + i * 20, this.oidsAt + i * 20 + 20);
  }

  /** The CRC32 of the raw entry at position `i`. */
  crc(i: number): number {
    return this.buf.readUInt32BE(this.crcAt + i * 4);
  }

  /** The pack offset of the entry at position `i`. */
  offset(i: number): number {
    const v = this.buf.readUInt32BE(this.offAt + i * 4);
    if (!(v & 0x80000000)) return v;
    return Number(this.buf.readBigUInt64BE(this.largeAt + (v & 0x7fffffff) * 8));
  }

  /** True once the offset order is known (from a `.rev` file or computed). */
  get hasOffsetOrder(): boolean {
    return this.byOffset !== null;
  }

  /** Installs the offset order from a `.rev` file (checked against this index), or returns false. */
  useReverseIndex(rev: Uint8Array): boolean {
    const positions = parseRev(rev, this.count, this.packChecksum);
    if (!positions) return false;
    const offsets = new Float64Array(this.count);
    for (let k = 0; k < this.count; k++) offsets[k] = this.offset(positions[k]!);
    for (let k = 1; k < this.count; k++) if (offsets[k]! <= offsets[k - 1]!) return false;
    this.byOffset = { offsets, positions };
    return true;
  }

  /** Offsets in ascending order with the position of each (entry boundaries for raw copies). */
  offsetOrder(): { offsets: Float64Array; positions: Uint32Array } {
    if (!this.byOffset) {
      const positions = new Uint32Array(this.count);
      const raw = new Float64Array(this.count);
      for (let i = 0; i < this.count; i++) {
        positions[i] = i;
        raw[i] = this.offset(i);
      }
      positions.sort((a, b) => raw[a]! - raw[b]!);
      const offsets = new Float64Array(this.count);
      for (let i = 0; i < this.count; i++) offsets[i] = raw[positions[i]!]!;
      this.byOffset = { offsets, positions };
    }
    return this.byOffset;
  }

  /** Position (in offset order) of the entry starting at `offset`, or -1. */
  orderOfOffset(offset: number): number {
    const { offsets } = this.offsetOrder();
    let lo = 0;
    let hi = offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (offsets[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo < offsets.length && offsets[lo] === offset ? lo : -1;
  }

  /** Bytes held by this index (for cache accounting). */
  get byteLength(): number {
    return this.buf.length + (this.byOffset ? this.count * 12 : 0);
  }
}

const RIDX = [0x52, 0x49, 0x44, 0x58];

/**
 * Git's reverse index (gitformat-pack "pack-*.rev files"): `RIDX`, version 1, hash id 1 (SHA-1),
 * the index positions of the objects in pack-offset order, the pack checksum, its own checksum.
 * Saves sorting the offsets whenever a pack is copied from (entry lengths come from it).
 */
export function writeRev(idx: PackIndex): Uint8Array {
  const { positions } = idx.offsetOrder();
  const out = Buffer.alloc(12 + positions.length * 4 + 40);
  out.set(RIDX, 0);
  out.writeUInt32BE(1, 4);
  out.writeUInt32BE(1, 8);
  for (let k = 0; k < positions.length; k++) out.writeUInt32BE(positions[k]!, 12 + k * 4);
  const p = 12 + positions.length * 4;
  out.set(Buffer.from(idx.packChecksum, "hex"), p);
  out.set(createHash("sha1").update(out.subarray(0, p + 20)).digest(), p + 20);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

function parseRev(rev: Uint8Array, count: number, packChecksum: string): Uint32Array | null {
  const b = asBuffer(rev);
  if (b.length !== 12 + count * 4 + 40 || RIDX.some((m, i) => b[i] !== m) || b.readUInt32BE(4) !== 1) return null;
  if (b.toString("hex", 12 + count * 4, 12 + count * 4 + 20) !== packChecksum) return null;
  const positions = new Uint32Array(count);
  for (let k = 0; k < count; k++) {
    const v = b.readUInt32BE(12 + k * 4);
    if (v >= count) return null;
    positions[k] = v;
  }
  return positions;
}
