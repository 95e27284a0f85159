/**
 * Collaborators, reviewers and assignees of the repository at :owner/:name: statements built
 * once, each reading the viewer from the viewer CTE; the permission of user :login is computed
 * with the same permission fragments, for that user instead of the viewer.
 */
import { sql, type SQL } from "drizzle-orm";
import { publicOnlyViewer, userVisibleSql, type ViewerSql } from "../../lib/auth.ts";
import { ACCESS, UNIT, type RepoFacts } from "../../lib/permissions.ts";
import { bool, command, num, p, rowExists, viewerQuery, type Row, whileExists } from "../sql.ts";
import { membershipSeenSql, userCols, type UserRow } from "./accounts.ts";
import { factsList, factsOf, REPO_ID_BY_PATH, SEEN_REPO_ID, VIEWER, type RepoPath } from "./repos.ts";

// The user table keeps its name (no alias), as the permission fragments expect.
const U = userCols("user");
const V = VIEWER;
const userRow = (r: Row) => U.read(r, 0);
const count = (r: Row) => num(r[0]);

/** SQL: the listed user is visible to the viewer (lists never show a user the caller may not see). */
const LISTED_VISIBLE = userVisibleSql(V, sql`user.id`, sql`user.visibility`, "user");

/** None of a hidden repository's collaborations is visited (`SEEN_REPO_ID`). */
const COLLABORATORS = sql`FROM collaboration JOIN user ON user.id = collaboration.user_id WHERE collaboration.repo_id = ${SEEN_REPO_ID} AND ${LISTED_VISIBLE}`;

/** The collaborators of the repository the viewer may see, oldest collaboration first, one page, and their count. */
export const collaboratorsOfRepo = viewerQuery<UserRow, RepoPath & { limit: number; offset: number }>(
  "collaboratorsOfRepo",
  sql`SELECT ${U.select} ${COLLABORATORS} ORDER BY collaboration.id LIMIT ${p("limit")} OFFSET ${p("offset")}`,
  userRow,
);
export const collaboratorCountOfRepo = viewerQuery<number, RepoPath>("collaboratorCountOfRepo", sql`SELECT COUNT(*) ${COLLABORATORS}`, count);

/** User :login as the viewer may see it (one it may not see is absent), with what a route asks about it (`extra`). */
const userAt = (viewer: ViewerSql, extra: SQL = sql``) =>
  sql`SELECT ${U.select}${extra} FROM user WHERE user.lower_name = ${p("login")} AND ${userVisibleSql(viewer, sql`user.id`, sql`user.visibility`, sql`user.type`)} LIMIT 1`;

/** User :login and whether it collaborates on the repository (GET …/collaborators/{collaborator}). */
export const collaboratorAt = viewerQuery<{ u: UserRow; isCollaborator: boolean }, RepoPath & { login: string }>(
  "collaboratorAt",
  userAt(V, sql`, EXISTS (SELECT 1 FROM collaboration c WHERE c.repo_id = ${REPO_ID_BY_PATH} AND c.user_id = user.id)`),
  (r) => ({ u: U.read(r, 0), isCollaborator: bool(r[U.width]) }),
);

/**
 * The target of a collaborator write (only public-only limits it), with whether a block forbids
 * adding it: either way between it and the viewer (the spec), or either way between it and the
 * repository owner (Gitea's AddOrUpdateCollaborator). A block of a site admin counts for nothing,
 * as in Gitea's IsUserBlockedBy (an admin by account, whatever its token).
 */
export const collaboratorForWrite = viewerQuery<{ u: UserRow; blocked: boolean }, RepoPath & { login: string }>(
  "collaboratorForWrite",
  userAt(
    publicOnlyViewer(V),
    sql`, EXISTS (SELECT 1 FROM user_blocking b WHERE (b.blocker_id = user.id AND b.blockee_id = ${V.id} AND NOT COALESCE((SELECT is_admin FROM user WHERE id = ${V.id}), 0))
      OR (b.blocker_id = user.id AND b.blockee_id = (SELECT r.owner_id FROM repository r JOIN user o ON o.id = r.owner_id AND o.is_admin = 0 WHERE r.id = ${REPO_ID_BY_PATH}))
      OR (b.blockee_id = user.id AND NOT user.is_admin AND b.blocker_id IN (${V.id}, (SELECT owner_id FROM repository WHERE id = ${REPO_ID_BY_PATH}))))`,
  ),
  (r) => ({ u: U.read(r, 0), blocked: bool(r[U.width]) }),
);

/** Aborts the write unless repository :repoId and user :uid still exist (`whileExists`). */
export const collaboratorTargetsExist = whileExists<{ repoId: number; uid: number }>(
  "setCollaboratorWhileBoth",
  sql`${rowExists("repository", p("repoId"))} AND ${rowExists("user", p("uid"))}`,
);

/** User :uid collaborates on repository :repoId with :mode (added, or its mode changed). */
export const setCollaborator = command<{ repoId: number; uid: number; mode: number; now: number }>(
  "setCollaborator",
  sql`INSERT INTO collaboration (repo_id, user_id, mode, created_unix, updated_unix) VALUES (${p("repoId")}, ${p("uid")}, ${p("mode")}, ${p("now")}, ${p("now")})
      ON CONFLICT (repo_id, user_id) DO UPDATE SET mode = ${p("mode")}, updated_unix = ${p("now")}`,
);

export const deleteCollaborator = command<{ repoId: number; uid: number }>("deleteCollaborator", sql`DELETE FROM collaboration WHERE repo_id = ${p("repoId")} AND user_id = ${p("uid")}`);

// ---- the permission of user :login ----

/** SQL: the id of user :login. */
const LOGIN_ID = sql`(SELECT id FROM user WHERE lower_name = ${p("login")})`;

/** User :login as the viewer of the permission fragments: no token limits, its own admin and restricted flags. */
const LOGIN: ViewerSql = {
  id: LOGIN_ID,
  publicOnly: sql`0`,
  isAdmin: sql`EXISTS (SELECT 1 FROM user pa WHERE pa.id = ${LOGIN_ID} AND pa.is_admin = 1)`,
  restricted: sql`EXISTS (SELECT 1 FROM user pr WHERE pr.id = ${LOGIN_ID} AND pr.is_restricted = 1)`,
  limited: { repository: sql`0`, organization: sql`0`, user: sql`0` },
};

/** The permission facts of the repository for user :login (read by `factsOf`, as the viewer's). */
export const factsForLogin = viewerQuery<RepoFacts, RepoPath & { login: string }>(
  "factsForLogin",
  sql`SELECT ${factsList(LOGIN)}
      FROM repository JOIN user ON user.id = repository.owner_id WHERE repository.id = ${REPO_ID_BY_PATH} LIMIT 1`,
  (r) => factsOf(r),
);

/** User :login as the viewer may see it (GET …/collaborators/{collaborator}/permission). */
export const loginUser = viewerQuery<UserRow, { login: string }>("collaboratorLogin", userAt(V), userRow);

// ---- assignees and reviewers ----

/**
 * Users with access on the repository (owner, collaborators from `minCollab`, covering teams as
 * `teamCond` says — a team member only where the viewer may see the membership), as a condition on `user`. Its candidates — the owner, the collaborators, the
 * members of the owner organization's teams — are named by id through their indexes first, so
 * the list reads those users, not every user row (test/rules/growth.test.ts: ~35 VM steps more
 * per user of the instance before).
 */
function usersWithAccess(minCollab: number, teamCond: SQL): SQL {
  const rid = REPO_ID_BY_PATH;
  return sql`(user.id IN (SELECT co.owner_id FROM repository co WHERE co.id = ${rid}
      UNION ALL SELECT cc.user_id FROM collaboration cc WHERE cc.repo_id = ${rid}
      UNION ALL SELECT ctu.uid FROM team ct JOIN team_user ctu ON ctu.team_id = ct.id WHERE ct.org_id = (SELECT co2.owner_id FROM repository co2 WHERE co2.id = ${rid}))
    AND user.is_active = 1 AND user.type = 0 AND (
    user.id = (SELECT owner_id FROM repository WHERE id = ${rid})
    OR EXISTS (SELECT 1 FROM collaboration uc WHERE uc.repo_id = ${rid} AND uc.user_id = user.id AND uc.mode >= ${minCollab})
    OR EXISTS (SELECT 1 FROM team ut JOIN team_user utu ON utu.team_id = ut.id
       WHERE utu.uid = user.id AND ut.org_id = (SELECT owner_id FROM repository WHERE id = ${rid})
       AND (ut.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM team_repo utr WHERE utr.team_id = ut.id AND utr.repo_id = ${rid}))
       AND ${teamCond} AND ${membershipSeenSql(sql`ut.org_id`, sql`user.id`)})))`;
}

const TEAM_WRITE = sql`(ut.authorize >= 2 OR EXISTS (SELECT 1 FROM team_unit utu2 WHERE utu2.team_id = ut.id AND utu2.type IN (${UNIT.issues}, ${UNIT.pulls}) AND utu2.access_mode >= 2))`;
const TEAM_READ = sql`(ut.authorize >= 1 OR EXISTS (SELECT 1 FROM team_unit utu2 WHERE utu2.team_id = ut.id AND utu2.type = ${UNIT.pulls} AND utu2.access_mode >= 1))`;

/** Gitea's order of assignees and reviewers: by name (GetOrderByName), a user-owned repository's owner appended last. */
const OWNER_LAST_BY_NAME = sql`user.id = (SELECT owner_id FROM repository WHERE id = ${REPO_ID_BY_PATH}), user.name`;

/** GET …/assignees: users with write access who can be assigned, in Gitea's GetRepoAssignees order. */
export const assigneesOfRepo = viewerQuery<UserRow, RepoPath>(
  "assigneesOfRepo",
  sql`SELECT ${U.select} FROM user WHERE ${usersWithAccess(ACCESS.write, TEAM_WRITE)} AND ${LISTED_VISIBLE} ORDER BY ${OWNER_LAST_BY_NAME}`,
  userRow,
);

/**
 * GET …/reviewers: users with read access by name, a user-owned repository's owner last (Gitea's
 * GetReviewers appends it; the API's poster is 0, so nobody — the caller included — is left out).
 */
export const reviewersOfRepo = viewerQuery<UserRow, RepoPath>(
  "reviewersOfRepo",
  sql`SELECT ${U.select} FROM user WHERE ${usersWithAccess(ACCESS.read, TEAM_READ)} AND ${LISTED_VISIBLE} ORDER BY ${OWNER_LAST_BY_NAME}`,
  userRow,
);
