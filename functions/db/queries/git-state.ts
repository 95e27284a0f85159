/**
 * What a route needs of a repository's git data besides the repository row: its refs and pack
 * catalog (read with the route's other reads, so opening the repository costs no round trip of its
 * own), and the visible accounts a set of commit e-mails names (Gitea's GetUserByEmail).
 */
import { sql } from "drizzle-orm";
import { num, p, str, V, viewerQuery, type Row } from "../sql.ts";
import { userCols, visibleSql, type UserRow } from "./accounts.ts";
import { SEEN_REPO_ID, type RepoPath } from "./repos.ts";

export type RefRow = { name: string; oid: string; peeled: string | null };
export type PackRow = { id: string; repoId: number; objects: number; size: number; idxSize: number; checksum: string };

/**
 * Only for a viewer who may access the repository (the routes' guards then decide on the code):
 * refs and catalog are read in the same batch as the permission facts, and reading thousands of
 * refs of a repository the caller may not see would take time a missing repository's do not — an
 * existence oracle. So the rule decides the repository id the rows are looked up by, once: for a
 * viewer who may not see the repository it is NULL and no ref is visited (a condition beside
 * `repo_id = …` would be judged for each of a hidden repository's refs). Access, not code reads:
 * the code guard (reqRepoReader(code)) lets repository and site admins through when the code unit
 * is off, and they read and write the real history.
 */
export type GitStateKey = RepoPath;

/** The refs of the repository at :owner/:name, by name (none for a viewer who may not access it). */
export const refsByPath = viewerQuery<RefRow, GitStateKey>(
  "refsByPath",
  sql`SELECT name, oid, peeled FROM git_ref WHERE repo_id = ${SEEN_REPO_ID} ORDER BY name`,
  (r: Row) => ({ name: str(r[0]), oid: str(r[1]), peeled: r[2] === null || r[2] === undefined ? null : String(r[2]) }),
);

/** The pack catalog of the repository at :owner/:name, in catalog order (none for a viewer who may not access it). */
export const packsByPath = viewerQuery<PackRow, GitStateKey>(
  "packsByPath",
  sql`SELECT id, repo_id, objects, size, idx_size, checksum FROM git_pack WHERE catalog_repo_id = ${SEEN_REPO_ID} ORDER BY seq`,
  (r: Row) => ({ id: str(r[0]), repoId: num(r[1]), objects: num(r[2]), size: num(r[3]), idxSize: num(r[4]), checksum: str(r[5]) }),
);

const U = userCols("u");

/** An account a commit e-mail names. */
export interface EmailUser {
  email: string;
  u: UserRow;
}

const emailUser = (r: Row): EmailUser => ({ email: str(r[0]), u: U.read(r, 1) });
const VISIBLE = visibleSql(sql`u.id`, sql`u.visibility`, "user");

/** Visible individuals with an activated address among :emails (a JSON array of lower-cased e-mails). */
export const usersByEmails = viewerQuery<EmailUser, { emails: string }>(
  "usersByEmails",
  sql`SELECT ea.lower_email, ${U.select} FROM email_address ea JOIN user u ON u.id = ea.uid
      WHERE ea.lower_email IN (SELECT value FROM json_each(${p("emails")})) AND ea.is_activated = 1 AND u.type = 0 AND ${VISIBLE}
        AND (u.keep_email_private = 0 OR u.id = ${V.id} OR ${V.isAdmin})`,
  emailUser,
);

/** Visible individuals among :names (JSON, lower-cased logins), keyed by their `<login>:noReply` placeholder e-mail. */
export const usersByNoReply = viewerQuery<EmailUser, { names: string; noReply: string }>(
  "usersByNoReply",
  sql`SELECT u.lower_name || ${p("noReply")}, ${U.select} FROM user u WHERE u.lower_name IN (SELECT value FROM json_each(${p("names")})) AND u.type = 0 AND ${VISIBLE}`,
  emailUser,
);
