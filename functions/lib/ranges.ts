/**
 * Byte ranges of a file answer, as Go's http.ServeContent serves them (Gitea's raw and media
 * routes go through it): `Range: bytes=…` with one range → 206 and `Content-Range`, several → 206
 * `multipart/byteranges` (unless together they are larger than the file: then the whole file),
 * none that starts inside the file → 416 with `Content-Range` naming only the size, a malformed header
 * → 416; `If-Range` (a strong ETag, or the Last-Modified date to the second) that does not match
 * → the whole file. Every such answer says `Accept-Ranges: bytes`. Also ServeContent's
 * `If-Modified-Since` (when no `If-None-Match` is given).
 */

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

/**
 * The answer to a GET of `data` given its `Range` and `If-Range`: null for the whole file (200, the
 * caller's own answer with `Accept-Ranges: bytes`), else the status, headers (merged over the
 * caller's) and body of a 206 or 416.
 */
export function rangeAnswer(
  data: Uint8Array,
  req: { range?: string; ifRange?: string },
  file: { etag: string; lastModified: Date | null; contentType: string },
): { status: 206 | 416; headers: Record<string, string>; body: Uint8Array } | null {
  if (!req.range || !ifRangeHolds(req.ifRange, file.etag, file.lastModified)) return null;
  const size = data.length;
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
    return { status: 206, headers: { "Content-Range": contentRange(r, size), "Content-Length": String(r.length), "Accept-Ranges": "bytes" }, body: data.subarray(r.start, r.start + r.length) };
  }
  const boundary = [...crypto.getRandomValues(new Uint8Array(30))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  for (const [i, r] of ranges.entries()) {
    parts.push(enc.encode(`${i === 0 ? "" : "\r\n"}--${boundary}\r\nContent-Range: ${contentRange(r, size)}\r\nContent-Type: ${file.contentType}\r\n\r\n`));
    parts.push(data.subarray(r.start, r.start + r.length));
  }
  parts.push(enc.encode(`\r\n--${boundary}--\r\n`));
  const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    body.set(p, at);
    at += p.length;
  }
  return { status: 206, headers: { "Content-Type": `multipart/byteranges; boundary=${boundary}`, "Content-Length": String(body.length), "Accept-Ranges": "bytes" }, body };
}
