/**
 * pkt-line framing (gitprotocol-common): four hex digits of length (including themselves), then
 * the payload; `0000` flush, `0001` delimiter, `0002` response end (protocol v2).
 */
import { type ByteReader, concat, latin1, text, utf8 } from "./bytes.ts";
import { GitError } from "./errors.ts";

/** The largest pkt-line git sends or accepts, length prefix included (LARGE_PACKET_MAX). */
export const MAX_PKT = 65520;
/** The largest payload of a pkt-line. */
export const MAX_PKT_DATA = MAX_PKT - 4;

export const FLUSH = utf8("0000");
export const DELIM = utf8("0001");
export const RESPONSE_END = utf8("0002");

const HEX = "0123456789abcdef";

/** Frames one payload (a string gets no newline added: callers write `"line\n"`). */
export function pkt(payload: string | Uint8Array): Uint8Array {
  const data = typeof payload === "string" ? utf8(payload) : payload;
  if (data.length > MAX_PKT_DATA) throw new GitError("invalid", `pkt-line payload of ${data.length} bytes is too long`);
  const n = data.length + 4;
  const out = new Uint8Array(n);
  out[0] = HEX.charCodeAt((n >> 12) & 15);
  out[1] = HEX.charCodeAt((n >> 8) & 15);
  out[2] = HEX.charCodeAt((n >> 4) & 15);
  out[3] = HEX.charCodeAt(n & 15);
  out.set(data, 4);
  return out;
}

/** True when `line` (newline included) fits one pkt-line. */
export const fitsPkt = (line: string): boolean => line.length * 3 <= MAX_PKT_DATA || utf8(line).length <= MAX_PKT_DATA;

/**
 * Frames `head` + `tail` + newline, cutting `tail` (at a UTF-8 character boundary, marked `...`) so
 * the line fits one pkt-line: for reports whose text carries client input (a status reason naming
 * a long ref), which must frame whatever they say. `head` must fit with room to spare.
 */
export function pktFitted(head: Uint8Array | string, tail: string): Uint8Array {
  const h = typeof head === "string" ? utf8(head) : head;
  let t = utf8(tail);
  const room = MAX_PKT_DATA - h.length - 1;
  if (t.length > room) {
    let end = Math.max(0, room - 3);
    while (end > 0 && (t[end]! & 0xc0) === 0x80) end--; // not inside a character
    t = concat([t.subarray(0, end), utf8("...")]).subarray(0, Math.max(0, room));
  }
  return pkt(concat([h, t, NEWLINE]));
}

const NEWLINE = utf8("\n");

/** Frames several text lines (each gets its `\n`) followed by a flush. */
export const pktLines = (lines: readonly string[], end: Uint8Array = FLUSH): Uint8Array =>
  concat([...lines.map((l) => pkt(`${l}\n`)), end]);

export type Pkt = { kind: "data"; data: Uint8Array } | { kind: "flush" } | { kind: "delim" } | { kind: "end" };

function parseLength(b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < 4; i++) {
    const c = b[i]!;
    const v = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (v < 0) throw new GitError("bad-request", `protocol error: bad line length character: ${latin1(b, 0, 4)}`);
    n = n * 16 + v;
  }
  return n;
}

/** Reads pkt-lines from a byte reader; null at a clean end of stream. */
export class PktReader {
  readonly bytes: ByteReader;
  constructor(bytes: ByteReader) {
    this.bytes = bytes;
  }

  /** The next packet, or null if the stream ended exactly at a packet boundary. */
  async next(): Promise<Pkt | null> {
    const head = await this.bytes.read(4);
    if (!head) return null;
    const n = parseLength(head);
    if (n === 0) return { kind: "flush" };
    if (n === 1) return { kind: "delim" };
    if (n === 2) return { kind: "end" };
    if (n < 4 || n > MAX_PKT) throw new GitError("bad-request", `protocol error: bad line length ${n}`);
    const data = await this.bytes.read(n - 4);
    if (!data) throw new GitError("bad-request", "protocol error: the request ended inside a pkt-line");
    return { kind: "data", data };
  }

  /**
   * The next packet as a text line without its trailing newline (UTF-8, so ref names round-trip
   * with what the advertisement encodes); flush/delim/end as their kind.
   */
  async line(): Promise<string | "flush" | "delim" | "end" | null> {
    const p = await this.next();
    if (!p) return null;
    if (p.kind !== "data") return p.kind;
    const d = p.data;
    return text(d, 0, d.length > 0 && d[d.length - 1] === 10 ? d.length - 1 : d.length);
  }
}
