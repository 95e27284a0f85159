/**
 * R2ObjectStore's writes against a bucket that stops answering: Miniflare's local R2 was seen to
 * stop for good in the middle of writing a pushed pack's `.idx`, which hung the push. A put of
 * bytes unanswered within the store's patience is sent once more; a part is waited for once more
 * (never sent twice); a write unanswered after both fails with the reason.
 */
import { describe, expect, it } from "vitest";
import { R2_MIN_PART, type R2BucketLike, R2ObjectStore } from "../../functions/git/storage/r2-store.ts";

const never = new Promise<never>(() => {});

/** A bucket whose writes answer (or not, per call number) as `answers` says; records each call. */
function bucket(answers: (call: number) => boolean): { bucket: R2BucketLike; calls: string[] } {
  const calls: string[] = [];
  let n = 0;
  const answer = <T>(what: string, v: T): Promise<T> => {
    calls.push(what);
    return answers(++n) ? Promise.resolve(v) : never;
  };
  return {
    calls,
    bucket: {
      put: (key) => answer(`put ${key}`, {}),
      get: async () => null,
      head: async () => null,
      list: async () => ({ objects: [], truncated: false }),
      delete: async () => {},
      createMultipartUpload: async () => ({
        uploadPart: (part) => answer(`part ${part}`, { partNumber: part, etag: `e${part}` }),
        complete: async () => {
          calls.push("complete");
          return {};
        },
        abort: async () => {
          calls.push("abort");
        },
      }),
    },
  };
}

const streamOf = (bytes: Uint8Array, chunk = 1024 * 1024): ReadableStream<Uint8Array> => {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i >= bytes.length) return c.close();
      c.enqueue(bytes.slice(i, i + chunk));
      i += chunk;
    },
  });
};

describe("R2ObjectStore writes R2 does not answer", () => {
  it("sends a put that went unanswered once more, and the write completes", async () => {
    const b = bucket((call) => call > 1);
    const store = new R2ObjectStore(b.bucket, undefined, 50);
    expect(await store.put("1", "pack/pack-a.idx", new Uint8Array(2_077_720))).toBe(2_077_720);
    expect(b.calls).toEqual(["put git/1/pack/pack-a.idx", "put git/1/pack/pack-a.idx"]);
  });

  it("waits a second patience for a part (never sent twice) and takes its late answer", async () => {
    const calls: string[] = [];
    const late: R2BucketLike = {
      ...bucket(() => true).bucket,
      createMultipartUpload: async () => ({
        uploadPart: (part) => {
          calls.push(`part ${part}`);
          // part 2 answers after one patience (80 ms) but within two
          return new Promise((ok) => setTimeout(() => ok({ partNumber: part, etag: `e${part}` }), part === 2 ? 80 : 0));
        },
        complete: async () => {
          calls.push("complete");
          return {};
        },
        abort: async () => {},
      }),
    };
    const store = new R2ObjectStore(late, R2_MIN_PART, 50);
    expect(await store.put("1", "pack/pack-a.pack", streamOf(new Uint8Array(R2_MIN_PART * 2 + 10)))).toBe(R2_MIN_PART * 2 + 10);
    expect(calls).toEqual(["part 1", "part 2", "part 3", "complete"]);
  });

  it("fails a write unanswered twice with the reason instead of waiting for ever", async () => {
    const b = bucket(() => false);
    const store = new R2ObjectStore(b.bucket, undefined, 50);
    await expect(store.put("1", "pack/pack-a.rev", new Uint8Array(10))).rejects.toThrow("object storage did not answer the write of pack/pack-a.rev within 0.1 s");
    expect(b.calls).toHaveLength(2);
    // a streamed pack: the multipart upload is aborted
    const c = bucket((call) => call === 1);
    await expect(new R2ObjectStore(c.bucket, R2_MIN_PART, 50).put("1", "pack/pack-b.pack", streamOf(new Uint8Array(R2_MIN_PART * 2)))).rejects.toThrow(/part 2 of pack\/pack-b.pack/);
    expect(c.calls).toEqual(["part 1", "part 2", "abort"]);
  });
});
