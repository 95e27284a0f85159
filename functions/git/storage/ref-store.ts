/**
 * Refs, HEAD and the pack catalog of a repository: the metadata the lead stores in libSQL. The git
 * engine needs exactly two operations — one read and one atomic commit — so a push costs a bounded
 * number of database round trips however many objects it carries.
 *
 * ## Contract of `commit` (the libSQL implementation does it as guards in ONE write batch)
 *
 * 1. All or nothing. Either every effect below is applied, or none is and the store is unchanged.
 * 2. Compare-and-swap per ref, checked against the stored value at commit time (not at `read`):
 *    - `old === null`  → the ref must NOT exist;
 *    - `old === "<oid>"` → the ref must exist and point at exactly that oid.
 *    If any ref fails (this or rule 3), nothing is applied and the result lists EVERY failing ref with the value it
 *    actually has (`actual`, null when absent) — the engine then reports `ng <ref> …` for those and,
 *    unless the push was `atomic`, commits the remaining refs with a second call.
 * 3. Directory/file rule for created refs (`old === null`, `new` an oid), also checked at commit
 *    time: a ref is a file under `refs/`, so `a` cannot be created while a ref `a/b` exists, nor
 *    `a/b` while `a` exists (refs this transaction deletes do not count; refs it creates do, in
 *    order: of two created refs that conflict, the later one fails). A ref that fails this is
 *    rejected like a failed compare-and-swap, with `conflict` naming the ref in its way (git's
 *    "'a' exists; cannot create 'a/b'"). Updates and deletes of existing refs never fail it, so a
 *    repository that already holds both can still be repaired.
 *    A created ref listed in `caseUnique` must moreover not exist in another letter case (ASCII
 *    letters folded, as SQLite's `lower()` folds them): checked at commit time, and rejected the
 *    same way, `conflict` naming the stored ref (the API's tags, unique case-insensitively as
 *    Gitea's release rows keep them; a push is not held to it, as git is not).
 * 4. Effects, in one transaction: each update sets `oid` (and `peeled`, the id an annotated tag
 *    finally points to, or null) when `new` is an oid and deletes the ref when `new` is null;
 *    `pack` (if given) is appended to the catalog; `head` (if given) becomes HEAD's symbolic target;
 *    `size = size + sizeDelta`; `empty` becomes true exactly when no ref under `refs/heads/` remains
 *    (compute it in SQL after the updates; the engine's `empty` is its own view for a quiet store);
 *    `event` (if given) is the push's activity, for the outbox in the same batch;
 *    `removePacks` (compaction) deletes those catalog rows — every listed id must still be in the
 *    catalog, else nothing is applied (`ok: false` with no rejected ref).
 * 5. Concurrency: two commits racing on the same ref with the same `old` → exactly one succeeds;
 *    two commits creating `a` and `a/b` → at most one succeeds.
 * 6. `unreachable` (in `read`) becomes true, for good, with the first applied transaction that
 *    deletes a ref or says `orphans`; a fork's first state takes its base's.
 *    (libSQL: `UPDATE refs SET oid=? WHERE repo=? AND name=? AND oid=?` / `INSERT` guarded by the
 *    unique (repo, name) index / `DELETE … AND oid=?`, each followed by a guard that aborts the batch
 *    when `changes() = 0`; a pre-check select in the same batch fills `rejected[].actual`.)
 *
 * `read` returns refs sorted by name (C locale byte order, as git advertises them) and packs in the
 * order they were added. It is one round trip (a batch of three selects).
 */
import type { PushEvent } from "../events.ts";
import type { RefNames } from "../refname.ts";

/** A ref as stored: full name, object id, and for annotated tags the peeled target. */
export interface Ref {
  name: string;
  oid: string;
  /** The non-tag object an annotated tag chain points to; null/undefined for other refs. */
  peeled?: string | null;
}

/** A catalog entry: one immutable pack + index pair in the ObjectStore. */
export interface PackRecord {
  /** Pack id: files `pack/pack-<id>.pack` and `.idx`. */
  id: string;
  /** Repository id whose ObjectStore namespace holds the files (a fork points at its base's). */
  repoId: string;
  /** Objects in the pack. */
  objects: number;
  /** Bytes of the `.pack` file. */
  size: number;
  /** Bytes of the `.idx` file. */
  idxSize: number;
  /** The pack's trailing SHA-1 (hex). */
  checksum: string;
}

/** Everything the engine reads about a repository, in one round trip. */
export interface RepoState {
  /** HEAD's symbolic target (`refs/heads/main`), or null when HEAD is detached or unset. */
  head: string | null;
  refs: Ref[];
  packs: PackRecord[];
  /**
   * The packs may hold objects no ref reaches any more (rule 4: a ref was deleted or moved other
   * than forward, here or in the base of a fork): a clone must then walk history and send only what
   * the refs reach, never the stored packs as they are. Absent = false.
   */
  unreachable?: boolean;
}

/** One compare-and-swap ref update. */
export interface RefUpdate {
  name: string;
  /** Expected current oid; null = the ref must not exist. */
  old: string | null;
  /** New oid; null = delete the ref. */
  new: string | null;
  peeled?: string | null;
}

/** Everything one push or API commit changes, applied atomically. */
export interface RefTransaction {
  updates: RefUpdate[];
  pack?: PackRecord;
  /** New symbolic target of HEAD. */
  head?: string;
  /** Bytes to add to the repository's size (the new pack and index). */
  sizeDelta: number;
  /** The engine's view of `empty` after the transaction (no branch left). */
  empty: boolean;
  event?: PushEvent;
  /** The e-mails (lower-cased) the new commits name as author or committer, recorded with the refs. */
  identities?: readonly string[];
  /** Catalog entries replaced by `pack` (compaction); all must exist. */
  removePacks?: string[];
  /**
   * The transaction may leave objects no ref reaches (a ref moved other than fast-forward — the
   * engine knows which); a deletion in `updates` counts without it. Sets `unreachable` for good.
   */
  orphans?: boolean;
  /** Created refs that must not exist in another letter case either (rule 3). */
  caseUnique?: readonly string[];
  /**
   * HEAD's branch, as stored when the transaction commits, is not deleted unless `head` moves HEAD
   * in the same transaction (Gitea's "default branch cannot be deleted"): checked at commit time, so
   * a change of the default branch that lands after the caller read HEAD still protects it.
   */
  protectHead?: boolean;
}

/** A ref whose compare-and-swap failed, with what it really holds. */
export interface RejectedRef {
  name: string;
  actual: string | null;
  /** For a created ref refused by the directory/file rule: the existing ref in its way. */
  conflict?: string;
  /** A deletion of HEAD's branch refused (`protectHead`). */
  head?: true;
}

export type CommitResult = { ok: true } | { ok: false; rejected: RejectedRef[] };

/** Refs, HEAD and pack catalog storage (libSQL in the app, in memory in tests). */
export interface RefStore {
  /** HEAD, all refs, and the pack catalog — one round trip. */
  read(repoId: string): Promise<RepoState>;
  /** Applies the transaction atomically with per-ref compare-and-swap (see the contract above). */
  commit(repoId: string, tx: RefTransaction): Promise<CommitResult>;
}

/**
 * Whether a commit that failed with `err` may still have landed: the store never got its answer
 * (the database's query timeout, a connection lost mid-request), which its error says with
 * `mayHaveLanded: true`, here or in a cause. A pack such a commit names is then kept: unreferenced
 * it is only garbage, while deleted under refs that name it the repository would be broken. Any
 * other failure was answered (a statement or a guard failed, the transaction rolled back): the
 * commit wrote nothing, and its pack is deleted.
 */
export function commitMayHaveLanded(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { mayHaveLanded?: unknown }).mayHaveLanded === true) return true;
  }
  return false;
}

/** A name with its ASCII letters lower-cased: SQLite's `lower()` (rule 3's letter case). */
export const asciiLower = (name: string) => name.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/** Whether the transaction's deletions must spare HEAD's branch (`protectHead`, HEAD not moved by it). */
export const protectsHead = (tx: RefTransaction) => tx.protectHead === true && tx.head === undefined;

/**
 * The refs a transaction cannot apply (contract rules 2 and 3), in update order: a failed
 * compare-and-swap against `actual`, or a created ref in the way of (or under) a ref of `stored`
 * (the stored names that matter; the transaction's deletes are taken out, its creates added in
 * order), or for a name of `caseUnique` the stored ref `caseTwin` finds in another letter case, or a deletion
 * of HEAD's branch `head` under `protectHead`. Shared by the memory store and the libSQL store (which reads `actual` and the names that
 * may conflict in its batch).
 */
export function refusals(
  tx: RefTransaction,
  actual: (name: string) => string | null,
  stored: RefNames,
  caseTwin: (name: string) => string | null = () => null,
  head: string | null = null,
): RejectedRef[] {
  for (const u of tx.updates) if (u.new === null) stored.delete(u.name);
  const out: RejectedRef[] = [];
  for (const u of tx.updates) {
    const cur = actual(u.name);
    if (cur !== u.old) {
      out.push({ name: u.name, actual: cur });
      continue;
    }
    if (u.new === null && protectsHead(tx) && u.name === head) {
      out.push({ name: u.name, actual: cur, head: true });
      continue;
    }
    if (u.old !== null || u.new === null) continue;
    const conflict = stored.conflictOf(u.name) ?? (tx.caseUnique?.includes(u.name) ? caseTwin(u.name) : null);
    if (conflict !== null) out.push({ name: u.name, actual: cur, conflict });
    else stored.add(u.name);
  }
  return out;
}
