/**
 * The database handle every request uses: a drizzle instance over a libSQL client that counts
 * round trips. The entry points create the libSQL client (`@libsql/client` on Node,
 * `@libsql/client/web` on the Worker); this module only wraps it, so it runs in both runtimes.
 */
import type { Client, InStatement, TransactionMode } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { getTableName, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import * as schema from "./schema.ts";

export type Db = LibSQLDatabase<typeof schema>;

/** Per-request database accounting, reported in `Server-Timing: db;dur=<ms>;desc="<N>"`. */
export interface DbMeter {
  roundTrips: number;
  ms: number;
}

export const newMeter = (): DbMeter => ({ roundTrips: 0, ms: 0 });

const READ_ONLY = /^\s*(select|with|pragma|explain)\b/i;

/**
 * The database did not answer within the query timeout, or could not be reached at all. Rendered
 * as 503 in Gitea's error shape; the request never waits longer than the timeout.
 */
export class DatabaseUnavailable extends Error {
  constructor(why: string, options?: { cause?: unknown }) {
    super(`the database is unavailable: ${why}`, options);
    this.name = "DatabaseUnavailable";
  }
}

/**
 * Whether a client error means the database could not be reached (rather than a failed statement),
 * or an embedded file stayed locked by another writer for all of `[database] SQLITE_TIMEOUT`.
 */
export function unreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = String((e as { code?: unknown }).code ?? "");
    const msg = String((e as { message?: unknown }).message ?? "");
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|UND_ERR_\w+|HRANA_WEBSOCKET_ERROR|SQLITE_BUSY\w*)$/.test(code)) return true;
    if (/fetch failed|Network connection lost|socket hang up|Server returned HTTP status 5\d\d/i.test(msg)) return true;
  }
  return false;
}
const sqlOf = (s: InStatement) => (typeof s === "string" ? s : s.sql);

/**
 * Wraps a libSQL client so that every network round trip (`execute`, `batch`, `migrate`,
 * `executeMultiple`, `transaction`) is counted into `meter` and bounded by `timeoutMs`. Batches without an explicit mode are
 * sent as `read` when every statement reads and as `write` otherwise, so that a write batch takes
 * the write lock up front instead of failing to upgrade a deferred transaction under contention.
 */
export function meteredClient(client: Client, meter: DbMeter, timeoutMs = 0): Client {
  const timed = async <T>(fn: () => Promise<T>): Promise<T> => {
    meter.roundTrips += 1;
    const start = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const work = fn().catch((err) => {
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
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      switch (prop) {
        case "execute":
          return (stmt: InStatement, args?: unknown) =>
            timed(() => (args === undefined ? target.execute(stmt) : target.execute(stmt as string, args as never)));
        case "batch":
          return (stmts: InStatement[], mode?: TransactionMode) =>
            timed(() => target.batch(stmts, mode ?? (stmts.every((s) => READ_ONLY.test(sqlOf(s))) ? "read" : "write")));
        case "migrate":
        case "executeMultiple":
        case "transaction":
          return (...args: unknown[]) =>
            timed(() => (target[prop] as (...a: unknown[]) => Promise<unknown>).apply(target, args));
        default: {
          const value = Reflect.get(target, prop, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        }
      }
    },
  }) as Client;
}

/** A drizzle database over `client`, counting round trips into `meter`; each round trip bounded by `timeoutMs` (0 = none). */
export function createDb(client: Client, meter: DbMeter, timeoutMs = 0): Db {
  return drizzle(meteredClient(client, meter, timeoutMs), { schema });
}

/** Whether a libSQL/SQLite error is a UNIQUE constraint violation, and on which index/columns. */
export function uniqueViolation(err: unknown): string | null {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const msg = String((e as { message?: unknown }).message ?? "");
    const m = /UNIQUE constraint failed: ([\w.,\s]+)/.exec(msg);
    if (m) return m[1].trim();
  }
  return null;
}

/**
 * A column as `"table"."column"` for raw SQL fragments. Drizzle renders a column interpolated in
 * `sql` unqualified in some positions (single-table select lists, UPDATE), where a correlated
 * subquery would then resolve it against the subquery's own table.
 */
export function col(column: AnySQLiteColumn): SQL {
  return sql.raw(`"${getTableName(column.table)}"."${column.name}"`);
}
