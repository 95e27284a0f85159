/**
 * The drizzle handle for the code not yet moved to the query layer (`functions/db/queries/`): a
 * drizzle instance over the request's metered driver, so its statements are counted and bounded
 * like the query layer's. New code uses `read()` / `write()` from lib/context.ts instead.
 */
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { getTableName, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { driverAsClient, type Driver } from "./driver.ts";
import * as schema from "./schema.ts";

export { DatabaseUnavailable, newMeter, unreachable, uniqueViolation, type DbMeter } from "./driver.ts";

export type Db = LibSQLDatabase<typeof schema>;

/** A drizzle database over an (already metered) driver. */
export function createDb(driver: Driver): Db {
  return drizzle(driverAsClient(driver), { schema });
}

/**
 * A column as `"table"."column"` for raw SQL fragments. Drizzle renders a column interpolated in
 * `sql` unqualified in some positions (single-table select lists, UPDATE), where a correlated
 * subquery would then resolve it against the subquery's own table.
 */
export function col(column: AnySQLiteColumn): SQL {
  return sql.raw(`"${getTableName(column.table)}"."${column.name}"`);
}
