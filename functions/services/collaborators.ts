/** Collaborators, reviewers and assignees (Gitea routers/api/v1/repo/collaborators.go): spec rules 1–5. */
import {
  assigneesOfRepo,
  collaboratorAt,
  collaboratorCountOfRepo,
  collaboratorForWrite,
  collaboratorsOfRepo,
  deleteCollaborator as deleteCollaboratorCmd,
  factsForLogin,
  loginUser,
  reviewersOfRepo,
  collaboratorTargetsExist,
  setCollaborator,
} from "../db/queries/collaborators.ts";
import { repoPath } from "../db/queries/repos.ts";
import { only } from "../db/sql.ts";
import { toUser } from "../convert/user.ts";
import { write, type Ctx } from "../lib/context.ts";
import { ApiError, forbidden, notFound, unprocessable } from "../lib/errors.ts";
import { reqRepoAdmin } from "../lib/guards.ts";
import type { Page } from "../lib/pagination.ts";
import { ACCESS, ACCESS_NAMES, canWrite, isRepoAdmin, parseUnits, repoPermission, UNIT, type PermissionSubject } from "../lib/permissions.ts";
import { nowUnix, site, viewerOf } from "./common.ts";
import { assignRepo } from "./repos.ts";

const userNotExist = (name: string) => unprocessable(`user does not exist [uid: 0, name: ${name}]`);

/**
 * GET …/collaborators (repoListCollaborators). Gitea's reqAnyRepoReader needs no call here or on the
 * other reads: assignRepo answers 404 to every caller without access, so it could only pass.
 */
export async function listCollaborators(ctx: Ctx, owner: string, name: string, page: Page) {
  const v = { ...ctx.vv, ...repoPath(owner, name) };
  const a = await assignRepo(ctx, owner, name, { users: collaboratorsOfRepo.bind({ ...v, limit: page.limit, offset: page.offset }), total: collaboratorCountOfRepo.bind(v) });
  const viewer = viewerOf(a.caller);
  return { total: a.named.total[0] ?? 0, users: a.named.users.map((u) => toUser(u, viewer, site(ctx))) };
}

/** The values of a statement about user {collaborator} of the repository in the path. */
const loginValues = (ctx: Ctx, owner: string, name: string, login: string) => ({ ...ctx.vv, ...repoPath(owner, name), login: login.toLowerCase() });

/** GET …/collaborators/{collaborator} (repoCheckCollaborator): rule 1 — 204 / 404; unknown user 422. */
export async function isCollaborator(ctx: Ctx, owner: string, name: string, login: string) {
  const a = await assignRepo(ctx, owner, name, { user: collaboratorAt.bind(loginValues(ctx, owner, name, login)) });
  const u = a.named.user[0];
  if (!u) throw userNotExist(login);
  if (!u.isCollaborator) throw notFound();
}

/** PUT …/collaborators/{collaborator} (repoAddCollaborator): rules 1–2; default permission write. */
export async function addCollaborator(ctx: Ctx, owner: string, name: string, login: string, permission: "read" | "write" | "admin" | undefined) {
  const a = await assignRepo(ctx, owner, name, { user: collaboratorForWrite.bind(loginValues(ctx, owner, name, login)) });
  reqRepoAdmin(a.caller, a.perm);
  const found = a.named.user[0];
  if (!found) throw userNotExist(login);
  const target = found.u;
  if (target.type === 1) throw unprocessable(`user is an organization [name: ${target.name}]`);
  if (target.id === a.facts.repo.ownerId) throw unprocessable("cannot add the repository owner as a collaborator");
  // Rule 2: an inactive account → 500 (as the spec states); a block → 403.
  if (!target.isActive) throw new ApiError(500, `user account is inactive [name: ${target.name}]`);
  if (found.blocked) throw forbidden("user is blocked by the repository owner or blocks the doer");
  const mode = ACCESS[permission ?? "write"];
  const v = { repoId: a.facts.repo.id, uid: target.id, mode, now: nowUnix() };
  await write(ctx, [collaboratorTargetsExist.bind(v), setCollaborator.bind(v)]);
}

/** DELETE …/collaborators/{collaborator} (repoDeleteCollaborator): unknown user 422; access ends at once. */
export async function deleteCollaborator(ctx: Ctx, owner: string, name: string, login: string) {
  const a = await assignRepo(ctx, owner, name, { user: collaboratorForWrite.bind(loginValues(ctx, owner, name, login)) });
  reqRepoAdmin(a.caller, a.perm);
  const found = a.named.user[0];
  if (!found) throw userNotExist(login);
  await write(ctx, [deleteCollaboratorCmd.bind({ repoId: a.facts.repo.id, uid: found.u.id })]);
}

/** GET …/collaborators/{collaborator}/permission (repoGetRepoPermissions): rule 3. */
export async function collaboratorPermission(ctx: Ctx, owner: string, name: string, login: string) {
  const v = loginValues(ctx, owner, name, login);
  const a = await assignRepo(ctx, owner, name, { user: loginUser.bind(v), facts: factsForLogin.bind(v) });
  const me = a.caller!;
  if (!me.isAdmin && me.row.lowerName !== login.toLowerCase() && !isRepoAdmin(a.perm)) {
    throw forbidden("Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own");
  }
  const u = a.named.user[0];
  if (!u) throw notFound();
  // The repository assignRepo found, read in the same snapshot.
  const facts = only(a.named.facts, "factsForLogin");
  const units = parseUnits(facts.units, ctx.settings.repository.disabledRepoUnits);
  const subject: PermissionSubject = { id: u.id, row: u, isAdmin: u.isAdmin, limited: { repository: false } };
  const perm = u.isActive && !u.prohibitLogin ? repoPermission(subject, facts, units) : { mode: 0, units: new Map() };
  // A permission mode is 0–4, each with a name.
  const mode = ACCESS_NAMES[perm.mode]!; // !: repoPermission's modes are ACCESS values, 0–4
  return { permission: mode, role_name: mode, user: toUser(u, viewerOf(me), site(ctx)) };
}

/** GET …/assignees (repoGetAssignees): rule 5 — users with write access who can be assigned. */
export async function listAssignees(ctx: Ctx, owner: string, name: string) {
  const a = await assignRepo(ctx, owner, name, { users: assigneesOfRepo.bind({ ...ctx.vv, ...repoPath(owner, name) }) });
  const viewer = viewerOf(a.caller);
  return a.named.users.map((u) => toUser(u, viewer, site(ctx)));
}

/** GET …/reviewers (repoGetReviewers): rule 4 — 403 unless the caller may change review requests. */
export async function listReviewers(ctx: Ctx, owner: string, name: string) {
  const a = await assignRepo(ctx, owner, name, { users: reviewersOfRepo.bind({ ...ctx.vv, ...repoPath(owner, name) }) });
  if (!canWrite(a.perm, UNIT.pulls) && !isRepoAdmin(a.perm) && !a.caller?.isAdmin) throw forbidden("doer has no permission to get reviewers");
  const viewer = viewerOf(a.caller);
  return a.named.users.map((u) => toUser(u, viewer, site(ctx)));
}
