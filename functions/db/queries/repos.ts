/**
 * Repositories as the viewer sees them: the permission facts of a repository by path, by id, by
 * rename redirect, and of a fork's parent — built once, each reading the viewer from the viewer
 * CTE (`V`), so a request binds only the token, the names and the path.
 */
import { sql, type SQL } from "drizzle-orm";
import { repoAccessibleSql, repoFactsColumns, type RepoFacts } from "../../lib/permissions.ts";
import type { ViewerSql } from "../../lib/auth.ts";
import { mirror, repository, type RepositoryRow, type UserRow } from "../schema.ts";
import { columnsOf, command, insertSql, num, numOrNull, p, setList, shaped, str, V, VIEWER_COLUMNS, VIEWER_JOIN, viewerQuery, viewerQueryWith, query, type InsertKey, type Row, type Statement, type ViewerValues, rowExists, whileExists, guardCommand } from "../sql.ts";
import { isOrgMemberSql, isOrgOwnerSql, seenAccountId, userCols, writeTargetVisibleSql } from "./accounts.ts";
import { repoCascadeSql } from "./cascade.ts";

/** The viewer CTE as the permission fragments' ViewerSql. */
export const VIEWER: ViewerSql = { id: V.id, isAdmin: V.isAdmin, publicOnly: V.publicOnly, restricted: V.restricted, limited: V.limited };

const R = columnsOf(repository, "repository");
const O = userCols("user");
/** The select list of RepoFacts over `repository` joined with its owner `user`, for `viewer` (read by `factsOf`). */
export const factsList = (viewer: ViewerSql) => {
  const F = repoFactsColumns(viewer);
  return sql`${R.select}, ${O.select}, ${F.ownerVisible}, ${F.collabMode}, ${F.isOrgOwner}, ${F.teamAccess}, ${F.units}, ${F.visibleForks}`;
};
/** The facts for the viewer of the viewer CTE. */
export const FACTS = factsList(VIEWER);
/** `FACTS` for a statement that joins the viewer row (`VIEWER_JOIN`). */
export const FACTS_JOINED = factsList(VIEWER_COLUMNS);

/**
 * The same facts as ONE column, a JSON array of the 70-odd values (read by `packedFactsOf`), for the
 * lists. sqld/Turso send each cell of an answer as a typed JSON object
 * (`{"type":"integer","value":"7"}`): a page of 30 repositories was 2,000 of them, 69 KB, and
 * building and parsing those cost more than the rows (measured: sqld 1.45 → 1.0 ms for 30 rows, the
 * answer 69 → 14 KB, its parse 0.27 → 0.05 ms; on the embedded file a list of 30 costs 7 % less CPU).
 * A single row keeps its cells: there the array costs more than it saves (the embedded file's
 * repository read: 150 → 156 µs). The team-access and unit lists come from JSON functions, so
 * `|| ''` makes them plain text: `json_array` would otherwise embed them as arrays. A mirror's
 * times come last, so a list shows a mirror as GET does (Gitea's lists do too).
 */
const MIRROR_OF = (column: string) => sql.raw(`CASE WHEN repository.is_mirror THEN (SELECT m.${column} FROM mirror m WHERE m.repo_id = repository.id) END`);
const packedFactsList = (viewer: ViewerSql) => {
  const F = repoFactsColumns(viewer);
  return sql`json_array(${R.select}, ${O.select}, ${F.ownerVisible}, ${F.collabMode}, ${F.isOrgOwner}, ${F.teamAccess} || '', ${F.units} || '', ${F.visibleForks}, ${MIRROR_OF("interval_ms")}, ${MIRROR_OF("updated_unix")})`;
};
/** `FACTS` packed, for a list. */
export const LIST_FACTS = packedFactsList(VIEWER);
/** `FACTS_JOINED` packed, for a list. */
export const LIST_FACTS_JOINED = packedFactsList(VIEWER_COLUMNS);

export function factsOf(r: Row, at = 0): RepoFacts {
  const k = at + R.width + O.width;
  return {
    // numForks: the forks the viewer may see (`visibleForks`), never the stored count.
    repo: { ...R.read(r, at), numForks: num(r[k + 5]) },
    owner: { ...O.read(r, at + R.width), passwd: "", passwdHashAlgo: "" },
    ownerVisible: num(r[k]),
    collabMode: numOrNull(r[k + 1]),
    isOrgOwner: num(r[k + 2]),
    teamAccess: str(r[k + 3]),
    units: str(r[k + 4]),
  };
}

/** A repository of a list: its facts, and a mirror's times (`LIST_FACTS`); a fork's parent when the list brought it. */
export interface ListedRepo {
  facts: RepoFacts;
  mirror: MirrorTimes | null;
  parent?: RepoFacts | null;
}

/** `rows` with the parent of each fork among them taken from `pool` (repositories by id); a parent not in the pool stays unknown. */
export function withParents(rows: readonly ListedRepo[], pool: ReadonlyMap<number, ListedRepo>): ListedRepo[] {
  return rows.map((r) => (r.facts.repo.isFork ? { ...r, parent: pool.get(r.facts.repo.forkId)?.facts ?? null } : r));
}

/** The repository of a `LIST_FACTS` column at `at`. */
export function packedFactsOf(r: Row, at = 0): ListedRepo {
  const f = JSON.parse(str(r[at])) as Row;
  const k = R.width + O.width + 6;
  return { facts: factsOf(f), mirror: f[k] === null || f[k] === undefined ? null : { intervalMs: num(f[k]), updatedUnix: num(f[k + 1]) } };
}

/** SQL: the id of the repository at :owner/:name (case-insensitive names, bound lower-cased). */
export const REPO_ID_BY_PATH = sql`(SELECT r.id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")})`;

/**
 * The id of the repository at :owner/:name when the viewer may access it, else NULL: what the
 * rows a route reads beside the repository (its refs, forks, activity) are keyed by, so a hidden
 * repository's rows are never visited — reading thousands of them would take time a missing
 * repository's do not (an existence oracle). The rule is decided once, not per row.
 */
export const SEEN_REPO_ID = sql`(SELECT sr.id FROM repository sr WHERE sr.id = ${REPO_ID_BY_PATH} AND ${repoAccessibleSql(VIEWER, sql`sr.id`, sql`sr.owner_id`, sql`sr.is_private`)})`;

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
  SELECT pt.part, ${FACTS_JOINED}, m.interval_ms, m.updated_unix FROM (${parts} LIMIT -1) pt
    JOIN repository ON repository.id = pt.id JOIN user ON user.id = repository.owner_id
    LEFT JOIN mirror m ON m.repo_id = repository.id AND pt.part = ${PART.repo} ${VIEWER_JOIN}`;
/**
 * A repository an anonymous caller (or a token limited to public repositories) can never read —
 * private, or of an owner who is not public — is not looked at: its facts would cost the
 * statement time a missing repository's do not (an existence oracle); it answers as missing anyway.
 */
const EVER_READABLE = sql`((${V.id} IS NOT NULL AND NOT ${V.limited.repository}) OR (r.is_private = 0 AND o.visibility = 0))`;

const repoAtParts = (withParent: boolean) =>
  factsOfParts(sql`
    SELECT ${PART.repo} AS part, r.id AS id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")} AND ${EVER_READABLE}
    UNION ALL
    SELECT ${PART.redirect}, rr.redirect_repo_id FROM repo_redirect rr
      WHERE rr.owner_id = (SELECT ro.id FROM user ro WHERE ro.lower_name = ${p("owner")}) AND rr.lower_name = ${p("name")} AND ${NOTHING_AT_PATH}
    ${
      withParent
        ? sql`UNION ALL
    SELECT ${PART.parent}, r.fork_id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")} AND r.fork_id <> 0 AND ${EVER_READABLE}`
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
  const k = 1 + R.width + O.width + 6;
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

// ---- lists: a page of the accessible repositories of one kind, and their count, in ONE statement ----

/** One row of a list statement: the count of all the list's rows, and one repository of the page (part 0) or the parent of a fork on it (part 1); none on a page past the end. */
export interface ListRow {
  total: number;
  part: number;
  repo: ListedRepo | null;
}

/** The page (each fork with its parent) and the total of a list statement's rows. */
export function listPage(rows: readonly ListRow[]): { total: number; rows: ListedRepo[] } {
  const page: ListedRepo[] = [];
  const parents = new Map<number, ListedRepo>();
  for (const r of rows) {
    if (!r.repo) continue;
    if (r.part === 0) page.push(r.repo);
    else parents.set(r.repo.facts.repo.id, r.repo);
  }
  return { total: rows[0]?.total ?? 0, rows: withParents(page, parents) };
}

/** One term of a list's order: an expression over `repository` and its owner `user`, and its direction. */
export interface ListKey {
  expr: SQL;
  desc?: boolean;
}

export type ListStatement<V extends Record<string, unknown>> = Statement<ListRow, V & { limit: number; offset: number } & ViewerValues>;

/**
 * A page of a list and the count of all its rows, in ONE statement, with the parents of the
 * page's forks (Gitea's lists embed them as GET does). `from` is the list's `FROM … WHERE …` over
 * `repository` joined with its owner `user` and the viewer row; `keys` its order, most
 * significant first, the id breaking ties in the last key's direction.
 *
 * The list's ids and sort keys are found once (`list_hits`, materialized); the count reads them,
 * the page is sorted from them, and only then are the page's repositories and their forks'
 * parents joined for their facts — the facts' SQL once, over both (`list_at`: each page row once
 * as itself, part 0, and once more as its parent, part 1, if it is a fork; the two parts come from
 * `json_each('[0,1]')`, since a UNION ALL there cost 80 µs more to prepare). Two statements
 * (the page, then `COUNT(*)` with the same WHERE) evaluated every permission predicate twice, and
 * sqld/Turso prepared both ~5 KB texts on every request: the count was 0.84 of sqld's 3.6 ms CPU
 * per repository search. And a sort over whole rows computed the facts of every match, not just
 * of the page's. A page past the end still has one row: the total, and no repository.
 */
export function listStatement<V extends Record<string, unknown> = Record<never, never>>(
  name: string,
  from: SQL,
  keys: readonly ListKey[],
  /**
   * `walk`, for a list of a large part of the table (a search without a keyword): the total comes
   * first (`count`, or a count of the hits), then the page walks the table in its order (an index,
   * where the order has one) and stops after the page — materializing and sorting every hit cost
   * more there (at 100,000 repositories, 78 → 101 ms for a viewer's unfiltered search).
   */
  opts: {
    walk?: boolean;
    /** The total as a scalar expression, where it has a cheaper form than counting the hits (`walk` lists only). */
    count?: SQL;
    /**
     * With `walk`, for callers whose hits are few: the walk runs only where `walks` (a scalar of
     * the viewer alone, 1 or 0) is 1 — else its LIMIT is 0 and it reads no row — and `from`, which
     * must select nothing where `walks` is 1, gives the others' hits, found and sorted.
     */
    few?: { walks: SQL; from: SQL };
  } = {},
): ListStatement<V> {
  const dir = (desc: boolean | undefined) => (desc ? sql`DESC` : sql`ASC`);
  const last = keys.at(-1)?.desc;
  const k = keys.map((_, i) => sql.raw(`k${i}`));
  const hit = sql`repository.id AS pid, CASE WHEN repository.is_fork = 1 THEN repository.fork_id END AS fid${sql.join(
    keys.map((key, i) => sql`, ${key.expr} AS ${k[i]}`),
    sql``,
  )}`;
  const order = (at: string) => sql.join([...keys.map((key, i) => sql`${sql.raw(at)}${k[i]} ${dir(key.desc)}`), sql`${sql.raw(`${at}pid`)} ${dir(last)}`], sql`, `);
  const slice = sql`LIMIT ${p("limit")} OFFSET ${p("offset")}`;
  const kcols = k.map((c) => sql`, CASE lp.value WHEN 0 THEN ${c} END AS ${c}`);
  const walkOrder = sql.join([...keys.map((key) => sql`${key.expr} ${dir(key.desc)}`), sql`repository.id ${dir(last)}`], sql`, `);
  return viewerQueryWith<ListRow, V & { limit: number; offset: number }>(
    name,
    opts.walk
      ? // The total first: a page at or past it is not walked for (LIMIT 0 ends the walk before its
        // first row), where the walk would read every repository looking for one more hit.
        sql`list_total AS MATERIALIZED (${opts.count ? sql`SELECT ${opts.count} AS n` : sql`SELECT COUNT(*) AS n ${from}`}),
      ${opts.few ? sql`list_few AS MATERIALIZED (SELECT ${hit} ${opts.few.from}),` : sql``}
      list_page AS MATERIALIZED (${
        opts.few
          ? sql`SELECT * FROM (SELECT ${hit} ${from} ORDER BY ${walkOrder}
          LIMIT CASE WHEN ${opts.few.walks} = 1 AND (SELECT n FROM list_total) > ${p("offset")} THEN ${p("limit")} ELSE 0 END OFFSET ${p("offset")})
        UNION ALL SELECT * FROM (SELECT * FROM list_few ORDER BY ${order("")} ${slice})`
          : sql`SELECT ${hit} ${from} ORDER BY ${walkOrder}
        LIMIT CASE WHEN (SELECT n FROM list_total) > ${p("offset")} THEN ${p("limit")} ELSE 0 END OFFSET ${p("offset")}`
      })`
      : sql`list_hits AS MATERIALIZED (SELECT ${hit} ${from}),
      list_page AS MATERIALIZED (SELECT * FROM list_hits ORDER BY ${order("")} ${slice}),
      list_total AS (SELECT COUNT(*) AS n FROM list_hits)`,
    sql`SELECT list_total.n, list_at.part, CASE WHEN list_at.pid IS NOT NULL THEN ${LIST_FACTS_JOINED} END
      FROM list_total
      LEFT JOIN (SELECT lp.value AS part, CASE lp.value WHEN 0 THEN pid ELSE fid END AS pid${sql.join(kcols, sql``)}
        FROM list_page JOIN json_each('[0,1]') lp ON lp.value = 0 OR fid IS NOT NULL LIMIT -1) list_at ON 1
      LEFT JOIN repository ON repository.id = list_at.pid LEFT JOIN user ON user.id = repository.owner_id ${VIEWER_JOIN}
      ORDER BY list_at.part, ${order("list_at.")}`,
    (r) => ({ total: num(r[0]), part: num(r[1]), repo: r[2] === null || r[2] === undefined ? null : packedFactsOf(r, 2) }),
  );
}

/**
 * How a list is ordered. Gitea's owner lists ask for `id ASC` (listUserRepos) and its forks come in
 * the order of creation; GET /user/repos goes through SearchRepository without an order, which
 * sorts by name — here the lower-cased name, as the search's `sort=alpha`, then the id.
 */
const LIST_ORDER: Record<"id" | "name", ListKey[]> = { id: [], name: [{ expr: sql`repository.lower_name` }] };

/** A list of the repositories `where` selects that the viewer may access. */
function repoList<V extends Record<string, unknown> = Record<never, never>>(name: string, where: SQL, order: keyof typeof LIST_ORDER = "id"): ListStatement<V> {
  // The owner is joined (its visibility is read from the join), the viewer row joined once.
  const accessible = repoAccessibleSql(VIEWER_COLUMNS, sql`repository.id`, sql`repository.owner_id`, sql`repository.is_private`, sql`user.visibility`);
  return listStatement<V>(name, sql`FROM repository JOIN user ON user.id = repository.owner_id ${VIEWER_JOIN} WHERE ${where} AND ${accessible}`, LIST_ORDER[order]);
}

// The viewer's id as a subquery, not the joined row's column: correlated with the outer row, the
// IN list below would be evaluated per repository (a scan of the table); uncorrelated, it is
// computed once and its ids looked up.
const ME = V.id;
export const REPO_LISTS = {
  /**
   * GET /user/repos: the caller's own repositories, collaborations, team repositories and the public
   * repositories of its private organizations (Gitea's ListMyRepos, a search with OwnerID), each
   * found through its index (never by reading every repository), by name. In the organizations' branch CROSS JOIN
   * keeps the caller's memberships first and the unary `+` keeps SQLite off IDX_repository_is_private
   * (it walked every public repository by it).
   */
  mine: repoList("repoListMine", sql`repository.id IN (
      SELECT mr.id FROM repository mr WHERE mr.owner_id = ${ME}
      UNION SELECT mc.repo_id FROM collaboration mc WHERE mc.user_id = ${ME}
      UNION SELECT mtr.repo_id FROM team_user mtu JOIN team mt ON mt.id = mtu.team_id JOIN team_repo mtr ON mtr.team_id = mt.id
        JOIN repository mrr ON mrr.id = mtr.repo_id AND mrr.owner_id = mt.org_id WHERE mtu.uid = ${ME}
      UNION SELECT ar.id FROM team_user atu JOIN team at ON at.id = atu.team_id AND at.includes_all_repositories = 1 JOIN repository ar ON ar.owner_id = at.org_id WHERE atu.uid = ${ME}
      UNION SELECT pr.id FROM org_user po CROSS JOIN user pu ON pu.id = po.org_id AND pu.visibility = 2 CROSS JOIN repository pr ON pr.owner_id = po.org_id AND +pr.is_private = 0 WHERE po.uid = ${ME})`, "name"),
  /** GET /users/{username}/repos, /orgs/{org}/repos: the owner's repositories (:owner lower-cased). */
  owner: repoList<{ owner: string }>("repoListOwner", sql`repository.owner_id = ${seenAccountId("owner")}`),
  /** GET /repos/{owner}/{repo}/forks: the forks of the repository at the path. */
  forks: repoList<RepoPath>("repoListForks", sql`repository.fork_id = ${SEEN_REPO_ID}`),
};

// ---- creating a repository (create, generate, fork): one write batch, statements built once ----

/** A fork of the repository at the path owned by the viewer or by the organization :org (one fork per owner). */
export const forksOfTargets = viewerQuery<{ ownerId: number; ownerName: string; name: string; visible: boolean }, RepoPath & { org: string }>(
  "repoForksOfTargets",
  sql`SELECT f.owner_id, f.owner_name, f.name, ${repoAccessibleSql(VIEWER_COLUMNS, sql`f.id`, sql`f.owner_id`, sql`f.is_private`)} FROM repository f ${VIEWER_JOIN}
    WHERE f.fork_id = ${REPO_ID_BY_PATH} AND f.owner_id IN (v.id, (SELECT ou.id FROM user ou WHERE ou.lower_name = ${p("org")}))`,
  (r) => ({ ownerId: num(r[0]), ownerName: str(r[1]), name: str(r[2]), visible: r[3] === 1 || r[3] === 1n || r[3] === true }),
);

/** The account named as a new repository's owner, as the viewer may target it (create, generate, fork). */
export interface OwnerForCreate {
  u: UserRow;
  /** Visible as the target of a write (`writeTargetVisibleSql`). */
  visible: boolean;
  /** The viewer is in the organization's Owners team. */
  isOwner: boolean;
  /** The viewer is in a team of the organization that may create repositories. */
  canCreate: boolean;
  /** The viewer is a member of the organization. */
  isMember: boolean;
}

export const ownerForCreate = viewerQuery<OwnerForCreate, { name: string }>(
  "repoOwnerForCreate",
  sql`SELECT ${O.select}, ${writeTargetVisibleSql(sql`user.id`, sql`user.visibility`)}, ${isOrgOwnerSql(sql`user.id`, VIEWER_COLUMNS.id)},
      EXISTS (SELECT 1 FROM team t JOIN team_user tu ON tu.team_id = t.id WHERE t.org_id = user.id AND tu.uid = ${VIEWER_COLUMNS.id} AND t.can_create_org_repo = 1),
      ${isOrgMemberSql(sql`user.id`, VIEWER_COLUMNS.id)}
    FROM user ${VIEWER_JOIN} WHERE user.lower_name = ${p("name")} LIMIT 1`,
  (r) => ({ u: { ...O.read(r, 0), passwd: "", passwdHashAlgo: "" }, visible: num(r[O.width]) === 1, isOwner: num(r[O.width + 1]) === 1, canCreate: num(r[O.width + 2]) === 1, isMember: num(r[O.width + 3]) === 1 }),
);

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
  /**
   * The owner :ownerId, the creator :doerId and the repository a fork or a generated one is made
   * from (:baseId, 0 for none) still exist (`whileExists`).
   */
  sourcesExist: whileExists<{ ownerId: number; doerId: number; baseId: number }>(
    "repoCreateWhileSources",
    sql`${rowExists("user", p("ownerId"))} AND ${rowExists("user", p("doerId"))} AND (${p("baseId")} = 0 OR ${rowExists("repository", p("baseId"))})`,
  ),
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
  /**
   * A fork's git rows, copied in SQL in its create batch from base :baseId: its branches and tags
   * (what Gitea's `git clone --bare` copies; not `refs/pull/*`, `refs/notes/*`, …), the base's
   * catalog shared (storage/fork.ts), its commits' e-mails, and the base's size and emptiness. The
   * shared packs hold whatever the base's held, so the fork is `git_unreachable` when the base is or
   * when a ref of the base stayed behind (its objects are in the packs, unreached by the fork's refs).
   */
  forkGit: [
    sql`INSERT INTO git_ref (repo_id, name, oid, peeled) SELECT ${NEW_REPO_ID}, name, oid, peeled FROM git_ref
      WHERE repo_id = ${p("baseId")} AND ((name >= 'refs/heads/' AND name < 'refs/heads0') OR (name >= 'refs/tags/' AND name < 'refs/tags0'))`,
    sql`INSERT INTO git_pack (id, repo_id, catalog_repo_id, objects, size, idx_size, checksum)
      SELECT id, repo_id, ${NEW_REPO_ID}, objects, size, idx_size, checksum FROM git_pack WHERE catalog_repo_id = ${p("baseId")} ORDER BY seq`,
    sql`INSERT INTO git_identity (repo_id, email) SELECT ${NEW_REPO_ID}, email FROM git_identity WHERE repo_id = ${p("baseId")}`,
    sql`UPDATE repository SET size = (SELECT b.size FROM repository b WHERE b.id = ${p("baseId")}), is_empty = (SELECT b.is_empty FROM repository b WHERE b.id = ${p("baseId")}),
      git_unreachable = (SELECT b.git_unreachable FROM repository b WHERE b.id = ${p("baseId")})
        OR EXISTS (SELECT 1 FROM git_ref br WHERE br.repo_id = ${p("baseId")} AND NOT ((br.name >= 'refs/heads/' AND br.name < 'refs/heads0') OR (br.name >= 'refs/tags/' AND br.name < 'refs/tags0')))
      WHERE id = ${NEW_REPO_ID}`,
  ].map((q, i) => command<NewRepoKey & { baseId: number }>(`repoCreateForkGit${i}`, q)),
  /** SQL for statements built per request (an initial commit's git rows, sized by its files) that need the new id. */
  newRepoId: (key: NewRepoKey) => sql`(SELECT id FROM repository WHERE owner_id = ${key.ownerId} AND lower_name = ${key.lower})`,
};

// ---- edit: the statements of PATCH /repos/{owner}/{repo}'s write batch, for repository :id ----

type RepoKey = InsertKey<typeof repository>;
type MirrorKey = InsertKey<typeof mirror>;

export const REPO_EDIT = {
  /** Repository :id still exists (`whileExists`): an edit racing a deletion writes no unit or mirror rows. */
  exists: whileExists<{ id: number }>("repoEditWhileRepo", rowExists("repository", p("id"))),
  /** Ref :ref of the repository at the path, if it exists (edit rule 4, read with the assignment). */
  ref: query<string, RepoPath & { ref: string }>("repoEditRef", sql`SELECT name FROM git_ref WHERE repo_id = ${REPO_ID_BY_PATH} AND name = ${p("ref")} LIMIT 1`, (r) => str(r[0])),
  /** The row's given fields (one statement per set of fields). */
  update: shaped((keys: readonly RepoKey[]) => command<Record<string, unknown> & { id: number }>(`repoEdit(${keys})`, sql`UPDATE repository SET ${setList(repository, keys)} WHERE id = ${p("id")}`)),
  /**
   * Trips a rename's batch when repository :id no longer has the name :lower the request read: a
   * concurrent rename won, and this one would leave its redirect from a name that is gone.
   */
  stillNamed: guardCommand<{ id: number; lower: string }>("repoEditStillNamed", sql`NOT EXISTS (SELECT 1 FROM repository WHERE id = ${p("id")} AND lower_name = ${p("lower")})`),
  /** A rename takes over a redirect of the new name and leaves one from the old (:lower) to :id. */
  dropRedirect: command<{ ownerId: number; lower: string }>("repoEditDropRedirect", sql`DELETE FROM repo_redirect WHERE owner_id = ${p("ownerId")} AND lower_name = ${p("lower")}`),
  redirect: command<{ ownerId: number; lower: string; id: number }>(
    "repoEditRedirect",
    sql`INSERT INTO repo_redirect (owner_id, lower_name, redirect_repo_id) VALUES (${p("ownerId")}, ${p("lower")}, ${p("id")})
      ON CONFLICT (owner_id, lower_name) DO UPDATE SET redirect_repo_id = excluded.redirect_repo_id`,
  ),
  /** Edit rule 4, re-checked in the write: :branch becomes HEAD when the repository is empty or ref :ref exists. */
  defaultBranch: command<{ id: number; ref: string; branch: string }>(
    "repoEditDefaultBranch",
    sql`UPDATE repository SET default_branch = CASE WHEN is_empty = 1 OR EXISTS (SELECT 1 FROM git_ref b WHERE b.repo_id = ${p("id")} AND b.name = ${p("ref")})
      THEN ${p("branch")} ELSE default_branch END WHERE id = ${p("id")}`,
  ),
  dropUnit: command<{ id: number; type: number }>("repoEditDropUnit", sql`DELETE FROM repo_unit WHERE repo_id = ${p("id")} AND type = ${p("type")}`),
  unit: command<{ id: number; type: number; config: string }>(
    "repoEditUnit",
    sql`INSERT INTO repo_unit (repo_id, type, config) VALUES (${p("id")}, ${p("type")}, ${p("config")}) ON CONFLICT (repo_id, type) DO UPDATE SET config = excluded.config`,
  ),
  /** The mirror row's given settings, created with defaults for the others if missing. */
  mirror: shaped((keys: readonly MirrorKey[]) =>
    command<Record<string, unknown> & { repoId: number }>(`repoEditMirror(${keys})`, sql`${insertSql(mirror, ["repoId", ...keys])} ON CONFLICT (repo_id) DO UPDATE SET ${setList(mirror, keys)}`),
  ),
};

/**
 * DELETE /repos/{owner}/{repo}'s write batch for repository :id of owner :ownerId: everything
 * hanging off it (the one cascade list of db/queries/cascade.ts), the owner's count, the row.
 */
export const REPO_DELETE: Statement<number, { id: number; ownerId: number }>[] = [
  ...repoCascadeSql(sql`(${p("id")})`),
  sql`UPDATE user SET num_repos = num_repos - 1 WHERE id = ${p("ownerId")}`,
  sql`DELETE FROM repository WHERE id = ${p("id")}`,
].map((q, i) => command<{ id: number; ownerId: number }>(`repoDelete${i}`, q));
