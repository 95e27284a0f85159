/**
 * Where pack and index files live: one interface, keyed by repository id (never by name, so renames
 * and transfers move nothing). Files are immutable once written; a repository's files are deleted
 * together. Backends: a directory on Node (`fs-store.ts`), an R2 bucket on the Worker (`r2-store.ts`).
 */
import { GitError } from "../errors.ts";

/** A byte range of a stored file. */
export interface ByteRange {
  offset: number;
  length: number;
}

/** A stored file as listed. */
export interface StoredFile {
  name: string;
  size: number;
}

/** Blob storage for immutable pack + index files, one namespace per repository id. */
export interface ObjectStore {
  /** Writes `name` from a stream (never buffered whole) or bytes; resolves with its size once durable. */
  put(repoId: string, name: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<number>;
  /** The whole file or a byte range of it; null when the file does not exist. */
  get(repoId: string, name: string, range?: ByteRange): Promise<Uint8Array | null>;
  /** A stream of the whole file or of a byte range; null when the file does not exist. */
  stream(repoId: string, name: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>;
  /** Every file of the repository with its size. */
  list(repoId: string): Promise<StoredFile[]>;
  /** Deletes the named files (missing ones are ignored). */
  delete(repoId: string, names: readonly string[]): Promise<void>;
  /** Deletes every file of the repository. */
  deleteRepository(repoId: string): Promise<void>;
}

const REPO_ID = /^[A-Za-z0-9_-]{1,64}$/;
const FILE_NAME = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/;

/** Rejects ids and names that could escape their namespace (`..`, absolute paths, odd bytes). */
export function checkKey(repoId: string, name?: string): void {
  if (!REPO_ID.test(repoId)) throw new GitError("invalid", `invalid repository id for object storage: ${JSON.stringify(repoId)}`);
  if (name !== undefined && (!FILE_NAME.test(name) || name.includes(".."))) {
    throw new GitError("invalid", `invalid object storage file name: ${JSON.stringify(name)}`);
  }
}

/** File name of a stored pack. */
export const packFileName = (packId: string): string => `pack/pack-${packId}.pack`;
/** File name of a stored pack's index. */
export const idxFileName = (packId: string): string => `pack/pack-${packId}.idx`;

/** File name of a stored pack's reverse index (git's `.rev`: entries in pack order). */
export const revFileName = (packId: string): string => `pack/pack-${packId}.rev`;

/** Every file of a stored pack (what deleting or copying a pack touches). */
export const packFileNames = (packId: string): string[] => [packFileName(packId), revFileName(packId), idxFileName(packId)];

/**
 * The namespace where a new repository's first pack is stored before the create's write batch
 * (services/repos.ts): the batch may commit even when its answer is lost (a remote database that
 * timed out), and the pack must then exist already. Pack ids are unique, so its files need no
 * repository id; they are copied under the id once it is known, and read from here until then.
 */
export const STAGED_NAMESPACE = "staged";
const PACK_FILE = /^pack\/pack-[0-9a-f]+\.(pack|idx|rev)$/;

/**
 * `store`, where a pack file a repository's namespace lacks is read from STAGED_NAMESPACE (only
 * then: an extra lookup on a miss, which is otherwise an error).
 */
export function withStagedPacks(store: ObjectStore): ObjectStore {
  // a store wrapped already (Node's, wrapped again per request) is not looked through twice
  if (STAGED_STORES.has(store)) return store;
  const staged = (repoId: string, name: string) => repoId !== STAGED_NAMESPACE && PACK_FILE.test(name);
  const wrapped: ObjectStore = {
    put: (repoId, name, body) => store.put(repoId, name, body),
    get: async (repoId, name, range) => (await store.get(repoId, name, range)) ?? (staged(repoId, name) ? store.get(STAGED_NAMESPACE, name, range) : null),
    stream: async (repoId, name, range) => (await store.stream(repoId, name, range)) ?? (staged(repoId, name) ? store.stream(STAGED_NAMESPACE, name, range) : null),
    list: (repoId) => store.list(repoId),
    delete: (repoId, names) => store.delete(repoId, names),
    deleteRepository: (repoId) => store.deleteRepository(repoId),
  };
  STAGED_STORES.add(wrapped);
  return wrapped;
}
const STAGED_STORES = new WeakSet<ObjectStore>();

/** A new pack id: time-ordered and unique without coordination. */
export function newPackId(): string {
  const rnd = new Uint8Array(8);
  crypto.getRandomValues(rnd);
  return Date.now().toString(16).padStart(12, "0") + Array.from(rnd, (b) => b.toString(16).padStart(2, "0")).join("");
}
