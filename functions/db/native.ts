/**
 * The native driver (Node only — the Worker never imports it): the embedded file through `libsql`
 * directly, each statement text prepared once per connection and reused. Calls are synchronous,
 * so a batch never interleaves with another request's; it runs in one transaction.
 *
 * Write batches are committed in groups: the write batches requested during one turn of the event
 * loop run in ONE transaction, each inside its own savepoint, and the group commits once. A batch
 * whose statement fails is rolled back to its savepoint alone (all or nothing, as before) and its
 * caller gets the error; the others commit. Every caller is answered only after the COMMIT, so
 * durability is what a single commit gives; the batches apply in the order they were requested,
 * as they would one after another. What a group saves is the commit (the WAL write), the largest
 * fixed cost of a small write: under concurrent writes the server's write throughput grows with
 * the group size instead of being bound by one commit per request.
 */
import Database from "libsql";
import type { BatchItem, Driver } from "./driver.ts";
import type { Row } from "./sql.ts";

const MAX_PREPARED = 2000;
/**
 * A read whose text ends in `LIMIT 1` returns at most one row; `get` steps it once, where `all`
 * builds a row cursor (a boxed object and every column name as a string) and steps to the end:
 * 10–30 µs less per statement here, for the caller lookup on every signed request among others.
 * Statement texts that mention a write keyword anywhere keep `all` (a write with RETURNING must
 * run to the end).
 */
const SINGLE_ROW = /^\s*(?:SELECT|WITH)\b[\s\S]*\bLIMIT\s+1\s*$/i;
const WRITE_WORD = /\b(?:INSERT|UPDATE|DELETE|REPLACE|UPSERT)\b/i;
/** Whether `text` is a read answering at most one row (exported for its test). */
export const singleRowRead = (text: string) => SINGLE_ROW.test(text) && !WRITE_WORD.test(text);
/** SQLITE_BUSY from libsql: the lock is another connection's. */
const isBusy = (err: unknown) => /^SQLITE_BUSY/.test(String((err as { code?: unknown }).code ?? ""));
/** At most this many write batches share one commit. */
const MAX_GROUP = 64;

/** The embedded file through `libsql`: statements prepared once per connection. */
export function nativeDriver(db: Database.Database): Driver {
  // `reader` is read once: asking the binding costs a native call per statement. The cache is
  // bounded (oldest first out): the statement texts come from the code's shapes, never from input,
  // but a bound keeps a mistake there from growing memory without end.
  const prepared = new Map<string, { st: Database.Statement; reader: boolean; one: boolean }>();
  const prepare = (text: string) => {
    let p = prepared.get(text);
    if (!p) {
      if (prepared.size >= MAX_PREPARED) prepared.delete(prepared.keys().next().value as string);
      let st: Database.Statement;
      try {
        st = db.prepare(text);
      } catch (err) {
        // libsql 0.5: the first statement prepared in a write transaction after another
        // connection changed the schema (a migration) fails with "no such table/column" once —
        // the schema is read again by then, so a second prepare answers for the real schema
        if (!/^no such (table|column)/.test((err as Error).message)) throw err;
        st = db.prepare(text);
      }
      const reader = st.reader;
      if (reader) st.raw(true);
      p = { st, reader, one: reader && singleRowRead(text) };
      prepared.set(text, p);
    }
    return p;
  };
  // BEGIN IMMEDIATE takes the write lock, which another process (the admin CLI, a migration, a
  // second server) may hold. The connection's busy timeout would wait for it synchronously — the
  // whole server answering nothing meanwhile — so it is tried without waiting, and a group that
  // finds the lock taken is tried again on a timer until the busy timeout has passed (`flush`),
  // while every other request is served. It runs by `exec`: libsql leaves a prepared statement
  // that failed un-reset, and an active BEGIN IMMEDIATE makes every later COMMIT fail ("SQL
  // statements in progress"); `exec` finalizes what it prepares. BEGIN DEFERRED takes no lock.
  const busyTimeoutMs = Number((db.prepare("PRAGMA busy_timeout").raw(true).get() as unknown[] | undefined)?.[0] ?? 0);
  const readBegin = db.prepare("BEGIN DEFERRED");
  const beginWrite = () => {
    if (busyTimeoutMs === 0) return db.exec("BEGIN IMMEDIATE");
    db.exec("PRAGMA busy_timeout = 0");
    try {
      db.exec("BEGIN IMMEDIATE");
    } finally {
      db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    }
  };
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  const savepoint = db.prepare("SAVEPOINT batch");
  const release = db.prepare("RELEASE batch");
  const rollbackTo = db.prepare("ROLLBACK TO batch");
  // The arguments go to libsql as one array: spread, a lone argument that is an object — NULL, or a
  // Buffer — would be taken for named parameters (libsql 0.5 throws on NULL and aborts the process
  // on a Buffer).
  const run = (item: BatchItem): Row[] => {
    const { st, reader, one } = prepare(item.text);
    if (one) {
      let row: Row | undefined;
      try {
        row = st.get(item.args) as unknown as Row | undefined;
      } catch (err) {
        // libsql's `get` leaves a statement that failed un-reset: every later `get` would answer
        // the same error. Prepare it afresh next time.
        prepared.delete(item.text);
        throw err;
      }
      return row === undefined ? [] : [row];
    }
    if (reader) return st.all(item.args) as unknown as Row[];
    st.run(item.args);
    return [];
  };
  /** Runs `work` in the transaction just begun: committed, or rolled back when it throws. */
  const finish = <T>(work: () => T): T => {
    try {
      const out = work();
      commit.run();
      return out;
    } catch (err) {
      if (db.inTransaction) rollback.run();
      throw err;
    }
  };
  const readTransaction = <T>(work: () => T): T => {
    readBegin.run();
    return finish(work);
  };

  interface Pending {
    items: readonly BatchItem[];
    resolve: (rows: Row[][]) => void;
    reject: (err: unknown) => void;
  }
  let queue: Pending[] = [];
  let scheduled = false;
  /** While the write lock is another process's: the retry's timer, when the wait began, and the tries so far. */
  let retry: ReturnType<typeof setTimeout> | null = null;
  let waitingSince = 0;
  let tries = 0;
  const flush = () => {
    scheduled = false;
    if (queue.length === 0) return;
    try {
      beginWrite();
    } catch (err) {
      const now = Date.now();
      if (waitingSince === 0) waitingSince = now;
      if (isBusy(err) && now - waitingSince < busyTimeoutMs) {
        // 1, 2, 4 … 16 ms apart: a lock held for a moment is taken soon after its release
        retry = setTimeout(
          () => {
            retry = null;
            flush();
          },
          Math.min(16, 2 ** tries++),
        );
        return;
      }
      waitingSince = 0;
      tries = 0;
      // the lock stayed taken past the busy timeout (or BEGIN failed otherwise): nothing was written
      const refused = queue.splice(0, MAX_GROUP);
      if (queue.length) schedule();
      for (const g of refused) g.reject(err);
      return;
    }
    waitingSince = 0;
    tries = 0;
    const group = queue.splice(0, MAX_GROUP);
    if (queue.length) schedule();
    if (group.length === 1) {
      const one = group[0]!; // !: length 1
      try {
        one.resolve(finish(() => one.items.map(run)));
      } catch (err) {
        one.reject(err);
      }
      return;
    }
    let outcomes: ({ ok: true; rows: Row[][] } | { ok: false; err: unknown })[];
    try {
      outcomes = finish(() =>
        group.map((g) => {
          savepoint.run();
          try {
            const rows = g.items.map(run);
            release.run();
            return { ok: true as const, rows };
          } catch (err) {
            rollbackTo.run();
            release.run();
            return { ok: false as const, err };
          }
        }),
      );
    } catch (err) {
      // COMMIT failed: nothing of the group was written.
      for (const g of group) g.reject(err);
      return;
    }
    group.forEach((g, i) => {
      const o = outcomes[i]!; // !: one outcome per group member
      if (o.ok) g.resolve(o.rows);
      else g.reject(o.err);
    });
  };
  const schedule = () => {
    // a group waiting for the lock takes what arrives meanwhile on its next try
    if (scheduled || retry) return;
    scheduled = true;
    setImmediate(flush);
  };

  let closed = false;
  return {
    batch(items, mode) {
      if (closed) return Promise.reject(new Error("the database connection is closed"));
      if (mode === "write") {
        return new Promise<Row[][]>((resolve, reject) => {
          queue.push({ items, resolve, reject });
          schedule();
        });
      }
      try {
        if (items.length === 1) return Promise.resolve([run(items[0]!)]); // !: length 1
        return Promise.resolve(readTransaction(() => items.map(run)));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    close: () => {
      if (closed) return;
      closed = true;
      if (retry) clearTimeout(retry);
      retry = null;
      const pending = queue;
      queue = [];
      for (const g of pending) g.reject(new Error("the database connection is closed"));
      prepared.clear();
      db.close();
    },
  };
}
