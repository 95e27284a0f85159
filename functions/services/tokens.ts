/** Personal access tokens (Gitea routers/api/v1/user/app.go): shown once, stored as SHA-256. */
import { uniqueViolation } from "../db/client.ts";
import { userExists, visibleIndividualByName } from "../db/queries/accounts.ts";
import { deleteToken, insertToken, tokenByName, tokenCountOfUser, tokenIdsById, tokenIdsByName, tokensOfUser } from "../db/queries/tokens.ts";
import { toAccessToken } from "../convert/user.ts";
import { hasScopes, isPublicOnly, normalizeScope, SCOPE_CATEGORIES, ScopeError } from "../lib/auth.ts";
import { reqSelfOrAdmin } from "../lib/guards.ts";
import { read, write, type BindGuard, type Ctx } from "../lib/context.ts";
import { badRequest, forbidden, notFound, unprocessable } from "../lib/errors.ts";
import { newToken, tokenHash } from "../lib/crypto.ts";
import { parseGoInt } from "../lib/query.ts";
import { only } from "../db/sql.ts";
import type { Page } from "../lib/pagination.ts";
import { featureDisabled, nowUnix } from "./common.ts";

/** The user in the path; one the caller may not see answers as a missing one (issue 8 A.5). */
const accountByName = (ctx: Ctx, name: string) => visibleIndividualByName.bind({ ...ctx.vv, name: name.toLowerCase() });

/** GET /users/{username}/tokens (userGetTokens): newest first; the token itself is never shown again. */
export async function listAccessTokens(ctx: Ctx, username: string, page: Page) {
  const name = username.toLowerCase();
  const { caller, account, tokens, total } = await read(ctx, {
    account: accountByName(ctx, username),
    tokens: tokensOfUser.bind({ ...ctx.vv, name, limit: page.limit, offset: page.offset }),
    total: tokenCountOfUser.bind({ ...ctx.vv, name }),
  });
  const target = account[0];
  if (!target) throw notFound();
  reqSelfOrAdmin(caller, target);
  return { total: total[0] ?? 0, tokens: tokens.map((t) => toAccessToken(t)) };
}

/** The user in the path of the token writes: UserAssignmentAPI (404), then reqSelfOrAdmin (403). */
async function assignTokenOwner(ctx: Ctx, username: string) {
  const { caller, account } = await read(ctx, { account: accountByName(ctx, username) });
  const target = account[0];
  if (!target) throw notFound();
  reqSelfOrAdmin(caller, target);
  return { caller, target };
}

/** userCreateToken's guards before its body is bound. */
export const tokenOwnerGuard: BindGuard = async (ctx, params) => {
  await assignTokenOwner(ctx, params.username ?? "");
};

/** POST /users/{username}/tokens (userCreateToken): name unique per user, a non-empty valid scope. */
export async function createAccessToken(ctx: Ctx, username: string, form: { name: string; scopes?: string[] }) {
  const { caller, account, taken } = await read(ctx, {
    account: accountByName(ctx, username),
    taken: tokenIdsByName.bind({ name: username.toLowerCase(), tokenName: form.name }),
  });
  const target = account[0];
  if (!target) throw notFound();
  reqSelfOrAdmin(caller, target);
  if (featureDisabled(ctx, target, "manage_credentials")) throw forbidden("managing credentials is disabled for this account");
  // Gitea's order: the name, then the scopes
  const nameTaken = badRequest("access token name has been used already");
  if (taken.length > 0) throw nameTaken;
  let scope: string;
  try {
    scope = normalizeScope(form.scopes ?? []);
  } catch (e) {
    if (e instanceof ScopeError) throw badRequest(`invalid access token scope provided: ${e.message}`);
    throw e;
  }
  // Gitea's HasPermissionScope: `public-only` alone grants nothing, so it is no scope (issue 8 A.2).
  if (!scope.split(",").some((s) => s && s !== "public-only")) throw badRequest("access token must have a scope");
  if (caller?.viaToken) {
    // A token given as the password creates tokens within its own reach only: no wider scope, and
    // public-only stays (Gitea lets it mint any scope — an escape from every token limit; docs/api.md).
    const wanted = scope.split(",").filter((s) => s && s !== "public-only");
    const required = wanted.includes("all") ? SCOPE_CATEGORIES.map((c) => `write:${c}`) : wanted;
    if (!hasScopes(caller.scope, required) || (caller.publicOnly && !isPublicOnly(scope))) {
      throw forbidden(`token does not have at least one of required scope(s), required=[${[...(caller.publicOnly && !isPublicOnly(scope) ? ["public-only"] : []), ...required].join(" ")}], token scope=${caller.scope}`);
    }
  }
  const plain = newToken();
  const now = nowUnix();
  try {
    const values = { uid: target.id, name: form.name, tokenHash: await tokenHash(plain), tokenLastEight: plain.slice(-8), scope, createdUnix: now, updatedUnix: now };
    const { found } = await write(ctx, [userExists.bind(values), insertToken.bind(values)], { found: tokenByName.bind({ uid: target.id, name: form.name }) });
    return toAccessToken(only(found, "tokenByName"), plain);
  } catch (err) {
    // taken by a request that landed since the read
    if (uniqueViolation(err)?.includes("access_token.uid")) throw nameTaken;
    throw err;
  }
}

/** DELETE /users/{username}/tokens/{token} (userDeleteAccessToken): by id, else by name (422 when ambiguous). */
export async function deleteAccessToken(ctx: Ctx, username: string, ref: string) {
  const name = username.toLowerCase();
  // Gitea: strconv.ParseInt(ref, 0, 64) — `0x1a`, `0o7`, `010` (octal) are ids; 0 or what does not parse is a name
  const parsed = parseGoInt(ref, 0, true);
  const refId = parsed === null ? 0 : typeof parsed === "number" ? parsed : -1;
  const { caller, account, matches } = await read(ctx, {
    account: accountByName(ctx, username),
    matches: refId !== 0 ? tokenIdsById.bind({ name, id: refId }) : tokenIdsByName.bind({ name, tokenName: ref }),
  });
  const target = account[0];
  if (!target) throw notFound();
  reqSelfOrAdmin(caller, target);
  const [id, another] = matches;
  if (id === undefined) throw notFound();
  if (another !== undefined) throw unprocessable("multiple matches for token name");
  await write(ctx, [deleteToken.bind({ id, uid: target.id })]);
}
