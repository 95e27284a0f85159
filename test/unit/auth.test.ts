/**
 * Authentication without the database (functions/lib/auth.ts): how credentials are parsed from the
 * query, the Authorization header and Basic, what a caller may read from its token's scopes, and
 * `resolveCaller`'s decisions on the rows the request's batch loaded, in Gitea's order. The routes'
 * tests (test/rules/auth.test.ts) show the forms sign in end to end; these pin each decision and its
 * exact refusal, including the cases no route test reaches (a stored scope that no longer parses, a
 * non-local account's password, a sudo target's own admin flag).
 */
import { describe, expect, it } from "vitest";
import {
  ANONYMOUS,
  hasCredentials,
  hasScopes,
  isPublicOnly,
  limitsOf,
  normalizeScope,
  parseCredentials,
  precheck,
  resolveCaller,
  ScopeError,
  type CallerRows,
  type Credentials,
  type RouteAuth,
  type SudoRows,
} from "../../functions/lib/auth.ts";
import { hashPassword, tokenHash } from "../../functions/lib/crypto.ts";
import { ApiError } from "../../functions/lib/errors.ts";
import { loadSettings } from "../../functions/lib/settings.ts";

const settings = loadSettings({});
const noQueryTokens = loadSettings({ GITEA__security__DISABLE_QUERY_AUTH_TOKEN: "true" });
const signInOnly = loadSettings({ GITEA__service__REQUIRE_SIGNIN_VIEW: "true" });
const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const OTHER = "fedcba9876543210fedcba9876543210fedcba98";

const parse = (url: string, headers: Record<string, string> = {}, s = settings) => parseCredentials(new Request(`http://gitea.test${url}`, { headers }), s);
const basicOf = (raw: string) => ({ Authorization: `Basic ${Buffer.from(raw).toString("base64")}` });

describe("parseCredentials: where a credential is read from", () => {
  it("?token= wins over ?access_token= and over the Authorization header; either marks the request for the deprecation warning", async () => {
    expect(await parse(`/api/v1/user?access_token=${OTHER}&token=${TOKEN}`, { Authorization: `token ${OTHER}` })).toEqual({ creds: { ...ANONYMOUS, tokenHash: await tokenHash(TOKEN) }, queryToken: true });
    expect(await parse(`/api/v1/user?access_token=${TOKEN}`)).toEqual({ creds: { ...ANONYMOUS, tokenHash: await tokenHash(TOKEN) }, queryToken: true });
  });

  it("DISABLE_QUERY_AUTH_TOKEN: a query token is ignored (the header still signs in), and the request still gets the warning", async () => {
    expect(await parse(`/api/v1/user?token=${TOKEN}`, {}, noQueryTokens)).toEqual({ creds: ANONYMOUS, queryToken: true });
    expect(await parse(`/api/v1/user?token=${TOKEN}`, { Authorization: `token ${OTHER}` }, noQueryTokens)).toEqual({ creds: { ...ANONYMOUS, tokenHash: await tokenHash(OTHER) }, queryToken: true });
  });

  it("an empty ?token= is no credential but still a query token (Gitea checks Form.Has); other queries are not", async () => {
    expect(await parse("/api/v1/user?token=", { Authorization: `token ${OTHER}` })).toEqual({ creds: { ...ANONYMOUS, tokenHash: await tokenHash(OTHER) }, queryToken: true });
    expect(await parse("/api/v1/user?access_token=")).toEqual({ creds: ANONYMOUS, queryToken: true });
    expect(await parse("/api/v1/user?page=2", { Authorization: `token ${OTHER}` })).toEqual({ creds: { ...ANONYMOUS, tokenHash: await tokenHash(OTHER) }, queryToken: false });
    expect(await parse("/api/v1/user")).toEqual({ creds: ANONYMOUS, queryToken: false });
  });

  it("only the query string is parsed: `&token=` in a path without a query is no credential", async () => {
    expect(await parse(`/api/v1/repos/o/r/raw/a&token=${TOKEN}&sudo=admin`)).toEqual({ creds: ANONYMOUS, queryToken: false });
  });

  it("sudo comes from ?sudo= first, then the Sudo header; an empty one is none", async () => {
    expect((await parse("/api/v1/user?sudo=alice", { Sudo: "bob" })).creds.sudo).toBe("alice");
    expect((await parse("/api/v1/user?sudo=", { Sudo: "bob" })).creds.sudo).toBe("bob");
    expect((await parse("/api/v1/user", { Sudo: "bob" })).creds.sudo).toBe("bob");
    expect((await parse("/api/v1/user", { Sudo: "" })).creds.sudo).toBeNull();
    expect((await parse(`/api/v1/user?token=${TOKEN}&sudo=carol`)).creds).toEqual({ ...ANONYMOUS, tokenHash: await tokenHash(TOKEN), sudo: "carol" });
    expect((await parse("/api/v1/user?sudo=dave", basicOf("erin:pw"))).creds.sudo).toBe("dave");
    expect((await parse("/api/v1/user?sudo=dave", basicOf(`${TOKEN}:`))).creds.sudo).toBe("dave");
    expect((await parse("/api/v1/user?sudo=dave", { Authorization: "Basic !!!" })).creds.sudo).toBe("dave");
  });
});

describe("parseCredentials: the Authorization header", () => {
  it("token and Bearer in any case, the header and the value trimmed", async () => {
    const want = { creds: { ...ANONYMOUS, tokenHash: await tokenHash(TOKEN) }, queryToken: false };
    for (const h of [`token ${TOKEN}`, `Bearer ${TOKEN}`, `BEARER ${TOKEN}`, `  ToKeN   ${TOKEN}  `]) expect(await parse("/api/v1/user", { Authorization: h }), h).toEqual(want);
  });

  it("a scheme without a value, an unknown scheme or a bare value is anonymous", async () => {
    for (const h of ["token", "token   ", "Bearer", "Digest abc", TOKEN, "Basic"]) expect(await parse("/api/v1/user", { Authorization: h }), h).toEqual({ creds: ANONYMOUS, queryToken: false });
  });

  it("Basic user:password signs in by name; the password is split at the first colon; names are UTF-8", async () => {
    expect((await parse("/api/v1/user", basicOf("alice:pa:ss word"))).creds).toEqual({ tokenHash: null, username: "alice", password: "pa:ss word", basic: true, sudo: null });
    expect((await parse("/api/v1/user", basicOf("jürgen:pw"))).creds).toEqual({ tokenHash: null, username: "jürgen", password: "pw", basic: true, sudo: null });
    expect((await parse("/api/v1/user", { Authorization: `basic ${Buffer.from("alice:pw").toString("base64")}` })).creds.username).toBe("alice");
    // An empty name is still a name (no account has it), not a malformed value.
    expect((await parse("/api/v1/user", basicOf(":pw"))).creds).toEqual({ tokenHash: null, username: "", password: "pw", basic: true, sudo: null });
  });

  it("Basic token: (empty password) or token:x-oauth-basic is the token, not a name", async () => {
    for (const raw of [`${TOKEN}:`, `${TOKEN}:x-oauth-basic`]) expect((await parse("/api/v1/user", basicOf(raw))).creds, raw).toEqual({ ...ANONYMOUS, tokenHash: await tokenHash(TOKEN), basic: true });
  });

  it("Basic name:<token> tries the token and the name and password (a token-shaped password)", async () => {
    expect((await parse("/api/v1/user", basicOf(`alice:${TOKEN.toUpperCase()}`))).creds).toEqual({ tokenHash: await tokenHash(TOKEN.toUpperCase()), username: "alice", password: TOKEN.toUpperCase(), basic: true, sudo: null });
    expect((await parse("/api/v1/user", basicOf(`alice:${TOKEN.slice(1)}`))).creds.tokenHash).toBeNull();
  });

  it("a malformed Basic value (no colon, not base64) is a failed sign-in, never anonymous", async () => {
    const failed = { creds: { ...ANONYMOUS, username: "", password: "", basic: true }, queryToken: false };
    expect(await parse("/api/v1/user", basicOf("no-colon-here"))).toEqual(failed);
    expect(await parse("/api/v1/user", { Authorization: "Basic !!!not base64!!!" })).toEqual(failed);
    expect(hasCredentials(failed.creds)).toBe(true);
  });

  it("hasCredentials: a token or a user name; sudo alone is none", () => {
    expect(hasCredentials(ANONYMOUS)).toBe(false);
    expect(hasCredentials({ ...ANONYMOUS, sudo: "alice" })).toBe(false);
    expect(hasCredentials({ ...ANONYMOUS, tokenHash: "x" })).toBe(true);
    expect(hasCredentials({ ...ANONYMOUS, username: "alice" })).toBe(true);
  });
});

describe("token scopes", () => {
  it("limitsOf: passwords are not limited; a token is limited to public data of each category it cannot read; public-only limits all", () => {
    const none = { repository: false, organization: false, user: false };
    expect(limitsOf(false, "")).toEqual(none);
    expect(limitsOf(false, "public-only")).toEqual(none);
    expect(limitsOf(true, "all")).toEqual(none);
    expect(limitsOf(true, "public-only,all")).toEqual({ repository: true, organization: true, user: true });
    expect(limitsOf(true, "read:repository")).toEqual({ repository: false, organization: true, user: true });
    expect(limitsOf(true, "write:organization")).toEqual({ repository: true, organization: false, user: true });
    expect(limitsOf(true, "read:user")).toEqual({ repository: true, organization: true, user: false });
    expect(limitsOf(true, "")).toEqual({ repository: true, organization: true, user: true });
    // A stored scope that no longer parses grants nothing.
    expect(limitsOf(true, "write:repository,read:secrets")).toEqual({ repository: true, organization: true, user: true });
  });

  it("normalizeScope takes each comma-separated part as it is (Gitea does not trim), skips empty entries, keeps public-only before all", () => {
    expect(normalizeScope(["read:user,,write:issue", ""])).toBe("write:issue,read:user");
    expect(() => normalizeScope([" read:user"])).toThrow(new ScopeError("invalid access token scope:  read:user"));
    expect(normalizeScope(["all", "public-only"])).toBe("public-only,all");
    expect(normalizeScope(["public-only"])).toBe("public-only");
    expect(normalizeScope(["read:admin", "write:activitypub", "read:package"])).toBe("write:activitypub,read:admin,read:package");
  });

  it("hasScopes: a stored scope that does not parse throws; spaces and empty entries are ignored; read needs read or write of the category", () => {
    expect(() => hasScopes("read:user,read:secrets", ["read:user"])).toThrow(new ScopeError("invalid access token scope: read:secrets"));
    expect(hasScopes(" read:user , ", ["read:user"])).toBe(true);
    expect(hasScopes("read:user", ["read:organization"])).toBe(false);
    expect(hasScopes("write:user", ["write:user"])).toBe(true);
    expect(hasScopes("all", ["read:repository"])).toBe(true);
    expect(hasScopes("read:repository", [])).toBe(true);
  });

  it("isPublicOnly: only the public-only entry itself", () => {
    expect(isPublicOnly("public-only,all")).toBe(true);
    expect(isPublicOnly("all,public-only")).toBe(true);
    expect(isPublicOnly("all")).toBe(false);
    expect(isPublicOnly("")).toBe(false);
  });
});

// ---- resolveCaller on the batch's rows ----

const PASSWORD = "correct horse";
const STORED = await hashPassword(PASSWORD, 10000);
type UserRow = CallerRows[number]["user"];
const userRow = (over: Partial<UserRow> = {}) => ({ id: 5, isAdmin: false, isActive: true, prohibitLogin: false, mustChangePassword: false, loginType: 0, passwd: STORED, isRestricted: false, ...over }) as UserRow;
const tokenRows = (scope: string | null, over: Partial<UserRow> = {}): CallerRows => [{ user: userRow(over), tokenId: 11, scope }];
const passwordRows = (over: Partial<UserRow> = {}): CallerRows => [{ user: userRow(over), tokenId: null, scope: null }];
const byToken: Credentials = { ...ANONYMOUS, tokenHash: "h" };
const byPassword = (password = PASSWORD): Credentials => ({ tokenHash: null, username: "alice", password, basic: true, sudo: null });
const open: RouteAuth = { scopes: [] };
const userRoute: RouteAuth = { scopes: ["user"] };

function resolve(creds: Credentials, rows: CallerRows, opts: { route?: RouteAuth; method?: string; sudoRows?: SudoRows; s?: typeof settings } = {}) {
  return resolveCaller({ creds, route: opts.route ?? open, method: opts.method ?? "GET", settings: opts.s ?? settings, rootUrl: "http://gitea.test/" }, rows, opts.sudoRows ?? []);
}

/** What `resolve` settles to: [status, message, bare body?] for an ApiError. */
async function refusal(p: Promise<unknown>): Promise<[number, string, boolean]> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return [e.status, e.message, e.body !== undefined];
  }
  throw new Error("expected a refusal");
}

const PROHIBITED = "This account is prohibited from signing in, please contact your site administrator.";

describe("resolveCaller: who the caller is", () => {
  it("a token caller carries its scope, public-only flag and limits", async () => {
    expect(await resolve(byToken, tokenRows("public-only,read:repository"))).toEqual({
      id: 5,
      row: userRow(),
      isAdmin: false,
      viaToken: true,
      publicOnly: true,
      scope: "public-only,read:repository",
      limited: { repository: true, organization: true, user: true },
    });
    expect(await resolve(byToken, tokenRows(null, { isAdmin: true }))).toMatchObject({ isAdmin: true, viaToken: true, publicOnly: false, scope: "" });
  });

  it("a password caller is not a token caller: no scope, no limits, not public-only", async () => {
    expect(await resolve(byPassword(), passwordRows({ isAdmin: true }))).toEqual({
      id: 5,
      row: userRow({ isAdmin: true }),
      isAdmin: true,
      viaToken: false,
      publicOnly: false,
      scope: "",
      limited: { repository: false, organization: false, user: false },
    });
  });

  it("a wrong password, an unknown name, a token that matched nothing and a non-local account's password are the same 401", async () => {
    const bad: [number, string, boolean] = [401, "invalid username, password or token", false];
    expect(await refusal(resolve(byPassword("wrong"), passwordRows()))).toEqual(bad);
    expect(await refusal(resolve(byPassword(), []))).toEqual(bad);
    expect(await refusal(resolve(byToken, []))).toEqual(bad);
    expect(await refusal(resolve(byToken, passwordRows()))).toEqual(bad);
    expect(await refusal(resolve(byPassword(), passwordRows({ loginType: 2 })))).toEqual(bad);
    expect(await refusal(resolve({ ...ANONYMOUS, username: "", password: "", basic: true }, []))).toEqual(bad);
  });

  it("anonymous: null, or 403 under REQUIRE_SIGNIN_VIEW (bare message)", async () => {
    expect(await resolve(ANONYMOUS, [])).toBeNull();
    expect(await refusal(resolve(ANONYMOUS, [], { s: signInOnly }))).toEqual([403, "Only signed in user is allowed to call APIs.", true]);
    expect(await resolve(byToken, tokenRows("all"), { s: signInOnly })).toMatchObject({ id: 5 });
  });
});

describe("resolveCaller: account states, by token and by password, with bare messages", () => {
  it("inactive, prohibited from signing in, must change the password", async () => {
    for (const creds of [byToken, byPassword()]) {
      const rows = (over: Partial<UserRow>) => (creds === byToken ? tokenRows("all", over) : passwordRows(over));
      expect(await refusal(resolve(creds, rows({ isActive: false })))).toEqual([403, PROHIBITED, true]);
      expect(await refusal(resolve(creds, rows({ prohibitLogin: true })))).toEqual([403, PROHIBITED, true]);
      expect(await refusal(resolve(creds, rows({ mustChangePassword: true })))).toEqual([403, "You must change your password. Change it at: http://gitea.test/user/change_password", true]);
    }
  });
});

describe("resolveCaller: sudo", () => {
  const target = { ...userRow({ id: 9, isAdmin: false }) } as SudoRows[number];
  const sudo = (creds: Credentials) => ({ ...creds, sudo: "target" });

  it("a site admin becomes the target: its id, row and admin flag, with the admin's token and scope", async () => {
    const c = await resolve(sudo(byToken), tokenRows("write:user", { isAdmin: true }), { sudoRows: [target] });
    expect(c).toEqual({ id: 9, row: target, isAdmin: false, viaToken: true, publicOnly: false, scope: "write:user", limited: { repository: true, organization: true, user: false } });
    const toAdmin = await resolve(sudo(byPassword()), passwordRows({ isAdmin: true }), { sudoRows: [{ ...target, isAdmin: true }] });
    expect(toAdmin).toMatchObject({ id: 9, isAdmin: true, viaToken: false });
  });

  it("anyone else (anonymous included) → 403 bare; an unknown target → 404", async () => {
    expect(await refusal(resolve(sudo(byToken), tokenRows("all"), { sudoRows: [target] }))).toEqual([403, "Only administrators allowed to sudo.", true]);
    expect(await refusal(resolve(sudo(ANONYMOUS), [], { sudoRows: [target] }))).toEqual([403, "Only administrators allowed to sudo.", true]);
    expect(await refusal(resolve(sudo(byToken), tokenRows("all", { isAdmin: true })))).toEqual([404, "The target couldn't be found.", false]);
  });

  it("the target's scopes are the admin's token's: a read-only token cannot write as the target", async () => {
    const r = resolve(sudo(byToken), tokenRows("read:user", { isAdmin: true }), { sudoRows: [target], route: userRoute, method: "PATCH" });
    expect(await refusal(r)).toEqual([403, "token does not have at least one of required scope(s), required=[write:user], token scope=read:user", false]);
  });
});

describe("resolveCaller: the route's requirements", () => {
  const scopeMsg = (required: string, scope: string) => `token does not have at least one of required scope(s), required=[${required}], token scope=${scope}`;

  it("GET, HEAD and OPTIONS need read:<category>; every other method write:<category>", async () => {
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(await resolve(byToken, tokenRows("read:user"), { route: userRoute, method }), method).toMatchObject({ id: 5 });
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) expect(await refusal(resolve(byToken, tokenRows("read:user"), { route: userRoute, method })), method).toEqual([403, scopeMsg("write:user", "read:user"), false]);
    expect(await resolve(byToken, tokenRows("write:user"), { route: userRoute, method: "DELETE" })).toMatchObject({ id: 5 });
  });

  it("every category of the route, named in the refusal separated by spaces", async () => {
    const route: RouteAuth = { scopes: ["user", "organization"] };
    expect(await refusal(resolve(byToken, tokenRows("read:user"), { route }))).toEqual([403, scopeMsg("read:user read:organization", "read:user"), false]);
  });

  it("a stored scope that does not parse → 403 `checking scope failed`; a route without scopes and a password caller are not checked", async () => {
    expect(await refusal(resolve(byToken, tokenRows("read:user,sudo"), { route: userRoute }))).toEqual([403, "checking scope failed: invalid access token scope: sudo", false]);
    expect(await resolve(byToken, tokenRows("read:user,sudo"), { route: open })).toMatchObject({ id: 5, scope: "read:user,sudo" });
    expect(await resolve(byPassword(), passwordRows(), { route: userRoute, method: "DELETE" })).toMatchObject({ id: 5 });
  });

  it("reqToken → 401 `token is required` for anonymous callers only", async () => {
    expect(await refusal(resolve(ANONYMOUS, [], { route: { scopes: [], signIn: true } }))).toEqual([401, "token is required", false]);
    expect(await resolve(byPassword(), passwordRows(), { route: { scopes: [], signIn: true } })).toMatchObject({ id: 5 });
  });

  it("basic-only routes → 401 `auth required` unless the credential came through Basic (a Basic token counts)", async () => {
    const route: RouteAuth = { scopes: [], basicOnly: true };
    expect(await refusal(resolve(byToken, tokenRows("all"), { route }))).toEqual([401, "auth required", false]);
    expect(await resolve({ ...byToken, basic: true }, tokenRows("all"), { route })).toMatchObject({ id: 5 });
    expect(await resolve(byPassword(), passwordRows(), { route })).toMatchObject({ id: 5 });
  });

  it("site-admin routes → 403 for everyone but site admins", async () => {
    const route: RouteAuth = { scopes: [], siteAdmin: true };
    expect(await refusal(resolve(byToken, tokenRows("all"), { route }))).toEqual([403, "user should be the site admin", false]);
    expect(await refusal(resolve(ANONYMOUS, [], { route }))).toEqual([403, "user should be the site admin", false]);
    expect(await resolve(byToken, tokenRows("all", { isAdmin: true }), { route })).toMatchObject({ isAdmin: true });
  });

  it("routes that reject public-only tokens → 403 for them only", async () => {
    const route: RouteAuth = { scopes: [], rejectPublicOnly: true };
    expect(await refusal(resolve(byToken, tokenRows("public-only,all"), { route }))).toEqual([403, "this endpoint is not available for public-only tokens", false]);
    expect(await resolve(byToken, tokenRows("all"), { route })).toMatchObject({ publicOnly: false });
    expect(await resolve(ANONYMOUS, [], { route })).toBeNull();
  });

  it("Gitea's order: account state before sudo, sudo before scopes, scopes before site admin", async () => {
    const everything: RouteAuth = { scopes: ["admin"], siteAdmin: true, rejectPublicOnly: true };
    expect(await refusal(resolve({ ...byToken, sudo: "x" }, tokenRows("read:user", { isActive: false }), { route: everything }))).toEqual([403, PROHIBITED, true]);
    expect(await refusal(resolve({ ...byToken, sudo: "x" }, tokenRows("read:user"), { route: everything }))).toEqual([403, "Only administrators allowed to sudo.", true]);
    expect(await refusal(resolve(byToken, tokenRows("public-only,read:user"), { route: everything }))).toEqual([403, scopeMsg("read:admin", "public-only,read:user"), false]);
    expect(await refusal(resolve(byToken, tokenRows("public-only,read:admin"), { route: everything }))).toEqual([403, "user should be the site admin", false]);
  });
});

describe("precheck: refusals that need no database", () => {
  const check = async (creds: Credentials, route: RouteAuth, s = settings) => refusal(Promise.resolve().then(() => precheck(creds, route, s)));

  it("anonymous callers: REQUIRE_SIGNIN_VIEW, then sudo, then reqToken, then basic-only", async () => {
    const all: RouteAuth = { scopes: [], signIn: true, basicOnly: true };
    expect(await check({ ...ANONYMOUS, sudo: "x" }, all, signInOnly)).toEqual([403, "Only signed in user is allowed to call APIs.", true]);
    expect(await check({ ...ANONYMOUS, sudo: "x" }, all)).toEqual([403, "Only administrators allowed to sudo.", true]);
    expect(await check(ANONYMOUS, all)).toEqual([401, "token is required", false]);
    expect(await check(ANONYMOUS, { scopes: [], basicOnly: true })).toEqual([401, "auth required", false]);
    expect(precheck(ANONYMOUS, { scopes: ["user"] }, settings)).toBeUndefined();
  });

  it("a caller with credentials is left to resolveCaller", () => {
    for (const creds of [byToken, byPassword(), { ...byToken, sudo: "x" }]) expect(precheck(creds, { scopes: [], signIn: true, basicOnly: true }, signInOnly)).toBeUndefined();
  });
});
