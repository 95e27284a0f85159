/**
 * The pack file format (gitformat-pack): the 12-byte header, each entry's variable-length
 * type+size header, OFS_DELTA's negative offset encoding and REF_DELTA's base id.
 */
import { toHex } from "../bytes.ts";
import { GitError } from "../errors.ts";

export const OBJ_COMMIT = 1;
export const OBJ_TREE = 2;
export const OBJ_BLOB = 3;
export const OBJ_TAG = 4;
export const OBJ_OFS_DELTA = 6;
export const OBJ_REF_DELTA = 7;

/** Bytes of the pack header (`PACK`, version, object count) and of the trailing SHA-1. */
export const PACK_HEADER_SIZE = 12;
export const PACK_TRAILER_SIZE = 20;

/** The 12-byte header of a version 2 pack holding `count` objects. */
export function packHeader(count: number): Uint8Array {
  const h = new Uint8Array(PACK_HEADER_SIZE);
  h.set([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2]);
  new DataView(h.buffer).setUint32(8, count);
  return h;
}

/** Validates a pack header and returns its object count. */
export function parsePackHeader(h: Uint8Array): number {
  if (h.length < PACK_HEADER_SIZE || h[0] !== 0x50 || h[1] !== 0x41 || h[2] !== 0x43 || h[3] !== 0x4b) {
    throw new GitError("corrupt", "protocol error: bad pack header");
  }
  const dv = new DataView(h.buffer, h.byteOffset, PACK_HEADER_SIZE);
  const version = dv.getUint32(4);
  if (version !== 2 && version !== 3) throw new GitError("corrupt", `pack version ${version} unsupported`);
  return dv.getUint32(8);
}

/** A parsed entry header. `dataStart` is where the zlib stream begins, relative to the entry. */
export interface EntryHeader {
  type: number;
  /** Inflated size of the entry's data (for deltas: the size of the delta itself). */
  size: number;
  headerLength: number;
  /** OFS_DELTA: distance back from this entry to its base. */
  baseDistance?: number;
  /** REF_DELTA: the base object's id. */
  baseOid?: string;
}

/** Parses an entry header at `pos`; null when `buf` ends before the header does. */
export function parseEntryHeader(buf: Uint8Array, pos: number): EntryHeader | null {
  let p = pos;
  if (p >= buf.length) return null;
  let c = buf[p++]!;
  const type = (c >> 4) & 7;
  let size = c & 15;
  let shift = 4;
  while (c & 0x80) {
    if (p >= buf.length) return null;
    c = buf[p++]!;
    // sizes beyond 2^53 cannot be represented; git caps objects far below that anyway
    if (shift > 49) throw new GitError("corrupt", "pack entry size overflows");
    size += (c & 0x7f) * 2 ** shift;
    shift += 7;
  }
  if (type === 0 || type === 5) throw new GitError("corrupt", `pack entry with invalid type ${type}`);
  if (type === OBJ_OFS_DELTA) {
    if (p >= buf.length) return null;
    c = buf[p++]!;
    let dist = c & 0x7f;
    while (c & 0x80) {
      if (p >= buf.length) return null;
      c = buf[p++]!;
      dist = (dist + 1) * 128 + (c & 0x7f);
      if (dist > Number.MAX_SAFE_INTEGER / 256) throw new GitError("corrupt", "delta base offset overflows");
    }
    return { type, size, headerLength: p - pos, baseDistance: dist };
  }
  if (type === OBJ_REF_DELTA) {
    if (p + 20 > buf.length) return null;
    return { type, size, headerLength: p + 20 - pos, baseOid: toHex(buf, p) };
  }
  return { type, size, headerLength: p - pos };
}

/** Encodes an entry's type+size header. */
export function encodeTypeSize(type: number, size: number): number[] {
  const out: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    out.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  out.push(c);
  return out;
}

/** Encodes an OFS_DELTA distance (big-endian base-128 with the +1 bias per continuation). */
export function encodeOfsDistance(dist: number): number[] {
  const out = [dist & 0x7f];
  let d = Math.floor(dist / 128);
  while (d > 0) {
    d -= 1;
    out.unshift(0x80 | (d & 0x7f));
    d = Math.floor(d / 128);
  }
  return out;
}
