/**
 * The one auth module (Gitea reference §3). The middleware parses credentials without I/O;
 * `read()` (lib/context.ts) loads the caller in the same batch as the route's reads (a query that
 * depends on who asks reads the viewer CTE of db/sql.ts), then `resolveCaller()` decides on the rows.
 * Pure guards named like Gitea's (`reqSiteAdmin`, `reqSelfOrAdmin`, …) decide afterwards.
 * May not see → 404; may see, may not act → 403.
 */
import { sql, type SQL } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import type { UserRow } from "../db/schema.ts";
import { looksLikeToken, tokenHash, verifyPassword } from "./crypto.ts";
import { bareForbidden, forbidden, notFound, unauthorized } from "./errors.ts";
import { setAnswerHeader } from "./request.ts";
import type { Settings } from "./settings.ts";

export const SCOPE_CATEGORIES = ["activitypub", "admin", "misc", "notification", "organization", "package", "issue", "repository", "user"] as const;
export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number];

/** What a route requires of its caller (Gitea's route-group middleware, declared per route). */
export interface RouteAuth {
  /** tokenRequiresScopes: every listed category, `read:` for GET/HEAD, `write:` otherwise. */
  scopes: readonly ScopeCategory[];
  /** reqToken: the caller must be signed in. */
  signIn?: boolean;
  /** reqBasicOrRevProxyAuth: basic authentication only (token management). */
  basicOnly?: boolean;
  /** reqSiteAdmin. */
  siteAdmin?: boolean;
  /** rejectPublicOnly: endpoints that only serve private data. */
  rejectPublicOnly?: boolean;
}

/** Credentials as sent, parsed without I/O. */
export interface Credentials {
  /** SHA-256 of a presented token (header, query, basic user-as-token, or basic password that looks like a token). */
  tokenHash: string | null;
  /** Basic authentication with a user name and password. */
  username: string | null;
  password: string | null;
  /** The credential arrived through the Basic scheme. */
  basic: boolean;
  sudo: string | null;
}

export const ANONYMOUS: Credentials = { tokenHash: null, username: null, password: null, basic: false, sudo: null };

/** The signed-in caller after `resolveCaller`. */
export interface Caller {
  id: number;
  row: UserRow;
  isAdmin: boolean;
  /** Authenticated with a token (scopes apply). */
  viaToken: boolean;
  /** The token carries `public-only`. */
  publicOnly: boolean;
  scope: string;
  /** Per data category: the caller may read only public data of it (see ViewerSql.limited). */
  limited: Record<DataCategory, boolean>;
}

/** The caller's per-category limits from its token (none for passwords and anonymous callers). */
export function limitsOf(viaToken: boolean, scope: string): Record<DataCategory, boolean> {
  if (!viaToken) return { repository: false, organization: false, user: false };
  // A handful of distinct scope sets exist; each is parsed once (a copy is handed out).
  let limits = LIMITS.get(scope);
  if (!limits) {
    const publicOnly = isPublicOnly(scope);
    const lacks = (c: DataCategory) => !safeHasScopes(scope, [`read:${c}`]);
    limits = { repository: publicOnly || lacks("repository"), organization: publicOnly || lacks("organization"), user: publicOnly || lacks("user") };
    if (LIMITS.size >= 256) LIMITS.delete(LIMITS.keys().next().value as string);
    LIMITS.set(scope, limits);
  }
  return { ...limits };
}
const LIMITS = new Map<string, Record<DataCategory, boolean>>();

/**
 * The route's own scope category reaches the repository in its path without the repository scope:
 * Gitea's issue routes (labels) need `read:issue`/`write:issue` only, and a token holding them
 * works on the private repositories its owner may access. Such a route's checks already required
 * the issue scope, so only public-only limits the path's repository there.
 */
export const reachesPathRepo = (route: RouteAuth) => route.scopes.includes("issue");

const safeHasScopes = (scope: string, required: string[]) => {
  try {
    return hasScopes(scope, required);
  } catch {
    return false;
  }
};

const decodeBase64 = (s: string) => {
  try {
    const bin = atob(s);
    return new TextDecoder().decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0)));
  } catch {
    return null;
  }
};

/** Parses `?token=`/`?access_token=` (first, unless disabled), then `Authorization`, and `sudo`. */
export async function parseCredentials(req: Request, settings: Settings): Promise<{ creds: Credentials; queryToken: boolean }> {
  // Only the query is parsed, and only when there is one (a request URL has no fragment).
  const href = req.url;
  const qi = href.indexOf("?");
  const query = qi < 0 ? null : new URLSearchParams(href.slice(qi + 1));
  const sudo = query?.get("sudo") || req.headers.get("Sudo") || null;
  const q = query ? query.get("token") || query.get("access_token") : null;
  const queryTokenPresent = !!query && (query.has("token") || query.has("access_token"));
  if (q && !settings.security.disableQueryAuthToken) {
    return { creds: { ...ANONYMOUS, tokenHash: await tokenHash(q), sudo }, queryToken: true };
  }
  const header = req.headers.get("Authorization")?.trim() ?? "";
  const sp = header.indexOf(" ");
  const scheme = (sp < 0 ? header : header.slice(0, sp)).toLowerCase();
  const value = sp < 0 ? "" : header.slice(sp + 1).trim();
  // Gitea splits a token header into whitespace-separated fields (strings.Fields): exactly a
  // scheme and a value, tabs included
  const fields = header.split(/\s+/);
  if (fields.length === 2 && /^(token|bearer)$/i.test(fields[0]!)) {
    return { creds: { ...ANONYMOUS, tokenHash: await tokenHash(fields[1]!), sudo }, queryToken: queryTokenPresent };
  }
  if (scheme === "basic" && value) {
    const decoded = decodeBase64(value);
    const colon = decoded?.indexOf(":") ?? -1;
    if (decoded && colon >= 0) {
      const name = decoded.slice(0, colon);
      const password = decoded.slice(colon + 1);
      if (password === "" || password === "x-oauth-basic") {
        return { creds: { ...ANONYMOUS, tokenHash: await tokenHash(name), basic: true, sudo }, queryToken: queryTokenPresent };
      }
      return {
        creds: { tokenHash: looksLikeToken(password) ? await tokenHash(password) : null, username: name, password, basic: true, sudo },
        queryToken: queryTokenPresent,
      };
    }
    // A malformed Basic header is a failed sign-in, not an anonymous request.
    return { creds: { ...ANONYMOUS, username: "", password: "", basic: true, sudo }, queryToken: queryTokenPresent };
  }
  return { creds: { ...ANONYMOUS, sudo }, queryToken: queryTokenPresent };
}

/** Whether any credential was presented. */
export const hasCredentials = (c: Credentials) => c.tokenHash !== null || c.username !== null;
const anyCreds = hasCredentials;

/** Token scope categories whose data a route may embed from another category (issue 8 A.3). */
export type DataCategory = "repository" | "organization" | "user";

/** SQL pieces describing the viewer, for embedding in queries that depend on who asks. */
export interface ViewerSql {
  /** The effective caller id (after sudo), or NULL for anonymous. */
  id: SQL;
  /** Caller is a site admin and not limited to public data. */
  isAdmin: SQL;
  /** The caller's token is limited to public data. */
  publicOnly: SQL;
  /** Caller is a restricted user. */
  restricted: SQL;
  /**
   * Per data category: the caller may read only the public data of that category — a public-only
   * token, or a token without a read scope for it. A token's scopes bound what any route returns,
   * not only which routes it may call: a `read:user` token reads no private repository through a
   * user's feed, a `read:organization` token none through a team's repository list.
   */
  limited: Record<DataCategory, SQL>;
  /**
   * The same id as an expression that does not depend on the row being tested (`(SELECT id FROM
   * v)` where `id` is the joined viewer row's column), for the viewer's sets — its organizations,
   * collaborations, teams — which SQLite then computes once per statement instead of once per row.
   * Defaults to `id`.
   */
  idOnce?: SQL;
}

/** Which token category governs the visibility of an account: users and organizations, or a `type` column deciding per row. */
export type AccountKind = "user" | "org" | SQL;

const limitedFor = (v: ViewerSql, kind: AccountKind): SQL =>
  kind === "user" ? v.limited.user : kind === "org" ? v.limited.organization : sql`(CASE WHEN ${kind} = 1 THEN ${v.limited.organization} ELSE ${v.limited.user} END)`;

/**
 * SQL: may the viewer see this user or organization (Gitea's IsUserVisibleToViewer /
 * HasOrgOrUserVisible)? public → everyone; limited → signed-in users; private → self, site admins,
 * and users sharing an organization (for an organization: its members). A restricted user sees no
 * limited or private user (IsUserVisibleToViewer), and of limited and private organizations those
 * it is a member of. A token limited to public data of the account's category
 * (public-only, or no read scope for users / organizations) sees public accounts only.
 *
 * `shape` is how "shares an organization with the viewer" is asked. `"row"` (a statement about a
 * few accounts): index lookups for each tested account. `"set"` (a statement that tests many rows,
 * e.g. every repository a search counts): the viewer's organizations and the users sharing one,
 * each computed once per statement — at 100,000 repositories a keyword-less search's count took
 * 2.9 s with lookups per row, 0.17 s with the sets; a single repository read, 0.12 ms with lookups
 * and 0.56 ms with the sets. When few rows match the sets cost more than they save (a keyword
 * search: ~15 % slower on Node, ~1.5 ms more sqld CPU), so only the search without a keyword uses
 * them (`repoAccessibleSql`'s shape).
 */
export function userVisibleSql(v: ViewerSql, idCol: SQL, visibilityCol: SQL, kind: AccountKind, shape: "row" | "set" = "row"): SQL {
  // The viewer is a member of the account (an organization; an individual is never an org_id of
  // org_user) — all a restricted viewer is granted of accounts that are not public.
  const member =
    shape === "row"
      ? sql`EXISTS (SELECT 1 FROM org_user vm WHERE vm.uid = ${v.id} AND vm.org_id = ${idCol})`
      : sql`${idCol} IN (SELECT vo.org_id FROM org_user vo WHERE vo.uid = ${v.idOnce ?? v.id})`;
  const together =
    shape === "row"
      ? sql`EXISTS (SELECT 1 FROM org_user vo WHERE vo.uid = ${v.id} AND (vo.org_id = ${idCol} OR vo.org_id IN (SELECT vo2.org_id FROM org_user vo2 WHERE vo2.uid = ${idCol})))`
      : sql`(${member}
    OR ${idCol} IN (${coMemberIdsSql(v.idOnce ?? v.id)}))`;
  return sql`(${visibilityCol} = 0 OR (NOT ${limitedFor(v, kind)} AND (
    ${v.isAdmin} OR ${idCol} = ${v.id}
    OR (${v.restricted} AND ${member})
    OR (NOT ${v.restricted} AND ((${visibilityCol} = 1 AND ${v.id} IS NOT NULL) OR (${visibilityCol} = 2 AND ${together}))))))`;
}

/**
 * SQL, 1 or 0: the viewer may see every account of this visibility class by `userVisibleSql`'s
 * rule alone (`user_count`'s classes): public ones always; unless a token limits it to public
 * accounts, every one for a site admin, and limited ones for a signed-in user who is not
 * restricted. Every other account it may see is itself or shares an organization with it
 * (`reachedUserIdsSql`).
 */
export function userClassVisibleSql(v: ViewerSql, visibilityCol: SQL, kind: AccountKind): SQL {
  return sql`(CASE WHEN ${visibilityCol} = 0 THEN 1 WHEN ${limitedFor(v, kind)} THEN 0 WHEN ${v.isAdmin} THEN 1
    WHEN ${visibilityCol} = 1 AND ${v.id} IS NOT NULL AND NOT ${v.restricted} THEN 1 ELSE 0 END)`;
}

/** SQL: the ids of the viewer and of the users sharing an organization with it, read through org_user's indexes. */
export function reachedUserIdsSql(v: ViewerSql): SQL {
  const me = v.idOnce ?? v.id;
  return sql`SELECT ${me} UNION ALL ${coMemberIdsSql(me)}`;
}

/** SQL: the ids of the users sharing an organization with user `me` (itself included, if it is in one), through org_user's indexes. */
export function coMemberIdsSql(me: SQL): SQL {
  return sql`SELECT vo2.uid FROM org_user vo JOIN org_user vo2 ON vo2.org_id = vo.org_id WHERE vo.uid = ${me}`;
}

/** The viewer limited only by public-only (for the targets of writes, whose route scopes already gate them). */
export const publicOnlyViewer = (v: ViewerSql): ViewerSql => ({ ...v, limited: { repository: v.publicOnly, organization: v.publicOnly, user: v.publicOnly } });

/** The same viewer without any token limit (the caller's own relations, e.g. repository owners a collaborator reaches). */
export const unlimited = (v: ViewerSql): ViewerSql => ({ ...v, publicOnly: sql`0`, limited: { repository: sql`0`, organization: sql`0`, user: sql`0` } });

/** The authenticated principal's row and token scope, as the request's first batch loads it (db/queries/accounts.ts). */
export type CallerRows = { user: UserRow; tokenId: number | null; scope: string | null }[];
/** The sudo target's row, when `sudo` was given (empty otherwise). */
export type SudoRows = UserRow[];

// ---- token scopes (Gitea models/auth/access_token_scope.go) ----

const ALL_SCOPES = SCOPE_CATEGORIES.flatMap((c) => [`read:${c}`, `write:${c}`]);
const KNOWN = new Set(["all", "public-only", ...ALL_SCOPES]);

export class ScopeError extends Error {}

/** Normalizes a scope list as Gitea stores it: public-only first, write implies read, full write set → `all`. */
export function normalizeScope(scopes: string[]): string {
  const set = new Set<string>();
  // each comma-separated part as it is (Gitea's AccessTokenScope.parse does not trim: " write:issue" is no scope)
  for (const s of scopes.flatMap((part) => part.split(","))) {
    if (!s) continue;
    if (!KNOWN.has(s)) throw new ScopeError(`invalid access token scope: ${s}`);
    if (s === "all") for (const c of SCOPE_CATEGORIES) set.add(`write:${c}`);
    else set.add(s);
  }
  const out: string[] = [];
  if (set.has("public-only")) out.push("public-only");
  const writes = SCOPE_CATEGORIES.filter((c) => set.has(`write:${c}`));
  if (writes.length === SCOPE_CATEGORIES.length) {
    out.push("all");
    return out.join(",");
  }
  for (const c of SCOPE_CATEGORIES) {
    if (set.has(`write:${c}`)) out.push(`write:${c}`);
    else if (set.has(`read:${c}`)) out.push(`read:${c}`);
  }
  return out.join(",");
}

/** Whether a stored scope grants every required scope (`write:X` implies `read:X`, `all` implies every write). */
export function hasScopes(stored: string, required: string[]): boolean {
  const have = new Set(stored.split(",").map((s) => s.trim()).filter(Boolean));
  for (const s of have) if (!KNOWN.has(s)) throw new ScopeError(`invalid access token scope: ${s}`);
  return required.every((r) => {
    const [level, cat] = r.split(":");
    return have.has("all") || have.has(`write:${cat}`) || (level === "read" && have.has(`read:${cat}`));
  });
}

export const isPublicOnly = (scope: string) => scope.split(",").includes("public-only");

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Gitea's user-visible `must change password` message. */
const changePasswordMessage = (rootUrl: string) => `You must change your password. Change it at: ${rootUrl}user/change_password`;

/**
 * Authenticates the caller from the batch rows and applies the route's requirements, in Gitea's
 * order: bad credentials 401 → account state 403 → sudo → token scopes 403 → reqToken 401 →
 * basic-only 401 → site admin 403 → public-only rejection 403. Returns null for anonymous.
 */
export async function resolveCaller(
  ctx: { creds: Credentials; route: RouteAuth; method: string; settings: Settings; rootUrl: string },
  callerRows: CallerRows,
  sudoRows: SudoRows,
): Promise<Caller | null> {
  const { creds, route, settings } = ctx;
  let caller: Caller | null = null;
  if (anyCreds(creds)) {
    const row = callerRows[0];
    let viaToken = row?.tokenId != null;
    if (!viaToken) {
      // Password sign-in: only local accounts with a password; the dummy hash keeps timing flat.
      const ok = creds.password !== null && (await verifyPassword(creds.password, row && row.user.loginType === 0 ? row.user.passwd : null));
      if (!ok || !row) throw unauthorized();
      viaToken = false;
    }
    const { user: u, scope: rowScope } = row!; // !: viaToken means a row; without one the password branch above threw
    if (!u.isActive) throw bareForbidden("This account is prohibited from signing in, please contact your site administrator.");
    if (u.prohibitLogin) throw bareForbidden("This account is prohibited from signing in, please contact your site administrator.");
    if (u.mustChangePassword) throw bareForbidden(changePasswordMessage(ctx.rootUrl));
    const scope = viaToken ? (rowScope ?? "") : "";
    const publicOnly = viaToken && isPublicOnly(scope);
    const limited = limitsOf(viaToken, scope);
    // the route's own category reaches the path's repository (`reachesPathRepo`): only public-only limits it there
    if (reachesPathRepo(route)) limited.repository = publicOnly;
    caller = { id: u.id, row: u, isAdmin: u.isAdmin, viaToken, publicOnly, scope, limited };
  }
  if (!caller && settings.service.requireSignInView) throw bareForbidden("Only signed in user is allowed to call APIs.");
  if (creds.sudo) {
    if (!caller?.isAdmin) throw bareForbidden("Only administrators allowed to sudo.");
    // A public-only token reads no other account's private data; as that account it would (its
    // e-mail, concealed memberships, blocks). Refused whoever the target, so the answer names no one.
    if (caller.publicOnly) throw bareForbidden("a public-only token cannot sudo");
    const target = sudoRows[0];
    if (!target) throw notFound();
    caller = { ...caller, id: target.id, row: target, isAdmin: target.isAdmin };
  }
  if (caller?.viaToken && route.scopes.length > 0) {
    const level = READ_METHODS.has(ctx.method) ? "read" : "write";
    const required = route.scopes.map((c) => `${level}:${c}`);
    let allowed: boolean;
    try {
      allowed = hasScopes(caller.scope, required);
    } catch (e) {
      throw forbidden(`checking scope failed: ${(e as Error).message}`);
    }
    if (!allowed) {
      throw forbidden(`token does not have at least one of required scope(s), required=[${required.join(" ")}], token scope=${caller.scope}`);
    }
  }
  if (route.signIn && !caller) throw unauthorized("token is required");
  if (route.basicOnly && !creds.basic) throw unauthorized("auth required");
  if (route.siteAdmin && !caller?.isAdmin) throw forbidden("user should be the site admin");
  if (route.rejectPublicOnly && caller?.publicOnly) throw forbidden("this endpoint is not available for public-only tokens");
  return caller;
}

/** Checks that need no database: anonymous callers on sign-in routes fail before any round trip. */
export function precheck(creds: Credentials, route: RouteAuth, settings: Settings) {
  if (anyCreds(creds)) return;
  if (settings.service.requireSignInView) throw bareForbidden("Only signed in user is allowed to call APIs.");
  if (creds.sudo) throw bareForbidden("Only administrators allowed to sudo.");
  if (route.signIn) throw unauthorized("token is required");
  if (route.basicOnly) throw unauthorized("auth required");
}



/** Middleware: parse credentials into `c.var.creds`; warn about deprecated query tokens. */
export function credentials(): MiddlewareHandler {
  return async (c, next) => {
    const { creds, queryToken } = await parseCredentials(c.req.raw, c.get("settings"));
    c.set("creds", creds);
    c.set("doer", { siteAdmin: false });
    await next();
    if (queryToken) {
      setAnswerHeader(c, "X-Service-Warning", "token and access_token API authentication is deprecated and will be removed in gitea 1.23. Please use AuthorizationHeaderToken instead. Existing queries will continue to work but without authorization.");
    }
  };
}
