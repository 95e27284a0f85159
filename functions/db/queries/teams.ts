/**
 * Teams (`/orgs/{org}/teams`, `/user/teams`, `/teams/{id}/…`): the visibility fragment every team
 * read and filter reuses, and the team statements — built once (the search, once per kind of
 * search; an edit, once per set of edited fields), each reading the viewer from the viewer CTE.
 */
import { sql, type SQL } from "drizzle-orm";
import { publicOnlyViewer, userVisibleSql, type ViewerSql } from "../../lib/auth.ts";
import { repoAccessibleSql, type RepoFacts } from "../../lib/permissions.ts";
import { team, type TeamRow } from "../schema.ts";
import { bool, columnsOf, command, guardCommand, insertSql, num, p, query, setList, shaped, str, rowExists, VIEWER_COLUMNS, VIEWER_JOIN, viewerQuery, whileExists, type InsertKey, type Row } from "../sql.ts";
import { isOrgMemberSql, isOrgOwnerSql, membershipSeenSql, ORG_ID, seenAccountId, userCols, type UserRow } from "./accounts.ts";
import { FACTS, factsOf, listStatement, VIEWER } from "./repos.ts";

/**
 * SQL: the viewer may see the team. First, what hides an organization hides everything in it
 * (issue 8 A.1): the team's organization must be visible to the viewer, whatever the team's own
 * visibility. Then spec team rule 1: site admins and org owners see every team; org members see
 * their teams plus limited and public ones; any signed-in user sees public teams. A token limited
 * to public organization data (public-only, or no organization read scope) sees public teams of
 * public organizations only (A.2, A.3).
 */
export function teamVisibleSql(ctx: { viewer: ViewerSql }, t: { id: SQL; orgId: SQL; visibility: SQL }): SQL {
  const v = ctx.viewer;
  const me = v.id;
  const orgVisible = userVisibleSql(v, t.orgId, sql`(SELECT tov.visibility FROM user tov WHERE tov.id = ${t.orgId})`, "org");
  return sql`(${me} IS NOT NULL AND ${orgVisible} AND (
    ${t.visibility} = 'public'
    OR (NOT ${v.limited.organization} AND (
      ${v.isAdmin} OR ${isOrgOwnerSql(t.orgId, me)}
      OR EXISTS (SELECT 1 FROM team_user vtu WHERE vtu.team_id = ${t.id} AND vtu.uid = ${me})
      OR (${t.visibility} = 'limited' AND ${isOrgMemberSql(t.orgId, me)})))))`;
}

// The tables keep their names (no alias): the fragments above alias their own subqueries `t`, `u`, `m`.
const T = columnsOf(team, "team");
const ORG = userCols("og");
const U = userCols("user");
const V = VIEWER;
const count = (r: Row) => num(r[0]);
const userRow = (r: Row) => U.read(r, 0);

/** SQL: the viewer may see the `team` row. */
const VISIBLE = teamVisibleSql({ viewer: V }, { id: sql`team.id`, orgId: sql`team.org_id`, visibility: sql`team.visibility` });

/** One row per unit of the team, as JSON, for the converter. */
const UNITS_JSON = sql`(SELECT json_group_array(json_array(u.type, u.access_mode)) FROM team_unit u WHERE u.team_id = team.id)`;

/** A team row with its units as JSON (`toTeam`'s arguments). */
export interface TeamWithUnits {
  t: TeamRow;
  units: string;
}

const withUnits = (r: Row): TeamWithUnits => ({ t: T.read(r, 0), units: str(r[T.width]) });

// ---- lists ----

/** How GET /orgs/{org}/teams/search matches :pattern (a LIKE pattern): not at all, by name, or by name or description. */
export type TeamSearch = "none" | "name" | "nameOrDescription";

/** Gitea's SearchTeam order: the Owners team first, then by lower-cased name (id breaks ties across organizations). */
const TEAM_ORDER = sql`CASE WHEN team.name = 'Owners' THEN '' ELSE team.lower_name END, team.id`;

const SEARCH: Record<TeamSearch, SQL> = {
  none: sql``,
  name: sql` AND team.lower_name LIKE ${p("pattern")} ESCAPE '\\'`,
  nameOrDescription: sql` AND (team.lower_name LIKE ${p("pattern")} ESCAPE '\\' OR lower(team.description) LIKE ${p("pattern")} ESCAPE '\\')`,
};

/** The teams of organization :org the viewer may see, in SearchTeam's order, one page, and their count. */
export const teamsOfOrg = shaped((search: TeamSearch) => {
  // none of a hidden organization's teams is visited (`seenAccountId`)
  const from = sql`FROM team WHERE team.org_id = ${seenAccountId("org", true)} AND ${VISIBLE}${SEARCH[search]}`;
  return {
    page: viewerQuery<TeamWithUnits, { org: string; pattern?: string; limit: number; offset: number }>(
      `teamsOfOrg(${search})`,
      sql`SELECT ${T.select}, ${UNITS_JSON} ${from} ORDER BY ${TEAM_ORDER} LIMIT ${p("limit")} OFFSET ${p("offset")}`,
      withUnits,
    ),
    total: viewerQuery<number, { org: string; pattern?: string }>(`teamCountOfOrg(${search})`, sql`SELECT COUNT(*) ${from}`, count),
  };
});

const MINE = sql`team.id IN (SELECT team_id FROM team_user WHERE uid = ${V.id}) AND ${VISIBLE}`;

/** GET /user/teams: the viewer's teams it may see, with their organization, in SearchTeam's order (ListUserTeams), one page. */
export const myTeams = viewerQuery<TeamWithUnits & { org: UserRow }, { limit: number; offset: number }>(
  "myTeams",
  sql`SELECT ${T.select}, ${UNITS_JSON}, ${ORG.select} FROM team JOIN user og ON og.id = team.org_id WHERE ${MINE}
      ORDER BY ${TEAM_ORDER} LIMIT ${p("limit")} OFFSET ${p("offset")}`,
  (r) => ({ ...withUnits(r), org: ORG.read(r, T.width + 1) }),
);

export const myTeamCount = viewerQuery<number>("myTeamCount", sql`SELECT COUNT(*) FROM team WHERE ${MINE}`, count);

// ---- the team in the path ----

/** Team :id with its organization and the viewer's relation to both (Gitea's team assignment). */
export interface TeamFacts extends TeamWithUnits {
  org: UserRow;
  visible: boolean;
  isOwner: boolean;
  isOrgMember: boolean;
  isTeamMember: boolean;
}

export const teamFacts = viewerQuery<TeamFacts, { id: number }>(
  "teamFacts",
  sql`SELECT ${T.select}, ${UNITS_JSON}, ${ORG.select}, ${VISIBLE}, ${isOrgOwnerSql(sql`team.org_id`, V.id)}, ${isOrgMemberSql(sql`team.org_id`, V.id)},
        EXISTS (SELECT 1 FROM team_user ttu WHERE ttu.team_id = team.id AND ttu.uid = ${V.id})
      FROM team JOIN user og ON og.id = team.org_id WHERE team.id = ${p("id")} LIMIT 1`,
  (r) => {
    const k = T.width + 1 + ORG.width;
    return { ...withUnits(r), org: ORG.read(r, T.width + 1), visible: bool(r[k]), isOwner: bool(r[k + 1]), isOrgMember: bool(r[k + 2]), isTeamMember: bool(r[k + 3]) };
  },
);

/** Team :id with its units, as stored (at the end of a write batch). */
export const teamById = query<TeamWithUnits, { id: number }>("teamById", sql`SELECT ${T.select}, ${UNITS_JSON} FROM team WHERE team.id = ${p("id")}`, withUnits);

// ---- create, edit, delete ----

/** The team created earlier in the batch: organization :orgId, lower-cased name :lowerName. */
const NEW_TEAM = sql`(SELECT id FROM team WHERE org_id = ${p("orgId")} AND lower_name = ${p("lowerName")})`;

export type TeamValues = Pick<TeamRow, "orgId" | "name" | "lowerName" | "description" | "authorize" | "includesAllRepositories" | "canCreateOrgRepo" | "visibility" | "createdUnix" | "updatedUnix">;
const INSERTED: InsertKey<typeof team>[] = ["orgId", "name", "lowerName", "description", "authorize", "includesAllRepositories", "canCreateOrgRepo", "visibility", "createdUnix", "updatedUnix"];

/**
 * :units = JSON `[[type, access mode], …]`, inserted in that order for team :teamId of organization
 * :orgId — only while the team exists (an edit racing a deletion leaves no orphan units).
 */
const insertUnits = (teamId: SQL) =>
  sql`INSERT INTO team_unit (org_id, team_id, type, access_mode)
      SELECT ${p("orgId")}, ${teamId}, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]') FROM json_each(${p("units")}) j
      WHERE EXISTS (SELECT 1 FROM team WHERE id = ${teamId}) ORDER BY j.key`;

/** POST /orgs/{org}/teams: the team, its units, the organization's team count, the team as stored. */
export const CREATE_TEAM = {
  /** The organization :orgId still exists (`whileExists`). */
  orgExists: whileExists<{ orgId: number }>("createTeamWhileOrg", sql`EXISTS (SELECT 1 FROM user WHERE id = ${p("orgId")} AND type = 1)`),
  team: command<TeamValues>("createTeam", insertSql(team, INSERTED)),
  units: command<{ orgId: number; lowerName: string; units: string }>("createTeamUnits", insertUnits(NEW_TEAM)),
  orgCount: command<{ orgId: number }>("createTeamOrgCount", sql`UPDATE user SET num_teams = num_teams + 1 WHERE id = ${p("orgId")}`),
  row: query<TeamWithUnits, { orgId: number; lowerName: string }>("createdTeam", sql`SELECT ${T.select}, ${UNITS_JSON} FROM team WHERE team.id = ${NEW_TEAM}`, withUnits),
};

/** Sets the given fields of team :id: one statement per set of fields. */
export const updateTeam = shaped((keys: readonly InsertKey<typeof team>[]) =>
  command<Partial<TeamValues> & { id: number }>(`updateTeam(${keys})`, sql`UPDATE team SET ${setList(team, keys)} WHERE id = ${p("id")}`),
);

/** Replaces the units of team :id (organization :orgId) with :units (JSON, as `CREATE_TEAM.units`). */
export const REPLACE_UNITS = [
  command<{ id: number }>("teamUnitsClear", sql`DELETE FROM team_unit WHERE team_id = ${p("id")}`),
  command<{ id: number; orgId: number; units: string }>("teamUnitsSet", insertUnits(sql`${p("id")}`)),
] as const;

/**
 * SQL: user :uid's membership of organization :orgId ends when no team of the organization has
 * :uid any more (run after the team rows are gone).
 */
const LEAVE_ORG_IF_NO_TEAM = sql`DELETE FROM org_user WHERE org_id = ${p("orgId")} AND uid = ${p("uid")}
  AND NOT EXISTS (SELECT 1 FROM team_user x WHERE x.org_id = ${p("orgId")} AND x.uid = ${p("uid")})`;

/** The recounts after a membership change of team :id in organization :orgId. */
const MEMBER_COUNTS = [
  command<{ id: number }>("teamMemberCount", sql`UPDATE team SET num_members = (SELECT COUNT(*) FROM team_user WHERE team_id = ${p("id")}) WHERE id = ${p("id")}`),
  command<{ orgId: number }>("orgMemberCount", sql`UPDATE user SET num_members = (SELECT COUNT(*) FROM org_user WHERE org_id = ${p("orgId")}) WHERE id = ${p("orgId")}`),
] as const;

/**
 * DELETE /teams/{id}: team :id of organization :orgId with its units, repositories and members;
 * members in no other team of the organization leave it (decided in SQL, so a member added
 * meanwhile is not missed).
 */
export const DELETE_TEAM = [
  command<{ id: number }>("deleteTeamUnits", sql`DELETE FROM team_unit WHERE team_id = ${p("id")}`),
  command<{ id: number }>("deleteTeamRepos", sql`DELETE FROM team_repo WHERE team_id = ${p("id")}`),
  command<{ id: number; orgId: number }>(
    "deleteTeamLeaveOrg",
    sql`DELETE FROM org_user WHERE org_id = ${p("orgId")} AND uid IN (SELECT uid FROM team_user WHERE team_id = ${p("id")})
      AND NOT EXISTS (SELECT 1 FROM team_user x WHERE x.org_id = ${p("orgId")} AND x.uid = org_user.uid AND x.team_id <> ${p("id")})`,
  ),
  command<{ id: number }>("deleteTeamMembers", sql`DELETE FROM team_user WHERE team_id = ${p("id")}`),
  command<{ id: number }>("deleteTeam", sql`DELETE FROM team WHERE id = ${p("id")}`),
  command<{ orgId: number }>("deleteTeamOrgCounts", sql`UPDATE user SET num_teams = num_teams - 1, num_members = (SELECT COUNT(*) FROM org_user WHERE org_id = ${p("orgId")}) WHERE id = ${p("orgId")}`),
] as const;

// ---- members ----

/** A team's roster shows a concealed membership only to whom the organization's member list shows it. */
const membershipSeen = (tu: string) => membershipSeenSql(sql.raw(`${tu}.org_id`), sql.raw(`${tu}.uid`));

const MEMBERS = sql`FROM team_user JOIN user ON user.id = team_user.uid WHERE team_user.team_id = ${p("id")} AND ${userVisibleSql(V, sql`user.id`, sql`user.visibility`, "user")}
  AND ${membershipSeen("team_user")}`;

/** The members of team :id the viewer may see, one page, in Gitea's GetTeamMembers order (`full_name, name`). */
export const membersOfTeam = viewerQuery<UserRow, { id: number; limit: number; offset: number }>(
  "membersOfTeam",
  sql`SELECT ${U.select} ${MEMBERS} ORDER BY user.full_name, user.name LIMIT ${p("limit")} OFFSET ${p("offset")}`,
  userRow,
);
export const memberCountOfTeam = viewerQuery<number, { id: number }>("memberCountOfTeam", sql`SELECT COUNT(*) ${MEMBERS}`, count);

/** User :name and whether it is in team :id. */
export interface MemberRow {
  u: UserRow;
  inTeam: boolean;
}

/** User :name, when the viewer may see it (a user it may not see is absent), and whether it is in team :id. */
const memberOf = (visible: SQL, extra: SQL = sql``, membership: SQL = sql``) =>
  sql`SELECT ${U.select}, EXISTS (SELECT 1 FROM team_user m WHERE m.team_id = ${p("id")} AND m.uid = user.id${membership})${extra}
      FROM user WHERE user.lower_name = ${p("name")} AND ${visible} LIMIT 1`;

const memberRow = (r: Row): MemberRow => ({ u: U.read(r, 0), inTeam: bool(r[U.width]) });

export const memberOfTeam = viewerQuery<MemberRow, { id: number; name: string }>(
  "memberOfTeam",
  // a concealed membership the viewer may not see answers as no membership
  memberOf(userVisibleSql(V, sql`user.id`, sql`user.visibility`, sql`user.type`), sql``, sql` AND ${membershipSeen("m")}`),
  memberRow,
);

/** The same for the target of a write (only public-only limits it); with whether the team's organization blocks the user. */
export const memberOfTeamForWrite = viewerQuery<MemberRow & { blocked: boolean }, { id: number; name: string }>(
  "memberOfTeamForWrite",
  memberOf(
    userVisibleSql(publicOnlyViewer(V), sql`user.id`, sql`user.visibility`, sql`user.type`),
    // a block of a site admin counts for nothing (Gitea's IsUserBlockedBy)
    sql`, EXISTS (SELECT 1 FROM user_blocking b WHERE b.blocker_id = (SELECT org_id FROM team WHERE id = ${p("id")}) AND b.blockee_id = user.id AND NOT user.is_admin)`,
  ),
  (r) => ({ ...memberRow(r), blocked: bool(r[U.width + 1]) }),
);

/** PUT /teams/{id}/members/{username}: user :uid joins team :id and organization :orgId. */
export const ADD_MEMBER = [
  whileExists<{ id: number; uid: number }>("addTeamMemberWhileBoth", sql`${rowExists("team", p("id"))} AND ${rowExists("user", p("uid"))}`),
  command<{ id: number; orgId: number; uid: number }>("addTeamMember", sql`INSERT INTO team_user (org_id, team_id, uid) VALUES (${p("orgId")}, ${p("id")}, ${p("uid")}) ON CONFLICT DO NOTHING`),
  command<{ orgId: number; uid: number }>("addTeamMemberOrg", sql`INSERT INTO org_user (org_id, uid) VALUES (${p("orgId")}, ${p("uid")}) ON CONFLICT DO NOTHING`),
  ...MEMBER_COUNTS,
] as const;

/** DELETE /teams/{id}/members/{username}: user :uid leaves team :id (and organization :orgId when in no other team of it). */
export const REMOVE_MEMBER = [
  command<{ id: number; uid: number }>("removeTeamMember", sql`DELETE FROM team_user WHERE team_id = ${p("id")} AND uid = ${p("uid")}`),
  command<{ orgId: number; uid: number }>("removeTeamMemberOrg", LEAVE_ORG_IF_NO_TEAM),
  ...MEMBER_COUNTS,
] as const;

/** Aborts the batch when team :id has at most one member left (put before REMOVE_MEMBER for the Owners team). */
export const lastOwnerGuard = guardCommand<{ id: number }>("removeTeamMemberLastOwner", sql`(SELECT COUNT(*) FROM team_user WHERE team_id = ${p("id")}) <= 1`);

// ---- repositories ----

/** SQL: the `repository` row is assigned to team :id (or the team includes all repositories of its org). */
const IN_TEAM = sql`(repository.owner_id = (SELECT org_id FROM team WHERE id = ${p("id")}) AND ((SELECT includes_all_repositories FROM team WHERE id = ${p("id")}) = 1
    OR EXISTS (SELECT 1 FROM team_repo itr WHERE itr.team_id = ${p("id")} AND itr.repo_id = repository.id)))`;

/** GET /teams/{id}/repos: the repositories of team :id the viewer may access, by name, one page, and their count. */
export const reposOfTeam = listStatement<{ id: number }>(
  "reposOfTeam",
  sql`FROM repository JOIN user ON user.id = repository.owner_id ${VIEWER_JOIN}
    WHERE ${IN_TEAM} AND ${repoAccessibleSql(VIEWER_COLUMNS, sql`repository.id`, sql`repository.owner_id`, sql`repository.is_private`, sql`user.visibility`)}`,
  [{ expr: sql`repository.lower_name` }],
);

/** Repository :org/:repo with the viewer's permission facts, and whether it is team :id's. */
export const teamRepoAt = viewerQuery<{ facts: RepoFacts; inTeam: boolean }, { id: number; org: string; repo: string }>(
  "teamRepoAt",
  sql`SELECT ${IN_TEAM}, ${FACTS} FROM repository JOIN user ON user.id = repository.owner_id
      WHERE user.lower_name = ${p("org")} AND repository.lower_name = ${p("repo")} LIMIT 1`,
  (r) => ({ inTeam: bool(r[0]), facts: factsOf(r, 1) }),
);

/** Whether repository :org/:repo is team :id's (assigned, or the team includes all of its organization's repositories). */
export const teamHasRepoAt = query<boolean, { id: number; org: string; repo: string }>(
  "teamHasRepoAt",
  sql`SELECT ${IN_TEAM} FROM repository JOIN user ON user.id = repository.owner_id WHERE user.lower_name = ${p("org")} AND repository.lower_name = ${p("repo")} LIMIT 1`,
  (r) => bool(r[0]),
);

/** Team :id's repository count, recounted. */
const REPO_COUNT = command<{ id: number }>("teamRepoCount", sql`UPDATE team SET num_repos = (SELECT COUNT(*) FROM team_repo WHERE team_id = ${p("id")}) WHERE id = ${p("id")}`);

/** PUT / DELETE /teams/{id}/repos/{org}/{repo}: repository :repoId joins or leaves team :id (organization :orgId). */
export const TEAM_REPO = {
  add: [
    whileExists<{ id: number; repoId: number }>("addTeamRepoWhileBoth", sql`${rowExists("team", p("id"))} AND ${rowExists("repository", p("repoId"))}`),
    command<{ id: number; orgId: number; repoId: number }>("addTeamRepo", sql`INSERT INTO team_repo (org_id, team_id, repo_id) VALUES (${p("orgId")}, ${p("id")}, ${p("repoId")}) ON CONFLICT DO NOTHING`),
    REPO_COUNT,
  ],
  remove: [command<{ id: number; repoId: number }>("removeTeamRepo", sql`DELETE FROM team_repo WHERE team_id = ${p("id")} AND repo_id = ${p("repoId")}`), REPO_COUNT],
} as const;
