/**
 * Teams (spec "Teams", Gitea routers/api/v1/org/team.go): visibility-filtered lists and search,
 * create/edit with the permission/unit rules, membership, repository assignment and feeds.
 * Every read is one batch with the caller; every write one more batch.
 */
import { and, asc, count, eq, sql, type SQL } from "drizzle-orm";
import { col, uniqueViolation } from "../db/client.ts";
import { action, orgUser, repository, team, teamRepo, teamUnit, teamUser, user, userBlocking, type TeamRow, type UserRow } from "../db/schema.ts";
import { toOrganization, toUser } from "../convert/user.ts";
import type { Caller } from "../lib/auth.ts";
import { readWithCaller, writeBatch, type Ctx } from "../lib/context.ts";
import { ApiError, forbidden, notFound, unprocessable } from "../lib/errors.ts";
import { reqOrgMembership, reqOrgOwnership, reqTeamMembership } from "../lib/guards.ts";
import type { Page } from "../lib/pagination.ts";
import { ACCESS, ACCESS_NAMES, isRepoAdmin, repoAccessibleSql, repoFactsColumns, UNIT_KEY, unitTypeOfKey, repoViewOf, type RepoFacts } from "../lib/permissions.ts";
import { guard, isGuardTrip, likePattern, nowUnix, site, viewerOf } from "./common.ts";
import { isOrgMemberSql, isOrgOwnerSql } from "../db/queries/accounts.ts";
import { teamVisibleSql } from "../db/queries/teams.ts";
import { repoJson } from "./repos.ts";
import { accessibleRepo, actorVisible, dayFilter, feedReads, renderFeeds } from "./feeds.ts";
import { publicOnlyViewer, userVisibleSql, type ViewerSql } from "../lib/auth.ts";

const TEAM_VISIBILITY = ["private", "limited", "public"] as const;
/** Spec: unknown visibility values normalize to the default, `private`. */
const normVisibility = (v: string | undefined) => (TEAM_VISIBILITY as readonly string[]).includes(v ?? "") ? (v as string) : "private";
const EXT_UNITS = new Set([6, 7]);

const teamCols = { id: col(team.id), orgId: col(team.orgId), visibility: col(team.visibility) };

/** One row per unit of the team, as JSON, for the converter. */
const teamUnitsJson = sql<string>`(SELECT json_group_array(json_array(u.type, u.access_mode)) FROM team_unit u WHERE u.team_id = ${col(team.id)})`;

/** Gitea's convert.ToTeam; `org` null in org-scoped lists, as Gitea. */
export function toTeam(t: TeamRow, unitsJson: string, org: UserRow | null, ctx: Ctx) {
  const units = (JSON.parse(unitsJson || "[]") as [number, number][]).sort((a, b) => a[0] - b[0]);
  const admin = t.authorize >= ACCESS.admin;
  const unitsMap: Record<string, string> = {};
  if (admin) for (const key of Object.values(UNIT_KEY)) unitsMap[key] = ACCESS_NAMES[t.authorize];
  else for (const [type, mode] of units) if (UNIT_KEY[type]) unitsMap[UNIT_KEY[type]] = ACCESS_NAMES[mode] ?? "none";
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    organization: org ? toOrganization(org, site(ctx)) : null,
    includes_all_repositories: t.includesAllRepositories,
    permission: ACCESS_NAMES[t.authorize] ?? "none",
    units: Object.keys(unitsMap),
    units_map: unitsMap,
    can_create_org_repo: t.canCreateOrgRepo,
    visibility: t.visibility,
  };
}

const orgByName = (ctx: Ctx, name: string) =>
  ctx.db
    .select({
      org: user,
      visible: sql<number>`${userVisibleSql(ctx.viewer, col(user.id), col(user.visibility), "org")}`,
      isOwner: sql<number>`${isOrgOwnerSql(col(user.id), ctx.viewer.id)}`,
      isMember: sql<number>`${isOrgMemberSql(col(user.id), ctx.viewer.id)}`,
    })
    .from(user)
    .where(and(eq(user.lowerName, name.toLowerCase()), eq(user.type, 1)))
    .limit(1);

const orgIdSql = (name: string) => sql`(SELECT id FROM user WHERE lower_name = ${name.toLowerCase()} AND type = 1)`;

function assignOrg(rows: { org: UserRow; visible: number; isOwner: number; isMember: number }[]) {
  const o = rows[0];
  if (!o || !o.visible) throw notFound();
  return o;
}

/** GET /orgs/{org}/teams and /orgs/{org}/teams/search: only the teams the viewer may see. */
export async function listOrgTeams(ctx: Ctx, orgName: string, page: Page, search?: { q: string; includeDesc: boolean }) {
  const conds: (SQL | undefined)[] = [sql`${col(team.orgId)} = ${orgIdSql(orgName)}`, teamVisibleSql(ctx, teamCols)];
  const kw = search?.q.trim();
  if (kw) {
    const p = likePattern(kw);
    conds.push(search!.includeDesc ? sql`(${col(team.lowerName)} LIKE ${p} ESCAPE '\\' OR lower(${col(team.description)}) LIKE ${p} ESCAPE '\\')` : sql`${col(team.lowerName)} LIKE ${p} ESCAPE '\\'`);
  }
  const where = and(...conds);
  const { rows } = await readWithCaller(ctx, [
    orgByName(ctx, orgName),
    ctx.db.select({ t: team, units: teamUnitsJson }).from(team).where(where).orderBy(asc(team.lowerName)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(team).where(where),
  ] as const);
  assignOrg(rows[0]);
  return { total: rows[2][0].n, teams: rows[1].map((r) => toTeam(r.t, r.units, null, ctx)) };
}

/** GET /user/teams: the caller's teams, with their organization — those the caller's token may see. */
export async function listMyTeams(ctx: Ctx, page: Page) {
  const where = and(sql`${col(team.id)} IN (SELECT team_id FROM team_user WHERE uid = ${ctx.viewer.id})`, teamVisibleSql(ctx, teamCols));
  const { rows } = await readWithCaller(ctx, [
    ctx.db.select({ t: team, units: teamUnitsJson, org: user }).from(team).innerJoin(user, eq(user.id, team.orgId)).where(where).orderBy(asc(team.id)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(team).where(where),
  ] as const);
  return { total: rows[1][0].n, teams: rows[0].map((r) => toTeam(r.t, r.units, r.org, ctx)) };
}

export interface TeamForm {
  name?: string;
  description?: string;
  includes_all_repositories?: boolean;
  permission?: string;
  units?: string[];
  units_map?: Record<string, string>;
  can_create_org_repo?: boolean;
  visibility?: string;
}

/**
 * Issue 8 B.2: every unit key in `units` and `units_map` must be one Gitea knows, else 422 (never a
 * 500). Keys match case-insensitively, so `units_map` may not name one unit twice (one row per unit).
 */
function checkUnitKeys(form: TeamForm) {
  for (const k of form.units ?? []) if (!unitTypeOfKey(k)) throw unprocessable(`[Units]: unknown unit "${k}"`);
  const seen = new Set<number>();
  for (const k of Object.keys(form.units_map ?? {})) {
    const type = unitTypeOfKey(k);
    if (!type) throw unprocessable(`[UnitsMap]: unknown unit "${k}"`);
    if (seen.has(type)) throw unprocessable(`[UnitsMap]: unit "${k}" is given twice`);
    seen.add(type);
  }
}

const parseMode = (s: string | undefined) => (s === "read" ? ACCESS.read : s === "write" ? ACCESS.write : s === "admin" ? ACCESS.admin : ACCESS.none);

/** Units from units_map (takes precedence) or units; null when neither is given. Every key was checked by checkUnitKeys. */
function unitsFromForm(form: TeamForm, mode: number): [number, number][] | null {
  const map = Object.entries(form.units_map ?? {});
  if (map.length > 0) {
    return map.map(([k, v]) => [unitTypeOfKey(k), parseMode(v)] as [number, number]).map(([t, m]) => [t, EXT_UNITS.has(t) ? Math.min(m, ACCESS.read) : m]);
  }
  if ((form.units ?? []).length > 0) {
    const level = mode === ACCESS.none ? ACCESS.read : mode;
    return [...new Set(form.units!.map(unitTypeOfKey))].map((t) => [t, EXT_UNITS.has(t) ? Math.min(level, ACCESS.read) : level]);
  }
  return null;
}

/** Team mode from the form: the parsed level, or with units_map below admin its minimum non-none level. */
function modeFromForm(form: TeamForm): number {
  let mode: number = parseMode(form.permission);
  const map = Object.entries(form.units_map ?? {}).filter(([k]) => !EXT_UNITS.has(unitTypeOfKey(k)));
  if (mode < ACCESS.admin && map.length > 0) {
    const levels = map.map(([, v]) => parseMode(v)).filter((m) => m > ACCESS.none);
    mode = levels.length ? Math.min(...levels) : ACCESS.none;
  }
  return mode;
}

const adminUnits = (): [number, number][] => Object.keys(UNIT_KEY).map((t) => [Number(t), EXT_UNITS.has(Number(t)) ? ACCESS.read : ACCESS.admin]);

/** POST /orgs/{org}/teams (orgCreateTeam): team rule 3. */
export async function createTeam(ctx: Ctx, orgName: string, form: TeamForm & { name: string }) {
  const { caller, rows } = await readWithCaller(ctx, [orgByName(ctx, orgName)] as const);
  const o = assignOrg(rows[0]);
  // Gitea's teams group: reqOrgMembership, then reqOrgOwnership (each with its own refusal).
  reqOrgMembership(caller, o);
  reqOrgOwnership(caller, o);
  checkUnitKeys(form);
  let mode: number = modeFromForm(form);
  let units: [number, number][];
  if (mode >= ACCESS.admin) units = adminUnits();
  else {
    const u = unitsFromForm(form, mode);
    if (!u) throw new ApiError(500, "units permission should not be empty");
    if (mode === ACCESS.none && !Object.keys(form.units_map ?? {}).length) mode = ACCESS.read;
    units = u;
  }
  const orgId = o.org.id;
  const lower = form.name.toLowerCase();
  const tid = sql`(SELECT id FROM team WHERE org_id = ${orgId} AND lower_name = ${lower})`;
  const now = nowUnix();
  try {
    const res = await writeBatch(ctx, [
      ctx.db.insert(team).values({
        orgId,
        name: form.name,
        lowerName: lower,
        description: form.description ?? "",
        authorize: mode,
        includesAllRepositories: form.includes_all_repositories ?? false,
        canCreateOrgRepo: form.can_create_org_repo ?? false,
        visibility: normVisibility(form.visibility),
        createdUnix: now,
        updatedUnix: now,
      }),
      ctx.db.insert(teamUnit).values(units.map(([type, accessMode]) => ({ orgId, teamId: tid, type, accessMode }))),
      ctx.db.update(user).set({ numTeams: sql`${col(user.numTeams)} + 1` }).where(eq(user.id, orgId)),
      ctx.db.select({ t: team, units: teamUnitsJson }).from(team).where(eq(team.id, tid)),
    ] as const);
    return toTeam(res[3][0].t, res[3][0].units, o.org, ctx);
  } catch (err) {
    if (uniqueViolation(err)?.includes("team.org_id")) throw unprocessable(`team already exists [org_id: ${orgId}, name: ${form.name}]`);
    throw err;
  }
}

/** The team in the path with the viewer's relation to it, in the same batch as the route's reads. */
function teamFacts(ctx: Ctx, id: number) {
  return ctx.db
    .select({
      t: team,
      units: teamUnitsJson,
      org: user,
      visible: sql<number>`${teamVisibleSql(ctx, teamCols)}`,
      isOwner: sql<number>`${isOrgOwnerSql(col(team.orgId), ctx.viewer.id)}`,
      isOrgMember: sql<number>`${isOrgMemberSql(col(team.orgId), ctx.viewer.id)}`,
      isTeamMember: sql<number>`EXISTS (SELECT 1 FROM team_user ttu WHERE ttu.team_id = ${col(team.id)} AND ttu.uid = ${ctx.viewer.id})`,
    })
    .from(team)
    .innerJoin(user, eq(user.id, team.orgId))
    .where(eq(team.id, id))
    .limit(1);
}
type TeamFacts = Awaited<ReturnType<typeof teamFacts>>[number];

async function assignTeam<T extends readonly unknown[]>(ctx: Ctx, id: number, extra: T = [] as unknown as T) {
  const { caller, rows } = await readWithCaller(ctx, [teamFacts(ctx, id), ...(extra as unknown as [])] as never);
  const all = rows as unknown as unknown[][];
  const f = (all[0] as TeamFacts[])[0];
  if (!f || !f.visible) throw notFound();
  return { caller, f, rows: all.slice(1) };
}


/** reqTeamMembership, then reqOrgOwnership with only the team in the path: 404 for non-owners (Gitea). */
const reqTeamOrgOwner = (caller: Caller | null, f: TeamFacts) => {
  reqTeamMembership(caller, f);
  if (!caller?.isAdmin && !f.isOwner) throw notFound();
};

/** GET /teams/{id} (orgGetTeam). */
export async function getTeam(ctx: Ctx, id: number) {
  const { f } = await assignTeam(ctx, id);
  return toTeam(f.t, f.units, f.org, ctx);
}

/** PATCH /teams/{id} (orgEditTeam): team rule 4. */
export async function editTeam(ctx: Ctx, id: number, form: TeamForm) {
  const { caller, f } = await assignTeam(ctx, id);
  reqTeamOrgOwner(caller, f);
  checkUnitKeys(form);
  const t = f.t;
  const owners = t.authorize === ACCESS.owner;
  const patch: Partial<typeof team.$inferInsert> = { updatedUnix: nowUnix() };
  if (form.name) {
    patch.name = form.name;
    patch.lowerName = form.name.toLowerCase();
  }
  if (form.description !== undefined) patch.description = form.description;
  if (owners) patch.canCreateOrgRepo = true;
  else if (form.can_create_org_repo !== undefined) patch.canCreateOrgRepo = form.can_create_org_repo;
  if (!owners && form.visibility !== undefined) patch.visibility = normVisibility(form.visibility);
  let mode = t.authorize;
  if (!owners && form.permission) {
    mode = modeFromForm(form);
    patch.authorize = mode;
    if (form.includes_all_repositories !== undefined) patch.includesAllRepositories = form.includes_all_repositories;
  }
  const stmts: unknown[] = [];
  if (!owners) {
    const units = mode >= ACCESS.admin ? adminUnits() : unitsFromForm(form, mode);
    if (units) {
      stmts.push(ctx.db.delete(teamUnit).where(eq(teamUnit.teamId, t.id)));
      stmts.push(ctx.db.insert(teamUnit).values(units.map(([type, accessMode]) => ({ orgId: t.orgId, teamId: t.id, type, accessMode }))));
    }
  }
  try {
    const res = (await writeBatch(ctx, [
      ctx.db.update(team).set(patch).where(eq(team.id, t.id)),
      ...stmts,
      ctx.db.select({ t: team, units: teamUnitsJson }).from(team).where(eq(team.id, t.id)),
    ] as never)) as unknown as unknown[][];
    const row = (res.at(-1) as { t: TeamRow; units: string }[])[0];
    return toTeam(row.t, row.units, f.org, ctx);
  } catch (err) {
    if (uniqueViolation(err)?.includes("team.org_id")) throw unprocessable(`team already exists [org_id: ${t.orgId}, name: ${form.name}]`);
    throw err;
  }
}

/** SQL: `uid` is in no team of `orgId` any more (so the org membership ends too). */
const leaveOrgIfNoTeam = (ctx: Ctx, orgId: number, uid: number) =>
  ctx.db.delete(orgUser).where(and(eq(orgUser.orgId, orgId), eq(orgUser.uid, uid), sql`NOT EXISTS (SELECT 1 FROM team_user x WHERE x.org_id = ${orgId} AND x.uid = ${uid})`));

/** DELETE /teams/{id} (orgDeleteTeam): the Owners team cannot be deleted. */
export async function deleteTeam(ctx: Ctx, id: number) {
  const { caller, f, rows } = await assignTeam(ctx, id, [ctx.db.select({ uid: teamUser.uid }).from(teamUser).where(eq(teamUser.teamId, id))] as const);
  reqTeamOrgOwner(caller, f);
  if (f.t.authorize === ACCESS.owner) throw unprocessable("the Owners team cannot be deleted");
  const members = (rows[0] as { uid: number }[]).map((r) => r.uid);
  await writeBatch(ctx, [
    ctx.db.delete(teamUnit).where(eq(teamUnit.teamId, id)),
    ctx.db.delete(teamRepo).where(eq(teamRepo.teamId, id)),
    ctx.db.delete(teamUser).where(eq(teamUser.teamId, id)),
    ctx.db.delete(team).where(eq(team.id, id)),
    ...members.map((uid) => leaveOrgIfNoTeam(ctx, f.t.orgId, uid)),
    ctx.db.run(sql`UPDATE user SET num_teams = num_teams - 1, num_members = (SELECT COUNT(*) FROM org_user WHERE org_id = ${f.t.orgId}) WHERE id = ${f.t.orgId}`),
  ] as never);
}

/**
 * GET /teams/{id}/members (orgListTeamMembers): the members the caller may see; X-Total-Count
 * counts the same, so it is the team's member count for everyone who may see every member (team
 * rule 6) and reveals no hidden member to anyone else.
 */
export async function listTeamMembers(ctx: Ctx, id: number, page: Page) {
  const where = and(eq(teamUser.teamId, id), userVisibleSql(ctx.viewer, col(user.id), col(user.visibility), "user"));
  const { caller, rows } = await assignTeam(ctx, id, [
    ctx.db.select({ u: user }).from(teamUser).innerJoin(user, eq(user.id, teamUser.uid)).where(where).orderBy(asc(user.lowerName)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(teamUser).innerJoin(user, eq(user.id, teamUser.uid)).where(where),
  ] as const);
  const viewer = viewerOf(caller);
  return { total: (rows[1] as { n: number }[])[0].n, users: (rows[0] as { u: UserRow }[]).map((r) => toUser(r.u, viewer, site(ctx))) };
}

/** The user in the path and whether it is in the team; a user the viewer may not see is absent (writes pass `publicOnlyViewer`). */
const memberRow = (id: number, username: string, ctx: Ctx, viewer: ViewerSql = ctx.viewer) =>
  ctx.db
    .select({ u: user, inTeam: sql<number>`EXISTS (SELECT 1 FROM team_user m WHERE m.team_id = ${id} AND m.uid = ${col(user.id)})` })
    .from(user)
    .where(and(eq(user.lowerName, username.toLowerCase()), userVisibleSql(viewer, col(user.id), col(user.visibility), col(user.type))))
    .limit(1);

/** GET /teams/{id}/members/{username} (orgListTeamMember): 404 unless a member. */
export async function getTeamMember(ctx: Ctx, id: number, username: string) {
  const { caller, rows } = await assignTeam(ctx, id, [memberRow(id, username, ctx)] as const);
  const m = (rows[0] as { u: UserRow; inTeam: number }[])[0];
  if (!m || !m.inTeam) throw notFound();
  return toUser(m.u, viewerOf(caller), site(ctx));
}

/** PUT /teams/{id}/members/{username} (orgAddTeamMember): team rule 6; joins the org too. */
export async function addTeamMember(ctx: Ctx, id: number, username: string) {
  const { caller, f, rows } = await assignTeam(ctx, id, [
    memberRow(id, username, ctx, publicOnlyViewer(ctx.viewer)),
    ctx.db.select({ id: userBlocking.id }).from(userBlocking).where(sql`${col(userBlocking.blockerId)} = (SELECT org_id FROM team WHERE id = ${id}) AND ${col(userBlocking.blockeeId)} = (SELECT id FROM user WHERE lower_name = ${username.toLowerCase()})`).limit(1),
  ] as const);
  reqTeamOrgOwner(caller, f);
  const m = (rows[0] as { u: UserRow; inTeam: number }[])[0];
  if (!m || m.u.type !== 0) throw notFound();
  if ((rows[1] as unknown[]).length > 0) throw forbidden("user is blocked by the organization");
  if (m.inTeam) return;
  const orgId = f.t.orgId;
  await writeBatch(ctx, [
    ctx.db.insert(teamUser).values({ orgId, teamId: id, uid: m.u.id }).onConflictDoNothing(),
    ctx.db.insert(orgUser).values({ orgId, uid: m.u.id }).onConflictDoNothing(),
    ctx.db.run(sql`UPDATE team SET num_members = (SELECT COUNT(*) FROM team_user WHERE team_id = ${id}) WHERE id = ${id}`),
    ctx.db.run(sql`UPDATE user SET num_members = (SELECT COUNT(*) FROM org_user WHERE org_id = ${orgId}) WHERE id = ${orgId}`),
  ] as never);
}

/** DELETE /teams/{id}/members/{username} (orgRemoveTeamMember): the last owner stays. */
export async function removeTeamMember(ctx: Ctx, id: number, username: string) {
  const { caller, f, rows } = await assignTeam(ctx, id, [memberRow(id, username, ctx, publicOnlyViewer(ctx.viewer))] as const);
  reqTeamOrgOwner(caller, f);
  const m = (rows[0] as { u: UserRow; inTeam: number }[])[0];
  if (!m) throw notFound();
  if (!m.inTeam) return;
  const orgId = f.t.orgId;
  const lastOwner = f.t.authorize === ACCESS.owner ? sql`(SELECT COUNT(*) FROM team_user WHERE team_id = ${id}) <= 1` : sql`0`;
  try {
    await writeBatch(ctx, [
      guard(ctx.db, lastOwner),
      ctx.db.delete(teamUser).where(and(eq(teamUser.teamId, id), eq(teamUser.uid, m.u.id))),
      leaveOrgIfNoTeam(ctx, orgId, m.u.id),
      ctx.db.run(sql`UPDATE team SET num_members = (SELECT COUNT(*) FROM team_user WHERE team_id = ${id}) WHERE id = ${id}`),
      ctx.db.run(sql`UPDATE user SET num_members = (SELECT COUNT(*) FROM org_user WHERE org_id = ${orgId}) WHERE id = ${orgId}`),
    ] as never);
  } catch (err) {
    if (isGuardTrip(err)) throw unprocessable(`user is the last member of owner team [uid: ${m.u.id}]`);
    throw err;
  }
}

/** SQL: the repository is assigned to the team (or the team includes all repositories of its org). */
const inTeamSql = (id: number) =>
  sql`(${col(repository.ownerId)} = (SELECT org_id FROM team WHERE id = ${id}) AND ((SELECT includes_all_repositories FROM team WHERE id = ${id}) = 1
    OR EXISTS (SELECT 1 FROM team_repo itr WHERE itr.team_id = ${id} AND itr.repo_id = ${col(repository.id)})))`;

/** GET /teams/{id}/repos (orgListTeamRepos): team rule 5 — only repositories the caller may access, counted alike. */
export async function listTeamRepos(ctx: Ctx, id: number, page: Page) {
  const where = and(inTeamSql(id), repoAccessibleSql(ctx.viewer));
  const { caller, rows } = await assignTeam(ctx, id, [
    ctx.db.select(repoFactsColumns(ctx.viewer)).from(repository).innerJoin(user, eq(user.id, repository.ownerId)).where(where).orderBy(asc(repository.lowerName)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(repository).where(where),
  ] as const);
  const disabled = ctx.settings.repository.disabledRepoUnits;
  const data = (rows[0] as RepoFacts[]).map((f) => {
    return repoJson(ctx, caller, repoViewOf(caller, f, disabled));
  });
  return { total: (rows[1] as { n: number }[])[0].n, data };
}

const repoInOrg = (ctx: Ctx, orgName: string, repoName: string) =>
  ctx.db
    .select(repoFactsColumns(ctx.viewer))
    .from(repository)
    .innerJoin(user, eq(user.id, repository.ownerId))
    .where(and(eq(user.lowerName, orgName.toLowerCase()), eq(repository.lowerName, repoName.toLowerCase())))
    .limit(1);

/** The repository of {org}/{repo} for a team route: it must exist, be accessible and belong to the team's org. */
function teamRepoTarget(ctx: Ctx, caller: Caller | null, f: TeamFacts, rows: unknown[][]) {
  const rf = (rows[0] as RepoFacts[])[0];
  if (!rf || rf.repo.ownerId !== f.t.orgId) throw notFound();
  const view = repoViewOf(caller, rf, ctx.settings.repository.disabledRepoUnits);
  if (!view.perm.mode && ![...view.perm.units.values()].some((m) => m > 0)) throw notFound();
  return view;
}

/** GET /teams/{id}/repos/{org}/{repo} (orgListTeamRepo): 404 unless assigned and accessible. */
export async function getTeamRepo(ctx: Ctx, id: number, orgName: string, repoName: string) {
  const { caller, f, rows } = await assignTeam(ctx, id, [
    repoInOrg(ctx, orgName, repoName),
    ctx.db.select({ n: count() }).from(repository).innerJoin(user, eq(user.id, repository.ownerId)).where(and(eq(user.lowerName, orgName.toLowerCase()), eq(repository.lowerName, repoName.toLowerCase()), inTeamSql(id))),
  ] as const);
  const view = teamRepoTarget(ctx, caller, f, rows);
  if (!(rows[1] as { n: number }[])[0].n) throw notFound();
  return repoJson(ctx, caller, view);
}

/** PUT / DELETE /teams/{id}/repos/{org}/{repo}: team rule 7 — admin access on the repository, same org. */
export async function setTeamRepo(ctx: Ctx, id: number, orgName: string, repoName: string, add: boolean) {
  const { caller, f, rows } = await assignTeam(ctx, id, [repoInOrg(ctx, orgName, repoName)] as const);
  reqTeamMembership(caller, f);
  const { repo, perm } = teamRepoTarget(ctx, caller, f, rows);
  if (!isRepoAdmin(perm) && !caller?.isAdmin) throw forbidden("Must have admin-level access to the repository");
  // A team that includes all repositories of its organization already has this one, and keeps it
  // (Gitea ignores both requests): nothing to write.
  if (f.t.includesAllRepositories) return;
  const recount = ctx.db.run(sql`UPDATE team SET num_repos = (SELECT COUNT(*) FROM team_repo WHERE team_id = ${id}) WHERE id = ${id}`);
  await writeBatch(ctx, [
    add
      ? ctx.db.insert(teamRepo).values({ orgId: f.t.orgId, teamId: id, repoId: repo.id }).onConflictDoNothing()
      : ctx.db.delete(teamRepo).where(and(eq(teamRepo.teamId, id), eq(teamRepo.repoId, repo.id))),
    recount,
  ] as never);
}

/** GET /teams/{id}/activities/feeds (orgListTeamActivityFeeds): activity of the team's repositories the caller may access. */
export async function teamFeeds(ctx: Ctx, id: number, date: string | undefined, page: Page) {
  const teamRepoIds = sql`(SELECT r.id FROM repository r WHERE r.owner_id = (SELECT org_id FROM team WHERE id = ${id})
    AND ((SELECT includes_all_repositories FROM team WHERE id = ${id}) = 1 OR EXISTS (SELECT 1 FROM team_repo itr WHERE itr.team_id = ${id} AND itr.repo_id = r.id)))`;
  const where = and(
    sql`${col(action.repoId)} IN ${teamRepoIds}`,
    accessibleRepo(ctx, col(action.repoId)),
    sql`${col(action.userId)} = (SELECT org_id FROM team WHERE id = ${id})`,
    actorVisible(ctx, sql`au.id = (SELECT org_id FROM team WHERE id = ${id})`),
    dayFilter(date),
  )!;
  const { caller, rows } = await assignTeam(ctx, id, feedReads(ctx, where, page));
  return renderFeeds(ctx, caller, rows);
}
