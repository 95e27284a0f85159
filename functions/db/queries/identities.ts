/**
 * The accounts a repository's commit e-mails name (Gitea's GetUserByEmail: an activated address of
 * an individual account, or its `<login>@<NO_REPLY_ADDRESS>` placeholder), read with the route's
 * other reads from `git_identity` — the e-mails recorded as the commits arrived — so a route that
 * names commit authors still costs one round trip. Accounts the viewer may not see read as none.
 */
import { sql } from "drizzle-orm";
import { p, str, V, viewerQuery, type Row } from "../sql.ts";
import { userCols, visibleSql, type UserRow } from "./accounts.ts";
import { SEEN_REPO_ID, type RepoPath } from "./repos.ts";

/** The most identities one read returns; a repository with more looks the rest up on demand. */
export const IDENTITY_LIMIT = 500;

const U = userCols("u");

/** One recorded e-mail of the repository and the visible account it names (null: none). */
export interface Identity {
  email: string;
  user: UserRow | null;
}

/**
 * The recorded commit e-mails of the repository at {owner}/{repo} with their accounts, those with
 * an account first, at most IDENTITY_LIMIT (an e-mail not among them is looked up on demand); none
 * of a repository the viewer may not see (`SEEN_REPO_ID`).
 * `noReply` is `@<NO_REPLY_ADDRESS>`, lower-cased.
 */
export const identitiesByPath = viewerQuery<Identity, RepoPath & { noReply: string }>(
  "identitiesByPath",
  sql`SELECT gi.email, ${U.select} FROM git_identity gi
      LEFT JOIN user u ON u.type = 0 AND ${visibleSql(sql`u.id`, sql`u.visibility`, "user")}
        AND (u.keep_email_private = 0 OR u.id = ${V.id} OR ${V.isAdmin} OR substr(gi.email, -length(${p("noReply")})) = ${p("noReply")})
        AND u.id = COALESCE(
        (SELECT ea.uid FROM email_address ea WHERE ea.lower_email = gi.email AND ea.is_activated = 1 LIMIT 1),
        CASE WHEN substr(gi.email, -length(${p("noReply")})) = ${p("noReply")}
          THEN (SELECT x.id FROM user x WHERE x.lower_name = substr(gi.email, 1, length(gi.email) - length(${p("noReply")}))) END)
      WHERE gi.repo_id = ${SEEN_REPO_ID}
      ORDER BY u.id IS NULL, gi.email LIMIT ${IDENTITY_LIMIT}`,
  (r: Row): Identity => ({ email: str(r[0]), user: r[1] === null || r[1] === undefined ? null : U.read(r, 1) }),
);
