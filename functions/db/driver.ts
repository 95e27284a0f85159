/**
 * How statements reach the database: a Driver runs a batch of bound statements as ONE round trip
 * — a read snapshot, or one write transaction. Two drivers, one interface:
 * - native (`native.ts`, Node only): the embedded file through `libsql` directly, each statement
 *   text prepared once per connection and reused (synchronous: a batch never interleaves);
 * - hrana (`hrana.ts`, the Worker): Hrana's HTTP pipeline to sqld/Turso, server streams kept open;
 * - client: `@libsql/client` (Node against a remote URL or an embedded replica), sending the same
 *   statement text every time.
 * `metered()` counts round trips into the request's meter and bounds each by the query timeout.
 */
import type { Client, InStatement, ResultSet, TransactionMode } from "@libsql/client";
import type { Row } from "./sql.ts";

/** One statement of a batch, as the drivers take it. */
export interface BatchItem {
  readonly text: string;
  readonly args: readonly unknown[];
}

export interface Driver {
  /** Runs `items` as one round trip: `read` = one snapshot, `write` = one transaction (all or nothing). */
  batch(items: readonly BatchItem[], mode: "read" | "write"): Promise<Row[][]>;
  close(): void;
  /**
   * Whether `err` says the database refused the batch before any of it took effect, for a moment
   * (`metered()` sends it again while the query timeout allows). Absent: never.
   */
  refusedForNow?(err: unknown): boolean;
}

/**
 * A remote database's refusals that leave nothing written and pass: sqld's and Turso's answer 429
 * (too many concurrent requests, or no connection free in time: the pipeline did not run), and
 * SQLITE_BUSY (another writer held the lock past the server's wait: the batch's BEGIN IMMEDIATE,
 * or a later step, failed and its ROLLBACK step ran, so the transaction wrote nothing).
 */
export function remoteRefusedForNow(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (/^SQLITE_BUSY/.test(String((e as { code?: unknown }).code ?? ""))) return true;
    if ((e as { status?: unknown }).status === 429 || /Server returned HTTP status 429\b/.test(String((e as { message?: unknown }).message ?? ""))) return true;
  }
  return false;
}

/** Per-request database accounting, reported in `Server-Timing: db;dur=<ms>;desc="<N>"`. */
export interface DbMeter {
  roundTrips: number;
  ms: number;
}

export const newMeter = (): DbMeter => ({ roundTrips: 0, ms: 0 });

/**
 * The database did not answer within the query timeout, or could not be reached at all. Rendered
 * as 503 in Gitea's error shape; the request never waits longer than the timeout.
 */
export class DatabaseUnavailable extends Error {
  /**
   * A write batch that failed so may still have been committed (its answer never came): what it
   * references must be kept (`commitMayHaveLanded`, git/storage/ref-store.ts).
   */
  readonly mayHaveLanded = true;
  constructor(why: string, options?: { cause?: unknown }) {
    super(`the database is unavailable: ${why}`, options);
    this.name = "DatabaseUnavailable";
  }
}

/**
 * Whether a driver error means the database could not be reached (rather than a failed statement),
 * or an embedded file stayed locked by another writer for all of `[database] SQLITE_TIMEOUT`.
 */
export function unreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = String((e as { code?: unknown }).code ?? "");
    const msg = String((e as { message?: unknown }).message ?? "");
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|UND_ERR_\w+|HRANA_WEBSOCKET_ERROR|SQLITE_BUSY\w*)$/.test(code)) return true;
    if (/fetch failed|Network connection lost|socket hang up|Server returned HTTP status (5\d\d|429)/i.test(msg)) return true;
  }
  return false;
}

/** Whether a libSQL/SQLite error is a UNIQUE constraint violation, and on which index/columns. */
export function uniqueViolation(err: unknown): string | null {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const msg = String((e as { message?: unknown }).message ?? "");
    const m = /UNIQUE constraint failed: ([\w.,\s]+)/.exec(msg);
    if (m) return m[1]!.trim(); // !: the group always participates
  }
  return null;
}

/** Whether a write batch failed because a row it hangs on was gone at write time (`whileExists`, db/sql.ts). */
export function rowGone(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (/string or blob too big/.test(String((e as { message?: unknown }).message ?? ""))) return true;
  }
  return false;
}

/** `@libsql/client` (Node against sqld, Turso or an embedded replica; the CLI). */
export function clientDriver(client: Client): Driver {
  const stmt = (i: BatchItem): InStatement => ({ sql: i.text, args: i.args as never });
  const rowsOf = (r: ResultSet) => r.rows as unknown as Row[];
  return {
    async batch(items, mode) {
      if (items.length === 1 && mode === "read") return [rowsOf(await client.execute(stmt(items[0]!)))]; // !: length 1
      try {
        return (await client.batch(items.map(stmt), mode as TransactionMode)).map(rowsOf);
      } catch (err) {
        // an embedded file's libsql 0.5 fails the first statement of a write transaction after
        // another connection changed the schema with "no such table/column" once (native.ts);
        // the batch was rolled back whole, so it runs again
        if (mode !== "write" || !/no such (table|column)/.test(String((err as Error).message))) throw err;
        return (await client.batch(items.map(stmt), mode as TransactionMode)).map(rowsOf);
      }
    },
    close: () => client.close(),
    refusedForNow: remoteRefusedForNow,
  };
}

/** Attempts of a batch the database refused for now (`Driver.refusedForNow`), the first included. */
export const REFUSED_ATTEMPTS = 8;

/** The pause before attempt `n + 1`: 10 ms doubling to 500 ms, each between half and all of that. */
const refusedPause = (n: number) => Math.min(500, 10 * 2 ** n) * (0.5 + Math.random() / 2);

/**
 * A driver counting round trips into `meter`, each bounded by `timeoutMs` (0 = none). A batch the
 * database refused for now is sent again after a pause, each attempt a round trip, while an
 * attempt can still start inside the timeout; none starts after it. (As for any batch, one already
 * handed to the driver may still reach the database after the request was answered 503.)
 */
export function metered(driver: Driver, meter: DbMeter, timeoutMs = 0): Driver {
  return {
    async batch(items, mode) {
      const start = performance.now();
      const until = timeoutMs > 0 ? start + timeoutMs : Number.POSITIVE_INFINITY;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const attempts = async () => {
        for (let n = 0; ; n++) {
          meter.roundTrips += 1;
          try {
            return await driver.batch(items, mode);
          } catch (err) {
            const pause = refusedPause(n);
            if (n + 1 >= REFUSED_ATTEMPTS || !driver.refusedForNow?.(err) || performance.now() + pause >= until) throw err;
            await new Promise((ok) => setTimeout(ok, pause));
          }
        }
      };
      try {
        const work = attempts().catch((err) => {
          throw unreachable(err) ? new DatabaseUnavailable("it cannot be reached", { cause: err }) : err;
        });
        if (timeoutMs <= 0) return await work;
        const deadline = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new DatabaseUnavailable(`no answer within ${timeoutMs} ms`)), timeoutMs);
        });
        // The late answer (or failure) of a round trip that missed its deadline is dropped.
        work.catch(() => {});
        return await Promise.race([work, deadline]);
      } finally {
        if (timer !== undefined) clearTimeout(timer);
        meter.ms += performance.now() - start;
      }
    },
    close: () => driver.close(),
  };
}

const READ_ONLY = /^\s*(select|with|pragma|explain)\b/i;

/**
 * A `@libsql/client`-shaped view of a driver, for the drizzle code not yet moved to the query
 * layer (execute and batch only; each call is one round trip through the driver).
 */
export function driverAsClient(driver: Driver): Client {
  const item = (s: InStatement): BatchItem => {
    const text = typeof s === "string" ? s : s.sql;
    const args = typeof s === "string" ? [] : Array.isArray(s.args) ? s.args : [];
    return { text, args: (args as unknown[]).map((a) => (typeof a === "boolean" ? (a ? 1 : 0) : a)) };
  };
  const result = (rows: Row[]): ResultSet => ({ rows: rows as never, columns: [], columnTypes: [], rowsAffected: 0, lastInsertRowid: undefined, toJSON: () => ({}) });
  const client = {
    async execute(s: InStatement) {
      const [rows] = await driver.batch([item(s)], READ_ONLY.test(typeof s === "string" ? s : s.sql) ? "read" : "write");
      return result(rows!); // !: a batch answers one result per item
    },
    async batch(stmts: InStatement[], mode?: TransactionMode) {
      const items = stmts.map(item);
      const m = mode === "read" || (mode === undefined && items.every((i) => READ_ONLY.test(i.text))) ? "read" : "write";
      return (await driver.batch(items, m)).map(result);
    },
    close: () => driver.close(),
  };
  return client as unknown as Client;
}
