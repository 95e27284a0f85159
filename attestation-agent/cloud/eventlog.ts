/**
 * TCG event log handling for Azure MAA (go-azguestattestation `stripEventLog`): parse a
 * crypto-agile log (TCG PC Client PFP, TCG_PCR_EVENT header + TCG_PCR_EVENT2 records) and keep
 * only PCR 0-7 events with their SHA-256 digest, behind a SHA-256-only Spec ID event.
 */
const SPEC_ID_SHA256 = Uint8Array.from([
  0, 0, 0, 0, 3, 0, 0, 0, ...new Array(20).fill(0), 33, 0, 0, 0,
  ..."Spec ID Event03".split("").map((c) => c.charCodeAt(0)), 0,
  0, 0, 0, 0, 0, 2, 0, 2, 1, 0, 0, 0, 0x0b, 0, 32, 0, 0,
]);

export class EventLogError extends Error {
  override name = "EventLogError";
}

export interface TcgEvent {
  pcr: number;
  type: number;
  digests: Map<number, Uint8Array>;
  data: Uint8Array;
}

/** Parses a crypto-agile event log. */
export function parseEventLog(log: Uint8Array): TcgEvent[] {
  const b = Buffer.from(log.buffer, log.byteOffset, log.length);
  let o = 0;
  const need = (n: number) => {
    if (o + n > b.length) throw new EventLogError(`event log truncated at byte ${o}`);
  };
  need(32);
  const headerSize = b.readUInt32LE(28);
  need(32 + headerSize);
  const spec = b.subarray(32, 32 + headerSize);
  if (spec.toString("latin1", 0, 15) !== "Spec ID Event03") throw new EventLogError("not a crypto-agile event log (no Spec ID Event03)");
  const nAlg = spec.readUInt32LE(24);
  const sizes = new Map<number, number>();
  for (let i = 0; i < nAlg; i++) sizes.set(spec.readUInt16LE(28 + i * 4), spec.readUInt16LE(30 + i * 4));
  o = 32 + headerSize;
  const events: TcgEvent[] = [];
  while (o < b.length) {
    need(12);
    const pcr = b.readUInt32LE(o);
    const type = b.readUInt32LE(o + 4);
    const count = b.readUInt32LE(o + 8);
    o += 12;
    const digests = new Map<number, Uint8Array>();
    for (let i = 0; i < count; i++) {
      need(2);
      const alg = b.readUInt16LE(o);
      const size = sizes.get(alg);
      if (size === undefined) throw new EventLogError(`event digest algorithm 0x${alg.toString(16)} not declared`);
      need(2 + size);
      digests.set(alg, new Uint8Array(b.subarray(o + 2, o + 2 + size)));
      o += 2 + size;
    }
    need(4);
    const len = b.readUInt32LE(o);
    need(4 + len);
    events.push({ pcr, type, digests, data: new Uint8Array(b.subarray(o + 4, o + 4 + len)) });
    o += 4 + len;
  }
  return events;
}

/** The log MAA wants: PCR 0-7 events with SHA-256 digests only (an empty log gives the header only). */
export function stripEventLog(log: Uint8Array): Uint8Array {
  const header = Buffer.from(SPEC_ID_SHA256);
  const out: Buffer[] = [header];
  if (log.length === 0) return new Uint8Array(header);
  for (const ev of parseEventLog(log)) {
    const d = ev.digests.get(0x0b);
    if (ev.pcr > 7 || !d || d.length === 0) continue;
    const head = Buffer.alloc(14);
    head.writeUInt32LE(ev.pcr, 0);
    head.writeUInt32LE(ev.type, 4);
    head.writeUInt32LE(1, 8);
    head.writeUInt16LE(0x0b, 12);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(ev.data.length);
    out.push(head, Buffer.from(d), len, Buffer.from(ev.data));
  }
  return new Uint8Array(Buffer.concat(out));
}
