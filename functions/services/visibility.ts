/**
 * Visibility that follows from other visibility (issue 8 A.4): the fork tree's privacy, recomputed
 * in the write batch of a change (the SQL lives in db/queries/forks.ts).
 */
import type { SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { forkVisibilitySql } from "../db/queries/forks.ts";

/**
 * Statements, for the write batch of the change (after the change itself), that recompute the
 * privacy of every fork below the repositories `roots` yields (a parenthesized id list or subquery).
 */
export function forkVisibilityStatements(db: Db, roots: SQL) {
  return forkVisibilitySql(roots).map((q) => db.run(q));
}
