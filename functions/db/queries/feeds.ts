/**
 * Activity feeds (Gitea models/activities GetFeeds): the filters every feed applies, written once
 * over a ViewerSql, and the feed statements of users, organizations and repositories built once
 * per filter shape over the viewer CTE, and of teams.
 */
import { sql, type SQL } from "drizzle-orm";
import { userVisibleSql, type ViewerSql } from "../../lib/auth.ts";
import { codeReadableSql, repoAccessibleSql } from "../../lib/permissions.ts";
import { action } from "../schema.ts";
import { columnsOf, num, p, shaped, viewerQuery, viewerQueryWith, type Row } from "../sql.ts";
import { isOrgMemberSql, seenAccountId, userCols, type UserRow } from "./accounts.ts";
import { LIST_FACTS, packedFactsOf, SEEN_REPO_ID, VIEWER, type ListedRepo, type RepoPath } from "./repos.ts";
import { teamVisibleSql } from "./teams.ts";

/**
 * SQL: the actor of the `action` row may appear to the viewer (Gitea's ActivityQueryCondition): site
 * admins see every actor; others see public and limited actors, themselves, and `also` (the
 * organization of an org feed, the organizations of the user of a user feed) — and never an
 * account they may not see.
 */
export function actorVisibleSql(v: ViewerSql, also?: SQL): SQL {
  const gitea = sql`(CASE WHEN ${v.id} IS NULL THEN au.visibility = 0
    ELSE (${v.isAdmin} OR au.visibility IN (0, 1) OR au.id = ${v.id}${also ? sql` OR ${also}` : sql``}) END)`;
  return sql`EXISTS (SELECT 1 FROM user au WHERE au.id = "action"."act_user_id" AND ${gitea} AND ${userVisibleSql(v, sql`au.id`, sql`au.visibility`, sql`au.type`)})`;
}

/**
 * SQL: the viewer may access the repository of this activity row (the filter every feed applies) —
 * checked per row through the primary key, never by listing every accessible repository.
 */
export const accessibleRepoSql = (v: ViewerSql, repoId: SQL) => sql`EXISTS (SELECT 1 FROM repository r WHERE r.id = ${repoId} AND ${repoAccessibleSql(v, sql`r.id`, sql`r.owner_id`, sql`r.is_private`)})`;

/**
 * SQL: the activity row shows no code the viewer may not read — its commits, tags and branches
 * (`commit_repo`, `push_tag`, `delete_tag`, `delete_branch`) only to callers who may read the
 * repository's code unit, as its code routes decide (Gitea shows them to anyone who may access the
 * repository through any unit, an issues-only team member included). :codeDisabled is 1 when the
 * instance disables the code unit.
 */
const CODE_OPS = sql.raw([5, 9, 16, 17].join(", "));
const showsCode = (v: ViewerSql) => sql`("action"."op_type" NOT IN (${CODE_OPS}) OR ${codeReadableSql(v, sql`"action"."repo_id"`, sql`${p("codeDisabled")}`)})`;

/**
 * SQL: an activity row recorded while its repository was private (`is_private`, which a repository
 * made public does not clear) shows only to callers who could access the repository were it still
 * private — its owner, collaborators, teams and site admins — so its private history (commits of
 * deleted branches, force-pushed ones, old names) does not become public with it. Gitea's
 * repository feed shows such rows to anyone who may read the repository now.
 */
const privateEntryVisible = (v: ViewerSql) =>
  sql`("action"."is_private" = 0 OR EXISTS (SELECT 1 FROM repository pr WHERE pr.id = "action"."repo_id" AND ${repoAccessibleSql(v, sql`pr.id`, sql`pr.owner_id`, sql`1`)}))`;

/** SQL: the `date` day filter on action rows, [:dayStart, :dayEnd). */
const DAY = sql` AND "action"."created_unix" >= ${p("dayStart")} AND "action"."created_unix" < ${p("dayEnd")}`;

const A = columnsOf(action, "action");
const ACTOR = userCols("actu");
export type ActionRow = ReturnType<typeof A.read>;

/** An activity row with its actor. */
export interface FeedRow {
  a: ActionRow;
  actUser: UserRow;
}

/** One page of a feed: the actions, their count, and the facts of their repositories. */
export interface FeedValues {
  limit: number;
  offset: number;
  /** 1 when the instance disables the code unit (`showsCode`). */
  codeDisabled: number;
  dayStart?: number;
  dayEnd?: number;
}

/** The statements of one feed whose rows `where` selects (SQL over `action`, reading the viewer CTE). */
function feedStatements<K extends Record<string, unknown>>(name: string, filter: SQL) {
  const where = sql`${filter} AND ${showsCode(VIEWER)} AND ${privateEntryVisible(VIEWER)}`;
  const page = sql`ORDER BY "action"."created_unix" DESC, "action"."id" DESC LIMIT ${p("limit")} OFFSET ${p("offset")}`;
  return {
    actions: viewerQuery<FeedRow, K & FeedValues>(
      `${name}Actions`,
      sql`SELECT ${A.select}, ${ACTOR.select} FROM action JOIN user actu ON actu.id = "action"."act_user_id" WHERE ${where} ${page}`,
      (r: Row) => ({ a: A.read(r, 0), actUser: ACTOR.read(r, A.width) }),
    ),
    total: viewerQuery<number, K & Omit<FeedValues, "limit" | "offset">>(`${name}Count`, sql`SELECT COUNT(*) FROM action WHERE ${where}`, (r) => num(r[0])),
    // The page's repositories, and the parents of the forks among them (a feed's repository is
    // rendered as GET renders it).
    repos: viewerQueryWith<ListedRepo, K & FeedValues>(
      `${name}Repos`,
      sql`feed_repos AS MATERIALIZED (SELECT "action"."repo_id" AS rid FROM action WHERE ${where} ${page})`,
      sql`SELECT ${LIST_FACTS} FROM repository JOIN user ON user.id = repository.owner_id WHERE repository.id IN (SELECT rid FROM feed_repos
        UNION SELECT ff.fork_id FROM feed_repos CROSS JOIN repository ff ON ff.id = feed_repos.rid WHERE ff.is_fork = 1)`,
      (r) => packedFactsOf(r),
    ),
  };
}

const V = VIEWER;

/*
 * The account, repository or team a feed belongs to is looked up as the viewer may see it (NULL
 * otherwise): none of a hidden one's actions is visited (seenAccountId, SEEN_REPO_ID).
 */
const SEEN_TEAM_ORG = sql`(SELECT ft.org_id FROM team ft WHERE ft.id = ${p("id")} AND ${teamVisibleSql({ viewer: V }, { id: sql`ft.id`, orgId: sql`ft.org_id`, visibility: sql`ft.visibility` })})`;

/** GET /users/{username}/activities/feeds: user :name's feed; private entries only for the user and admins. */
export const userFeed = shaped((s: { performedBy: boolean; day: boolean }) => {
  const uid = seenAccountId("name");
  const where = sql`"action"."user_id" = ${uid} AND ${accessibleRepoSql(V, sql`"action"."repo_id"`)}
    AND ("action"."is_private" = 0 OR ${V.isAdmin} OR ${uid} = ${V.id})
    AND ${actorVisibleSql(V, sql`(au.type = 1 AND au.id IN (SELECT org_id FROM team_user WHERE uid = ${uid}))`)}${s.performedBy ? sql` AND "action"."act_user_id" = ${uid}` : sql``}${s.day ? DAY : sql``}`;
  return feedStatements<{ name: string }>(`userFeed(${s.performedBy},${s.day})`, where);
});

/** GET /orgs/{org}/activities/feeds: organization :name's feed; private entries for members and admins. */
export const orgFeed = shaped((day: boolean) => {
  const oid = seenAccountId("name", true);
  const where = sql`"action"."user_id" = ${oid} AND ${accessibleRepoSql(V, sql`"action"."repo_id"`)}
    AND ("action"."is_private" = 0 OR ${V.isAdmin} OR ${isOrgMemberSql(oid, V.id)})
    AND ${actorVisibleSql(V, sql`au.id = ${oid}`)}${day ? DAY : sql``}`;
  return feedStatements<{ name: string }>(`orgFeed(${day})`, where);
});

/**
 * GET /repos/{owner}/{repo}/activities/feeds: one row per action, the actor's own copy (Gitea's
 * activityQueryCondition: `user_id = act_user_id` — its `id` and `user_id` are the actor's).
 */
export const repoFeed = shaped((day: boolean) => {
  const where = sql`"action"."repo_id" = ${SEEN_REPO_ID} AND "action"."user_id" = "action"."act_user_id"
    AND ${actorVisibleSql(V)}${day ? DAY : sql``}`;
  return feedStatements<RepoPath>(`repoFeed(${day})`, where);
});

/** GET /teams/{id}/activities/feeds: the activity of team :id's organization in the team's repositories. */
export const teamFeed = shaped((day: boolean) => {
  const org = SEEN_TEAM_ORG;
  const teamRepoIds = sql`(SELECT r.id FROM repository r WHERE r.owner_id = ${org}
    AND ((SELECT includes_all_repositories FROM team WHERE id = ${p("id")}) = 1 OR EXISTS (SELECT 1 FROM team_repo itr WHERE itr.team_id = ${p("id")} AND itr.repo_id = r.id)))`;
  const where = sql`"action"."repo_id" IN ${teamRepoIds} AND ${accessibleRepoSql(V, sql`"action"."repo_id"`)}
    AND "action"."user_id" = ${org} AND ${actorVisibleSql(V, sql`au.id = ${org}`)}${day ? DAY : sql``}`;
  return feedStatements<{ id: number }>(`teamFeed(${day})`, where);
});
