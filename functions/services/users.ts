/** Users: the caller, a user by name, search, and the admin verbs (Gitea routers/api/v1/{user,admin}). */
import { and, asc, count, eq, ne, or, sql } from "drizzle-orm";
import { col, uniqueViolation } from "../db/client.ts";
import { accessToken, collaboration, emailAddress, loginSource, orgUser, repository, team, teamUser, user, userBlocking } from "../db/schema.ts";
import { repoCascade } from "../db/queries/repos.ts";
import { ownerByName } from "../db/queries/accounts.ts";
import { pseudoUser, toUser, visibilityCode } from "../convert/user.ts";
import { userVisibleSql, type ViewerSql } from "../lib/auth.ts";
import { readWithCaller, writeBatch, type Ctx } from "../lib/context.ts";
import { badRequest, notFound, unprocessable } from "../lib/errors.ts";
import { hashPassword } from "../lib/crypto.ts";
import type { Page } from "../lib/pagination.ts";
import type { CreateUserOption, EditUserOption } from "../wire/user.ts";
import { forkVisibilityStatements } from "./visibility.ts";
import { deleteStorage, releaseSharedPacks, sharedPacksQuery } from "./repo-storage.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import { checkUsableUsername, guard, isGuardTrip, likePattern, nowUnix, site, viewerOf } from "./common.ts";

/** GET /user (userGetCurrent). */
export async function getAuthenticatedUser(ctx: Ctx) {
  const { caller } = await readWithCaller(ctx, [] as const);
  return toUser(caller!.row, viewerOf(caller), site(ctx));
}

/** GET /users/{username} (userGet): 404 unless the viewer may see the user (IsUserVisibleToViewer). */
export async function getUserInfo(ctx: Ctx, username: string) {
  const { caller, rows } = await readWithCaller(ctx, [ownerByName(ctx, username)] as const);
  const found = rows[0][0];
  if (!found || !found.visible) throw notFound();
  return toUser(found.u, viewerOf(caller), site(ctx));
}

/** GET /users/search (userSearch): individuals the viewer may see, matching name, full name or public e-mail. */
export async function searchUsers(ctx: Ctx, q: { q?: string; uid?: number }, page: Page) {
  if (q.uid === -1 || q.uid === -2) {
    await readWithCaller(ctx, [] as const);
    return { total: 1, data: [pseudoUser(q.uid, site(ctx))] };
  }
  const kw = (q.q ?? "").trim();
  const conds = [eq(user.type, 0), sql`${userVisibleSql(ctx.viewer, col(user.id), col(user.visibility), "user")}`];
  if (kw) {
    const p = likePattern(kw);
    conds.push(
      sql`(${col(user.lowerName)} LIKE ${p} ESCAPE '\\' OR lower(${col(user.fullName)}) LIKE ${p} ESCAPE '\\' OR (${col(user.keepEmailPrivate)} = 0 AND lower(${col(user.email)}) LIKE ${p} ESCAPE '\\'))`,
    );
  }
  if (q.uid !== undefined && q.uid > 0) conds.push(eq(user.id, q.uid));
  const where = and(...conds);
  const { caller, rows } = await readWithCaller(ctx, [
    ctx.db.select().from(user).where(where).orderBy(asc(user.id)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(user).where(where),
  ] as const);
  const viewer = viewerOf(caller);
  return { total: rows[1][0]?.n ?? 0, data: rows[0].map((u) => toUser(u, viewer, site(ctx))) };
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
  const { caller, rows } = await readWithCaller(ctx, [
    ctx.db.select().from(loginSource).where(eq(loginSource.id, sourceId)).limit(sourceId > 0 ? 1 : 0),
  ] as const);
  checkUsableUsername(form.username);
  const source = rows[0][0];
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
    const [, , found] = await writeBatch(ctx, [
      ctx.db.insert(user).values({
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
        isActive: true,
        isRestricted: form.restricted ?? false,
        visibility: visibilityCode(form.visibility ?? ctx.settings.service.defaultUserVisibility),
        createdUnix: created,
        updatedUnix: created,
      }),
      ctx.db.insert(emailAddress).values({
        uid: sql`(SELECT id FROM user WHERE lower_name = ${lower})`,
        email: form.email,
        lowerEmail: form.email.toLowerCase(),
        isActivated: true,
        isPrimary: true,
      }),
      ctx.db.select().from(user).where(eq(user.lowerName, lower)),
    ] as const);
    return toUser(found[0], viewerOf(caller), site(ctx));
  } catch (err) {
    userWriteError(err, form.username, form.email);
  }
}

/** An individual user by name (admin routes act on accounts, not organizations). */
const individualByName = (ctx: Ctx, name: string) =>
  ctx.db
    .select()
    .from(user)
    .where(and(eq(user.lowerName, name.toLowerCase()), eq(user.type, 0)))
    .limit(1);

/** SQL: no other active site admin besides `id` (guards removing the last admin). */
const lastAdmin = (id: number) => sql`(SELECT COUNT(*) FROM user WHERE is_admin = 1 AND id <> ${id}) = 0 AND EXISTS (SELECT 1 FROM user WHERE id = ${id} AND is_admin = 1)`;

/** PATCH /admin/users/{username} (adminEditUser): applies present fields only; never removes the last admin. */
export async function adminEditUser(ctx: Ctx, username: string, form: EditUserOption) {
  const sourceId = form.source_id ?? 0;
  const email = form.email?.trim();
  const { caller, rows } = await readWithCaller(ctx, [
    individualByName(ctx, username),
    ctx.db.select().from(loginSource).where(eq(loginSource.id, sourceId)).limit(sourceId > 0 ? 1 : 0),
    ctx.db.select().from(emailAddress).where(eq(emailAddress.lowerEmail, (email ?? "").toLowerCase())).limit(email ? 1 : 0),
  ] as const);
  const target = rows[0][0];
  if (!target) throw notFound();
  const source = rows[1][0];
  if (sourceId > 0 && !source) throw unprocessable(`login source does not exist [id: ${sourceId}]`);
  const existingEmail = rows[2][0];
  if (existingEmail && existingEmail.uid !== target.id) throw badRequest(`e-mail already in use [email: ${email}]`);

  const patch: Partial<typeof user.$inferInsert> = { updatedUnix: nowUnix() };
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

  const emailStmts = [];
  if (email !== undefined && email.toLowerCase() !== target.email.toLowerCase()) {
    emailStmts.push(ctx.db.update(emailAddress).set({ isPrimary: false }).where(eq(emailAddress.uid, target.id)));
    if (existingEmail) emailStmts.push(ctx.db.update(emailAddress).set({ isPrimary: true, isActivated: true }).where(eq(emailAddress.id, existingEmail.id)));
    else emailStmts.push(ctx.db.insert(emailAddress).values({ uid: target.id, email, lowerEmail: email.toLowerCase(), isActivated: true, isPrimary: true }));
  }
  try {
    const res = await writeBatch(ctx, [
      guard(ctx.db, form.admin === false ? lastAdmin(target.id) : sql`0`),
      ctx.db.update(user).set(patch).where(eq(user.id, target.id)),
      ...emailStmts,
      // Forks of the user's repositories follow the owner's visibility (issue 8 A.4).
      ...(patch.visibility !== undefined && patch.visibility !== target.visibility
        ? forkVisibilityStatements(ctx.db, sql`(SELECT id FROM repository WHERE owner_id = ${target.id})`)
        : []),
      ctx.db.select().from(user).where(eq(user.id, target.id)),
    ] as const);
    const updated = (res.at(-1) as (typeof target)[])[0];
    return toUser(updated, viewerOf(caller), site(ctx));
  } catch (err) {
    if (isGuardTrip(err)) throw badRequest("can not remove the last admin user");
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
  const targetId = sql`(SELECT id FROM user WHERE lower_name = ${username.toLowerCase()})`;
  const owned = sql`(SELECT id FROM repository WHERE owner_id = ${targetId})`;
  const { caller, rows } = await readWithCaller(ctx, [
    ctx.db.select().from(user).where(eq(user.lowerName, username.toLowerCase())).limit(1),
    ctx.db.select({ n: count() }).from(orgUser).where(eq(orgUser.uid, targetId)),
    ctx.db.select({ id: repository.id }).from(repository).where(eq(repository.ownerId, targetId)),
    sharedPacksQuery(ctx, owned),
  ] as const);
  const target = rows[0][0];
  if (!target) throw notFound();
  if (target.type === 1) throw unprocessable(`${target.name} is an organization not a user`);
  if (target.id === caller!.id) throw unprocessable("you cannot delete yourself");
  const repoIds = rows[2].map((r) => r.id);
  if (repoIds.length > 0 && !purge) throw unprocessable(`user still has ownership of repositories [uid: ${target.id}]`);
  if ((rows[1][0]?.n ?? 0) > 0 && !purge) throw unprocessable(`user still has membership of organizations [uid: ${target.id}]`);
  const id = target.id;
  // The sole owner of an organization cannot leave it ownerless.
  const soleOwner = sql`EXISTS (SELECT 1 FROM team_user tu JOIN team t ON t.id = tu.team_id AND t.authorize = 4
      WHERE tu.uid = ${id} AND (SELECT COUNT(*) FROM team_user tu2 WHERE tu2.team_id = t.id) = 1)`;
  const repoint = await releaseSharedPacks(ctx, objects, rows[3]);
  try {
    await writeBatch(ctx, [
      guard(ctx.db, sql`(${lastAdmin(id)}) OR ${soleOwner}`),
      ...repoint,
      ctx.db.update(team).set({ numMembers: sql`${col(team.numMembers)} - 1` }).where(sql`${col(team.id)} IN (SELECT team_id FROM team_user WHERE uid = ${id})`),
      ctx.db.update(user).set({ numMembers: sql`${col(user.numMembers)} - 1` }).where(sql`${col(user.id)} IN (SELECT org_id FROM org_user WHERE uid = ${id})`),
      ctx.db.delete(teamUser).where(eq(teamUser.uid, id)),
      ctx.db.delete(orgUser).where(eq(orgUser.uid, id)),
      ctx.db.delete(accessToken).where(eq(accessToken.uid, id)),
      ctx.db.delete(emailAddress).where(eq(emailAddress.uid, id)),
      ctx.db.delete(userBlocking).where(or(eq(userBlocking.blockerId, id), eq(userBlocking.blockeeId, id))),
      // Issue 8 C.2: nothing of the account stays behind — its feed, its actions in others' feeds
      // (Gitea deletes both), its stars (with the starred repositories' counts), hooks and redirects.
      ctx.db.run(sql`DELETE FROM action WHERE user_id = ${id} OR act_user_id = ${id}`),
      ctx.db.run(sql`UPDATE repository SET num_stars = num_stars - 1 WHERE id IN (SELECT repo_id FROM star WHERE uid = ${id})`),
      ctx.db.run(sql`DELETE FROM star WHERE uid = ${id}`),
      ctx.db.run(sql`DELETE FROM webhook WHERE owner_id = ${id}`),
      ctx.db.run(sql`DELETE FROM repo_redirect WHERE owner_id = ${id}`),
      // Purge: the user's repositories and their sub-resources go too; collaborations end.
      ...repoCascade(ctx.db, sql`(SELECT id FROM repository WHERE owner_id = ${id})`),
      ctx.db.delete(repository).where(eq(repository.ownerId, id)),
      ctx.db.delete(collaboration).where(eq(collaboration.userId, id)),
      ctx.db.delete(user).where(and(eq(user.id, id), ne(user.type, 1))),
    ] as const);
  } catch (err) {
    if (isGuardTrip(err)) throw unprocessable("can not delete the last admin user or the last owner of an organization");
    throw err;
  }
  await deleteStorage(objects, repoIds);
}
