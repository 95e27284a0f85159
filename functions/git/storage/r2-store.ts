/**
 * The Worker backend of ObjectStore: an R2 bucket binding, keys `git/<repoId>/<name>`. A streamed
 * body of unknown length (git sends chunked requests) is written as a multipart upload with parts
 * of one fixed size (R2 requires equal parts except the last), so at most one part is in memory.
 */
import { concat } from "../bytes.ts";
import { type ByteRange, checkKey, type ObjectStore, type StoredFile } from "./object-store.ts";

/** The subset of the R2 binding this store uses (structural, so no Workers types are required). */
export interface R2BucketLike {
  put(key: string, value: Uint8Array | ArrayBuffer | string): Promise<unknown>;
  get(key: string, options?: { range?: { offset: number; length: number } }): Promise<{ arrayBuffer(): Promise<ArrayBuffer>; body: ReadableStream<Uint8Array> } | null>;
  head(key: string): Promise<{ size: number } | null>;
  list(options: { prefix: string; cursor?: string; limit?: number }): Promise<{ objects: { key: string; size: number }[]; truncated: boolean; cursor?: string }>;
  delete(keys: string | string[]): Promise<void>;
  createMultipartUpload(key: string): Promise<{
    uploadPart(part: number, value: Uint8Array): Promise<{ partNumber: number; etag: string }>;
    complete(parts: { partNumber: number; etag: string }[]): Promise<unknown>;
    abort(): Promise<void>;
  }>;
}

/** R2's smallest allowed part (all parts but the last). */
export const R2_MIN_PART = 5 * 1024 * 1024;

/**
 * How long one R2 write may go unanswered. A put of bytes is then sent once more (the same key
 * with the same bytes: a late first answer changes nothing); a part is not (a late first upload
 * would replace the part the resent one's etag names), so its push fails after twice this wait.
 * Miniflare's local R2 was seen to stop in the middle of writing a 2 MB `.idx` for good (its blob
 * file half written, no JavaScript running, workerd's thread spinning), which hung the push; a
 * write that never answers must not hang a push in production either.
 */
export const R2_WRITE_PATIENCE_MS = 60_000;

const LATE = Symbol("late");

/** ObjectStore over an R2 bucket binding (`GIT_OBJECTS` in wrangler.toml). */
export class R2ObjectStore implements ObjectStore {
  private readonly bucket: R2BucketLike;
  private readonly partSize: number;
  private readonly patienceMs: number;

  constructor(bucket: R2BucketLike, partSize = 8 * 1024 * 1024, patienceMs = R2_WRITE_PATIENCE_MS) {
    this.bucket = bucket;
    this.partSize = Math.max(partSize, R2_MIN_PART);
    this.patienceMs = patienceMs;
  }

  /**
   * A write R2 must answer within `patienceMs`: sent once more when `resend` (idempotent writes),
   * else waited for once more; an error after the second wait.
   */
  private async write<T>(what: string, resend: boolean, send: () => Promise<T>): Promise<T> {
    let sent: Promise<T> | null = null;
    for (let attempt = 1; attempt <= 2; attempt++) {
      if (!sent || resend) sent = send();
      sent.catch(() => {}); // a late answer (or failure) of an abandoned attempt is not waited for
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<typeof LATE>((ok) => {
        timer = setTimeout(() => ok(LATE), this.patienceMs);
      });
      try {
        const r: T | typeof LATE = await Promise.race([sent, late]);
        if (r !== LATE) return r;
      } finally {
        clearTimeout(timer);
      }
    }
    throw new Error(`object storage did not answer the ${what} within ${(2 * this.patienceMs) / 1000} s`);
  }

  private key(repoId: string, name?: string): string {
    checkKey(repoId, name);
    return name === undefined ? `git/${repoId}/` : `git/${repoId}/${name}`;
  }

  async put(repoId: string, name: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<number> {
    const key = this.key(repoId, name);
    if (body instanceof Uint8Array) {
      await this.write(`write of ${name}`, true, () => this.bucket.put(key, body));
      return body.length;
    }
    const reader = body.getReader();
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    let total = 0;
    type Upload = Awaited<ReturnType<R2BucketLike["createMultipartUpload"]>>;
    const state: { upload: Upload | null } = { upload: null };
    const parts: { partNumber: number; etag: string }[] = [];
    const flushPart = async (bytes: Uint8Array) => {
      state.upload ??= await this.bucket.createMultipartUpload(key);
      const upload = state.upload;
      const n = parts.length + 1;
      parts.push(await this.write(`part ${n} of ${name}`, false, () => upload.uploadPart(n, bytes)));
    };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        pending.push(value);
        pendingBytes += value.length;
        total += value.length;
        while (pendingBytes >= this.partSize) {
          const all = concat(pending);
          await flushPart(all.subarray(0, this.partSize));
          const rest = all.subarray(this.partSize);
          pending = rest.length ? [rest] : [];
          pendingBytes = rest.length;
        }
      }
      const last = concat(pending);
      if (!state.upload) {
        // small enough for one request: no multipart overhead
        await this.write(`write of ${name}`, true, () => this.bucket.put(key, last));
        return total;
      }
      if (last.length > 0) await flushPart(last);
      await state.upload.complete(parts);
      return total;
    } catch (e) {
      // whoever writes the body waits on this reader: cancelled, their writes fail instead of waiting
      await reader.cancel(e).catch(() => {});
      await state.upload?.abort().catch(() => {});
      throw e;
    }
  }

  async get(repoId: string, name: string, range?: ByteRange): Promise<Uint8Array | null> {
    const obj = await this.bucket.get(this.key(repoId, name), range ? { range } : undefined);
    return obj ? new Uint8Array(await obj.arrayBuffer()) : null;
  }

  async stream(repoId: string, name: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null> {
    const obj = await this.bucket.get(this.key(repoId, name), range ? { range } : undefined);
    return obj ? obj.body : null;
  }

  async list(repoId: string): Promise<StoredFile[]> {
    const prefix = this.key(repoId);
    const out: StoredFile[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.bucket.list({ prefix, cursor, limit: 1000 });
      for (const o of page.objects) out.push({ name: o.key.slice(prefix.length), size: o.size });
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async delete(repoId: string, names: readonly string[]): Promise<void> {
    for (let i = 0; i < names.length; i += 1000) {
      await this.bucket.delete(names.slice(i, i + 1000).map((n) => this.key(repoId, n)));
    }
  }

  async deleteRepository(repoId: string): Promise<void> {
    const files = await this.list(repoId);
    await this.delete(
      repoId,
      files.map((f) => f.name),
    );
  }
}
