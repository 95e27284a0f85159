/**
 * zlib inflate for pack entries with `node:zlib` (available in workerd under `nodejs_compat`).
 * A pack does not record compressed lengths, so the indexer must learn where each zlib stream
 * ends, ignoring the bytes after it (the next entry). Large entries use a streaming inflater
 * instead, so neither their compressed nor their inflated bytes need to be held whole.
 */
import { createInflate, deflateSync, inflateSync } from "node:zlib";
import { Z_BUF_ERROR, Z_NO_FLUSH, Z_OK, Z_STREAM_END, ZStream, zlibInflate, zlibInflateInit, zlibInflateReset } from "pako";
import { GitError } from "../errors.ts";

const isTruncation = (e: unknown) => e instanceof Error && /unexpected end of file/i.test(e.message);

/**
 * zlib's output chunk for an object of `size` bytes: one chunk that fits it (the default 16 KiB
 * allocation per call dominated inflating small objects: 2× slower on a pack of small entries).
 */
const chunkFor = (size: number) => (size < 1024 ? 1024 : size >= 256 * 1024 ? 256 * 1024 : 2 ** Math.ceil(Math.log2(size + 1)));

/** What inflating a stream at the start of a buffer gives: its data and its compressed length. */
export type Prefix = { data: Uint8Array; consumed: number } | null;

/**
 * Node's zlib: `inflateSync(…, { info: true })` reports the input bytes the engine consumed.
 * It builds a zlib engine per call, which Node closes when the call returns.
 */
export function inflatePrefixNative(buf: Uint8Array, size: number): Prefix {
  try {
    const r = inflateSync(buf, { info: true, chunkSize: chunkFor(size) }) as unknown as { buffer: Uint8Array; engine: { bytesWritten: number } };
    return { data: r.buffer, consumed: r.engine.bytesWritten };
  } catch (e) {
    if (isTruncation(e)) return null;
    throw new GitError("corrupt", `bad zlib data in pack: ${(e as Error).message}`);
  }
}

const EMPTY = new Uint8Array(0);
let reused: ZStream | null = null;

/**
 * pako's zlib in JavaScript, one stream reset per entry: nothing outside the JS heap. Under
 * workerd `inflateSync(…, { info: true })` builds a zlib engine per call whose native memory stays
 * until the garbage collector finds its JS wrapper (closing the engine did not free it), and V8
 * does not see that memory: a 74,000-object push grew workerd by ~400 MB, and large pushes into one
 * process made it stop answering.
 */
export function inflatePrefixJs(buf: Uint8Array, size: number): Prefix {
  if (!reused) {
    reused = new ZStream();
    zlibInflateInit(reused);
  }
  const strm = reused;
  zlibInflateReset(strm);
  const out = new Uint8Array(size);
  strm.input = buf;
  strm.next_in = 0;
  strm.avail_in = buf.length;
  strm.output = out;
  strm.next_out = 0;
  strm.avail_out = size;
  const status = zlibInflate(strm, Z_NO_FLUSH);
  const consumed = strm.next_in;
  const produced = strm.next_out;
  strm.input = EMPTY; // keep no caller's buffer alive
  strm.output = EMPTY;
  if (status === Z_STREAM_END) return { data: produced === size ? out : out.subarray(0, produced), consumed };
  if (status === Z_OK || status === Z_BUF_ERROR) {
    if (consumed >= buf.length) return null; // the input ended first: more bytes needed
    throw new GitError("corrupt", `bad zlib data in pack: entry inflates to more than ${size} bytes`);
  }
  throw new GitError("corrupt", `bad zlib data in pack: ${strm.msg || `status ${status}`}`);
}

/** The Workers runtime names itself so (a documented constant). */
export const inWorkers = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === "Cloudflare-Workers";

/**
 * Inflates the zlib stream starting at `buf[0]`. Returns the data and the compressed length, or
 * null when `buf` ends before the stream does (the caller supplies more bytes and retries).
 * Node's native zlib where it is safe (about 30 % faster on a 10,000-commit push), pako in workerd.
 */
/**
 * The largest object built whole in memory (a delta's base and result, a commit, tree or tag, a
 * blob read whole): git's core.bigFileThreshold (512 MiB) under Node; 48 MiB in a Workers isolate,
 * whose memory is 128 MB (a base and its result must fit together). Blobs stored whole are
 * streamed past it (pushes hash them as they come, raw files and archives inflate them as sent).
 */
export const MAX_BUILT_BYTES = inWorkers ? 48 * 1024 * 1024 : 512 * 1024 * 1024;

export const inflatePrefix: (buf: Uint8Array, size: number) => Prefix = inWorkers ? inflatePrefixJs : inflatePrefixNative;

/** Inflates a complete zlib stream whose inflated size is known; throws `corrupt` otherwise. */
export function inflateExact(compressed: Uint8Array, size: number): Uint8Array {
  let out: Uint8Array;
  try {
    out = inflateSync(compressed, { chunkSize: chunkFor(size) });
  } catch (e) {
    throw new GitError("corrupt", `bad zlib data in pack: ${(e as Error).message}`);
  }
  if (out.length !== size) throw new GitError("corrupt", `pack entry inflated to ${out.length} bytes, expected ${size}`);
  return out;
}

/**
 * `data` on a backing buffer of its own size. zlib's output is a view of a larger chunk (1 KiB at
 * least), so a kept 60-byte delta would hold 1 KiB: copying before caching keeps a cache's byte
 * budget true (a 16 MiB budget held 70 MB of small deltas on a 10,000-commit push).
 */
export const compact = (data: Uint8Array): Uint8Array => (data.buffer.byteLength > data.length + (data.length >> 3) + 64 ? new Uint8Array(data) : data); // (Buffer#slice would not copy)

/** Compresses an entry's data for a pack (git's default level for packs is zlib's default). */
export const deflate = (data: Uint8Array): Uint8Array => deflateSync(data);

/** Yields to the event loop (a macrotask, not a microtask: timers, I/O and other requests run). */
export const tick = (): Promise<void> => new Promise<void>((ok) => (typeof setImmediate === "function" ? setImmediate(ok) : setTimeout(ok, 0)));

/**
 * A yield every `every` calls, for long CPU-bound loops (indexing tens of thousands of objects):
 * the runtime stays responsive (workerd's inspector declared a busy isolate dead after ~10 s, and
 * other requests wait otherwise). Counted, not timed: workerd's clock stands still while code runs.
 */
export function yielder(every = 500): () => Promise<void> | null {
  let n = 0;
  return () => (++n % every === 0 ? tick() : null);
}

/**
 * Incremental inflate of one zlib stream fed in pieces. `feed` resolves with how many bytes of
 * the piece belonged to the stream once it has ended inside that piece, or -1 when it needs more.
 * Inflated output goes to `onData` as it is produced.
 */
export class StreamInflater {
  private readonly inf = createInflate();
  private ended = false;
  private failed: Error | null = null;
  private fed = 0;
  /** Resolves the write in progress when an error ends it (one listener, not one per write). */
  private wake: (() => void) | null = null;
  produced = 0;

  constructor(onData: (chunk: Uint8Array) => void) {
    this.inf.on("data", (c: Uint8Array) => {
      this.produced += c.length;
      onData(c);
    });
    this.inf.on("end", () => {
      this.ended = true;
    });
    this.inf.on("error", (e: Error) => {
      this.failed = e;
      this.wake?.();
    });
  }

  async feed(piece: Uint8Array): Promise<number> {
    if (this.ended) return 0;
    const before = this.inf.bytesWritten;
    await new Promise<void>((ok) => {
      this.wake = ok;
      this.inf.write(piece, () => ok());
    });
    this.wake = null;
    // the "end" event follows the write callback on a later tick
    await tick();
    if (this.failed) throw new GitError("corrupt", `bad zlib data in pack: ${this.failed.message}`);
    this.fed += piece.length;
    if (this.ended) return this.inf.bytesWritten - before;
    return -1;
  }

  /** Releases the zlib engine (after an error or once done). */
  close(): void {
    this.inf.destroy();
  }
}
