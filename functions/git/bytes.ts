/**
 * Byte helpers shared by the git engine: hex object ids, concatenation, and a pull reader over a
 * web `ReadableStream` (request bodies arrive as streams on both Node and workerd).
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

/** The all-zero object id git uses for "no object" (ref creation/deletion). */
export const ZERO_OID = "0".repeat(40);

/** True for a full lowercase SHA-1 hex object id. */
export function isOid(s: string): boolean {
  if (s.length !== 40) return false;
  for (let i = 0; i < 40; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** 20 raw bytes → 40 lowercase hex characters. */
export const toHex = (b: Uint8Array, start = 0, end = start + 20): string =>
  Buffer.from(b.buffer, b.byteOffset + start, end - start).toString("hex");

/** 40 hex characters → 20 raw bytes. */
export const fromHex = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, "hex"));

/** Wraps a Uint8Array as a Buffer without copying (for Buffer-only helpers). */
export const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** Joins byte arrays into one. */
export const concat = (parts: readonly Uint8Array[]): Uint8Array => {
  if (parts.length === 1) return parts[0]!;
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

const encoder = new TextEncoder();
/** UTF-8 encode. */
export const utf8 = (s: string): Uint8Array => encoder.encode(s);
/** UTF-8 decode (lossy on invalid bytes, as git's own output is). */
export const text = (b: Uint8Array, start = 0, end = b.length): string => asBuffer(b).toString("utf8", start, end);
/** Latin-1 decode: one char per byte, for protocol lines that are ASCII. */
export const latin1 = (b: Uint8Array, start = 0, end = b.length): string => asBuffer(b).toString("latin1", start, end);

/** SHA-1 of `data` as hex. */
export const sha1Hex = (...data: Uint8Array[]): string => {
  const h = createHash("sha1");
  for (const d of data) h.update(d);
  return h.digest("hex");
};

/** Compares two 20-byte ids stored at offsets of two arrays (memcmp order). */
export function compareOid(a: Uint8Array, ao: number, b: Uint8Array, bo: number): number {
  for (let i = 0; i < 20; i++) {
    const d = a[ao + i]! - b[bo + i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Pulls bytes from a stream on demand: exact reads for framing (pkt-lines, pack headers) and the
 * remaining chunks as they come (pack data), never holding more than what was asked plus one chunk.
 */
export class ByteReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private buf: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private eof = false;
  /** Bytes consumed so far (for size limits). */
  consumed = 0;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.getReader();
  }

  private get available() {
    return this.buf.length - this.pos;
  }

  /** Ensures `n` bytes are buffered; false if the stream ended first. */
  async fill(n: number): Promise<boolean> {
    while (this.available < n && !this.eof) {
      const { done, value } = await this.reader.read();
      if (done) {
        this.eof = true;
        break;
      }
      if (!value || value.length === 0) continue;
      const rest = this.buf.subarray(this.pos);
      this.buf = rest.length === 0 ? value : concat([rest, value]);
      this.pos = 0;
    }
    return this.available >= n;
  }

  /** True once the underlying stream has ended (buffered bytes may remain). */
  get ended(): boolean {
    return this.eof;
  }

  /** The bytes buffered and not yet consumed (a view; valid until the next fill). */
  buffered(): Uint8Array {
    return this.buf.subarray(this.pos);
  }

  /** Consumes `n` buffered bytes (n must not exceed `buffered().length`) and returns them. */
  consume(n: number): Uint8Array {
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += out.length;
    this.consumed += out.length;
    return out;
  }

  /** Waits for at least one byte beyond what is buffered; false at the end of the stream. */
  async more(): Promise<boolean> {
    return this.fill(this.available + 1);
  }

  /** Exactly `n` bytes, or null when the stream ends first. */
  async read(n: number): Promise<Uint8Array | null> {
    if (!(await this.fill(n))) return null;
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    this.consumed += n;
    return out;
  }

  /** The next chunk of whatever size is available (buffered bytes first), or null at the end. */
  async chunk(): Promise<Uint8Array | null> {
    if (this.available === 0 && !(await this.fill(1))) return null;
    const out = this.buf.subarray(this.pos);
    this.pos = this.buf.length;
    this.consumed += out.length;
    return out;
  }

  /** True when every byte has been read. */
  async atEnd(): Promise<boolean> {
    return !(await this.fill(1));
  }

  /** Reads and drops the rest of the stream (so the client can finish sending before we answer). */
  async drain(): Promise<void> {
    while ((await this.chunk()) !== null) {}
  }

  /** Stops reading the underlying stream. */
  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}

/**
 * A stream that yields `parts` (bytes, streams, or functions opening either when reached) one
 * after another. With `highWaterMark` 0 nothing is opened or read before a reader asks (a body
 * nobody reads — a HEAD's — opens no storage); a cancel cancels the part being read, or the one
 * being opened when it arrives.
 */
export function concatStreams(parts: (Uint8Array | ReadableStream<Uint8Array> | (() => Promise<ReadableStream<Uint8Array> | Uint8Array>))[], highWaterMark = 1): ReadableStream<Uint8Array> {
  let i = 0;
  let cur: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let cancelled: { reason: unknown } | null = null;
  return new ReadableStream<Uint8Array>(
    {
      async pull(ctl) {
        for (;;) {
          if (cur) {
            const { done, value } = await cur.read();
            if (!done) {
              ctl.enqueue(value);
              return;
            }
            cur = null;
          }
          if (i >= parts.length) {
            ctl.close();
            return;
          }
          let p = parts[i++]!;
          if (typeof p === "function") p = await p();
          if (cancelled) {
            // cancelled while the part was being opened: nobody will read it
            if (!(p instanceof Uint8Array)) await p.cancel(cancelled.reason).catch(() => {});
            return;
          }
          if (p instanceof Uint8Array) {
            if (p.length > 0) {
              ctl.enqueue(p);
              return;
            }
          } else cur = p.getReader();
        }
      },
      async cancel(reason) {
        cancelled = { reason };
        await cur?.cancel(reason);
      },
    },
    { highWaterMark },
  );
}
