/**
 * zlib inflate for pack entries with `node:zlib` (available in workerd under `nodejs_compat`).
 * A pack does not record compressed lengths, so the indexer must learn where each zlib stream
 * ends: `inflateSync(…, { info: true })` reports the input bytes the engine consumed, and trailing
 * bytes (the next entry) are ignored. Large entries use a streaming inflater instead, so neither
 * their compressed nor their inflated bytes need to be held whole.
 */
import { createInflate, deflateSync, inflateSync } from "node:zlib";
import { GitError } from "../errors.ts";

const isTruncation = (e: unknown) => e instanceof Error && /unexpected end of file/i.test(e.message);

/**
 * zlib's output chunk for an object of `size` bytes: one chunk that fits it (the default 16 KiB
 * allocation per call dominated inflating small objects: 2× slower on a pack of small entries).
 */
const chunkFor = (size: number) => (size < 1024 ? 1024 : size >= 256 * 1024 ? 256 * 1024 : 2 ** Math.ceil(Math.log2(size + 1)));

/**
 * Inflates the zlib stream starting at `buf[0]`. Returns the data and the compressed length, or
 * null when `buf` ends before the stream does (the caller supplies more bytes and retries).
 */
export function inflatePrefix(buf: Uint8Array, size: number): { data: Uint8Array; consumed: number } | null {
  try {
    const r = inflateSync(buf, { info: true, chunkSize: chunkFor(size) }) as unknown as { buffer: Uint8Array; engine: { bytesWritten: number } };
    return { data: r.buffer, consumed: r.engine.bytesWritten };
  } catch (e) {
    if (isTruncation(e)) return null;
    throw new GitError("corrupt", `bad zlib data in pack: ${(e as Error).message}`);
  }
}

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
