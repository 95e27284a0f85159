/**
 * A set of 20-byte object ids in one typed array (open addressing, linear probing). The indexer
 * records every id a pack references (hundreds of thousands of tree entries for a large push);
 * as JavaScript strings in a Set that cost tens of MB of heap and most of the push's GC time.
 */
import { toHex } from "../bytes.ts";

/** A growable hash set of raw object ids. */
export class OidSet {
  private keys: Uint8Array;
  private used: Uint8Array;
  /** Per slot: flags OR-ed over every `add` of the id (the indexer: the object types its links expect). */
  private flags: Uint8Array;
  private mask: number;
  size = 0;

  constructor(capacity = 1024) {
    let cap = 1024;
    while (cap < capacity * 2) cap *= 2;
    this.keys = new Uint8Array(cap * 20);
    this.used = new Uint8Array(cap);
    this.flags = new Uint8Array(cap);
    this.mask = cap - 1;
  }

  /** Adds the id stored at `buf[off..off+20)`, OR-ing `flags` into its flags. */
  add(buf: Uint8Array, off = 0, flags = 0): void {
    if ((this.size + 1) * 2 > this.used.length) this.grow();
    let slot = hashAt(buf, off) & this.mask;
    for (;;) {
      if (!this.used[slot]) {
        this.used[slot] = 1;
        this.flags[slot] = flags;
        this.keys.set(buf.subarray(off, off + 20), slot * 20);
        this.size++;
        return;
      }
      if (equalAt(this.keys, slot * 20, buf, off)) {
        this.flags[slot]! |= flags;
        return;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** The flags of the id at `buf[off..off+20)`, or -1 when it is not in the set. */
  flagsOf(buf: Uint8Array, off = 0): number {
    let slot = hashAt(buf, off) & this.mask;
    while (this.used[slot]) {
      if (equalAt(this.keys, slot * 20, buf, off)) return this.flags[slot]!;
      slot = (slot + 1) & this.mask;
    }
    return -1;
  }

  /** True when the id at `buf[off..off+20)` is in the set. */
  has(buf: Uint8Array, off = 0): boolean {
    let slot = hashAt(buf, off) & this.mask;
    while (this.used[slot]) {
      if (equalAt(this.keys, slot * 20, buf, off)) return true;
      slot = (slot + 1) & this.mask;
    }
    return false;
  }

  /** Calls `fn` with each id (a view valid during the call) and its flags. */
  forEach(fn: (id: Uint8Array, flags: number) => void): void {
    for (let s = 0; s < this.used.length; s++) if (this.used[s]) fn(this.keys.subarray(s * 20, s * 20 + 20), this.flags[s]!);
  }

  /** Each id as hex (for messages and tests). */
  hexes(): string[] {
    const out: string[] = [];
    this.forEach((id) => {
      out.push(toHex(id));
    });
    return out;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldUsed = this.used;
    const oldFlags = this.flags;
    const cap = oldUsed.length * 2;
    this.keys = new Uint8Array(cap * 20);
    this.used = new Uint8Array(cap);
    this.flags = new Uint8Array(cap);
    this.mask = cap - 1;
    this.size = 0;
    for (let s = 0; s < oldUsed.length; s++) if (oldUsed[s]) this.add(oldKeys, s * 20, oldFlags[s]);
  }
}

// object ids are SHA-1 output: their first bytes are already uniformly distributed
const hashAt = (b: Uint8Array, o: number) => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

function equalAt(a: Uint8Array, ao: number, b: Uint8Array, bo: number): boolean {
  for (let i = 0; i < 20; i++) if (a[ao + i] !== b[bo + i]) return false;
  return true;
}
