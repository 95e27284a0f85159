/**
 * Teams (spec "Teams", Gitea routers/api/v1/org/team.go): visibility-filtered lists and search,
 * create/edit with the permission/unit rules, membership, repository assignment and feeds.
 * Every read is one batch with the caller; every write one more batch. The statements are the
 * query layer's (db/queries/teams.ts), built once.
 */
import { uniqueViolation } from "../db/client.ts";
import type { TeamRow, UserRow } from "../db/schema.ts";
import { orgByName } from "../db/queries/accounts.ts";
import { teamFeed } from "../db/queries/feeds.ts";
import {
  ADD_MEMBER,
  CREATE_TEAM,
  DELETE_TEAM,
  lastOwnerGuard,
  memberCountOfTeam,
  memberOfTeam,
  memberOfTeamForWrite,
  membersOfTeam,
  myTeamCount,
  myTeams,
  REMOVE_MEMBER,
  REPLACE_UNITS,
  reposOfTeam,
  TEAM_REPO,
  teamById,
  teamFacts,
  teamHasRepoAt,
  teamRepoAt,
  teamsOfOrg,
  updateTeam,
  type TeamFacts,
  type TeamSearch,
  type TeamValues,
} from "../db/queries/teams.ts";
import { only, patchKeys, type Bound } from "../db/sql.ts";
import { toOrganization, toUser } from "../convert/user.ts";
import type { Caller } from "../lib/auth.ts";
import { read, write, type BindGuard, type Ctx, type NamedReads } from "../lib/context.ts";
import { ApiError, forbidden, notFound, unprocessable } from "../lib/errors.ts";
import { reqOrgMembership, reqOrgOwnership, reqTeamMembership } from "../lib/guards.ts";
import type { Page } from "../lib/pagination.ts";
import { idOf } from "../lib/openapi.ts";
import { ACCESS, ACCESS_NAMES, isRepoAdmin, UNIT_KEY, unitTypeOfKey, repoViewOf, type RepoFacts } from "../lib/permissions.ts";
import { isGuardTrip, likePattern, nowUnix, site, viewerOf } from "./common.ts";
import { pageJson, repoJson, withParent } from "./repos.ts";
import { repoAtOf, repoAtPathWithParent, repoPath } from "../db/queries/repos.ts";
import { feedPage, pageValues } from "./feeds.ts";

const TEAM_VISIBILITY = ["private", "limited", "public"] as const;
/** Spec: unknown visibility values normalize to the default, `private`. */
const normVisibility = (v: string | undefined) => ((TEAM_VISIBILITY as readonly (string | undefined)[]).includes(v) ? (v as string) : "private");
const EXT_UNITS = new Set([6, 7]);

/** Gitea's convert.ToTeam; `org` null in org-scoped lists, as Gitea. */
export function toTeam(t: TeamRow, unitsJson: string, org: UserRow | null, ctx: Ctx) {
  const units = (JSON.parse(unitsJson || "[]") as [number, number][]).sort((a, b) => a[0] - b[0]);
  const admin = t.authorize >= ACCESS.admin;
  const unitsMap: Record<string, string> = {};
  if (admin) for (const key of Object.values(UNIT_KEY)) unitsMap[key] = ACCESS_NAMES[t.authorize]!; // !: admin or owner, both named
  else
    for (const [type, mode] of units) {
      const key = UNIT_KEY[type];
      if (key) unitsMap[key] = ACCESS_NAMES[mode] ?? "none";
    }
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

/** The organization in the path; one the viewer may not see answers as a missing one. */
function assignOrg<T extends { visible: boolean }>(rows: T[]) {
  const o = rows[0];
  if (!o || !o.visible) throw notFound();
  return o;
}

/** GET /orgs/{org}/teams and /orgs/{org}/teams/search: only the teams the viewer may see. */
export async function listOrgTeams(ctx: Ctx, orgName: string, page: Page, search?: { q: string; includeDesc: boolean }) {
  const kw = search?.q.trim();
  const kind: TeamSearch = !kw ? "none" : search!.includeDesc ? "nameOrDescription" : "name";
  const st = teamsOfOrg(kind);
  const v = { ...ctx.vv, name: orgName.toLowerCase(), org: orgName.toLowerCase(), ...(kw ? { pattern: likePattern(kw) } : {}) };
  const out = await read(ctx, { org: orgByName.bind(v), teams: st.page.bind({ ...v, limit: page.limit, offset: page.offset }), total: st.total.bind(v) });
  assignOrg(out.org);
  return { total: out.total[0] ?? 0, teams: out.teams.map((r) => toTeam(r.t, r.units, null, ctx)) };
}

/** GET /user/teams: the caller's teams, with their organization — those the caller's token may see. */
export async function listMyTeams(ctx: Ctx, page: Page) {
  const out = await read(ctx, { teams: myTeams.bind({ ...ctx.vv, limit: page.limit, offset: page.offset }), total: myTeamCount.bind(ctx.vv) });
  return { total: out.total[0] ?? 0, teams: out.teams.map((r) => toTeam(r.t, r.units, r.org, ctx)) };
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

/** The organization of POST /orgs/{org}/teams, with Gitea's guards: reqOrgMembership, then reqOrgOwnership (each its own refusal). */
async function assignTeamCreator(ctx: Ctx, orgName: string) {
  const out = await read(ctx, { org: orgByName.bind({ ...ctx.vv, name: orgName.toLowerCase() }) });
  const o = assignOrg(out.org);
  reqOrgMembership(out.caller, o);
  reqOrgOwnership(out.caller, o);
  return o;
}

/** orgCreateTeam's guards before its body is bound. */
export const teamCreateGuard: BindGuard = async (ctx, params) => {
  await assignTeamCreator(ctx, params.org ?? "");
};

/** POST /orgs/{org}/teams (orgCreateTeam): team rule 3. */
export async function createTeam(ctx: Ctx, orgName: string, form: TeamForm & { name: string }) {
  const o = await assignTeamCreator(ctx, orgName);
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
  const now = nowUnix();
  const values: TeamValues = {
    orgId,
    name: form.name,
    lowerName: form.name.toLowerCase(),
    description: form.description ?? "",
    authorize: mode,
    includesAllRepositories: form.includes_all_repositories ?? false,
    canCreateOrgRepo: form.can_create_org_repo ?? false,
    visibility: normVisibility(form.visibility),
    createdUnix: now,
    updatedUnix: now,
  };
  try {
    const { created } = await write(
      ctx,
      [CREATE_TEAM.orgExists.bind(values), CREATE_TEAM.team.bind(values), CREATE_TEAM.units.bind({ ...values, units: JSON.stringify(units) }), CREATE_TEAM.orgCount.bind(values)],
      { created: CREATE_TEAM.row.bind(values) },
    );
    const team = only(created, "createdTeam");
    return toTeam(team.t, team.units, o.org, ctx);
  } catch (err) {
    if (uniqueViolation(err)?.includes("team.org_id")) throw unprocessable(`team already exists [org_id: ${orgId}, name: ${form.name}]`);
    throw err;
  }
}

/** The team in the path with the viewer's relation to it, in one round trip with the route's reads (`reads`). */
async function assignTeam<N extends NamedReads>(ctx: Ctx, id: number, reads: N = {} as N) {
  const out = await read<{ team: Bound<TeamFacts> } & N>(ctx, { team: teamFacts.bind({ ...ctx.vv, id }), ...reads });
  // TypeScript cannot resolve the one key it adds to the caller's generic reads.
  const f = (out.team as TeamFacts[])[0];
  if (!f || !f.visible) throw notFound();
  return { caller: out.caller, f, named: out };
}

/** reqTeamMembership, then reqOrgOwnership with only the team in the path: 404 for non-owners (Gitea). */
const reqTeamOrgOwner = (caller: Caller | null, f: TeamFacts) => {
  reqTeamMembership(caller, f);
  if (!caller?.isAdmin && !f.isOwner) throw notFound();
};

/** orgEditTeam's guards before its body is bound: the team (404), reqOrgOwnership. */
export const teamEditGuard: BindGuard = async (ctx, params) => {
  const { caller, f } = await assignTeam(ctx, idOf(params.id ?? ""));
  reqTeamOrgOwner(caller, f);
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
  const patch: Partial<TeamValues> = { updatedUnix: nowUnix() };
  if (form.name) {
    patch.name = form.name;
    patch.lowerName = form.name.toLowerCase();
  }
  // A field the form leaves out is undefined, which patchKeys leaves out of the statement.
  patch.description = form.description;
  patch.canCreateOrgRepo = owners ? true : form.can_create_org_repo;
  if (!owners && form.visibility !== undefined) patch.visibility = normVisibility(form.visibility);
  let mode = t.authorize;
  if (!owners && form.permission) {
    mode = modeFromForm(form);
    patch.authorize = mode;
    patch.includesAllRepositories = form.includes_all_repositories;
  }
  const stmts: Bound<unknown>[] = [updateTeam(patchKeys(patch)).bind({ ...patch, id: t.id })];
  if (!owners) {
    const units = mode >= ACCESS.admin ? adminUnits() : unitsFromForm(form, mode);
    if (units) {
      const v = { id: t.id, orgId: t.orgId, units: JSON.stringify(units) };
      stmts.push(...REPLACE_UNITS.map((c) => c.bind(v)));
    }
  }
  try {
    const { row } = await write(ctx, stmts, { row: teamById.bind({ id: t.id }) });
    // Another request may have deleted the team since it was read: the update changed nothing.
    const team = row[0];
    if (!team) throw notFound();
    return toTeam(team.t, team.units, f.org, ctx);
  } catch (err) {
    if (uniqueViolation(err)?.includes("team.org_id")) throw unprocessable(`team already exists [org_id: ${t.orgId}, name: ${form.name}]`);
    throw err;
  }
}

/** DELETE /teams/{id} (orgDeleteTeam): the Owners team cannot be deleted. */
export async function deleteTeam(ctx: Ctx, id: number) {
  const { caller, f } = await assignTeam(ctx, id);
  reqTeamOrgOwner(caller, f);
  if (f.t.authorize === ACCESS.owner) throw unprocessable("the Owners team cannot be deleted");
  const v = { id, orgId: f.t.orgId };
  await write(ctx, DELETE_TEAM.map((c) => c.bind(v)));
}

/**
 * GET /teams/{id}/members (orgListTeamMembers): the members the caller may see; X-Total-Count
 * counts the same, so it is the team's member count for everyone who may see every member (team
 * rule 6) and reveals no hidden member to anyone else.
 */
export async function listTeamMembers(ctx: Ctx, id: number, page: Page) {
  const v = { ...ctx.vv, id };
  const { caller, named } = await assignTeam(ctx, id, { users: membersOfTeam.bind({ ...v, limit: page.limit, offset: page.offset }), total: memberCountOfTeam.bind(v) });
  const viewer = viewerOf(caller);
  return { total: named.total[0] ?? 0, users: named.users.map((u) => toUser(u, viewer, site(ctx))) };
}

/** GET /teams/{id}/members/{username} (orgListTeamMember): 404 unless a member. */
export async function getTeamMember(ctx: Ctx, id: number, username: string) {
  const { caller, named } = await assignTeam(ctx, id, { member: memberOfTeam.bind({ ...ctx.vv, id, name: username.toLowerCase() }) });
  const m = named.member[0];
  if (!m || !m.inTeam) throw notFound();
  return toUser(m.u, viewerOf(caller), site(ctx));
}

/** PUT /teams/{id}/members/{username} (orgAddTeamMember): team rule 6; joins the org too. */
export async function addTeamMember(ctx: Ctx, id: number, username: string) {
  const { caller, f, named } = await assignTeam(ctx, id, { member: memberOfTeamForWrite.bind({ ...ctx.vv, id, name: username.toLowerCase() }) });
  reqTeamOrgOwner(caller, f);
  const m = named.member[0];
  if (!m || m.u.type !== 0) throw notFound();
  if (m.blocked) throw forbidden("user is blocked by the organization");
  if (m.inTeam) return;
  const v = { id, orgId: f.t.orgId, uid: m.u.id };
  await write(ctx, ADD_MEMBER.map((c) => c.bind(v)));
}

/** DELETE /teams/{id}/members/{username} (orgRemoveTeamMember): the last owner stays. */
export async function removeTeamMember(ctx: Ctx, id: number, username: string) {
  const { caller, f, named } = await assignTeam(ctx, id, { member: memberOfTeamForWrite.bind({ ...ctx.vv, id, name: username.toLowerCase() }) });
  reqTeamOrgOwner(caller, f);
  const m = named.member[0];
  if (!m) throw notFound();
  if (!m.inTeam) return;
  const v = { id, orgId: f.t.orgId, uid: m.u.id };
  // The Owners team keeps its last member: checked at write time, closing the race of two removals.
  const guard = f.t.authorize === ACCESS.owner ? [lastOwnerGuard.bind(v)] : [];
  try {
    await write(ctx, [...guard, ...REMOVE_MEMBER.map((c) => c.bind(v))]);
  } catch (err) {
    if (isGuardTrip(err)) throw unprocessable(`user is the last member of owner team [uid: ${m.u.id}]`);
    throw err;
  }
}

/** GET /teams/{id}/repos (orgListTeamRepos): team rule 5 — only repositories the caller may access, counted alike. */
export async function listTeamRepos(ctx: Ctx, id: number, page: Page) {
  const v = { ...ctx.vv, id };
  const { caller, named } = await assignTeam(ctx, id, { list: reposOfTeam.bind({ ...v, limit: page.limit, offset: page.offset }) });
  return pageJson(ctx, caller, named.list);
}

/** Repository {org}/{repo} for a team route, with whether it is the team's. */
const repoInOrg = (ctx: Ctx, id: number, orgName: string, repoName: string) => teamRepoAt.bind({ ...ctx.vv, id, org: orgName.toLowerCase(), repo: repoName.toLowerCase() });

/** The repository of {org}/{repo} for a team route: it must exist, be accessible and belong to the team's org. */
function teamRepoTarget(ctx: Ctx, caller: Caller | null, f: TeamFacts, rf: RepoFacts | undefined) {
  if (!rf || rf.repo.ownerId !== f.t.orgId) throw notFound();
  const view = repoViewOf(caller, rf, ctx.settings.repository.disabledRepoUnits);
  if (!view.perm.mode && ![...view.perm.units.values()].some((m) => m > 0)) throw notFound();
  return view;
}

/** GET /teams/{id}/repos/{org}/{repo} (orgListTeamRepo): 404 unless assigned and accessible. */
export async function getTeamRepo(ctx: Ctx, id: number, orgName: string, repoName: string) {
  const path = repoPath(orgName, repoName);
  const { caller, f, named } = await assignTeam(ctx, id, {
    at: repoAtPathWithParent.bind({ ...ctx.vv, ...path }),
    inTeam: teamHasRepoAt.bind({ id, org: path.owner, repo: path.name }),
  });
  // The repository as GET /repos/{owner}/{repo} shows it: mirror times and a fork's parent included.
  const { facts, mirror, parent } = repoAtOf(named.at);
  const view = teamRepoTarget(ctx, caller, f, facts ?? undefined);
  if (!named.inTeam[0]) throw notFound();
  return repoJson(ctx, caller, withParent(ctx, caller, { ...view, mirror }, parent));
}

/** PUT / DELETE /teams/{id}/repos/{org}/{repo}: team rule 7 — admin access on the repository, same org. */
export async function setTeamRepo(ctx: Ctx, id: number, orgName: string, repoName: string, add: boolean) {
  const { caller, f, named } = await assignTeam(ctx, id, { repo: repoInOrg(ctx, id, orgName, repoName) });
  reqTeamMembership(caller, f);
  const { repo, perm } = teamRepoTarget(ctx, caller, f, named.repo[0]?.facts);
  if (!isRepoAdmin(perm) && !caller?.isAdmin) throw forbidden("Must have admin-level access to the repository");
  // A team that includes all repositories of its organization already has this one, and keeps it
  // (Gitea ignores both requests): nothing to write.
  if (f.t.includesAllRepositories) return;
  const v = { id, orgId: f.t.orgId, repoId: repo.id };
  await write(ctx, (add ? TEAM_REPO.add : TEAM_REPO.remove).map((c) => c.bind(v)));
}

/** GET /teams/{id}/activities/feeds (orgListTeamActivityFeeds): activity of the team's repositories the caller may access. */
export async function teamFeeds(ctx: Ctx, id: number, date: string | undefined, page: Page) {
  const { day, ...values } = pageValues(ctx, date, page);
  const st = teamFeed(day);
  const v = { ...ctx.vv, id, ...values };
  const { caller, named } = await assignTeam(ctx, id, { actions: st.actions.bind(v), total: st.total.bind(v), repos: st.repos.bind(v) });
  return feedPage(ctx, caller, named.actions, named.total[0] ?? 0, named.repos);
}
