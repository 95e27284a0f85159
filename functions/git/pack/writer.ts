/**
 * Packs for fetch. A stored pack that is exactly what is needed streams unchanged. Otherwise the
 * chosen objects are copied entry by entry from the stored packs: compressed bytes are copied raw,
 * a delta whose base is also sent stays a delta (OFS_DELTA offsets recomputed for the new layout,
 * or REF_DELTA when the base comes later or the client lacks ofs-delta), and a delta whose base is
 * not sent is resolved and recompressed — never a thin pack. Output is produced as the client
 * reads it, in chunks of about 64 KiB, so memory stays flat however large the pack is.
 */
import { createHash } from "node:crypto";
import { concat, fromHex } from "../bytes.ts";
import { GitError } from "../errors.ts";
import { TYPE_CODE } from "../objects/object.ts";
import { packFileName } from "../storage/object-store.ts";
import { encodeOfsDistance, encodeTypeSize, OBJ_OFS_DELTA, OBJ_REF_DELTA, packHeader } from "./format.ts";
import { deflate } from "./inflate.ts";
import type { ObjectLocation, ObjectReader, StoredPack } from "./reader.ts";

const CHUNK = 64 * 1024;

/** The stored pack file, unchanged. */
export async function storedPackStream(reader: ObjectReader, pack: StoredPack): Promise<ReadableStream<Uint8Array>> {
  const s = await reader.store.stream(pack.record.repoId, packFileName(pack.record.id));
  if (!s) throw new GitError("missing", `pack ${pack.record.id} is missing from object storage`);
  return s;
}

/** The id of the object stored at `offset` of `pack`. */
function oidAtOffset(pack: StoredPack, offset: number): string | null {
  const k = pack.idx.orderOfOffset(offset);
  return k < 0 ? null : pack.idx.oidHex(pack.idx.offsetOrder().positions[k]!);
}

/** Statistics of a written pack (for tests and the benchmark). */
export interface PackWriteStats {
  objects: number;
  rawCopies: number;
  resolved: number;
}

/**
 * Streams a pack of exactly `oids` (deduplicated by the caller) read from `reader`.
 * `ofsDelta`: the client understands OFS_DELTA.
 */
export async function writePack(reader: ObjectReader, oids: readonly string[], opts: { ofsDelta: boolean; stats?: PackWriteStats }): Promise<ReadableStream<Uint8Array>> {
  const locs: (ObjectLocation & { oid: string })[] = [];
  const sending = new Set<string>();
  for (const oid of oids) {
    if (sending.has(oid)) continue;
    const loc = reader.locate(oid);
    if (!loc) throw new GitError("missing", `object ${oid} not found`);
    sending.add(oid);
    locs.push({ ...loc, oid });
  }
  // catalog order, then pack order: OFS bases precede their deltas within a pack
  locs.sort((a, b) => a.pack.order - b.pack.order || a.offset - b.offset);
  for (const pack of new Set(locs.map((l) => l.pack))) await reader.loadOrder(pack);
  return entriesStream(reader, locs, sending, opts);
}

/**
 * Streams a pack of every object of every pack of the reader (a full clone from several packs):
 * the earliest pack holding an object supplies it.
 */
export async function writeAllPacks(reader: ObjectReader, opts: { ofsDelta: boolean; stats?: PackWriteStats }): Promise<ReadableStream<Uint8Array>> {
  const locs: (ObjectLocation & { oid: string })[] = [];
  const sending = new Set<string>();
  for (const pack of reader.packs) {
    await reader.loadOrder(pack);
    const { offsets, positions } = pack.idx.offsetOrder();
    for (let k = 0; k < offsets.length; k++) {
      const oid = pack.idx.oidHex(positions[k]!);
      if (sending.has(oid)) continue;
      sending.add(oid);
      locs.push({ pack, pos: positions[k]!, offset: offsets[k]!, oid });
    }
  }
  return entriesStream(reader, locs, sending, opts);
}

function entriesStream(
  reader: ObjectReader,
  locs: (ObjectLocation & { oid: string })[],
  sending: ReadonlySet<string>,
  opts: { ofsDelta: boolean; stats?: PackWriteStats },
): ReadableStream<Uint8Array> {
  const hash = createHash("sha1");
  const emittedAt = new Map<string, number>();
  let out = 0;
  let i = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const stats = opts.stats ?? { objects: 0, rawCopies: 0, resolved: 0 };
  const emit = (b: Uint8Array) => {
    hash.update(b);
    pending.push(b);
    pendingBytes += b.length;
    out += b.length;
  };
  emit(packHeader(locs.length));

  const writeEntry = async (loc: ObjectLocation & { oid: string }) => {
    const raw = await reader.readRaw(loc.pack, loc.offset);
    const h = raw.header;
    const start = out;
    let baseOid: string | null = null;
    if (h.type === OBJ_OFS_DELTA) baseOid = oidAtOffset(loc.pack, loc.offset - h.baseDistance!);
    else if (h.type === OBJ_REF_DELTA) baseOid = h.baseOid!;
    const data = raw.bytes.subarray(h.headerLength);
    if (baseOid === null) {
      if (h.type === OBJ_OFS_DELTA) throw new GitError("corrupt", `delta at ${loc.offset} of pack ${loc.pack.record.id} has no base entry`);
      emit(raw.bytes); // a whole object: copied as stored
      stats.rawCopies++;
    } else if (sending.has(baseOid)) {
      const baseAt = emittedAt.get(baseOid);
      const head = encodeTypeSize(baseAt !== undefined && opts.ofsDelta ? OBJ_OFS_DELTA : OBJ_REF_DELTA, h.size);
      if (baseAt !== undefined && opts.ofsDelta) emit(new Uint8Array([...head, ...encodeOfsDistance(start - baseAt)]));
      else emit(concat([new Uint8Array(head), fromHex(baseOid)]));
      emit(data);
      stats.rawCopies++;
    } else {
      // the base stays behind: send the object whole (no thin packs on fetch)
      const o = await reader.readAt(loc.pack, loc.offset);
      emit(new Uint8Array(encodeTypeSize(TYPE_CODE[o.type], o.data.length)));
      emit(deflate(o.data));
      stats.resolved++;
    }
    emittedAt.set(loc.oid, start);
    stats.objects++;
  };

  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      while (pendingBytes < CHUNK && i < locs.length) await writeEntry(locs[i++]!);
      if (i >= locs.length && pendingBytes < CHUNK) {
        const trailer = new Uint8Array(hash.digest());
        pending.push(trailer);
        ctl.enqueue(concat(pending));
        ctl.close();
        return;
      }
      ctl.enqueue(concat(pending));
      pending = [];
      pendingBytes = 0;
    },
  });
}
