/**
 * Users and organizations: the caller lookup, accounts by name as the viewer sees them, and the
 * membership fragments every other query reuses (org owner, org member, account visibility).
 */
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { unlimited, userVisibleSql, type AccountKind } from "../../lib/auth.ts";
import { user } from "../schema.ts";
import { bool, columnsOf, command, num, p, query, setList, shaped, V, VIEWER_COLUMNS, VIEWER_JOIN, viewerQuery, type InsertKey, type Row, rowExists, SIGNED_IN, type ViewerValues, whileExists } from "../sql.ts";

/** Gitea's user types. */
export const USER_TYPE = { individual: 0, organization: 1 } as const;
/** Gitea's VisibleType. */
export const VISIBILITY = { public: 0, limited: 1, private: 2 } as const;

/** A user row without its password hash (outside authentication no response needs it). */
export const userCols = (alias: string) => columnsOf(user, alias, ["passwd", "passwdHashAlgo"]);
const U = userCols("u");
const U_AUTH = columnsOf(user, "u");

export type UserRow = ReturnType<typeof U.read>;

/** The viewer as SQL: `V` (subqueries of the viewer CTE) or `VIEWER_COLUMNS` (the joined `v` row). */
type Viewer = typeof V | typeof VIEWER_COLUMNS;

/**
 * SQL: may the viewer see this user or organization — the rule of `userVisibleSql` (lib/auth.ts),
 * the one place it is written, over the viewer CTE (`V`, the default) or the joined viewer row.
 * `unlimited` ignores token limits (the viewer's own relations, e.g. a repository owner a
 * collaborator reaches) and counts a site admin as one whatever the token.
 */
export function visibleSql(id: SQL, visibility: SQL, kind: AccountKind, opts: { unlimited?: boolean; viewer?: Viewer } = {}): SQL {
  const v = opts.viewer ?? V;
  // Without limits the kind decides nothing: "user" keeps the text free of a CASE that is always 0.
  return opts.unlimited ? userVisibleSql({ ...unlimited(v), isAdmin: v.siteAdmin }, id, visibility, "user") : userVisibleSql(v, id, visibility, kind);
}

/**
 * The id of the account named by parameter `param` when the viewer may see it (an organization
 * only, with `orgOnly`), else NULL: what a route's rows about the account (its repositories,
 * activity) are keyed by, so a hidden account's rows are never visited (an existence oracle).
 */
export const seenAccountId = (param: string, orgOnly = false) =>
  sql`(SELECT sa.id FROM user sa WHERE sa.lower_name = ${p(param)}${orgOnly ? sql` AND sa.type = 1` : sql``} AND ${visibleSql(sql`sa.id`, sql`sa.visibility`, sql`sa.type`)})`;

// The account reads below join the viewer row once (VIEWER_JOIN, see sql.ts): they run on most
// routes, and each `(SELECT … FROM v)` costs sqld/Turso a compile of the viewer CTE per request.
const VC = VIEWER_COLUMNS;

/** Aborts a write batch unless user :uid (individual or organization) still exists (`whileExists`). */
export const userExists = whileExists<{ uid: number }>("whileUser", rowExists("user", p("uid")));

/** SQL: `uid` is in the organization's Owners team. */
export const isOrgOwnerSql = (orgId: SQLWrapper | number, uid: SQLWrapper | number) =>
  sql`EXISTS (SELECT 1 FROM team_user tu JOIN team t ON t.id = tu.team_id WHERE tu.org_id = ${orgId} AND tu.uid = ${uid} AND t.authorize = 4)`;

/**
 * The id of the organization named by parameter `param` when the viewer may see it and owns it (or
 * is a site admin: reqOrgOwnership), else NULL: what an organization's owner-only rows (its hooks)
 * are keyed by, so nobody else makes them be read.
 */
export const ownedOrgId = (param: string) => sql`(SELECT so.id FROM user so WHERE so.id = ${seenAccountId(param, true)} AND (${V.isAdmin} OR ${isOrgOwnerSql(sql`so.id`, V.id)}))`;

/** SQL: `uid` is a member of the organization. */
export const isOrgMemberSql = (orgId: SQLWrapper | number, uid: SQLWrapper | number) => sql`EXISTS (SELECT 1 FROM org_user ou WHERE ou.org_id = ${orgId} AND ou.uid = ${uid})`;

/**
 * Whether the viewer may see that user `uid` is a member of organization `orgId`, as the
 * organization's member list decides (orgs.ts): a public membership, or a site admin, or a fellow
 * member whose token is not public-only. Every list that reveals a membership — a team's roster, a
 * repository's assignees through its teams — shows a concealed one only on this condition.
 */
export const membershipSeenSql = (orgId: SQLWrapper, uid: SQLWrapper, viewer: Pick<typeof V, "id" | "isAdmin" | "publicOnly"> = V) =>
  sql`(EXISTS (SELECT 1 FROM org_user pu WHERE pu.org_id = ${orgId} AND pu.uid = ${uid} AND pu.is_public = 1)
    OR ${viewer.isAdmin} OR (NOT ${viewer.publicOnly} AND ${isOrgMemberSql(orgId, viewer.id)}))`;

// ---- the caller ----

export interface CallerRow {
  user: UserRow;
  tokenId: number | null;
  scope: string | null;
}

const callerOf = (shape: typeof U) => (row: Row): CallerRow => ({
  user: shape.read(row, 0),
  tokenId: row[shape.width] === null ? null : num(row[shape.width]),
  scope: (row[shape.width + 1] as string | null) ?? null,
});

/** The authenticated principal (before sudo) with the presented token's id and scope. */
export const callerByToken = query<CallerRow, Pick<ViewerValues, "v_token" | "v_name">>(
  "callerByToken",
  sql`SELECT ${U.select}, t.id, t.scope FROM user u LEFT JOIN access_token t ON t.token_hash = ${p("v_token")} AND t.uid = u.id
      WHERE u.id = ${SIGNED_IN} LIMIT 1`,
  callerOf(U),
);

/** The same for a basic-auth password sign-in: only here is the password hash read. */
export const callerByPassword = query<CallerRow, Pick<ViewerValues, "v_token" | "v_name">>(
  "callerByPassword",
  sql`SELECT ${U_AUTH.select}, t.id, t.scope FROM user u LEFT JOIN access_token t ON t.token_hash = ${p("v_token")} AND t.uid = u.id
      WHERE u.id = ${SIGNED_IN} LIMIT 1`,
  callerOf(U_AUTH as unknown as typeof U),
);

/** An account (user or organization) by lower-case name, whatever the caller sees: the sudo target, an admin's lookup. */
export const accountByLowerName = query<UserRow, { name: string }>("accountByLowerName", sql`SELECT ${U.select} FROM user u WHERE u.lower_name = ${p("name")} LIMIT 1`, (r) => U.read(r, 0));

// ---- accounts by name ----

export interface AccountSeen {
  u: UserRow;
  visible: boolean;
}

const accountSeen = (r: Row): AccountSeen => ({ u: U.read(r, 0), visible: num(r[U.width]) === 1 });

/** A user or organization by name, with whether the viewer may see it (token limits by its type). */
export const accountByName = viewerQuery<AccountSeen, { name: string }>(
  "accountByName",
  sql`SELECT ${U.select}, ${visibleSql(sql`u.id`, sql`u.visibility`, sql`u.type`, { viewer: VC })} FROM user u ${VIEWER_JOIN} WHERE u.lower_name = ${p("name")} LIMIT 1`,
  accountSeen,
);

/**
 * SQL: the viewer may name this account as the target of a write (a statement joining the viewer
 * row): the route's scopes gate the write, so only public-only limits the accounts it reaches (no
 * limit by the account's kind: `unlimited`).
 */
export const writeTargetVisibleSql = (id: SQL, visibility: SQL) =>
  sql`(${visibility} = 0 OR (NOT ${VC.publicOnly} AND ${visibleSql(id, visibility, "user", { unlimited: true, viewer: VC })}))`;

/** `accountByName` for the target of a write (`writeTargetVisibleSql`). */
export const accountByNameForWrite = viewerQuery<AccountSeen, { name: string }>(
  "accountByNameForWrite",
  sql`SELECT ${U.select}, ${writeTargetVisibleSql(sql`u.id`, sql`u.visibility`)} FROM user u ${VIEWER_JOIN} WHERE u.lower_name = ${p("name")} LIMIT 1`,
  accountSeen,
);

/** An individual (not an organization) by name — the admin routes act on accounts. */
export const individualByName = query<UserRow, { name: string }>("individualByName", sql`SELECT ${U.select} FROM user u WHERE u.lower_name = ${p("name")} AND u.type = 0 LIMIT 1`, (r) => U.read(r, 0));

/** A user row by id (after writes, to answer with the stored state). */
export const userById = query<UserRow, { id: number }>("userById", sql`SELECT ${U.select} FROM user u WHERE u.id = ${p("id")}`, (r) => U.read(r, 0));

/** An individual the viewer may see, by name (a user the caller may not see answers as a missing one, issue 8 A.5). */
export const visibleIndividualByName = viewerQuery<UserRow, { name: string }>(
  "visibleIndividualByName",
  sql`SELECT ${U.select} FROM user u ${VIEWER_JOIN} WHERE u.lower_name = ${p("name")} AND u.type = 0 AND ${visibleSql(sql`u.id`, sql`u.visibility`, "user", { viewer: VC })} LIMIT 1`,
  (r) => U.read(r, 0),
);

/** An organization by name with the viewer's relation to it (Gitea's orgAssignment reads). */
export interface OrgSeen {
  org: UserRow;
  /** The viewer may see it (else it answers as missing). */
  visible: boolean;
  isOwner: boolean;
  isMember: boolean;
}

/** The organization :name (never an individual) with whether the viewer sees, owns and belongs to it. */
export const orgByName = viewerQuery<OrgSeen, { name: string }>(
  "orgByName",
  sql`SELECT ${U.select}, ${visibleSql(sql`u.id`, sql`u.visibility`, "org", { viewer: VC })}, ${isOrgOwnerSql(sql`u.id`, VC.id)}, ${isOrgMemberSql(sql`u.id`, VC.id)}
      FROM user u ${VIEWER_JOIN} WHERE u.lower_name = ${p("name")} AND u.type = 1 LIMIT 1`,
  (r) => ({ org: U.read(r, 0), visible: bool(r[U.width]), isOwner: bool(r[U.width + 1]), isMember: bool(r[U.width + 2]) }),
);

/** SQL: the id of the organization :org (NULL when there is none). */
export const ORG_ID = sql`(SELECT id FROM user WHERE lower_name = ${p("org")} AND type = 1)`;

/** Sets the given columns of account :id (individual or organization): one statement per set of columns. */
export const updateAccount = shaped((keys: readonly InsertKey<typeof user>[]) =>
  command<Partial<UserRow> & { id: number }>(`updateAccount(${keys})`, sql`UPDATE user SET ${setList(user, keys)} WHERE id = ${p("id")}`),
);
