/**
 * Visibility that follows from other visibility (issue 8 A.4): a fork is private when its base is
 * private or the base's owner is private, and every change of a base's visibility — or of its
 * owner's — is carried down the whole fork tree by that formula, in both directions; a fork made
 * private takes its activity rows with it, one made public leaves them private (events/index.ts).
 * The SQL is written once here, built once for a repository's change (`forkVisibilityOfRepo`,
 * repository edit) and for an owner's (`forkVisibilityOfOwner`).
 */
import { sql, type SQL } from "drizzle-orm";
import { command, p } from "../sql.ts";

/** The statements recomputing the privacy of every fork below the repositories `roots` yields (a parenthesized id list or subquery). */
export function forkVisibilitySql(roots: SQL): [SQL, SQL] {
  return [
    sql`WITH RECURSIVE tree(id, priv) AS (
        SELECT f.id, (b.is_private = 1 OR bo.visibility = 2) FROM repository f
          JOIN repository b ON b.id = f.fork_id JOIN user bo ON bo.id = b.owner_id
          WHERE f.fork_id IN ${roots}
        UNION
        SELECT f.id, (t.priv OR po.visibility = 2) FROM tree t
          JOIN repository f ON f.fork_id = t.id JOIN repository p ON p.id = t.id JOIN user po ON po.id = p.owner_id
      )
      UPDATE repository SET is_private = (SELECT MAX(priv) FROM tree WHERE tree.id = repository.id) WHERE id IN (SELECT id FROM tree)`,
    sql`WITH RECURSIVE tree(id) AS (
        SELECT id FROM repository WHERE fork_id IN ${roots}
        UNION
        SELECT f.id FROM repository f JOIN tree t ON f.fork_id = t.id
      )
      UPDATE action SET is_private = 1 WHERE repo_id IN (SELECT id FROM tree) AND is_private = 0 AND (SELECT r.is_private FROM repository r WHERE r.id = action.repo_id) = 1`,
  ];
}

/** For the write batch of an account's visibility change: the forks of account :ownerId's repositories follow it. */
export const forkVisibilityOfOwner = forkVisibilitySql(sql`(SELECT id FROM repository WHERE owner_id = ${p("ownerId")})`).map((q, i) =>
  command<{ ownerId: number }>(`forkVisibilityOfOwner${i}`, q),
);

/** For the write batch of a repository's visibility change: the forks below repository :id follow it. */
export const forkVisibilityOfRepo = forkVisibilitySql(sql`(${p("id")})`).map((q, i) => command<{ id: number }>(`forkVisibilityOfRepo${i}`, q));
