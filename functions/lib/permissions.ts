/**
 * The one permission module: what a caller may do on a repository, per unit and access mode
 * (Gitea models/perm/access GetUserRepoPermission). The facts it needs are loaded by
 * the statements of db/queries/repos.ts in the route's own read batch; `repoPermission` is pure.
 */
import { sql, type SQL } from "drizzle-orm";
import { col } from "../db/client.ts";
import { repository, user, type RepositoryRow, type UserRow } from "../db/schema.ts";
import { coMemberIdsSql, unlimited, userVisibleSql, type Caller, type ViewerSql } from "./auth.ts";

export const ACCESS = { none: 0, read: 1, write: 2, admin: 3, owner: 4 } as const;
export const ACCESS_NAMES = ["none", "read", "write", "admin", "owner"] as const;

/** Unit types (Gitea models/unit). */
export const UNIT = { code: 1, issues: 2, pulls: 3, releases: 4, wiki: 5, extWiki: 6, extIssues: 7, projects: 8, packages: 9, actions: 10 } as const;
export const UNIT_KEY: Record<number, string> = {
  1: "repo.code",
  2: "repo.issues",
  3: "repo.pulls",
  4: "repo.releases",
  5: "repo.wiki",
  6: "repo.ext_wiki",
  7: "repo.ext_issues",
  8: "repo.projects",
  9: "repo.packages",
  10: "repo.actions",
};
/** Whether DISABLED_REPO_UNITS names unit `type` (a type without a key, unknown here, is never disabled by name). */
export function unitDisabled(disabled: readonly string[], type: number): boolean {
  const key = UNIT_KEY[type];
  return key !== undefined && disabled.includes(key);
}
/** `codeReadableSql`'s :codeDisabled argument: 1 when the instance disables the code unit. */
export const codeDisabledArg = (disabled: readonly string[]): number => (unitDisabled(disabled, UNIT.code) ? 1 : 0);
export const unitTypeOfKey = (key: string) => Number(Object.entries(UNIT_KEY).find(([, k]) => k === key.toLowerCase())?.[0] ?? 0);
/** External units can never be written through the repository (max read). */
const READ_ONLY_UNITS = new Set<number>([UNIT.extWiki, UNIT.extIssues]);

export interface RepoUnit {
  type: number;
  config: Record<string, unknown>;
}

/** One row of facts about (repository, viewer), loaded in the route's read batch. */
export interface RepoFacts {
  repo: RepositoryRow;
  owner: UserRow;
  /** The owner is visible to the viewer (HasOrgOrUserVisible), ignoring token restrictions. */
  ownerVisible: number;
  /** The viewer's collaboration mode, or null. */
  collabMode: number | null;
  /** The viewer owns the owning organization. */
  isOrgOwner: number;
  /**
   * JSON [[unitType, unitMode, authorize], …]: every unit of every team of the viewer that covers
   * this repository, with the team's `authorize` ([null, null, authorize] for a team without units).
   * `teamAccessOf` reduces it to the best mode per unit and overall.
   */
  teamAccess: string;
  /** JSON [{type, config}]: the repository's enabled units. */
  units: string;
}

/** A permission is never changed once made: the same object may answer many repositories (`allUnits`). */
export interface Permission {
  /** Overall access mode (Gitea's Permission.AccessMode). */
  readonly mode: number;
  /** Access per enabled unit type. */
  readonly units: ReadonlyMap<number, number>;
}

export const NO_ACCESS: Permission = { mode: 0, units: new Map() };

/**
 * Parsed unit lists by their JSON text, per disabled-units setting (made once per process): most
 * repositories share one of a few lists, and a page of 50 parsed each one (JSON inside JSON) for
 * every row. Entries are frozen, because every caller shares them; the oldest goes first.
 */
const PARSED_UNITS = new WeakMap<readonly string[], Map<string, readonly RepoUnit[]>>();
const PARSED_UNITS_MAX = 256;

export function parseUnits(json: string, disabled: readonly string[]): readonly RepoUnit[] {
  let parsed = PARSED_UNITS.get(disabled);
  if (!parsed) {
    parsed = new Map();
    PARSED_UNITS.set(disabled, parsed);
  }
  const hit = parsed.get(json);
  if (hit) return hit;
  const rows = JSON.parse(json || "[]") as { type: number; config: string | Record<string, unknown> }[];
  const units = Object.freeze(
    rows
      .filter((u) => u && u.type && !unitDisabled(disabled, u.type))
      .map((u) => Object.freeze({ type: u.type, config: deepFreeze(typeof u.config === "string" ? (JSON.parse(u.config || "{}") as Record<string, unknown>) : (u.config ?? {})) })),
  );
  if (parsed.size >= PARSED_UNITS_MAX) parsed.delete(parsed.keys().next().value as string);
  parsed.set(json, units);
  return units;
}

function deepFreeze<T>(v: T): T {
  // A primitive counts as frozen.
  if (v && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/**
 * What a repository permission depends on in its subject: a signed-in caller (`Caller`), or another
 * user whose permission is asked for (a collaborator's permission), whose rights come from
 * memberships alone — no token limits them.
 */
export interface PermissionSubject {
  id: number;
  isAdmin: boolean;
  row: Pick<UserRow, "isRestricted">;
  /** The token may read only public repositories of public owners (`Caller.limited`). */
  limited: Pick<Caller["limited"], "repository">;
}

/**
 * The caller's permission on a repository, from the facts row (pure). An archived repository is
 * read-only in every unit; the overall mode stays, so its admins can still change settings and
 * un-archive it.
 */
export function repoPermission(caller: PermissionSubject | null, f: RepoFacts, units: readonly RepoUnit[]): Permission {
  const p = permissionIgnoringArchive(caller, f, units);
  if (!f.repo.isArchived) return p;
  return { mode: p.mode, units: new Map([...p.units].map(([t, m]) => [t, Math.min(m, ACCESS.read)])) };
}

/**
 * The permission as if the repository were not archived: what Gitea's reqRepoWriter checks before
 * mustNotBeArchived answers 423 (lib/guards.ts).
 */
export function permissionIgnoringArchive(caller: PermissionSubject | null, f: RepoFacts, units: readonly RepoUnit[]): Permission {
  const all = (mode: number) => allUnits(units, mode);
  const publicRepo = !f.repo.isPrivate;
  const ownerPublic = f.owner.visibility === 0;
  if (!caller) return publicRepo && ownerPublic ? all(ACCESS.read) : NO_ACCESS;
  // A token limited to public repositories (public-only, or without a repository read scope)
  // reaches public repositories of public owners only (with the caller's normal rights there, as
  // in Gitea: public-only limits what, not how).
  if (caller.limited.repository && (!publicRepo || !ownerPublic)) return NO_ACCESS;
  if (caller.isAdmin) return all(ACCESS.admin);
  const collab = f.collabMode ?? 0;
  // Strangers may not see public repositories of owners hidden from them, unless they collaborate.
  if (!f.ownerVisible && collab === 0) return NO_ACCESS;
  if (f.repo.ownerId === caller.id) return all(ACCESS.owner);
  const base = publicRepo && !caller.row.isRestricted ? ACCESS.read : ACCESS.none;
  if (f.owner.type !== 1) return all(Math.max(collab, base));
  if (f.isOrgOwner) return all(ACCESS.owner);
  return teamPermission(units, f.teamAccess, collab, base);
}

/**
 * The permission through the viewer's teams (`RepoFacts.teamAccess`), a collaboration and public
 * read, kept per unit list for the last TEAM_PERMISSIONS_MAX combinations: in a list, the viewer's
 * teams give the same text for every repository of an organization.
 */
const TEAM_PERMISSIONS = new WeakMap<readonly RepoUnit[], Map<string, Permission>>();
const TEAM_PERMISSIONS_MAX = 64;
function teamPermission(units: readonly RepoUnit[], teamAccess: string, collab: number, base: number): Permission {
  let known = TEAM_PERMISSIONS.get(units);
  if (!known) {
    known = new Map();
    TEAM_PERMISSIONS.set(units, known);
  }
  const key = `${collab} ${base} ${teamAccess}`;
  const hit = known.get(key);
  if (hit) return hit;
  const team = teamAccessOf(teamAccess);
  const perUnit = new Map<number, number>();
  for (const u of units) {
    let m = Math.max(team.units.get(u.type) ?? 0, collab, base);
    if (READ_ONLY_UNITS.has(u.type)) m = Math.min(m, ACCESS.read);
    perUnit.set(u.type, m);
  }
  const perm = Object.freeze({ mode: Math.max(team.mode, collab, base), units: perUnit });
  if (known.size >= TEAM_PERMISSIONS_MAX) known.delete(known.keys().next().value as string);
  known.set(key, perm);
  return perm;
}

/**
 * `mode` in every unit of `units` (read at most in the read-only ones), one object per unit list
 * and mode: a list of 30 repositories shares a few unit lists (`parseUnits` keeps them), and the
 * permission of most rows is one of these.
 */
const ALL_UNITS = new WeakMap<readonly RepoUnit[], Map<number, Permission>>();
function allUnits(units: readonly RepoUnit[], mode: number): Permission {
  let byMode = ALL_UNITS.get(units);
  if (!byMode) {
    byMode = new Map();
    ALL_UNITS.set(units, byMode);
  }
  let perm = byMode.get(mode);
  if (!perm) {
    perm = Object.freeze({ mode, units: new Map(units.map((u) => [u.type, READ_ONLY_UNITS.has(u.type) ? Math.min(mode, ACCESS.read) : mode])) });
    byMode.set(mode, perm);
  }
  return perm;
}

/** The viewer's team access from `RepoFacts.teamAccess`: the highest `authorize`, and the highest mode per unit. */
export function teamAccessOf(json: string): Permission {
  let best = 0;
  const units = new Map<number, number>();
  for (const [type, mode, authorize] of JSON.parse(json || "[]") as [number | null, number | null, number][]) {
    if (authorize > best) best = authorize;
    if (type !== null && mode !== null && mode > (units.get(type) ?? 0)) units.set(type, mode);
  }
  return { mode: best, units };
}

/** A repository as the caller sees it, from its facts row: units, permission and whether its owner is visible. */
export function repoViewOf(caller: PermissionSubject | null, f: RepoFacts, disabled: readonly string[]) {
  const units = parseUnits(f.units, disabled);
  return { repo: f.repo, owner: f.owner, units, perm: repoPermission(caller, f, units), ownerVisible: !!f.ownerVisible };
}

export const unitMode = (p: Permission, unit: number) => p.units.get(unit) ?? 0;
export const canRead = (p: Permission, unit: number) => unitMode(p, unit) >= ACCESS.read;
export const canWrite = (p: Permission, unit: number) => unitMode(p, unit) >= ACCESS.write;
/** Any access at all (Gitea's HasAccess): overall mode or any readable unit. */
export const hasAccess = (p: Permission) => p.mode >= ACCESS.read || [...p.units.values()].some((m) => m >= ACCESS.read);
export const isRepoAdmin = (p: Permission) => p.mode >= ACCESS.admin;

/** Gitea's API Permission object: admin ≥ admin; push/pull from the code unit. */
export const toPermissionJson = (p: Permission) => ({ admin: p.mode >= ACCESS.admin, push: canWrite(p, UNIT.code), pull: canRead(p, UNIT.code) });

/** SQL columns for RepoFacts, for a query over `repository` joined with its owner `user`. */
export function repoFactsColumns(viewer: ViewerSql) {
  const me = viewer.id;
  const repoId = col(repository.id);
  const ownerId = col(repository.ownerId);
  // The covering teams are read once, with their units (no GROUP BY: the maxima are taken in
  // teamAccessOf; in SQL the grouping and a second pass for `authorize` cost a third of the statement).
  const teamAccess = sql`(SELECT json_group_array(json_array(tu.type, tu.access_mode, t.authorize))
    FROM team t JOIN team_user m ON m.team_id = t.id AND m.uid = ${me} LEFT JOIN team_unit tu ON tu.team_id = t.id
    WHERE t.org_id = ${ownerId} AND (t.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM team_repo tr WHERE tr.team_id = t.id AND tr.repo_id = ${repoId})))`;
  return {
    repo: repository,
    owner: user,
    ownerVisible: sql<number>`${userVisibleSql(unlimited(viewer), col(user.id), col(user.visibility), "user")}`,
    collabMode: sql<number | null>`(SELECT c.mode FROM collaboration c WHERE c.repo_id = ${repoId} AND c.user_id = ${me})`,
    isOrgOwner: sql<number>`EXISTS (SELECT 1 FROM team_user otu JOIN team ot ON ot.id = otu.team_id WHERE ot.org_id = ${ownerId} AND otu.uid = ${me} AND ot.authorize = 4)`,
    teamAccess: sql<string>`${teamAccess}`,
    units: sql<string>`(SELECT json_group_array(json_object('type', ru.type, 'config', ru.config)) FROM repo_unit ru WHERE ru.repo_id = ${repoId})`,
    visibleForks: visibleForksSql(viewer),
  };
}

/**
 * SQL: the viewer may read the code unit of repository `repoId` — `canRead(repoPermission(…),
 * UNIT.code)` in SQL, step by step as `permissionIgnoringArchive` decides (archiving leaves reads
 * alone), for what shows code in a list of rows that must stay countable in SQL: the commits, tags
 * and branches of a feed. `codeDisabled` is 1 when the instance disables the code unit. The
 * feeds test holds it to the JavaScript rule for every caller kind.
 */
export function codeReadableSql(v: ViewerSql, repoId: SQL, codeDisabled: SQL): SQL {
  const r = sql`(SELECT cr.owner_id FROM repository cr WHERE cr.id = ${repoId})`;
  const isPublic = sql`EXISTS (SELECT 1 FROM repository cp JOIN user co ON co.id = cp.owner_id WHERE cp.id = ${repoId} AND cp.is_private = 0 AND co.visibility = 0)`;
  const publicRepo = sql`EXISTS (SELECT 1 FROM repository cq WHERE cq.id = ${repoId} AND cq.is_private = 0)`;
  const ownerVisible = sql`EXISTS (SELECT 1 FROM user cv WHERE cv.id = ${r} AND ${userVisibleSql(unlimited(v), sql`cv.id`, sql`cv.visibility`, "user")})`;
  const collab = sql`EXISTS (SELECT 1 FROM collaboration cc WHERE cc.repo_id = ${repoId} AND cc.user_id = ${v.id} AND cc.mode >= ${ACCESS.read})`;
  const orgOwned = sql`EXISTS (SELECT 1 FROM user ct WHERE ct.id = ${r} AND ct.type = 1)`;
  const orgOwner = sql`EXISTS (SELECT 1 FROM team_user otu JOIN team ot ON ot.id = otu.team_id WHERE ot.org_id = ${r} AND otu.uid = ${v.id} AND ot.authorize = ${ACCESS.owner})`;
  const teamCode = sql`EXISTS (SELECT 1 FROM team ctm JOIN team_user ctu ON ctu.team_id = ctm.id AND ctu.uid = ${v.id}
      JOIN team_unit ctn ON ctn.team_id = ctm.id AND ctn.type = ${UNIT.code} AND ctn.access_mode >= ${ACCESS.read}
    WHERE ctm.org_id = ${r} AND (ctm.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM team_repo ctr WHERE ctr.team_id = ctm.id AND ctr.repo_id = ${repoId})))`;
  return sql`(NOT ${codeDisabled} AND EXISTS (SELECT 1 FROM repo_unit ccu WHERE ccu.repo_id = ${repoId} AND ccu.type = ${UNIT.code}) AND (CASE
    WHEN ${v.id} IS NULL THEN ${isPublic}
    WHEN ${v.limited.repository} AND NOT ${isPublic} THEN 0
    WHEN ${v.isAdmin} THEN 1
    WHEN NOT ${ownerVisible} AND NOT ${collab} THEN 0
    WHEN ${r} = ${v.id} THEN 1
    ELSE (${collab} OR (${publicRepo} AND NOT ${v.restricted}) OR (${orgOwned} AND (${orgOwner} OR ${teamCode})))
  END))`;
}

/**
 * SQL: `forks_count` of the outer `repository` as the viewer may see it — the forks its forks list
 * shows, by the same rule (the stored count also counts forks in private organizations and of
 * hidden owners). Most repositories have none, and then nothing is looked up.
 */
export function visibleForksSql(viewer: ViewerSql): SQL<number> {
  return sql<number>`CASE WHEN ${col(repository.numForks)} = 0 THEN 0 ELSE (SELECT COUNT(*) FROM repository vf JOIN user vfo ON vfo.id = vf.owner_id
      WHERE vf.fork_id = ${col(repository.id)} AND ${repoAccessibleSql(viewer, sql`vf.id`, sql`vf.owner_id`, sql`vf.is_private`, sql`vfo.visibility`)}) END`;
}

/**
 * SQL: the viewer can access the repository at all (for lists, search and counts), the same rule
 * as `hasAccess(repoPermission(…))`: public repositories of owners visible to the viewer, own
 * repositories, collaborations, and repositories covered by the viewer's teams; site admins see all.
 */
export function repoAccessibleSql(
  viewer: ViewerSql,
  repoIdCol: SQL = col(repository.id),
  ownerIdCol: SQL = col(repository.ownerId),
  privateCol: SQL = col(repository.isPrivate),
  /** The owner's visibility when the query already joins the owner (else a lookup per row). */
  ownerVisibilityCol?: SQL,
  /**
   * `"row"`: lookups for each tested repository — best when few are tested (a keyword search, a
   * list of one owner). `"set"`: the viewer's collaborations, team repositories, include-all
   * organizations, organizations and co-members, each computed once per statement — best when
   * every repository is tested (a search without a keyword: its count at 100,000 repositories took
   * 3.4 s with lookups, 0.17 s with the sets; a keyword search is ~15 % slower with them).
   */
  shape: "row" | "set" = "row",
): SQL {
  const me = viewer.id;
  const ownerRow = ownerVisibilityCol ?? sql`(SELECT ov.visibility FROM user ov WHERE ov.id = ${ownerIdCol})`;
  const ownerVisible = userVisibleSql(unlimited(viewer), ownerIdCol, ownerRow, "user", shape);
  const once = viewer.idOnce ?? me;
  const explicit =
    shape === "row"
      ? sql`(${ownerIdCol} = ${me}
    OR EXISTS (SELECT 1 FROM collaboration ac WHERE ac.repo_id = ${repoIdCol} AND ac.user_id = ${me})
    OR EXISTS (SELECT 1 FROM team at JOIN team_user atu ON atu.team_id = at.id AND atu.uid = ${me}
               WHERE at.org_id = ${ownerIdCol} AND (at.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM team_repo atr WHERE atr.team_id = at.id AND atr.repo_id = ${repoIdCol}))))`
      : sql`(${ownerIdCol} = ${me}
    OR ${repoIdCol} IN (SELECT ac.repo_id FROM collaboration ac WHERE ac.user_id = ${once}
      UNION ALL SELECT atr.repo_id FROM team_user atu JOIN team at ON at.id = atu.team_id JOIN team_repo atr ON atr.team_id = at.id
        JOIN repository atrr ON atrr.id = atr.repo_id AND atrr.owner_id = at.org_id WHERE atu.uid = ${once})
    OR ${ownerIdCol} IN (SELECT at.org_id FROM team_user atu JOIN team at ON at.id = atu.team_id WHERE atu.uid = ${once} AND at.includes_all_repositories = 1))`;
  const publicRead = sql`(${privateCol} = 0 AND ${ownerVisible} AND NOT ${viewer.restricted})`;
  return sql`(CASE WHEN ${viewer.limited.repository}
      THEN (${privateCol} = 0 AND ${ownerRow} = 0)
      ELSE (${viewer.isAdmin} OR ${publicRead} OR (${me} IS NOT NULL AND ${explicit}))
    END)`;
}

/**
 * SQL: the viewer may access every repository of this class — `repo_count`'s owner visibility
 * (`visCol`, -1 without an owner row) and privacy — by `repoAccessibleSql`'s rule alone, without a
 * look at the single repository: a token limited to public repositories, the public repositories
 * of public owners; a site admin, every owned repository; a restricted user, none by class; anyone
 * else, the public repositories of public owners and, signed in, of limited ones. Applied to a
 * repository row it says whether that row is counted by class (`reachedRepoIdsSql` finds the rest).
 */
export function readableClassSql(viewer: ViewerSql, visCol: SQL, privateCol: SQL): SQL {
  return sql`(CASE WHEN ${viewer.limited.repository} THEN (${privateCol} = 0 AND ${visCol} = 0)
    WHEN ${viewer.isAdmin} THEN ${visCol} >= 0
    WHEN ${viewer.restricted} THEN 0
    ELSE (${privateCol} = 0 AND (${visCol} = 0 OR (${visCol} = 1 AND ${viewer.id} IS NOT NULL))) END)`;
}

/**
 * SQL, 1 or 0: the viewer may access every private repository by `readableClassSql`'s rule — a
 * site admin whose token is not limited to public repositories. Anyone else sees a private
 * repository only by relation, so its private repositories are among `reachedRepoIdsSql`'s.
 */
export function readsEveryPrivateSql(viewer: ViewerSql): SQL {
  return sql`(CASE WHEN ${viewer.limited.repository} THEN 0 WHEN ${viewer.isAdmin} THEN 1 ELSE 0 END)`;
}

/**
 * SQL: the ids of the repositories the viewer reaches by relation (a superset of those it may
 * access outside `readableClassSql`'s classes): its own, its collaborations, its teams'
 * repositories and the repositories of organizations where a team of its covers all of them, and
 * every repository of a private owner it may see (an organization of its, or a user it shares one
 * with). Each part is read through an index by the viewer's id, never by reading every repository:
 * it costs what the viewer reaches, not what the instance holds.
 */
export function reachedRepoIdsSql(viewer: ViewerSql): SQL {
  const once = viewer.idOnce ?? viewer.id;
  return sql`SELECT rr.id FROM repository rr WHERE rr.owner_id = ${once}
    UNION ALL SELECT rc.repo_id FROM collaboration rc WHERE rc.user_id = ${once}
    UNION ALL SELECT rtr.repo_id FROM team_user rtu JOIN team_repo rtr ON rtr.team_id = rtu.team_id WHERE rtu.uid = ${once}
    UNION ALL SELECT rr.id FROM team_user rtu JOIN team rt ON rt.id = rtu.team_id AND rt.includes_all_repositories = 1
      JOIN repository rr ON rr.owner_id = rt.org_id WHERE rtu.uid = ${once}
    UNION ALL SELECT rr.id FROM user ro JOIN repository rr ON rr.owner_id = ro.id
      WHERE ro.visibility = 2 AND ro.id IN (SELECT vo.org_id FROM org_user vo WHERE vo.uid = ${once}
        UNION ALL ${coMemberIdsSql(once)})`;
}
