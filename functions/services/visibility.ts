/**
 * Visibility that follows from other visibility (issue 8 A.4): a fork is private when its base is
 * private or the base's owner is private (Gitea's ForkRepository and updateRepository), and every
 * change of a base's visibility — or of its owner's — is carried down the whole fork tree by that
 * same formula, in both directions, together with the privacy of the forks' activity rows.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";

/**
 * Statements, for the write batch of the change (after the change itself), that recompute the
 * privacy of every fork below the repositories `roots` yields (a parenthesized id list or subquery).
 */
export function forkVisibilityStatements(db: Db, roots: SQL) {
  return [
    db.run(sql`WITH RECURSIVE tree(id, priv) AS (
        SELECT f.id, (b.is_private = 1 OR bo.visibility = 2) FROM repository f
          JOIN repository b ON b.id = f.fork_id JOIN user bo ON bo.id = b.owner_id
          WHERE f.fork_id IN ${roots}
        UNION
        SELECT f.id, (t.priv OR po.visibility = 2) FROM tree t
          JOIN repository f ON f.fork_id = t.id JOIN repository p ON p.id = t.id JOIN user po ON po.id = p.owner_id
      )
      UPDATE repository SET is_private = (SELECT MAX(priv) FROM tree WHERE tree.id = repository.id) WHERE id IN (SELECT id FROM tree)`),
    db.run(sql`WITH RECURSIVE tree(id) AS (
        SELECT id FROM repository WHERE fork_id IN ${roots}
        UNION
        SELECT f.id FROM repository f JOIN tree t ON f.fork_id = t.id
      )
      UPDATE action SET is_private = (SELECT r.is_private FROM repository r WHERE r.id = action.repo_id) WHERE repo_id IN (SELECT id FROM tree)`),
  ];
}
