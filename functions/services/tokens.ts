/** Personal access tokens (Gitea routers/api/v1/user/app.go): shown once, stored as SHA-256. */
import { and, count, desc, eq } from "drizzle-orm";
import { col, uniqueViolation } from "../db/client.ts";
import { accessToken, user } from "../db/schema.ts";
import { toAccessToken } from "../convert/user.ts";
import { normalizeScope, ScopeError, userVisibleSql } from "../lib/auth.ts";
import { reqSelfOrAdmin } from "../lib/guards.ts";
import { readWithCaller, writeBatch, type Ctx } from "../lib/context.ts";
import { badRequest, forbidden, notFound, unprocessable } from "../lib/errors.ts";
import { newToken, tokenHash } from "../lib/crypto.ts";
import type { Page } from "../lib/pagination.ts";
import { featureDisabled, nowUnix } from "./common.ts";

/** The user in the path; one the caller may not see answers as a missing one (issue 8 A.5). */
const accountByName = (ctx: Ctx, name: string) =>
  ctx.db
    .select()
    .from(user)
    .where(and(eq(user.lowerName, name.toLowerCase()), eq(user.type, 0), userVisibleSql(ctx.viewer, col(user.id), col(user.visibility), "user")))
    .limit(1);



/** GET /users/{username}/tokens (userGetTokens): newest first; the token itself is never shown again. */
export async function listAccessTokens(ctx: Ctx, username: string, page: Page) {
  const lower = username.toLowerCase();
  const owner = ctx.db.select({ id: user.id }).from(user).where(eq(user.lowerName, lower));
  const { caller, rows } = await readWithCaller(ctx, [
    accountByName(ctx, username),
    ctx.db.select().from(accessToken).where(eq(accessToken.uid, owner)).orderBy(desc(accessToken.id)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(accessToken).where(eq(accessToken.uid, owner)),
  ] as const);
  const target = rows[0][0];
  if (!target) throw notFound();
  reqSelfOrAdmin(caller, target);
  return { total: rows[2][0]?.n ?? 0, tokens: rows[1].map((t) => toAccessToken(t)) };
}

/** POST /users/{username}/tokens (userCreateToken): name unique per user, a non-empty valid scope. */
export async function createAccessToken(ctx: Ctx, username: string, form: { name: string; scopes?: string[] }) {
  const { caller, rows } = await readWithCaller(ctx, [accountByName(ctx, username)] as const);
  const target = rows[0][0];
  if (!target) throw notFound();
  reqSelfOrAdmin(caller, target);
  if (featureDisabled(ctx, target, "manage_credentials")) throw forbidden("managing credentials is disabled for this account");
  let scope: string;
  try {
    scope = normalizeScope(form.scopes ?? []);
  } catch (e) {
    if (e instanceof ScopeError) throw badRequest(`AccessTokenScope.Normalize: ${e.message}`);
    throw e;
  }
  // Gitea's HasPermissionScope: `public-only` alone grants nothing, so it is no scope (issue 8 A.2).
  if (!scope.split(",").some((s) => s && s !== "public-only")) throw badRequest("access token must have a scope");
  const plain = newToken();
  const now = nowUnix();
  try {
    const [, found] = await writeBatch(ctx, [
      ctx.db.insert(accessToken).values({
        uid: target.id,
        name: form.name,
        tokenHash: await tokenHash(plain),
        tokenLastEight: plain.slice(-8),
        scope,
        createdUnix: now,
        updatedUnix: now,
      }),
      ctx.db
        .select()
        .from(accessToken)
        .where(and(eq(accessToken.uid, target.id), eq(accessToken.name, form.name)))
        .limit(1),
    ] as const);
    return toAccessToken(found[0], plain);
  } catch (err) {
    if (uniqueViolation(err)?.includes("access_token.uid")) throw badRequest("access token name has been used already");
    throw err;
  }
}

/** DELETE /users/{username}/tokens/{token} (userDeleteAccessToken): by id, else by name (422 when ambiguous). */
export async function deleteAccessToken(ctx: Ctx, username: string, ref: string) {
  const lower = username.toLowerCase();
  const owner = ctx.db.select({ id: user.id }).from(user).where(eq(user.lowerName, lower));
  const byId = /^\d+$/.test(ref) && Number.isSafeInteger(Number(ref));
  const { caller, rows } = await readWithCaller(ctx, [
    accountByName(ctx, username),
    ctx.db
      .select({ id: accessToken.id })
      .from(accessToken)
      .where(and(eq(accessToken.uid, owner), byId ? eq(accessToken.id, Number(ref)) : eq(accessToken.name, ref)))
      .limit(2),
  ] as const);
  const target = rows[0][0];
  if (!target) throw notFound();
  reqSelfOrAdmin(caller, target);
  const matches = rows[1];
  if (matches.length === 0) throw notFound();
  if (matches.length > 1) throw unprocessable("multiple matches for token name");
  await writeBatch(ctx, [ctx.db.delete(accessToken).where(and(eq(accessToken.id, matches[0].id), eq(accessToken.uid, target.id)))] as const);
}
