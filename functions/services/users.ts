/** Users: the caller, a user by name, search, and the admin verbs (Gitea routers/api/v1/{user,admin}). */
import { uniqueViolation } from "../db/client.ts";
import { accountByLowerName, accountByName, individualByName, updateAccount, userById } from "../db/queries/accounts.ts";
import { addPrimaryEmail, emailByLower } from "../db/queries/emails.ts";
import { emailProblem } from "./emails.ts";
import { forkVisibilityOfOwner } from "../db/queries/forks.ts";
import { knownShared, sharedPacksOfOwner, sharedPacksOfSoleOwnedOrgs, sharedPacksUnchanged } from "../db/queries/storage.ts";
import { DELETE_ORG } from "../db/queries/orgs.ts";
import {
  DELETE_USER_ROWS,
  deleteUserGuard,
  deleteUserKeepsOwnership,
  EDIT_EMAIL,
  guardLastAdmin,
  insertUser,
  loginSourceById,
  orgCountOfUser,
  purgeOrgNewRepos,
  purgeOrgRepos,
  purgeOrgStillSole,
  purgeUserNewRepos,
  repoIdsOfOwner,
  repoIdsOfSoleOwnedOrgs,
  soleOwnedOrgsOf,
  searchStatements,
} from "../db/queries/users.ts";
import type { UserRow } from "../db/schema.ts";
import { only, patchKeys, type Bound } from "../db/sql.ts";
import { pseudoUser, toUser, visibilityCode } from "../convert/user.ts";
import { read, write, type BindGuard, type Ctx } from "../lib/context.ts";
import { badRequest, conflict, notFound, unprocessable } from "../lib/errors.ts";
import { reqPublicAccount } from "../lib/guards.ts";
import { hashPassword } from "../lib/crypto.ts";
import type { Page } from "../lib/pagination.ts";
import type { CreateUserOption, EditUserOption } from "../wire/user.ts";
import { deleteStorage, releaseSharedPacks } from "./repo-storage.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import { checkUsableUsername, indexedKeyword, isGuardTrip, likePattern, nowUnix, site, viewerOf } from "./common.ts";

/** GET /user (userGetCurrent). */
export async function getAuthenticatedUser(ctx: Ctx) {
  const { caller } = await read(ctx, {});
  return toUser(caller!.row, viewerOf(caller), site(ctx));
}

/** GET /users/{username} (userGet): 404 unless the viewer may see the user (IsUserVisibleToViewer). */
export async function getUserInfo(ctx: Ctx, username: string) {
  const { caller, account } = await read(ctx, { account: accountByName.bind({ ...ctx.vv, name: username.toLowerCase() }) });
  const found = account[0];
  if (!found || !found.visible) throw notFound();
  return toUser(found.u, viewerOf(caller), site(ctx));
}

/** GET /users/search (userSearch): individuals the viewer may see, matching name, full name or public e-mail. */
export async function searchUsers(ctx: Ctx, q: { q?: string; uid?: number }, page: Page) {
  if (q.uid === -1 || q.uid === -2) {
    await read(ctx, {});
    return { total: 1, data: [pseudoUser(q.uid, site(ctx))] };
  }
  const kw = (q.q ?? "").trim();
  const byId = q.uid !== undefined && q.uid > 0;
  const phrase = kw ? indexedKeyword(kw.toLowerCase()) : null;
  const st = searchStatements({ kw: kw !== "", indexed: phrase !== null, uid: byId });
  const values = { ...ctx.vv, ...(kw ? { kw: likePattern(kw) } : {}), ...(phrase ? { kwPhrase: phrase } : {}), ...(byId ? { uid: q.uid } : {}) };
  const { caller, users, total } = await read(ctx, { users: st.page.bind({ ...values, limit: page.limit, offset: page.offset }), total: st.total.bind(values) });
  const viewer = viewerOf(caller);
  return { total: total[0] ?? 0, data: users.map((u) => toUser(u, viewer, site(ctx))) };
}

/** go-chi binding's `Email` rule: the pattern anywhere in the value (it is not anchored). */
const BINDING_EMAIL = /[\w!#$%&'*+/=?^`{|}~-]+(?:\.[\w!#$%&'*+/=?^`{|}~-]+)*@(?:\w(?:[\w-]*\w)?\.)+[a-zA-Z0-9](?:[\w-]*\w)?/;

/** Gitea's ValidateEmailForAdmin texts (422 on create, 400 on edit, as its handlers answer them). */
function checkEmail(email: string, as: (message: string) => Error) {
  const problem = emailProblem(email);
  if (problem === "invalid") throw as(`e-mail invalid [email: ${email}]`);
  if (problem === "unsupported") throw as(`e-mail address contains unsupported character [email: ${email}]`);
}

const PASSWORD_TOO_SHORT = (min: number) => badRequest(`PasswordIsRequired: the password must be at least ${min} characters`);

/** Maps unique-constraint failures of user writes to Gitea's 422 messages. */
function userWriteError(err: unknown, name: string, email?: string): never {
  const v = uniqueViolation(err);
  if (v?.includes("user.lower_name")) throw unprocessable(`user already exists [name: ${name}]`);
  if (v?.includes("email_address.lower_email")) throw unprocessable(`e-mail already in use [email: ${email ?? ""}]`);
  throw err;
}

/** POST /admin/users (adminCreateUser). */
export async function adminCreateUser(ctx: Ctx, form: CreateUserOption) {
  const sourceId = form.source_id ?? 0;
  const { caller, sources } = await read(ctx, { ...(sourceId > 0 ? { sources: loginSourceById.bind({ id: sourceId }) } : {}) });
  // Gitea's binding (`Required;Email`) runs before the handler's own checks
  if (form.email === "") throw unprocessable("[Email]: Required");
  if (!BINDING_EMAIL.test(form.email)) throw unprocessable("[Email]: Email");
  checkUsableUsername(form.username);
  checkEmail(form.email, unprocessable);
  const source = sources?.[0];
  if (sourceId > 0 && !source) throw unprocessable(`login source does not exist [id: ${sourceId}]`);
  const password = form.password ?? "";
  let passwd = "";
  if (sourceId === 0) {
    if (password.length < ctx.settings.security.minPasswordLength) throw PASSWORD_TOO_SHORT(ctx.settings.security.minPasswordLength);
    passwd = await hashPassword(password, ctx.settings.security.passwordHashIterations);
  }
  const lower = form.username.toLowerCase();
  const created = form.created_at ? Math.floor(Date.parse(form.created_at) / 1000) : nowUnix();
  try {
    const values = {
      name: form.username,
      lowerName: lower,
      fullName: form.full_name ?? "",
      email: form.email,
      passwd,
      passwdHashAlgo: passwd ? "pbkdf2_sha256" : "",
      mustChangePassword: form.must_change_password ?? true,
      loginType: source ? source.type : 0,
      loginSource: sourceId,
      loginName: form.login_name ?? (source ? form.username : ""),
      isRestricted: form.restricted ?? false,
      visibility: visibilityCode(form.visibility ?? ctx.settings.service.defaultUserVisibility),
      createdUnix: created,
      updatedUnix: created,
    };
    const { found } = await write(ctx, [insertUser.bind(values), addPrimaryEmail.bind({ lower, email: form.email, lowerEmail: form.email.toLowerCase() })], {
      found: accountByLowerName.bind({ name: lower }),
    });
    return toUser(only(found, "accountByLowerName"), viewerOf(caller), site(ctx));
  } catch (err) {
    userWriteError(err, form.username, form.email);
  }
}

/** adminEditUser's guard before its body is bound: UserAssignmentAPI, the user must exist (404). */
export const adminEditGuard: BindGuard = async (ctx, params) => {
  const { caller, target } = await read(ctx, { target: individualByName.bind({ name: (params.username ?? "").toLowerCase() }) });
  const t = target[0];
  if (!t) throw notFound();
  reqPublicAccount(caller, t);
};

/** PATCH /admin/users/{username} (adminEditUser): applies present fields only; never removes the last admin. */
export async function adminEditUser(ctx: Ctx, username: string, form: EditUserOption) {
  const sourceId = form.source_id ?? 0;
  // as sent: Gitea binds only its size and validates it in the service (400)
  const email = form.email;
  const out = await read(ctx, {
    target: individualByName.bind({ name: username.toLowerCase() }),
    ...(sourceId > 0 ? { sources: loginSourceById.bind({ id: sourceId }) } : {}),
    ...(email ? { emails: emailByLower.bind({ lower: email.toLowerCase() }) } : {}),
  });
  const { caller } = out;
  const target = out.target[0];
  if (!target) throw notFound();
  reqPublicAccount(caller, target);
  const source = out.sources?.[0];
  if (sourceId > 0 && !source) throw unprocessable(`login source does not exist [id: ${sourceId}]`);
  // Gitea's AdminAddOrSetPrimaryEmailAddress: the current address in any letter case changes nothing and is not checked again
  if (email !== undefined && email.toLowerCase() !== target.email.toLowerCase()) checkEmail(email, badRequest);
  const existingEmail = out.emails?.[0];
  if (existingEmail && existingEmail.uid !== target.id) throw badRequest(`e-mail already in use [email: ${email}]`);

  const patch: Partial<UserRow> = { updatedUnix: nowUnix() };
  if (source) {
    patch.loginType = source.type;
    patch.loginSource = source.id;
  }
  if (form.login_name !== undefined) patch.loginName = form.login_name;
  if (form.password) {
    if (form.password.length < ctx.settings.security.minPasswordLength) throw PASSWORD_TOO_SHORT(ctx.settings.security.minPasswordLength);
    patch.passwd = await hashPassword(form.password, ctx.settings.security.passwordHashIterations);
    patch.passwdHashAlgo = "pbkdf2_sha256";
  }
  if (form.must_change_password !== undefined) patch.mustChangePassword = form.must_change_password;
  if (form.prohibit_login !== undefined) patch.prohibitLogin = form.prohibit_login;
  if (email !== undefined) patch.email = email;
  if (form.full_name !== undefined) patch.fullName = form.full_name;
  if (form.website !== undefined) patch.website = form.website;
  if (form.location !== undefined) patch.location = form.location;
  if (form.description !== undefined) patch.description = form.description;
  if (form.active !== undefined) patch.isActive = form.active;
  if (form.admin !== undefined) patch.isAdmin = form.admin;
  if (form.visibility !== undefined) patch.visibility = visibilityCode(form.visibility);
  if (form.allow_git_hook !== undefined) patch.allowGitHook = form.allow_git_hook;
  if (form.allow_import_local !== undefined) patch.allowImportLocal = form.allow_import_local;
  if (form.max_repo_creation !== undefined) patch.maxRepoCreation = form.max_repo_creation;
  if (form.allow_create_organization !== undefined) patch.allowCreateOrganization = form.allow_create_organization;
  if (form.restricted !== undefined) patch.isRestricted = form.restricted;

  const emailStmts: Bound<number>[] = [];
  if (email !== undefined && email.toLowerCase() !== target.email.toLowerCase()) {
    emailStmts.push(EDIT_EMAIL.demote.bind({ uid: target.id }));
    if (existingEmail) emailStmts.push(EDIT_EMAIL.promote.bind({ id: existingEmail.id }));
    else emailStmts.push(EDIT_EMAIL.add.bind({ uid: target.id, email, lowerEmail: email.toLowerCase() }));
  }
  const id = target.id;
  try {
    const { row } = await write(
      ctx,
      [
        ...(form.admin === false ? [guardLastAdmin.bind({ id })] : []),
        updateAccount(patchKeys(patch)).bind({ ...patch, id }),
        ...emailStmts,
        // Forks of the user's repositories follow the owner's visibility (issue 8 A.4).
        ...(patch.visibility !== undefined && patch.visibility !== target.visibility ? forkVisibilityOfOwner.map((s) => s.bind({ ownerId: id })) : []),
      ],
      { row: userById.bind({ id }) },
    );
    // Another request may have deleted the user since it was read: the update changed nothing.
    const updated = row[0];
    if (!updated) throw notFound();
    return toUser(updated, viewerOf(caller), site(ctx));
  } catch (err) {
    if (isGuardTrip(err)) throw badRequest(`can not delete the last admin user [uid: ${id}]`);
    if (uniqueViolation(err)?.includes("email_address")) throw badRequest(`e-mail already in use [email: ${email}]`);
    throw err;
  }
}

/**
 * DELETE /admin/users/{username} (adminDeleteUser): removes the account and all that hangs off it;
 * with `purge`, its repositories too — their git files after the rows, forks elsewhere keeping
 * copies of the packs they read (services/repo-storage.ts).
 */
export async function adminDeleteUser(ctx: Ctx, username: string, purge: boolean, objects?: ObjectStore) {
  const name = username.toLowerCase();
  const { caller, account, orgs, repos, shared, ...sole } = await read(ctx, {
    account: accountByLowerName.bind({ name }),
    orgs: orgCountOfUser.bind({ name }),
    repos: repoIdsOfOwner.bind({ name }),
    shared: sharedPacksOfOwner.bind({ name }),
    // Gitea's purge deletes the organizations the user alone owns, with their repositories (read only for a purge)
    ...(purge
      ? { soleOrgs: soleOwnedOrgsOf.bind({ name }), orgRepos: repoIdsOfSoleOwnedOrgs.bind({ name }), orgShared: sharedPacksOfSoleOwnedOrgs.bind({ name }) }
      : {}),
  });
  const soleOrgs = sole.soleOrgs ?? [];
  const orgRepos = sole.orgRepos ?? [];
  const orgShared = sole.orgShared ?? [];
  const target = account[0];
  if (!target) throw notFound();
  reqPublicAccount(caller, target);
  if (target.type === 1) throw unprocessable(`${target.name} is an organization not a user`);
  if (target.id === caller!.id) throw unprocessable("you cannot delete yourself");
  const repoIds = repos;
  if (repoIds.length > 0 && !purge) throw unprocessable(`user still has ownership of repositories [uid: ${target.id}]`);
  if ((orgs[0] ?? 0) > 0 && !purge) throw unprocessable(`user still has membership of organizations [uid: ${target.id}]`);
  const id = target.id;
  const purgedOrgs = soleOrgs;
  const deletedRepos = purge ? [...repoIds, ...orgRepos] : [];
  const sharedRead = [...shared, ...orgShared];
  const repoint = await releaseSharedPacks(ctx, objects, sharedRead);
  // What was read is checked again when the batch commits: without purge, a repository or
  // membership gained since; with it, a repository (the user's or a purged organization's), a
  // co-owner or a fork reading the deleted packs gained since.
  const asRead = purge
    ? [purgeUserNewRepos.bind({ id, ids: JSON.stringify(repoIds) }), sharedPacksUnchanged.bind({ ids: JSON.stringify(deletedRepos), known: knownShared(sharedRead) })]
    : [deleteUserKeepsOwnership.bind({ id })];
  const orgDeletes = purgedOrgs.flatMap((orgId) => [
    purgeOrgStillSole.bind({ id, orgId }),
    purgeOrgNewRepos.bind({ orgId, ids: JSON.stringify(orgRepos) }),
    ...purgeOrgRepos.map((s) => s.bind({ orgId })),
    ...DELETE_ORG.map((s) => s.bind({ id: orgId })),
  ]);
  try {
    await write(ctx, [...asRead, ...repoint, ...orgDeletes, deleteUserGuard.bind({ id }), ...DELETE_USER_ROWS.map((s) => s.bind({ id }))]);
  } catch (err) {
    if (!isGuardTrip(err)) throw err;
    // With purge, only a change since the read trips a guard (the caller is another admin; sole-owned organizations go first).
    if (purge) throw conflict("the user's repositories or organizations changed while it was being deleted; try again");
    // Which guard stopped it: read again (one more round trip, on this refusal only).
    const now = await read(ctx, { orgs: orgCountOfUser.bind({ name }), repos: repoIdsOfOwner.bind({ name }) });
    if (now.repos.length > 0) throw unprocessable(`user still has ownership of repositories [uid: ${id}]`);
    if ((now.orgs[0] ?? 0) > 0) throw unprocessable(`user still has membership of organizations [uid: ${id}]`);
    // Without repositories and memberships, only the last-admin clause can have tripped (Gitea's ErrDeleteLastAdminUser).
    throw unprocessable(`can not delete the last admin user [uid: ${id}]`);
  }
  await deleteStorage(objects, purge ? deletedRepos : repoIds);
}
