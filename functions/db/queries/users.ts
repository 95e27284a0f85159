/** Users (`/users/…` and the admin verbs): search once per filter shape, the admin writes built once. */
import { sql, type SQL } from "drizzle-orm";
import { loginSource, user } from "../schema.ts";
import { reachedUserIdsSql, userClassVisibleSql } from "../../lib/auth.ts";
import { columnsOf, command, guardCommand, insertSql, num, p, query, shaped, V, viewerQuery, type InsertKey, type Row } from "../sql.ts";
import { repoCascadeSql } from "./cascade.ts";
import { userCols, visibleSql, type UserRow } from "./accounts.ts";

const U = userCols("u");
const userRow = (r: Row) => U.read(r, 0);
const count = (r: Row) => num(r[0]);

// ---- search ----

/**
 * Which filters a search has: a keyword (:kw, a LIKE pattern) and a user id (:uid); `indexed` (only
 * with a keyword), its candidates come from the trigram index `user_search` (:kwPhrase, `indexedKeyword`).
 */
export interface SearchShape {
  kw: boolean;
  indexed: boolean;
  uid: boolean;
}

/**
 * The total of a search without a keyword or id, without reading every user row: the individuals
 * of the visibility classes the viewer may see whole, summed from `user_count` (kept by triggers),
 * plus the viewer itself and the users sharing an organization with it outside those classes,
 * each tested with the search's rule. Exact: a class counts only if its rule implies
 * `userVisibleSql`, and every other visible individual is among the reached ids.
 */
const CLASS_COUNT = sql`SELECT (SELECT COALESCE(SUM(uc.n), 0) FROM user_count uc WHERE uc.type = 0 AND ${userClassVisibleSql(V, sql`uc.visibility`, "user")} = 1)
  + (SELECT COUNT(*) FROM user u WHERE u.id IN (${reachedUserIdsSql(V)}) AND u.type = 0
      AND ${userClassVisibleSql(V, sql`u.visibility`, "user")} = 0 AND ${visibleSql(sql`u.id`, sql`u.visibility`, "user")})`;

/**
 * GET /users/search: individuals the viewer may see, by name, full name or e-mail; once per shape.
 * The e-mail is searched only where the viewer is shown it (toUser): a kept-private one for the user
 * itself and site admins (Gitea's SearchUsers), others for signed-in viewers; anonymous
 * callers see placeholders, so a match on the address would confirm what they may not see (Gitea
 * searches it for everyone; docs/api.md).
 */
export const searchStatements = shaped((s: SearchShape) => {
  // With the index only its candidates are read (by id, in id order: the page's order), a superset
  // of the LIKE's matches, which still decides: a search costs what it finds, not how many users
  // there are (drizzle/0009_user_search.sql).
  const from = sql`FROM user u WHERE ${s.indexed ? sql`u.id IN (SELECT rowid FROM user_search WHERE user_search MATCH ${p("kwPhrase")}) AND ` : sql``}u.type = 0 AND ${visibleSql(sql`u.id`, sql`u.visibility`, "user")}${
    s.kw
      ? sql` AND (u.lower_name LIKE ${p("kw")} ESCAPE '\\' OR lower(u.full_name) LIKE ${p("kw")} ESCAPE '\\' OR (${V.id} IS NOT NULL AND (u.keep_email_private = 0 OR u.id = ${V.id} OR ${V.isAdmin}) AND lower(u.email) LIKE ${p("kw")} ESCAPE '\\'))`
      : sql``
  }${s.uid ? sql` AND u.id = ${p("uid")}` : sql``}`;
  const name = `userSearch(${s.kw ? (s.indexed ? "indexed" : "kw") : ""}${s.uid ? ",uid" : ""})`;
  return {
    page: viewerQuery<UserRow, { kw?: string; kwPhrase?: string; uid?: number; limit: number; offset: number }>(name, sql`SELECT ${U.select} ${from} ORDER BY u.id LIMIT ${p("limit")} OFFSET ${p("offset")}`, userRow),
    total: viewerQuery<number, { kw?: string; kwPhrase?: string; uid?: number }>(`${name}Count`, s.kw || s.uid ? sql`SELECT COUNT(*) ${from}` : CLASS_COUNT, count),
  };
});

// ---- admin ----

const L = columnsOf(loginSource, "ls");
export type LoginSourceRow = ReturnType<typeof L.read>;

export const loginSourceById = query<LoginSourceRow, { id: number }>("loginSourceById", sql`SELECT ${L.select} FROM login_source ls WHERE ls.id = ${p("id")} LIMIT 1`, (r) => L.read(r, 0));

const NEW_USER_KEYS: InsertKey<typeof user>[] = [
  "name", "lowerName", "fullName", "email", "passwd", "passwdHashAlgo", "mustChangePassword", "loginType", "loginSource", "loginName", "isRestricted", "visibility", "createdUnix", "updatedUnix",
];
export type NewUser = Pick<UserRow, "name" | "lowerName" | "fullName" | "email" | "passwd" | "passwdHashAlgo" | "mustChangePassword" | "loginType" | "loginSource" | "loginName" | "isRestricted" | "visibility" | "createdUnix" | "updatedUnix">;

/** POST /admin/users: an active individual. */
export const insertUser = command<NewUser>("insertUser", insertSql(user, NEW_USER_KEYS, { isActive: sql`1` }));

/** SQL: no other site admin besides :id, and :id is one (removing the last admin). */
const LAST_ADMIN = sql`(NOT EXISTS (SELECT 1 FROM user WHERE is_admin = 1 AND id <> ${p("id")}) AND EXISTS (SELECT 1 FROM user WHERE id = ${p("id")} AND is_admin = 1))`;

/** Aborts the batch when user :id is the last site admin (PATCH with admin=false). */
export const guardLastAdmin = guardCommand<{ id: number }>("guardLastAdmin", LAST_ADMIN);

/** The e-mail statements of an admin edit of user :uid's address. */
export const EDIT_EMAIL = {
  demote: command<{ uid: number }>("emailsNotPrimary", sql`UPDATE email_address SET is_primary = 0 WHERE uid = ${p("uid")}`),
  promote: command<{ id: number }>("emailMakePrimary", sql`UPDATE email_address SET is_primary = 1, is_activated = 1 WHERE id = ${p("id")}`),
  add: command<{ uid: number; email: string; lowerEmail: string }>(
    "emailAddPrimary",
    // Only while the user exists: an edit racing a deletion leaves no orphan address.
    sql`INSERT INTO email_address (uid, email, lower_email, is_activated, is_primary)
        SELECT ${p("uid")}, ${p("email")}, ${p("lowerEmail")}, 1, 1 WHERE EXISTS (SELECT 1 FROM user WHERE id = ${p("uid")})`,
  ),
};

/** User :name's organization memberships (a user in any is not deleted without purge). */
export const orgCountOfUser = query<number, { name: string }>("orgCountOfUser", sql`SELECT COUNT(*) FROM org_user WHERE uid = (SELECT id FROM user WHERE lower_name = ${p("name")})`, count);

/** The ids of user :name's repositories. */
export const repoIdsOfOwner = query<number, { name: string }>(
  "repoIdsOfOwner",
  sql`SELECT id FROM repository WHERE owner_id = (SELECT id FROM user WHERE lower_name = ${p("name")})`,
  (r) => num(r[0]),
);

/**
 * DELETE /admin/users/{username}: account :id and all that hangs off it — memberships, tokens,
 * addresses, blocks, its feed and its actions in others' feeds, stars (with the starred repositories'
 * counts), hooks and redirects (issue 8 C.2); with purge its repositories and their sub-resources.
 * The first statement aborts the batch when :id is the last admin or the sole owner of an organization.
 */
export const deleteUserGuard = guardCommand<{ id: number }>(
  "deleteUserGuard",
  sql`${LAST_ADMIN} OR EXISTS (SELECT 1 FROM team_user tu JOIN team t ON t.id = tu.team_id AND t.authorize = 4
    WHERE tu.uid = ${p("id")} AND (SELECT COUNT(*) FROM team_user tu2 WHERE tu2.team_id = t.id) = 1)`,
);

/**
 * What the delete was told when it read (ADMIN delete, issue 9's read-then-write class): without
 * purge, a user who owns a repository or belongs to an organization when the batch commits is not
 * deleted; with purge, one who got a repository the read did not list (its files would be left
 * behind). Either aborts the batch as the guard above does.
 */
export const deleteUserKeepsOwnership = guardCommand<{ id: number }>(
  "deleteUserKeepsOwnership",
  sql`EXISTS (SELECT 1 FROM repository WHERE owner_id = ${p("id")}) OR EXISTS (SELECT 1 FROM org_user WHERE uid = ${p("id")})`,
);
export const purgeUserNewRepos = guardCommand<{ id: number; ids: string }>(
  "purgeUserNewRepos",
  sql`EXISTS (SELECT 1 FROM repository WHERE owner_id = ${p("id")} AND id NOT IN (SELECT value FROM json_each(${p("ids")})))`,
);

/** SQL: the organizations whose owner team has user :uid as its only member. */
const soleOwnedOrgIds = (uid: SQL) =>
  sql`SELECT t.org_id FROM team t JOIN team_user tu ON tu.team_id = t.id AND tu.uid = ${uid} WHERE t.authorize = 4 AND (SELECT COUNT(*) FROM team_user tu2 WHERE tu2.team_id = t.id) = 1`;
const USER_BY_NAME = sql`(SELECT id FROM user WHERE lower_name = ${p("name")})`;

/** The organizations user :name is the sole owner of: a purge deletes them with their repositories, as Gitea's DeleteUser. */
export const soleOwnedOrgsOf = query<number, { name: string }>("soleOwnedOrgsOf", soleOwnedOrgIds(USER_BY_NAME), (r) => num(r[0]));

/** The ids of the repositories of the organizations user :name is the sole owner of. */
export const repoIdsOfSoleOwnedOrgs = query<number, { name: string }>(
  "repoIdsOfSoleOwnedOrgs",
  sql`SELECT id FROM repository WHERE owner_id IN (${soleOwnedOrgIds(USER_BY_NAME)})`,
  (r) => num(r[0]),
);

/**
 * A purge deletes organization :orgId, which user :id was the sole owner of when read: aborts when
 * that no longer holds (an owner added since) — the org then stays and the purge is refused.
 */
export const purgeOrgStillSole = guardCommand<{ id: number; orgId: number }>("purgeOrgStillSole", sql`${p("orgId")} NOT IN (${soleOwnedOrgIds(sql`${p("id")}`)})`);

/** A purge of organization :orgId aborts when it got a repository the read did not list (:ids), whose files would stay. */
export const purgeOrgNewRepos = guardCommand<{ orgId: number; ids: string }>(
  "purgeOrgNewRepos",
  sql`EXISTS (SELECT 1 FROM repository WHERE owner_id = ${p("orgId")} AND id NOT IN (SELECT value FROM json_each(${p("ids")})))`,
);

/** A purged organization's repositories (before DELETE_ORG, whose guard wants none left). */
export const purgeOrgRepos = [...repoCascadeSql(sql`(SELECT id FROM repository WHERE owner_id = ${p("orgId")})`), sql`DELETE FROM repository WHERE owner_id = ${p("orgId")}`].map((q, i) =>
  command<{ orgId: number }>(`purgeOrgRepos${i}`, q),
);

/** The statements after the guard and the re-pointed packs. */
export const DELETE_USER_ROWS = [
  sql`UPDATE team SET num_members = num_members - 1 WHERE id IN (SELECT team_id FROM team_user WHERE uid = ${p("id")})`,
  sql`UPDATE user SET num_members = num_members - 1 WHERE id IN (SELECT org_id FROM org_user WHERE uid = ${p("id")})`,
  sql`DELETE FROM team_user WHERE uid = ${p("id")}`,
  sql`DELETE FROM org_user WHERE uid = ${p("id")}`,
  sql`DELETE FROM access_token WHERE uid = ${p("id")}`,
  sql`DELETE FROM email_address WHERE uid = ${p("id")}`,
  sql`DELETE FROM user_blocking WHERE blocker_id = ${p("id")} OR blockee_id = ${p("id")}`,
  sql`DELETE FROM action WHERE user_id = ${p("id")} OR act_user_id = ${p("id")}`,
  sql`UPDATE repository SET num_stars = num_stars - 1 WHERE id IN (SELECT repo_id FROM star WHERE uid = ${p("id")})`,
  sql`DELETE FROM star WHERE uid = ${p("id")}`,
  sql`DELETE FROM hook_task WHERE hook_id IN (SELECT id FROM webhook WHERE owner_id = ${p("id")})`,
  sql`DELETE FROM webhook WHERE owner_id = ${p("id")}`,
  sql`DELETE FROM repo_redirect WHERE owner_id = ${p("id")}`,
  ...repoCascadeSql(sql`(SELECT id FROM repository WHERE owner_id = ${p("id")})`),
  sql`DELETE FROM repository WHERE owner_id = ${p("id")}`,
  sql`DELETE FROM collaboration WHERE user_id = ${p("id")}`,
  sql`DELETE FROM user WHERE id = ${p("id")} AND type <> 1`,
].map((q, i) => command<{ id: number }>(`deleteUser${i}`, q));
