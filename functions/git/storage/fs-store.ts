/**
 * The Node backend of ObjectStore: files under `<dataDir>/git/<repoId>/`. Writes go to a temporary
 * file renamed into place, so a reader never sees a half-written pack. Node only (not bundled into
 * the Worker).
 */
import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { type ByteRange, checkKey, type ObjectStore, type StoredFile } from "./object-store.ts";

const READ_CHUNK = 256 * 1024;

/** ObjectStore over a directory (DATA_DIR on Node). */
export class DirectoryObjectStore implements ObjectStore {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, "git");
  }

  /** Absolute path of a stored file (tests cross-check files with the git CLI through it). */
  path(repoId: string, name: string): string {
    checkKey(repoId, name);
    return join(this.root, repoId, ...name.split("/"));
  }

  async put(repoId: string, name: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<number> {
    const target = this.path(repoId, name);
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const fh = await open(tmp, "w");
    let size = 0;
    let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
    try {
      if (body instanceof Uint8Array) {
        await fh.write(body);
        size = body.length;
      } else {
        reader = body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          await fh.write(value);
          size += value.length;
        }
      }
      await fh.close();
      await rename(tmp, target);
    } catch (e) {
      // whoever writes the body waits on this reader: cancelled, their writes fail instead of waiting
      await reader?.cancel(e).catch(() => {});
      await fh.close().catch(() => {});
      await rm(tmp, { force: true });
      throw e;
    }
    return size;
  }

  async get(repoId: string, name: string, range?: ByteRange): Promise<Uint8Array | null> {
    const fh = await open(this.path(repoId, name), "r").catch(notFound);
    if (!fh) return null;
    try {
      const offset = range?.offset ?? 0;
      const length = range?.length ?? (await fh.stat()).size - offset;
      const out = new Uint8Array(Math.max(0, length));
      let got = 0;
      while (got < out.length) {
        const { bytesRead } = await fh.read(out, got, out.length - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === out.length ? out : out.subarray(0, got);
    } finally {
      await fh.close();
    }
  }

  async stream(repoId: string, name: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null> {
    const fh = await open(this.path(repoId, name), "r").catch(notFound);
    if (!fh) return null;
    let pos = range?.offset ?? 0;
    const end = range ? range.offset + range.length : (await fh.stat()).size;
    return new ReadableStream<Uint8Array>({
      async pull(ctl) {
        const n = Math.min(READ_CHUNK, end - pos);
        if (n <= 0) {
          await fh.close();
          ctl.close();
          return;
        }
        const buf = new Uint8Array(n);
        const { bytesRead } = await fh.read(buf, 0, n, pos);
        if (bytesRead === 0) {
          await fh.close();
          ctl.close();
          return;
        }
        pos += bytesRead;
        ctl.enqueue(bytesRead === n ? buf : buf.subarray(0, bytesRead));
      },
      async cancel() {
        await fh.close();
      },
    });
  }

  async list(repoId: string): Promise<StoredFile[]> {
    checkKey(repoId);
    const base = join(this.root, repoId);
    const out: StoredFile[] = [];
    const walk = async (dir: string) => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const full = join(dir, e.name);
        if (e.isDirectory()) await walk(full);
        else if (!e.name.includes(".tmp-")) out.push({ name: relative(base, full).split(sep).join("/"), size: (await stat(full)).size });
      }
    };
    await walk(base);
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async delete(repoId: string, names: readonly string[]): Promise<void> {
    await Promise.all(names.map((n) => rm(this.path(repoId, n), { force: true })));
  }

  async deleteRepository(repoId: string): Promise<void> {
    checkKey(repoId);
    // a push writing into the directory meanwhile makes rmdir fail with ENOTEMPTY: tried again
    await rm(join(this.root, repoId), { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
  }
}

function notFound(e: NodeJS.ErrnoException): null {
  if (e.code === "ENOENT") return null;
  throw e;
}
