/**
 * The git engine's RefStore on libSQL (tables `git_ref`, `git_pack`, `git_tx`; HEAD is the
 * repository's `default_branch`): `read` is one read round trip, `commit` ONE write batch of
 * compare-and-swap guarded statements that also updates the repository row (`is_empty`, `size`,
 * `updated_unix`, `default_branch` when HEAD moves), records the new commits' e-mails
 * (`git_identity`) and writes the push's activity rows — the
 * contract at the top of functions/git/storage/ref-store.ts. Runs on the request's metered driver.
 */
import type { BatchItem, Driver } from "../driver.ts";
import { RefNames, refDirs } from "../../git/refname.ts";
import { type CommitResult, type PackRecord, type Ref, type RefStore, type RefTransaction, type RepoState, protectsHead, refusals } from "../../git/storage/ref-store.ts";
import type { PushEvent } from "../../git/events.ts";
import { notFound } from "../../lib/errors.ts";

/** A statement of the commit batch that runs only when every compare-and-swap held. */
export interface Guard {
  /** SQL boolean: `(SELECT ok FROM git_tx WHERE id = ?)`. */
  readonly sql: string;
  readonly args: readonly unknown[];
}

/** What the commit batch leaves of the repository row (webhook payloads show the repository so). */
export interface RepoAfter {
  /** The new default branch (short name), when the transaction moves HEAD. */
  defaultBranch: string | null;
  empty: boolean;
  sizeDelta: number;
}

/** Statements a push's event adds to the commit batch (activity rows), each checking `guard`. */
export type EventRows = (repoId: number, event: PushEvent, guard: Guard, after: RepoAfter) => BatchItem[];

const HEADS = "refs/heads/";
// refs/heads/… by range, so the unique (repo_id, name) index serves it; '0' follows '/' in ASCII.
const HAS_BRANCH = "EXISTS (SELECT 1 FROM git_ref b WHERE b.repo_id = ? AND b.name >= 'refs/heads/' AND b.name < 'refs/heads0')";

const READ_HEAD: string = "SELECT default_branch, git_unreachable FROM repository WHERE id = ?";
const READ_REFS: string = "SELECT name, oid, peeled FROM git_ref WHERE repo_id = ? ORDER BY name";
const READ_PACKS: string = "SELECT id, repo_id, objects, size, idx_size, checksum FROM git_pack WHERE catalog_repo_id = ? ORDER BY seq";

/**
 * The stored refs in the way of created refs (the directory/file rule of the contract), the
 * transaction's deletes left out: refs under a created name (`name/…`, a range of the unique
 * index: '0' follows '/') as (created, ref), and refs named like a directory of one as (NULL, ref).
 * Args: created names (JSON), repo id, deleted names (JSON), repo id, directories (JSON), deleted names (JSON).
 */
const REF_CONFLICTS = `SELECT c.value, r.name FROM json_each(?) c JOIN git_ref r ON r.repo_id = ? AND r.name >= c.value || '/' AND r.name < c.value || '0'
   WHERE r.name NOT IN (SELECT value FROM json_each(?))
 UNION ALL SELECT NULL, r.name FROM git_ref r WHERE r.repo_id = ? AND r.name IN (SELECT value FROM json_each(?)) AND r.name NOT IN (SELECT value FROM json_each(?))`;

/** Stored refs equal to a created name but for ASCII letter case (rule 3's `caseUnique`). Args: names (JSON), repo id. */
const REF_CASE_TWINS = `SELECT c.value, r.name FROM json_each(?) c JOIN git_ref r ON r.repo_id = ? AND lower(r.name) = lower(c.value) AND r.name <> c.value`;

const item = (text: string, args: readonly unknown[]): BatchItem => ({ text, args });
/** `IN` over a JSON array argument. */
const IN_JSON = "(SELECT value FROM json_each(?))";
const placeholders = (n: number, one = "?") => Array.from({ length: n }, () => one).join(", ");

/** The statements that read a repository's state (for a route's own read batch: 0 extra trips). */
export function repoStateReads(repoId: number): BatchItem[] {
  return [item(READ_HEAD, [repoId]), item(READ_REFS, [repoId]), item(READ_PACKS, [repoId])];
}

/** RepoState from the rows of `repoStateReads`. */
export function repoStateOf(rows: readonly (readonly unknown[])[][]): RepoState {
  const branch = rows[0]?.[0]?.[0];
  return {
    head: typeof branch === "string" && branch !== "" ? `${HEADS}${branch}` : null,
    unreachable: Boolean(rows[0]?.[0]?.[1]),
    refs: (rows[1] ?? []).map((r): Ref => ({ name: String(r[0]), oid: String(r[1]), peeled: r[2] === null || r[2] === undefined ? null : String(r[2]) })),
    packs: (rows[2] ?? []).map(
      (r): PackRecord => ({ id: String(r[0]), repoId: String(r[1]), objects: Number(r[2]), size: Number(r[3]), idxSize: Number(r[4]), checksum: String(r[5]) }),
    ),
  };
}

/** A catalog row: its columns, and its values for the catalog of `repoId` (files stored under `p.repoId`). */
const PACK_COLUMNS = "(id, repo_id, catalog_repo_id, objects, size, idx_size, checksum)";
const packValues = (p: PackRecord, repoId: number) => [p.id, Number(p.repoId), repoId, p.objects, p.size, p.idxSize, p.checksum];

/** Statements inserting a catalog (a fork's first catalog, shared with its base) for `repoId`. */
export function catalogInserts(repoId: number, packs: readonly PackRecord[]): BatchItem[] {
  return packs.map((p) => item(`INSERT INTO git_pack ${PACK_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?)`, packValues(p, repoId)));
}

/** Statements copying refs verbatim into `repoId` (a fork's refs). */
export function refInserts(repoId: number, refs: readonly Ref[]): BatchItem[] {
  return refs.map((r) => item("INSERT INTO git_ref (repo_id, name, oid, peeled) VALUES (?, ?, ?, ?)", [repoId, r.name, r.oid, r.peeled ?? null]));
}

/** Statements re-pointing catalog rows at a repository's own copies (before a base's files go). */
export function catalogRepoint(catalogRepoId: number, packIds: readonly string[], toRepoId: number): BatchItem[] {
  if (packIds.length === 0) return [];
  return [item(`UPDATE git_pack SET repo_id = ? WHERE catalog_repo_id = ? AND id IN (${placeholders(packIds.length)})`, [toRepoId, catalogRepoId, ...packIds])];
}

let txSeq = 0;
const txId = () => `${Date.now().toString(36)}-${(txSeq++).toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

/**
 * The commit batch (see the contract): the current values of the touched refs, the catalog rows
 * compaction removes, the repository, the refs in the way of created ones and (when asked) those
 * differing from one only in letter case, the verdict row, the guarded writes, the repository
 * row, the event rows, the verdict row removed.
 */
export function commitBatch(
  repoId: number,
  tx: RefTransaction,
  events?: EventRows,
): { items: BatchItem[]; check: (rows: readonly (readonly unknown[])[][]) => CommitResult; ownPacks: (rows: readonly (readonly unknown[])[][]) => OwnPack[] } {
  const id = txId();
  const guard: Guard = { sql: "(SELECT ok FROM git_tx WHERE id = ?)", args: [id] };
  const names = tx.updates.map((u) => u.name);
  const deleted = tx.updates.filter((u) => u.new === null).map((u) => u.name);
  const remove = tx.removePacks ?? [];
  const items: BatchItem[] = [];
  // Lists travel as JSON arguments (json_each): one statement text whatever their length, and no
  // limit on SQL variables (a push of 20,000 refs exceeded SQLite's 32,766).
  const removeJson = JSON.stringify(remove);
  // 0: the stored values of the refs the transaction touches (fills rejected[].actual)
  items.push(item(names.length ? `SELECT name, oid FROM git_ref WHERE repo_id = ? AND name IN ${IN_JSON}` : "SELECT NULL, NULL WHERE 0", names.length ? [repoId, JSON.stringify(names)] : []));
  // 1: the catalog rows compaction removes (all must exist)
  items.push(item(remove.length ? `SELECT id FROM git_pack WHERE catalog_repo_id = ? AND id IN ${IN_JSON}` : "SELECT NULL WHERE 0", remove.length ? [repoId, removeJson] : []));
  // 2: the repository still exists (another request may have deleted it since the push read it), and its default branch
  items.push(item("SELECT default_branch FROM repository WHERE id = ?", [repoId]));
  // 3: stored refs in the way of the created ones (directory/file rule; fills rejected[].conflict)
  const created = tx.updates.filter((u) => u.old === null && u.new !== null).map((u) => u.name);
  const conflictArgs = [JSON.stringify(created), repoId, JSON.stringify(deleted), repoId, JSON.stringify([...new Set(created.flatMap(refDirs))]), JSON.stringify(deleted)];
  items.push(item(created.length ? REF_CONFLICTS : "SELECT NULL, NULL WHERE 0", created.length ? conflictArgs : []));
  // 3b: stored refs differing from a case-unique created one only in letter case
  const caseUnique = (tx.caseUnique ?? []).filter((n) => created.includes(n));
  const caseArgs = [JSON.stringify(caseUnique), repoId];
  const caseIdx = items.length;
  if (caseUnique.length) items.push(item(REF_CASE_TWINS, caseArgs));
  // created refs in each other's way: known without the database, so a constant of the verdict
  const selfConflict = refusals({ ...tx, updates: tx.updates.filter((u) => u.old === null && u.new !== null) }, () => null, new RefNames()).length > 0;
  // 4: the verdict, evaluated once before any write: the repository exists, every ref holds its expected value, no created ref is in another's way
  // every touched ref holds its expected value: [[name, old], …], old null for "must not exist"
  const expectations = tx.updates.length
    ? `NOT EXISTS (SELECT 1 FROM json_each(?) e LEFT JOIN git_ref r ON r.repo_id = ? AND r.name = json_extract(e.value, '$[0]') WHERE r.oid IS NOT json_extract(e.value, '$[1]'))`
    : "1";
  const packsExist = remove.length ? `(SELECT COUNT(*) FROM git_pack WHERE catalog_repo_id = ? AND id IN ${IN_JSON}) = ?` : "1";
  const noConflict = created.length ? `NOT EXISTS (${REF_CONFLICTS}) AND NOT ?` : "1";
  const noTwin = caseUnique.length ? `NOT EXISTS (${REF_CASE_TWINS})` : "1";
  // HEAD's branch is the repository's default branch as stored now, not as the caller read it
  const guardsHead = deleted.length > 0 && protectsHead(tx);
  const keepsHead = guardsHead ? `NOT EXISTS (SELECT 1 FROM repository WHERE id = ? AND '${HEADS}' || default_branch IN (SELECT value FROM json_each(?)))` : "1";
  items.push(
    item(`INSERT INTO git_tx (id, ok) SELECT ?, EXISTS (SELECT 1 FROM repository WHERE id = ?) AND (${expectations}) AND (${packsExist}) AND (${noConflict}) AND (${noTwin}) AND (${keepsHead})`, [
      id,
      repoId,
      ...(tx.updates.length ? [JSON.stringify(tx.updates.map((u) => [u.name, u.old])), repoId] : []),
      ...(remove.length ? [repoId, removeJson, remove.length] : []),
      ...(created.length ? [...conflictArgs, selfConflict ? 1 : 0] : []),
      ...(caseUnique.length ? caseArgs : []),
      ...(guardsHead ? [repoId, JSON.stringify(deleted)] : []),
    ]),
  );
  const sets = tx.updates.filter((u) => u.new !== null);
  const deletes = deleted;
  let ownIdx = -1;
  if (remove.length) {
    // the files go after a grace period, once no catalog lists them (services/git-maintenance.ts)
    items.push(item(`INSERT OR IGNORE INTO git_pack_garbage (repo_id, pack_id) SELECT repo_id, id FROM git_pack WHERE catalog_repo_id = ? AND id IN ${IN_JSON} AND ${guard.sql}`, [repoId, removeJson, ...guard.args]));
    items.push(item(`DELETE FROM git_pack WHERE catalog_repo_id = ? AND id IN ${IN_JSON} AND ${guard.sql}`, [repoId, removeJson, ...guard.args]));
  }
  if (deletes.length) items.push(item(`DELETE FROM git_ref WHERE repo_id = ? AND name IN ${IN_JSON} AND ${guard.sql}`, [repoId, JSON.stringify(deletes), ...guard.args]));
  if (sets.length) {
    items.push(
      item(
        `INSERT INTO git_ref (repo_id, name, oid, peeled) SELECT ?, json_extract(e.value, '$[0]'), json_extract(e.value, '$[1]'), json_extract(e.value, '$[2]') FROM json_each(?) e WHERE ${guard.sql}
         ON CONFLICT (repo_id, name) DO UPDATE SET oid = excluded.oid, peeled = excluded.peeled`,
        [repoId, JSON.stringify(sets.map((u) => [u.name, u.new, u.peeled ?? null])), ...guard.args],
      ),
    );
  }
  if (tx.pack) {
    const p = tx.pack;
    items.push(
      item(`INSERT INTO git_pack ${PACK_COLUMNS} SELECT ?, ?, ?, ?, ?, ?, ? WHERE ${guard.sql}`, [...packValues(p, repoId), ...guard.args]),
    );
    // the catalog's own packs after the insert (object counts and bytes): whether a compaction is due
    ownIdx = items.length;
    items.push(item(`SELECT objects, size FROM git_pack WHERE catalog_repo_id = ? AND repo_id = ? AND ${guard.sql} ORDER BY seq`, [repoId, repoId, ...guard.args]));
  }
  if (tx.identities?.length) {
    items.push(
      item(`INSERT OR IGNORE INTO git_identity (repo_id, email) SELECT ?, value FROM json_each(?) WHERE ${guard.sql}`, [repoId, JSON.stringify(tx.identities), ...guard.args]),
    );
  }
  // the repository row: empty = no branch left; size in bytes (the API shows KiB, as Gitea); updated
  // when a ref moved (a compaction changes only the size, as Gitea's UpdateRepoSize after git gc)
  const head = tx.head?.startsWith(HEADS) ? tx.head.slice(HEADS.length) : null;
  items.push(
    item(
      `UPDATE repository SET is_empty = NOT ${HAS_BRANCH}, size = MAX(0, size + ?), updated_unix = CASE WHEN ? THEN unixepoch() ELSE updated_unix END, default_branch = COALESCE(?, default_branch), git_unreachable = git_unreachable OR ? WHERE id = ? AND ${guard.sql}`,
      [repoId, tx.sizeDelta, tx.updates.length > 0 ? 1 : 0, head, tx.orphans || deletes.length > 0 ? 1 : 0, repoId, ...guard.args],
    ),
  );
  if (tx.event && events) items.push(...events(repoId, tx.event, guard, { defaultBranch: head, empty: tx.empty, sizeDelta: tx.sizeDelta }));
  items.push(item("DELETE FROM git_tx WHERE id = ?", [id]));
  return {
    items,
    check(rows) {
      // Deleted meanwhile: nothing was written, and the answer is the one a moment later would get.
      if ((rows[2] ?? []).length === 0) throw notFound();
      const actual = new Map((rows[0] ?? []).map((r) => [String(r[0]), String(r[1])]));
      const inTheWay = new RefNames((rows[3] ?? []).map((r) => String(r[1])));
      const twins = new Map(caseUnique.length ? (rows[caseIdx] ?? []).map((r) => [String(r[0]), String(r[1])]) : []);
      const rejected = refusals(tx, (name) => actual.get(name) ?? null, inTheWay, (name) => twins.get(name) ?? null, `${HEADS}${String(rows[2]![0]![0])}`); // !: checked above
      if (rejected.length) return { ok: false, rejected };
      if ((rows[1] ?? []).length !== new Set(remove).size) return { ok: false, rejected: [] };
      return { ok: true };
    },
    ownPacks: (rows) => (ownIdx < 0 ? [] : (rows[ownIdx] ?? []).map((r) => ({ objects: Number(r[0]), size: Number(r[1]) }))),
  };
}

/** One of the packs a repository owns, as a commit that added a pack reads them back. */
export type OwnPack = { objects: number; size: number };

/** Told after a commit that added a pack, with the packs the repository owns now (in catalog order). */
export type PackAdded = (repoId: number, own: readonly OwnPack[]) => void;

/** RefStore over the request's driver: `read` one round trip, `commit` one write batch. */
export class LibsqlRefStore implements RefStore {
  private readonly driver: Driver;
  private readonly events?: EventRows;
  private readonly packAdded?: PackAdded;

  constructor(driver: Driver, events?: EventRows, packAdded?: PackAdded) {
    this.driver = driver;
    this.events = events;
    this.packAdded = packAdded;
  }

  async read(repoId: string): Promise<RepoState> {
    return repoStateOf(await this.driver.batch(repoStateReads(Number(repoId)), "read"));
  }

  /** Whether the repository's row still exists (one round trip). */
  async exists(repoId: string): Promise<boolean> {
    const [rows] = await this.driver.batch([{ text: READ_HEAD, args: [Number(repoId)] }], "read");
    return (rows?.length ?? 0) > 0;
  }

  async commit(repoId: string, tx: RefTransaction): Promise<CommitResult> {
    const { items, check, ownPacks } = commitBatch(Number(repoId), tx, this.events);
    const rows = await this.driver.batch(items, "write");
    const result = check(rows);
    if (result.ok && tx.pack) this.packAdded?.(Number(repoId), ownPacks(rows));
    return result;
  }
}
