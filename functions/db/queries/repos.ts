/**
 * Repositories as the viewer sees them: the permission facts of a repository by path, by id, by
 * rename redirect, and of a fork's parent — built once, each reading the viewer from the viewer
 * CTE (`V`), so a request binds only the token, the names and the path.
 */
import { sql, type SQL } from "drizzle-orm";
import { repoFactsColumns, type RepoFacts } from "../../lib/permissions.ts";
import type { ViewerSql } from "../../lib/auth.ts";
import { mirror, repository } from "../schema.ts";
import { columnsOf, num, numOrNull, p, str, V, viewerQuery, query, type Row } from "../sql.ts";
import { userCols } from "./accounts.ts";

/** The viewer CTE as the permission fragments' ViewerSql. */
export const VIEWER: ViewerSql = { id: V.id, isAdmin: V.isAdmin, publicOnly: V.publicOnly, restricted: V.restricted, limited: V.limited };

const R = columnsOf(repository, "repository");
const O = userCols("user");
const F = repoFactsColumns(VIEWER);
/** The select list of RepoFacts over `repository` joined with its owner `user` (read by `factsOf`). */
export const FACTS = sql`${R.select}, ${O.select}, ${F.ownerVisible}, ${F.collabMode}, ${F.isOrgOwner}, ${F.teamUnits}, ${F.teamMode}, ${F.units}`;

export function factsOf(r: Row): RepoFacts {
  const k = R.width + O.width;
  return {
    repo: R.read(r, 0),
    owner: { ...O.read(r, R.width), passwd: "", passwdHashAlgo: "" },
    ownerVisible: num(r[k]),
    collabMode: numOrNull(r[k + 1]),
    isOrgOwner: num(r[k + 2]),
    teamUnits: str(r[k + 3]),
    teamMode: num(r[k + 4]),
    units: str(r[k + 5]),
  };
}

const factsWhere = (where: SQL, from: SQL = sql`repository`) =>
  sql`SELECT ${FACTS} FROM ${from} JOIN user ON user.id = repository.owner_id WHERE ${where} LIMIT 1`;

/** SQL: the id of the repository at :owner/:name (case-insensitive names, bound lower-cased). */
export const REPO_ID_BY_PATH = sql`(SELECT r.id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")})`;

export type RepoPath = {
  owner: string;
  name: string;
};

/** The repository at {owner}/{repo} with the viewer's permission facts. */
export const repoFactsByPath = viewerQuery<RepoFacts, RepoPath>(
  "repoFactsByPath",
  factsWhere(sql`user.lower_name = ${p("owner")} AND repository.lower_name = ${p("name")}`),
  factsOf,
);

/** The repository an old {owner}/{repo} redirects to (after a rename or transfer), with the facts. */
export const repoFactsByRedirect = viewerQuery<RepoFacts, RepoPath>(
  "repoFactsByRedirect",
  factsWhere(
    sql`rr.owner_id = (SELECT ro.id FROM user ro WHERE ro.lower_name = ${p("owner")}) AND rr.lower_name = ${p("name")}`,
    sql`repo_redirect rr JOIN repository ON repository.id = rr.redirect_repo_id`,
  ),
  factsOf,
);

/** The parent of the fork at {owner}/{repo}, with the facts (none for a repository that is not a fork). */
export const parentFactsByPath = viewerQuery<RepoFacts, RepoPath>(
  "parentFactsByPath",
  factsWhere(sql`repository.id = (SELECT r.fork_id FROM repository r JOIN user o ON o.id = r.owner_id WHERE o.lower_name = ${p("owner")} AND r.lower_name = ${p("name")})`),
  factsOf,
);

/** The repository with this id, with the facts. */
export const repoFactsById = viewerQuery<RepoFacts, { id: number }>("repoFactsById", factsWhere(sql`repository.id = ${p("id")}`), factsOf);

/** The parent of the fork with this id, with the facts. */
export const parentFactsById = viewerQuery<RepoFacts, { id: number }>(
  "parentFactsById",
  factsWhere(sql`repository.id = (SELECT r.fork_id FROM repository r WHERE r.id = ${p("id")})`),
  factsOf,
);

export interface MirrorTimes {
  intervalMs: number;
  updatedUnix: number;
}
const M = columnsOf(mirror, "m");
const mirrorOf = (r: Row): MirrorTimes => {
  const m = M.read(r, 0);
  return { intervalMs: m.intervalMs, updatedUnix: m.updatedUnix ?? 0 };
};

/** The pull-mirror settings of the repository at {owner}/{repo} (none for other repositories). */
export const mirrorByPath = query<MirrorTimes, RepoPath>("mirrorByPath", sql`SELECT ${M.select} FROM mirror m WHERE m.repo_id = ${REPO_ID_BY_PATH}`, mirrorOf);

/** The same by repository id. */
export const mirrorById = query<MirrorTimes, { id: number }>("mirrorById", sql`SELECT ${M.select} FROM mirror m WHERE m.repo_id = ${p("id")}`, mirrorOf);

/** Lower-cased path values for the statements above. */
export const repoPath = (owner: string, name: string): RepoPath => ({ owner: owner.toLowerCase(), name: name.toLowerCase() });
