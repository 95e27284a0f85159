/**
 * Small packs built in memory from whole objects (API commits, auto-init, template generation):
 * every object deflated as-is (no deltas), with its `.idx`. Stored like any received pack.
 */
import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { concat, fromHex, toHex } from "../bytes.ts";
import { type GitObject, hashObject, TYPE_CODE } from "../objects/object.ts";
import { idxFileName, newPackId, type ObjectStore, packFileName, revFileName } from "../storage/object-store.ts";
import type { PackRecord } from "../storage/ref-store.ts";
import { encodeTypeSize, packHeader } from "./format.ts";
import { type IdxEntry, PackIndex, writeIdx, writeRev } from "./idx.ts";
import { deflate } from "./inflate.ts";

/** Accumulates objects (deduplicated by id) and writes them as one pack + index. */
export class PackBuilder {
  private readonly parts: Uint8Array[] = [];
  private readonly entries: IdxEntry[] = [];
  private readonly ids = new Set<string>();
  private offset = 12;

  /** Adds an object; returns its id. */
  add(obj: GitObject): string {
    const oid = hashObject(obj.type, obj.data);
    if (this.ids.has(oid)) return oid;
    this.ids.add(oid);
    const raw = concat([new Uint8Array(encodeTypeSize(TYPE_CODE[obj.type], obj.data.length)), deflate(obj.data)]);
    this.entries.push({ oid: fromHex(oid), crc: crc32(raw) >>> 0, offset: this.offset });
    this.parts.push(raw);
    this.offset += raw.length;
    return oid;
  }

  /** True when `oid` was added. */
  has(oid: string): boolean {
    return this.ids.has(oid);
  }

  get count(): number {
    return this.entries.length;
  }

  /** The pack and index bytes. */
  build(): { pack: Uint8Array; idx: Uint8Array; checksum: Uint8Array } {
    const head = packHeader(this.entries.length);
    const hash = createHash("sha1").update(head);
    for (const p of this.parts) hash.update(p);
    const checksum = new Uint8Array(hash.digest());
    return { pack: concat([head, ...this.parts, checksum]), idx: writeIdx(this.entries, checksum), checksum };
  }

  /** Stores the pack under `repoId`; returns its catalog record and loaded index. */
  async store(objects: ObjectStore, repoId: string): Promise<{ record: PackRecord; idx: PackIndex }> {
    const { pack, idx, checksum } = this.build();
    const id = newPackId();
    const index = new PackIndex(idx);
    await objects.put(repoId, packFileName(id), pack);
    await objects.put(repoId, revFileName(id), writeRev(index));
    await objects.put(repoId, idxFileName(id), idx);
    return { record: { id, repoId, objects: this.entries.length, size: pack.length, idxSize: idx.length, checksum: toHex(checksum) }, idx: index };
  }
}
