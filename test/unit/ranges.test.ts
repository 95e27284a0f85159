/** Byte ranges of raw files, as Go's http.ServeContent (Gitea's raw and media routes) answers them. */
import { describe, expect, it } from "vitest";
import { ifRangeHolds, notModifiedSince, parseRange, rangeAnswer } from "../../functions/lib/ranges.ts";

const data = new TextEncoder().encode("0123456789");
const file = { etag: '"abc"', lastModified: new Date("2024-05-01T10:00:00Z"), contentType: "text/plain; charset=utf-8" };
const text = (b: Uint8Array | ReadableStream<Uint8Array>) => {
  if (!(b instanceof Uint8Array)) throw new Error("a body held whole was expected");
  return new TextDecoder().decode(b);
};

describe("parseRange (Go's parseRange)", () => {
  it("reads first-last, open-ended and suffix ranges, clamps to the size, skips empty parts", () => {
    expect(parseRange("bytes=0-2", 10)).toEqual([{ start: 0, length: 3 }]);
    expect(parseRange("bytes=7-", 10)).toEqual([{ start: 7, length: 3 }]);
    expect(parseRange("bytes=-4", 10)).toEqual([{ start: 6, length: 4 }]);
    expect(parseRange("bytes=-40", 10)).toEqual([{ start: 0, length: 10 }]);
    expect(parseRange("bytes=5-99", 10)).toEqual([{ start: 5, length: 5 }]);
    expect(parseRange("bytes= 1-1 , ,3-4", 10)).toEqual([{ start: 1, length: 1 }, { start: 3, length: 2 }]);
  });

  it("a range starting past the end is skipped; none left → unsatisfiable; malformed → invalid", () => {
    expect(parseRange("bytes=10-", 10)).toBe("unsatisfiable");
    expect(parseRange("bytes=10-12,2-3", 10)).toEqual([{ start: 2, length: 2 }]);
    for (const bad of ["items=0-1", "bytes=a-b", "bytes=3-1", "bytes=5", "bytes=--1", "bytes=-", "bytes=1.5-2", "bytes=-1-2"]) expect(parseRange(bad, 10), bad).toBe("invalid");
  });
});

describe("rangeAnswer", () => {
  it("one range → 206 with Content-Range and just those bytes", () => {
    const a = rangeAnswer(data, { range: "bytes=2-4" }, file)!;
    expect(a.status).toBe(206);
    expect(a.headers).toMatchObject({ "Content-Range": "bytes 2-4/10", "Content-Length": "3", "Accept-Ranges": "bytes" });
    expect(text(a.body)).toBe("234");
  });

  it("several ranges → 206 multipart/byteranges, each part with its Content-Range; more than the file in all → the whole file", () => {
    const a = rangeAnswer(data, { range: "bytes=0-1,8-" }, file)!;
    const boundary = /boundary=(\w+)$/.exec(a.headers["Content-Type"]!)![1];
    expect(text(a.body)).toBe(`--${boundary}\r\nContent-Range: bytes 0-1/10\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n01\r\n--${boundary}\r\nContent-Range: bytes 8-9/10\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n89\r\n--${boundary}--\r\n`);
    expect(a.headers["Content-Length"]).toBe(String(text(a.body).length));
    expect(rangeAnswer(data, { range: "bytes=0-8,1-9" }, file)).toBeNull();
  });

  it("a file not held whole (a streamed blob): the same parts, streamed, with the Content-Length of what is sent", async () => {
    const asked: [number, number][] = [];
    const streamed = {
      size: data.length,
      slice: (start: number, length: number) => {
        asked.push([start, length]);
        return new Response(data.slice(start, start + length)).body!;
      },
    };
    const one = rangeAnswer(streamed, { range: "bytes=2-4" }, file)!;
    expect(one.body).toBeInstanceOf(ReadableStream);
    expect(await new Response(one.body as ReadableStream<Uint8Array>).text()).toBe("234");
    expect(one.headers).toMatchObject({ "Content-Range": "bytes 2-4/10", "Content-Length": "3" });
    const several = rangeAnswer(streamed, { range: "bytes=0-1,8-" }, file)!;
    const boundary = /boundary=(\w+)$/.exec(several.headers["Content-Type"]!)![1];
    const sent = await new Response(several.body as ReadableStream<Uint8Array>).text();
    expect(sent).toBe(`--${boundary}\r\nContent-Range: bytes 0-1/10\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n01\r\n--${boundary}\r\nContent-Range: bytes 8-9/10\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n89\r\n--${boundary}--\r\n`);
    expect(several.headers["Content-Length"]).toBe(String(new TextEncoder().encode(sent).length));
    // the parts are cut from one read, from the first range's start to the last's end
    expect(asked).toEqual([[2, 3], [0, 10]]);
  });

  it("a file not held whole is read once: ranges out of order or overlapping get the whole file (a thousand `-1`s would read it a thousand times)", () => {
    let reads = 0;
    const streamed = {
      size: data.length,
      slice: (start: number, length: number) => {
        reads++;
        return new Response(data.slice(start, start + length)).body!;
      },
    };
    expect(rangeAnswer(streamed, { range: "bytes=5-6,0-1" }, file)).toBeNull();
    expect(rangeAnswer(streamed, { range: "bytes=0-2,2-3" }, file)).toBeNull();
    expect(rangeAnswer(streamed, { range: `bytes=${Array(1000).fill("-1").join(",")}` }, file)).toBeNull();
    expect(reads).toBe(0);
    // held whole, the same sets are answered part by part, as Go's ServeContent does
    expect(rangeAnswer(data, { range: "bytes=5-6,0-1" }, file)!.status).toBe(206);
  });

  it("multipart from one read: parts that meet, gaps of every size, a range in the last byte", async () => {
    const big = new Uint8Array(70_000).map((_, i) => (i * 31) & 0xff);
    const chunked = (start: number, length: number) => {
      let at = start;
      return new ReadableStream<Uint8Array>({
        pull(c) {
          if (at >= start + length) return c.close();
          const n = Math.min(997, start + length - at);
          c.enqueue(big.slice(at, at + n));
          at += n;
        },
      });
    };
    const header = "bytes=0-0,1-1,996-998,2000-2999,65535-65536,69999-69999";
    const whole = rangeAnswer(big, { range: header }, file)!;
    const streamed = rangeAnswer({ size: big.length, slice: chunked }, { range: header }, file)!;
    const strip = (b: Uint8Array) => Buffer.from(b).toString("latin1").replace(/[0-9a-f]{60}/g, "B");
    const got = new Uint8Array(await new Response(streamed.body as ReadableStream<Uint8Array>).arrayBuffer());
    expect(strip(got)).toBe(strip(whole.body as Uint8Array));
    expect(streamed.headers["Content-Length"]).toBe(String(got.length));
  });

  it("416 for no overlap (Content-Range bytes */size) or a malformed header; an empty file is sent whole", () => {
    const none = rangeAnswer(data, { range: "bytes=20-30" }, file)!;
    expect({ status: none.status, range: none.headers["Content-Range"], body: text(none.body) }).toEqual({ status: 416, range: "bytes */10", body: "invalid range: failed to overlap\n" });
    const bad = rangeAnswer(data, { range: "bytes=x" }, file)!;
    expect({ status: bad.status, range: bad.headers["Content-Range"], body: text(bad.body) }).toEqual({ status: 416, range: undefined, body: "invalid range\n" });
    expect(rangeAnswer(new Uint8Array(0), { range: "bytes=0-" }, file)).toBeNull();
    expect(rangeAnswer(data, {}, file)).toBeNull();
  });

  it("If-Range: the ETag (strong) or the Last-Modified second must match, else the whole file", () => {
    expect(ifRangeHolds(undefined, file.etag, file.lastModified)).toBe(true);
    expect(ifRangeHolds('"abc"', file.etag, file.lastModified)).toBe(true);
    expect(ifRangeHolds('"abd"', file.etag, file.lastModified)).toBe(false);
    expect(ifRangeHolds('W/"abc"', file.etag, file.lastModified)).toBe(false);
    expect(ifRangeHolds("Wed, 01 May 2024 10:00:00 GMT", file.etag, file.lastModified)).toBe(true);
    expect(ifRangeHolds("Wed, 01 May 2024 10:00:01 GMT", file.etag, file.lastModified)).toBe(false);
    expect(ifRangeHolds("Wed, 01 May 2024 10:00:00 GMT", file.etag, null)).toBe(false);
    expect(rangeAnswer(data, { range: "bytes=0-1", ifRange: '"old"' }, file)).toBeNull();
  });
});

describe("notModifiedSince (Go's checkIfModifiedSince)", () => {
  it("not modified when Last-Modified, to the second, is not after If-Modified-Since; no date or no header → modified", () => {
    const at = new Date("2024-05-01T10:00:00.700Z");
    expect(notModifiedSince("Wed, 01 May 2024 10:00:00 GMT", at)).toBe(true);
    expect(notModifiedSince("Thu, 02 May 2024 10:00:00 GMT", at)).toBe(true);
    expect(notModifiedSince("Wed, 01 May 2024 09:59:59 GMT", at)).toBe(false);
    expect(notModifiedSince("not a date", at)).toBe(false);
    expect(notModifiedSince(undefined, at)).toBe(false);
    expect(notModifiedSince("Wed, 01 May 2024 10:00:00 GMT", null)).toBe(false);
  });
});
