/**
 * An ObjectStore kept in memory: the staging area of commits built before their repository has an
 * id (auto-init), and the store of an app started without a configured one. Same key rules as the
 * other backends.
 */
import { concat } from "../bytes.ts";
import { type ByteRange, checkKey, type ObjectStore, type StoredFile } from "./object-store.ts";

/** ObjectStore in a Map of `repoId/name` → bytes. */
export class MemoryObjectStore implements ObjectStore {
  private readonly files = new Map<string, Uint8Array>();

  private key(repoId: string, name: string): string {
    checkKey(repoId, name);
    return `${repoId}/${name}`;
  }

  async put(repoId: string, name: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<number> {
    const key = this.key(repoId, name);
    let bytes: Uint8Array;
    if (body instanceof Uint8Array) bytes = body.slice();
    else {
      const chunks: Uint8Array[] = [];
      const reader = body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      bytes = concat(chunks);
    }
    this.files.set(key, bytes);
    return bytes.length;
  }

  async get(repoId: string, name: string, range?: ByteRange): Promise<Uint8Array | null> {
    const f = this.files.get(this.key(repoId, name));
    if (!f) return null;
    return range ? f.slice(range.offset, range.offset + range.length) : f.slice();
  }

  async stream(repoId: string, name: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null> {
    const bytes = await this.get(repoId, name, range);
    if (!bytes) return null;
    return new ReadableStream({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    });
  }

  async list(repoId: string): Promise<StoredFile[]> {
    checkKey(repoId);
    const prefix = `${repoId}/`;
    return [...this.files].filter(([k]) => k.startsWith(prefix)).map(([k, v]) => ({ name: k.slice(prefix.length), size: v.length }));
  }

  async delete(repoId: string, names: readonly string[]): Promise<void> {
    for (const n of names) this.files.delete(this.key(repoId, n));
  }

  async deleteRepository(repoId: string): Promise<void> {
    for (const f of await this.list(repoId)) this.files.delete(`${repoId}/${f.name}`);
  }
}
