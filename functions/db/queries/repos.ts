/**
 * Repositories as the viewer sees them: the permission facts of a repository by path, by id, by
 * rename redirect, and of a fork's parent — built once, each reading the viewer from the viewer
 * CTE (`V`), so a request binds only the token, the names and the path.
 */
import { sql, type SQL } from "drizzle-orm";
import { repoAccessibleSql, repoFactsColumns, type RepoFacts } from "../../lib/permissions.ts";
import type { ViewerSql } from "../../lib/auth.ts";
import type { Db } from "../client.ts";
import { repository, type RepositoryRow } from "../schema.ts";
import { columnsOf, command, num, numOrNull, p, str, V, VIEWER_COLUMNS, VIEWER_JOIN, viewerQuery, query, type Row, type Statement, type ViewerValues } from "../sql.ts";
import { userCols } from "./accounts.ts";
import { repoCascadeSql } from "./cascade.ts";

/** The viewer CTE as the permission fragments' ViewerSql. */
export const VIEWER: ViewerSql = { id: V.id, isAdmin: V.isAdmin, publicOnly: V.publicOnly, restricted: V.restricted, limited: V.limited };

const R = columnsOf(repository, "repository");
const O = userCols("user");
/** The select list of RepoFacts over `repository` joined with its owner `user`, for `viewer` (read by `factsOf`). */
export const factsList = (viewer: ViewerSql) => {
  const F = repoFactsColumns(viewer);
  return sql`${R.select}, ${O.select}, ${F.ownerVisible}, ${F.collabMode}, ${F.isOrgOwner}, ${F.teamAccess}, ${F.units}`;
};
/** The facts for the viewer of the viewer CTE. */
export const FACTS = factsList(VIEWER);
/** `FACTS` for a statement that joins the viewer row (`VIEWER_JOIN`). */
export const FACTS_JOINED = factsList(VIEWER_COLUMNS);

export function factsOf(r: Row, at = 0): RepoFacts {
  const k = at + R.width + O.width;
  return {
    repo: R.read(r, at),
    owner: { ...O.read(r, at + R.width), passwd: "", passwdHashAlgo: "" },
    ownerVisible: num(r[k]),
    collabMode: numOrNull(r[k + 1]),
    isOrgOwner: num(r[k + 2]),
    teamAccess: str(r[k + 3]),
    units: str(r[k + 4]),
  };
}

/** SQL: the id of the repository at :owner/:name (case-insensitive names, bound lower-cased). */
export const REPO_ID_BY_PATH = sql`(SELECT r.id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")})`;

export type RepoPath = {
  owner: string;
  name: string;
};

export interface MirrorTimes {
  intervalMs: number;
  updatedUnix: number;
}
// ---- one statement for a route's repository: the repository, its mirror row, a rename redirect, a fork's parent ----

/** What a route needs of the repository in its path, read by ONE statement (`repoAtPath`). */
export interface RepoAt {
  /** The repository at the path, with the viewer's permission facts; null when there is none. */
  facts: RepoFacts | null;
  mirror: MirrorTimes | null;
  /** Where a renamed or transferred {owner}/{repo} now is (only when nothing is at the path). */
  redirect: RepoFacts | null;
  /** The parent of the fork at the path (only in `repoAtPathWithParent`). */
  parent: RepoFacts | null;
}

const PART = { repo: 0, redirect: 1, parent: 2 } as const;
const NOTHING_AT_PATH = sql`NOT EXISTS (SELECT 1 FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")})`;
/**
 * The parts' repository ids first, then ONE select of the facts over them: the facts' SQL (most
 * of the text) appears once, not once per part — sqld/Turso receive a third of it. `LIMIT -1`
 * (no limit) keeps SQLite from flattening the join into the compound, which would compile the
 * facts once per part again: preparing the statement took 2.6–3.8 ms without it, ~1 ms with it,
 * and sqld/Turso prepare it on every request.
 */
const factsOfParts = (parts: SQL) => sql`
  SELECT at.part, ${FACTS_JOINED}, m.interval_ms, m.updated_unix FROM (${parts} LIMIT -1) at
    JOIN repository ON repository.id = at.id JOIN user ON user.id = repository.owner_id
    LEFT JOIN mirror m ON m.repo_id = repository.id AND at.part = ${PART.repo} ${VIEWER_JOIN}`;
const repoAtParts = (withParent: boolean) =>
  factsOfParts(sql`
    SELECT ${PART.repo} AS part, r.id AS id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")}
    UNION ALL
    SELECT ${PART.redirect}, rr.redirect_repo_id FROM repo_redirect rr
      WHERE rr.owner_id = (SELECT ro.id FROM user ro WHERE ro.lower_name = ${p("owner")}) AND rr.lower_name = ${p("name")} AND ${NOTHING_AT_PATH}
    ${
      withParent
        ? sql`UNION ALL
    SELECT ${PART.parent}, r.fork_id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")} AND r.fork_id <> 0`
        : sql``
    }`);

/** The rows of `repoAtPath` (one per part that matched) as a RepoAt. */
export function repoAtOf(rows: readonly (readonly [number, RepoFacts, MirrorTimes | null])[]): RepoAt {
  const out: RepoAt = { facts: null, mirror: null, redirect: null, parent: null };
  for (const [part, facts, m] of rows) {
    if (part === PART.repo) {
      out.facts = facts;
      out.mirror = m;
    } else if (part === PART.redirect) out.redirect = facts;
    else out.parent = facts;
  }
  return out;
}

const partOf = (r: Row): readonly [number, RepoFacts, MirrorTimes | null] => {
  const k = 1 + R.width + O.width + 5;
  const m = r[k] === null || r[k] === undefined ? null : { intervalMs: num(r[k]), updatedUnix: num(r[k + 1]) };
  // rows are array-like (the client driver's are not arrays): read by offset
  return [num(r[0]), factsOf(r, 1), m] as const;
};

const repoAtIdParts = factsOfParts(sql`
    SELECT ${PART.repo} AS part, ${p("id")} AS id
    UNION ALL
    SELECT ${PART.parent}, r.fork_id FROM repository r WHERE r.id = ${p("id")} AND r.fork_id <> 0`);

/** ONE statement: the repository at {owner}/{repo} with the facts and its mirror row, or the rename redirect. */
export const repoAtPath = viewerQuery<readonly [number, RepoFacts, MirrorTimes | null], RepoPath>("repoAtPath", repoAtParts(false), partOf);

/** The same with the parent of the fork at the path (GET /repos/{owner}/{repo} shows it). */
export const repoAtPathWithParent = viewerQuery<readonly [number, RepoFacts, MirrorTimes | null], RepoPath>("repoAtPathWithParent", repoAtParts(true), partOf);

/** ONE statement: the repository with this id, its mirror row and a fork's parent (GET /repositories/{id}). */
export const repoAtId = viewerQuery<readonly [number, RepoFacts, MirrorTimes | null], { id: number }>("repoAtId", repoAtIdParts, partOf);

/** Lower-cased path values for the statements above. */
export const repoPath = (owner: string, name: string): RepoPath => ({ owner: owner.toLowerCase(), name: name.toLowerCase() });

// ---- lists: a page of the accessible repositories of one kind, by id, and their count ----

/** A page of a list, with the count of all its rows (both statements in the route's one round trip). */
export interface RepoList<V extends Record<string, unknown>> {
  page: Statement<RepoFacts, V & { limit: number; offset: number } & ViewerValues>;
  total: Statement<number, V & ViewerValues>;
}

function repoList<V extends Record<string, unknown> = Record<never, never>>(name: string, where: SQL): RepoList<V> {
  // The owner is joined (its visibility is read from the join), the viewer row joined once.
  const accessible = repoAccessibleSql(VIEWER_COLUMNS, sql`repository.id`, sql`repository.owner_id`, sql`repository.is_private`, sql`user.visibility`);
  const from = sql`FROM repository JOIN user ON user.id = repository.owner_id ${VIEWER_JOIN} WHERE ${where} AND ${accessible}`;
  return {
    page: viewerQuery<RepoFacts, V & { limit: number; offset: number }>(name, sql`SELECT ${FACTS_JOINED} ${from} ORDER BY repository.id LIMIT ${p("limit")} OFFSET ${p("offset")}`, factsOf),
    total: viewerQuery<number, V>(`${name}Count`, sql`SELECT COUNT(*) ${from}`, (r) => num(r[0])),
  };
}

// The viewer's id as a subquery, not the joined row's column: correlated with the outer row, the
// IN list below would be evaluated per repository (a scan of the table); uncorrelated, it is
// computed once and its ids looked up.
const ME = V.id;
export const REPO_LISTS = {
  /**
   * GET /user/repos: the caller's own repositories, collaborations and team repositories, each found
   * through its index (never by reading every repository).
   */
  mine: repoList("repoListMine", sql`repository.id IN (
      SELECT mr.id FROM repository mr WHERE mr.owner_id = ${ME}
      UNION SELECT mc.repo_id FROM collaboration mc WHERE mc.user_id = ${ME}
      UNION SELECT mtr.repo_id FROM team_user mtu JOIN team mt ON mt.id = mtu.team_id JOIN team_repo mtr ON mtr.team_id = mt.id
        JOIN repository mrr ON mrr.id = mtr.repo_id AND mrr.owner_id = mt.org_id WHERE mtu.uid = ${ME}
      UNION SELECT ar.id FROM team_user atu JOIN team at ON at.id = atu.team_id AND at.includes_all_repositories = 1 JOIN repository ar ON ar.owner_id = at.org_id WHERE atu.uid = ${ME})`),
  /** GET /users/{username}/repos, /orgs/{org}/repos: the owner's repositories (:owner lower-cased). */
  owner: repoList<{ owner: string }>("repoListOwner", sql`repository.owner_id = (SELECT ou.id FROM user ou WHERE ou.lower_name = ${p("owner")})`),
  /** GET /repos/{owner}/{repo}/forks: the forks of the repository at the path. */
  forks: repoList<RepoPath>("repoListForks", sql`repository.fork_id = ${REPO_ID_BY_PATH}`),
};

// ---- creating a repository (create, generate, fork): one write batch, statements built once ----

/** SQL: the id of the repository inserted earlier in the same batch, by its unique (owner, lower name). */
const NEW_REPO_ID = sql`(SELECT id FROM repository WHERE owner_id = ${p("ownerId")} AND lower_name = ${p("lower")})`;

export interface NewRepoKey extends Record<string, unknown> {
  ownerId: number;
  lower: string;
}

export interface NewRepoValues extends NewRepoKey {
  ownerName: string;
  name: string;
  description: string;
  isPrivate: boolean;
  isTemplate: boolean;
  isEmpty: boolean;
  defaultBranch: string;
  trustModel: number;
  objectFormatName: string;
  isFork: boolean;
  forkId: number;
  templateId: number;
  topics: string;
  now: number;
}

export const CREATE = {
  /** Creating a repository over an old redirect of the same owner removes that redirect. */
  dropRedirect: command<NewRepoKey>("repoCreateDropRedirect", sql`DELETE FROM repo_redirect WHERE owner_id = ${p("ownerId")} AND lower_name = ${p("lower")}`),
  insert: command<NewRepoValues>(
    "repoCreate",
    sql`INSERT INTO repository (owner_id, owner_name, lower_name, name, description, is_private, is_template, is_empty, default_branch,
        trust_model, object_format_name, is_fork, fork_id, template_id, topics, created_unix, updated_unix)
      VALUES (${p("ownerId")}, ${p("ownerName")}, ${p("lower")}, ${p("name")}, ${p("description")}, ${p("isPrivate")}, ${p("isTemplate")}, ${p("isEmpty")}, ${p("defaultBranch")},
        ${p("trustModel")}, ${p("objectFormatName")}, ${p("isFork")}, ${p("forkId")}, ${p("templateId")}, ${p("topics")}, ${p("now")}, ${p("now")})`,
  ),
  /** :units = JSON `[[type, config], …]`, inserted in that order. */
  units: command<NewRepoKey & { units: string; now: number }>(
    "repoCreateUnits",
    sql`INSERT INTO repo_unit (repo_id, type, config, created_unix)
      SELECT ${NEW_REPO_ID}, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), ${p("now")} FROM json_each(${p("units")}) j ORDER BY j.key`,
  ),
  /** :labels = JSON `[{name, exclusive, color, description}, …]`. */
  labels: command<NewRepoKey & { labels: string }>(
    "repoCreateLabels",
    sql`INSERT INTO label (repo_id, name, exclusive, color, description)
      SELECT ${NEW_REPO_ID}, json_extract(j.value, '$.name'), json_extract(j.value, '$.exclusive'), json_extract(j.value, '$.color'), json_extract(j.value, '$.description')
      FROM json_each(${p("labels")}) j ORDER BY j.key`,
  ),
  /** Teams of the creator that may create repositories get the new one (Owners and include-all teams cover it already). */
  teamAccess: command<NewRepoKey & { doerId: number }>(
    "repoCreateTeamAccess",
    sql`INSERT OR IGNORE INTO team_repo (org_id, team_id, repo_id)
      SELECT t.org_id, t.id, ${NEW_REPO_ID} FROM team t JOIN team_user tu ON tu.team_id = t.id
      WHERE t.org_id = ${p("ownerId")} AND tu.uid = ${p("doerId")} AND t.can_create_org_repo = 1 AND t.includes_all_repositories = 0`,
  ),
  teamCounts: command<NewRepoKey>("repoCreateTeamCounts", sql`UPDATE team SET num_repos = num_repos + 1 WHERE id IN (SELECT team_id FROM team_repo WHERE repo_id = ${NEW_REPO_ID})`),
  /**
   * Gitea's CreateRepositoryByExample: a creator who is not the new repository's admin through site
   * admin, ownership or a covering admin team becomes its admin collaborator (issue 8 A.7).
   */
  creatorAdmin: command<NewRepoKey & { doerId: number; admin: number; now: number }>(
    "repoCreateCreatorAdmin",
    sql`INSERT INTO collaboration (repo_id, user_id, mode, created_unix, updated_unix)
      SELECT ${NEW_REPO_ID}, ${p("doerId")}, ${p("admin")}, ${p("now")}, ${p("now")}
      WHERE NOT EXISTS (SELECT 1 FROM user WHERE id = ${p("doerId")} AND is_admin = 1)
        AND NOT EXISTS (SELECT 1 FROM team t JOIN team_user tu ON tu.team_id = t.id
          WHERE t.org_id = ${p("ownerId")} AND tu.uid = ${p("doerId")} AND t.authorize >= ${p("admin")}
            AND (t.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM team_repo tr WHERE tr.team_id = t.id AND tr.repo_id = ${NEW_REPO_ID})))`,
  ),
  ownerCount: command<{ ownerId: number }>("repoCreateOwnerCount", sql`UPDATE user SET num_repos = num_repos + 1 WHERE id = ${p("ownerId")}`),
  forkCount: command<{ baseId: number }>("repoCreateForkCount", sql`UPDATE repository SET num_forks = num_forks + 1 WHERE id = ${p("baseId")}`),
  /** The new row, as stored. */
  row: query<RepositoryRow, NewRepoKey>("repoCreated", sql`SELECT ${R.select} FROM repository WHERE repository.id = ${NEW_REPO_ID}`, (r) => R.read(r, 0)),
  /** SQL for statements built per request (auto-init's refs, a fork's catalog) that need the new id. */
  newRepoId: (key: NewRepoKey) => sql`(SELECT id FROM repository WHERE owner_id = ${key.ownerId} AND lower_name = ${key.lower})`,
};

/**
 * Statements that remove everything hanging off the repositories whose ids `ids` (a parenthesized
 * SQL list or subquery) yields — to run in the same write batch before deleting the rows themselves:
 * the one list of db/queries/cascade.ts, as drizzle statements for repository delete's batch.
 */
export function repoCascade(db: Db, ids: SQL) {
  return repoCascadeSql(ids).map((q) => db.run(q));
}

/** SQL: the id of the repository at {owner}/{repo} (case-insensitive), for the route's own reads. */
export const repoIdByPath = (owner: string, name: string) =>
  sql`(SELECT r.id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${owner.toLowerCase()} AND r.lower_name = ${name.toLowerCase()})`;
