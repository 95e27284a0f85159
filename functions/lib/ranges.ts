/**
 * Byte ranges of a file answer, as Go's http.ServeContent serves them (Gitea's raw and media
 * routes go through it): `Range: bytes=…` with one range → 206 and `Content-Range`, several → 206
 * `multipart/byteranges` (unless together they are larger than the file: then the whole file),
 * none that starts inside the file → 416 with `Content-Range` naming only the size, a malformed header
 * → 416; `If-Range` (a strong ETag, or the Last-Modified date to the second) that does not match
 * → the whole file. Every such answer says `Accept-Ranges: bytes`. Also ServeContent's
 * `If-Modified-Since` (when no `If-None-Match` is given).
 */

import { concatStreams } from "../git/bytes.ts";

export interface ByteRange {
  start: number;
  length: number;
}

/** Go's parseRange: the ranges of `header` within `size` bytes; "unsatisfiable" when none starts inside; "invalid" when malformed. */
export function parseRange(header: string, size: number): ByteRange[] | "unsatisfiable" | "invalid" {
  if (header === "") return [];
  if (!header.startsWith("bytes=")) return "invalid";
  const out: ByteRange[] = [];
  let outside = false;
  const num = (s: string) => (/^\d+$/.test(s) ? Number(s) : Number.NaN);
  for (const raw of header.slice(6).split(",")) {
    const ra = raw.trim();
    if (ra === "") continue;
    const dash = ra.indexOf("-");
    if (dash < 0) return "invalid";
    const from = ra.slice(0, dash).trim();
    const to = ra.slice(dash + 1).trim();
    if (from === "") {
      // the last `to` bytes
      const n = num(to);
      if (!Number.isSafeInteger(n)) return "invalid";
      const take = Math.min(n, size);
      out.push({ start: size - take, length: take });
      continue;
    }
    const start = num(from);
    if (!Number.isSafeInteger(start)) return "invalid";
    if (start >= size) {
      outside = true;
      continue;
    }
    if (to === "") {
      out.push({ start, length: size - start });
      continue;
    }
    const end = num(to);
    if (!Number.isSafeInteger(end) || start > end) return "invalid";
    out.push({ start, length: Math.min(end, size - 1) - start + 1 });
  }
  if (outside && out.length === 0) return "unsatisfiable";
  return out;
}

/** Go's checkIfRange: does `If-Range` (absent: yes) still name this version of the file? */
export function ifRangeHolds(ifRange: string | undefined, etag: string, lastModified: Date | null): boolean {
  if (!ifRange) return true;
  const v = ifRange.trim();
  if (v.startsWith('"')) return v === etag;
  if (v.startsWith("W/")) return false;
  if (!lastModified) return false;
  const t = Date.parse(v);
  return Number.isFinite(t) && Math.floor(t / 1000) === Math.floor(lastModified.getTime() / 1000);
}

/** Go's checkIfModifiedSince: the file's Last-Modified (to the second) is not after `If-Modified-Since`. */
export function notModifiedSince(ifModifiedSince: string | undefined, lastModified: Date | null): boolean {
  if (!ifModifiedSince || !lastModified) return false;
  const t = Date.parse(ifModifiedSince);
  return Number.isFinite(t) && Math.floor(lastModified.getTime() / 1000) <= Math.floor(t / 1000);
}

const contentRange = (r: ByteRange, size: number) => `bytes ${r.start}-${r.start + r.length - 1}/${size}`;

/** A file to answer from: its size and any slice of it (bytes, or a stream for a file not held whole). */
export interface SizedBody {
  size: number;
  slice(start: number, length: number): Uint8Array | ReadableStream<Uint8Array>;
}

/**
 * `stream` as a body that keeps its `Content-Length`: workerd sends a plain stream chunked, without
 * the header the caller set, unless the stream is a FixedLengthStream of its length (Workers'
 * documented way); Node's server keeps the header as it is.
 */
export function sizedStream(stream: ReadableStream<Uint8Array>, length: number): ReadableStream<Uint8Array> {
  const Fixed = (globalThis as { FixedLengthStream?: new (n: number) => TransformStream<Uint8Array, Uint8Array> }).FixedLengthStream;
  return Fixed ? stream.pipeThrough(new Fixed(length)) : stream;
}

const sized = (b: Uint8Array | ReadableStream<Uint8Array>, length: number) => (b instanceof Uint8Array ? b : sizedStream(b, length));

const bodyOf = (data: Uint8Array | SizedBody): SizedBody => (data instanceof Uint8Array ? { size: data.length, slice: (start, length) => data.subarray(start, start + length) } : data);

/**
 * The answer to a GET of `data` given its `Range` and `If-Range`: null for the whole file (200, the
 * caller's own answer with `Accept-Ranges: bytes`), else the status, headers (merged over the
 * caller's) and body of a 206 or 416 (a stream when a part of a streamed file is).
 */
export function rangeAnswer(
  data: Uint8Array | SizedBody,
  req: { range?: string; ifRange?: string },
  file: { etag: string; lastModified: Date | null; contentType: string },
): { status: 206 | 416; headers: Record<string, string>; body: Uint8Array | ReadableStream<Uint8Array> } | null {
  if (!req.range || !ifRangeHolds(req.ifRange, file.etag, file.lastModified)) return null;
  const src = bodyOf(data);
  const size = src.size;
  const ranges = parseRange(req.range, size);
  if (ranges === "unsatisfiable" && size === 0) return null;
  if (ranges === "unsatisfiable" || ranges === "invalid") {
    const headers: Record<string, string> = { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" };
    if (ranges === "unsatisfiable") headers["Content-Range"] = `bytes */${size}`;
    const body = new TextEncoder().encode(`${ranges === "invalid" ? "invalid range" : "invalid range: failed to overlap"}\n`);
    return { status: 416, headers: { ...headers, "Content-Length": String(body.length) }, body };
  }
  if (ranges.length === 0 || ranges.reduce((n, r) => n + r.length, 0) > size) return null;
  if (ranges.length === 1) {
    const r = ranges[0]!;
    return { status: 206, headers: { "Content-Range": contentRange(r, size), "Content-Length": String(r.length), "Accept-Ranges": "bytes" }, body: sized(src.slice(r.start, r.length), r.length) };
  }
  const boundary = [...crypto.getRandomValues(new Uint8Array(30))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const enc = new TextEncoder();
  const heads = ranges.map((r, i) => enc.encode(`${i === 0 ? "" : "\r\n"}--${boundary}\r\nContent-Range: ${contentRange(r, size)}\r\nContent-Type: ${file.contentType}\r\n\r\n`));
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  const total = heads.reduce((n, h, i) => n + h.length + ranges[i]!.length, tail.length);
  const headers = { "Content-Type": `multipart/byteranges; boundary=${boundary}`, "Content-Length": String(total), "Accept-Ranges": "bytes" };
  if (data instanceof Uint8Array) {
    const body = new Uint8Array(total);
    let at = 0;
    for (const [i, r] of ranges.entries()) {
      body.set(heads[i]!, at);
      body.set(data.subarray(r.start, r.start + r.length), at + heads[i]!.length);
      at += heads[i]!.length + r.length;
    }
    body.set(tail, at);
    return { status: 206, headers, body };
  }
  // A file not held whole is read once: its ranges must come in order, apart (RFC 9110 lets a
  // server ignore other sets — a thousand overlapping ranges would inflate it a thousand times);
  // otherwise the whole file, as when the ranges add up to more than it.
  if (ranges.some((r, i) => i > 0 && r.start < ranges[i - 1]!.start + ranges[i - 1]!.length)) return null;
  return { status: 206, headers, body: sizedStream(multipart(src, ranges, heads, tail), total) };
}

/** The parts of a multipart answer cut from one read of `src`, from the first range's start to the last's end. */
function multipart(src: SizedBody, ranges: readonly ByteRange[], heads: readonly Uint8Array[], tail: Uint8Array): ReadableStream<Uint8Array> {
  const first = ranges[0]!.start;
  const last = ranges.at(-1)!;
  let pos = first;
  let k = 0;
  const split = new TransformStream<Uint8Array, Uint8Array>({
    start(ctl) {
      ctl.enqueue(heads[0]!);
    },
    transform(chunk, ctl) {
      const at = pos;
      pos += chunk.length;
      let off = 0;
      while (off < chunk.length && k < ranges.length) {
        const r = ranges[k]!;
        if (at + off < r.start) {
          off = Math.min(chunk.length, r.start - at);
          continue;
        }
        const take = Math.min(chunk.length - off, r.start + r.length - (at + off));
        ctl.enqueue(chunk.subarray(off, off + take));
        off += take;
        if (at + off === r.start + r.length && ++k < ranges.length) ctl.enqueue(heads[k]!);
      }
    },
    flush(ctl) {
      ctl.enqueue(tail);
    },
  });
  const whole = src.slice(first, last.start + last.length - first);
  return (whole instanceof Uint8Array ? concatStreams([whole], 0) : whole).pipeThrough(split);
}
