/**
 * Git's delta encoding (gitformat-pack "Deltified representation"): source and target sizes as
 * little-endian base-128 varints, then copy (bit 7 set) and insert (1–127 literal bytes) opcodes.
 */
import { GitError } from "../errors.ts";

function varint(d: Uint8Array, pos: number): [number, number] {
  let v = 0;
  let shift = 0;
  let c: number;
  do {
    if (pos >= d.length) throw new GitError("corrupt", "truncated delta header");
    c = d[pos++]!;
    v += (c & 0x7f) * 2 ** shift;
    shift += 7;
  } while (c & 0x80);
  return [v, pos];
}

/** The size of the object a delta produces, read from its header. */
export function deltaTargetSize(delta: Uint8Array): number {
  const [, p] = varint(delta, 0);
  return varint(delta, p)[0];
}

/** Applies `delta` to `base`; throws `corrupt` on any inconsistency (never reads out of bounds), `too-large` past `maxSize`. */
export function applyDelta(base: Uint8Array, delta: Uint8Array, maxSize = Number.MAX_SAFE_INTEGER): Uint8Array {
  let [srcSize, p] = varint(delta, 0);
  if (srcSize !== base.length) throw new GitError("corrupt", `delta base size ${srcSize} does not match base of ${base.length} bytes`);
  let dstSize: number;
  [dstSize, p] = varint(delta, p);
  if (dstSize > maxSize) throw new GitError("too-large", `object of ${dstSize} bytes exceeds the limit of ${maxSize}`);
  // what the ops produce, before the result is allocated: a delta of a few bytes claiming
  // hundreds of MiB is refused without them
  const produced = producedBy(delta, p, base.length);
  if (produced === -1) throw new GitError("corrupt", "delta opcode 0 is reserved");
  if (produced === -2) throw new GitError("corrupt", "delta copy out of bounds");
  if (produced !== dstSize) throw new GitError("corrupt", `delta produced ${produced} bytes, expected ${dstSize}`);
  const out = new Uint8Array(dstSize);
  let o = 0;
  while (p < delta.length) {
    const op = delta[p++]!;
    if (op & 0x80) {
      let off = 0;
      let len = 0;
      if (op & 0x01) off = delta[p++]!;
      if (op & 0x02) off |= delta[p++]! << 8;
      if (op & 0x04) off |= delta[p++]! << 16;
      if (op & 0x08) off = (off | (delta[p++]! << 24)) >>> 0;
      if (op & 0x10) len = delta[p++]!;
      if (op & 0x20) len |= delta[p++]! << 8;
      if (op & 0x40) len |= delta[p++]! << 16;
      if (len === 0) len = 0x10000;
      if (p > delta.length || off + len > base.length || o + len > dstSize) throw new GitError("corrupt", "delta copy out of bounds");
      out.set(base.subarray(off, off + len), o);
      o += len;
    } else if (op !== 0) {
      if (p + op > delta.length || o + op > dstSize) throw new GitError("corrupt", "delta insert out of bounds");
      out.set(delta.subarray(p, p + op), o);
      p += op;
      o += op;
    } else {
      throw new GitError("corrupt", "delta opcode 0 is reserved");
    }
  }
  if (o !== dstSize) throw new GitError("corrupt", `delta produced ${o} bytes, expected ${dstSize}`);
  return out;
}

/**
 * The bytes the ops of `delta` from `p` on produce (an op that runs past the delta counts what it
 * has); -1 at a reserved opcode, -2 at a copy from outside the base's `baseLength` bytes.
 */
function producedBy(delta: Uint8Array, p: number, baseLength: number): number {
  let n = 0;
  while (p < delta.length) {
    const op = delta[p++]!;
    if (op & 0x80) {
      let off = 0;
      let len = 0;
      if (op & 0x01) off = delta[p++] ?? 0;
      if (op & 0x02) off |= (delta[p++] ?? 0) << 8;
      if (op & 0x04) off |= (delta[p++] ?? 0) << 16;
      if (op & 0x08) off = (off | ((delta[p++] ?? 0) << 24)) >>> 0;
      if (op & 0x10) len = delta[p++] ?? 0;
      if (op & 0x20) len |= (delta[p++] ?? 0) << 8;
      if (op & 0x40) len |= (delta[p++] ?? 0) << 16;
      if (len === 0) len = 0x10000;
      if (off + len > baseLength) return -2;
      n += len;
    } else if (op !== 0) {
      n += Math.min(op, delta.length - p);
      p += op;
    } else return -1;
  }
  return n;
}
