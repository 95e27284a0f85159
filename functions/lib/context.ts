/**
 * The per-request context handed from route handlers to services, and the one read path that
 * authenticates in the same round trip as the route's own reads (`read`).
 */
import { OpenAPIHono, createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { DbMeter } from "../db/client.ts";
import { rowGone, type Driver } from "../db/driver.ts";
import { accountByLowerName, callerByPassword, callerByToken, type CallerRow, type UserRow } from "../db/queries/accounts.ts";
import { batchItems, rowsOf, type Bound, type ViewerValues } from "../db/sql.ts";
import { hasCredentials, precheck, reachesPathRepo, resolveCaller, type Caller, type Credentials, type RouteAuth } from "./auth.ts";
import { ApiError, errorResponses, notFound, unprocessable, validationMessage } from "./errors.ts";
import type { Settings } from "./settings.ts";
import { formToJson, type FormFields } from "./form-body.ts";

export interface AppEnv {
  Bindings: Record<string, unknown>;
  Variables: {
    settings: Settings;
    rootUrl: string;
    driver: Driver;
    meter: DbMeter;
    creds: Credentials;
    /** The authenticated caller, once a read resolved it (for the error answer: Gitea shows a 500's text to site admins). */
    doer: { siteAdmin: boolean };
    routeAuth: RouteAuth;
    /** The route's checks before its input is bound (`apiRoute`'s `guard`). */
    bindGuard: BindGuard;
    /** Set once `beforeBind` ran for the request. */
    bindChecked: boolean;
    /** Input refused by the request's normalization (lib/request.ts), answered once the route's guards ran. */
    queryRefusal: ApiError;
    bodyRefusal: ApiError;
    /** The request carried a body another route would take: a JSON object with a member, or a form field with a value. */
    bodySent: boolean;
    /** A form body's text fields (lib/form-body.ts), bound for the route's schema before its validator. */
    formBody: FormFields;
    exposeHeaders: string;
    outbox: Outbox;
  };
}

/**
 * What a request's writes left for work after the answer: webhook deliveries recorded
 * (functions/events), repositories whose packs are due for compaction (services/git-maintenance.ts).
 */
export interface Outbox {
  hookTasks: boolean;
  compact: Set<number>;
}

export const newOutbox = (): Outbox => ({ hookTasks: false, compact: new Set() });

/** What a service needs to know about the request. */
export interface Ctx {
  /** The request's metered driver (the query layer's `read`/`write` run on it). */
  driver: Driver;
  /** The values every viewer-dependent statement binds. */
  vv: ViewerValues;
  creds: Credentials;
  /** Filled by `read` when it resolves the caller. */
  doer: { siteAdmin: boolean };
  route: RouteAuth;
  method: string;
  settings: Settings;
  rootUrl: string;
  /** The request URL (for redirects that keep the rest of the path and the query). */
  url: string;
  /** Set by a write whose batch may have recorded webhook deliveries: the app starts a delivery after the answer. */
  outbox: Outbox;
  /** Aborted when the request's client goes away (Node's server; workerd where it signals it); paces long git work. */
  signal?: AbortSignal;
}

export function ctxOf(c: Context<AppEnv>): Ctx {
  const creds = c.get("creds");
  return {
    driver: c.get("driver"),
    vv: viewerValues(creds, c.get("routeAuth")),
    creds,
    doer: c.get("doer") ?? { siteAdmin: false },
    route: c.get("routeAuth") ?? { scopes: [] },
    method: c.req.method,
    settings: c.get("settings"),
    rootUrl: c.get("rootUrl"),
    url: c.req.url,
    outbox: c.get("outbox") ?? newOutbox(),
    // a runtime without it still paces long work (git/pace.ts), with a signal that never fires
    signal: c.req.raw.signal ?? neverAborted(),
  };
}

let never: AbortSignal | undefined;
/** A signal that never fires, made on first use (workerd allows no AbortController in the global scope). */
function neverAborted(): AbortSignal {
  never ??= new AbortController().signal;
  return never;
}

/** The viewer CTE's values from the parsed credentials. */
export const viewerValues = (c: Credentials, route?: RouteAuth): ViewerValues => ({
  v_token: c.tokenHash,
  v_name: c.username === null ? null : c.username.toLowerCase(),
  v_sudo: c.sudo === null ? null : c.sudo.toLowerCase(),
  v_issue: route && reachesPathRepo(route) ? 1 : 0,
});

/** A route's named reads; the answer has the same names, each a typed row list. */
export type NamedReads = Record<string, Bound<unknown>>;
export type ReadResults<R extends NamedReads> = { [K in keyof R]: NonNullable<R[K]> extends Bound<infer T> ? T[] : never };

async function runBatch(driver: Driver, items: readonly Bound<unknown>[], mode: "read" | "write"): Promise<unknown[][]> {
  const rows = await driver.batch(batchItems(items), mode);
  return rows.map((rs, i) => rowsOf(items[i]!, rs)); // !: a batch answers one result per item
}

/**
 * ONE round trip: the caller (and the sudo target, when sudo was given) plus the route's named
 * reads, then authentication and the route's auth requirements. Anonymous callers skip the caller
 * lookup; a route that then reads nothing costs no round trip.
 */
export async function read<R extends NamedReads>(ctx: Ctx, reads: R): Promise<{ caller: Caller | null } & ReadResults<R>> {
  const names = Object.keys(reads);
  const items: Bound<unknown>[] = [];
  const signed = hasCredentials(ctx.creds);
  if (signed) {
    items.push((ctx.creds.password !== null ? callerByPassword : callerByToken).bind(ctx.vv));
    if (ctx.creds.sudo) items.push(accountByLowerName.bind({ name: ctx.creds.sudo.toLowerCase() }));
  }
  for (const n of names) items.push(reads[n]!); // !: n is one of reads' own keys
  const rows = items.length ? await runBatch(ctx.driver, items, "read") : [];
  const head = signed ? (ctx.creds.sudo ? 2 : 1) : 0;
  const caller = await resolveCaller(ctx, (signed ? rows[0] : []) as CallerRow[], (signed && ctx.creds.sudo ? rows[1] : []) as UserRow[]);
  ctx.doer.siteAdmin = caller?.isAdmin === true;
  const out: Record<string, unknown> = { caller };
  names.forEach((n, i) => {
    out[n] = rows[head + i];
  });
  return out as { caller: Caller | null } & ReadResults<R>;
}

/**
 * ONE round trip of writes — one transaction, all or nothing — followed by named reads that see
 * the writes (to answer with the stored state). A `whileExists` guard whose row is gone → 404.
 */
export async function write<R extends NamedReads>(ctx: Ctx, commands: readonly Bound<unknown>[], reads: R = {} as R): Promise<ReadResults<R>> {
  const names = Object.keys(reads);
  let rows: unknown[][];
  try {
    rows = await runBatch(ctx.driver, [...commands, ...names.map((n) => reads[n]!)], "write"); // !: n is one of reads' own keys
  } catch (err) {
    // A row the write hangs on was deleted since the route read it (`whileExists`): nothing was written.
    if (rowGone(err)) throw notFound();
    throw err;
  }
  const out: Record<string, unknown> = {};
  names.forEach((n, i) => {
    out[n] = rows[commands.length + i];
  });
  return out as ReadResults<R>;
}

/**
 * What Gitea's router checks before it binds a route's input (routers/api/v1/api.go: the
 * `repoAssignment`/`orgAssignment` of the path, then `reqRepoWriter`, `reqOrgOwnership`, … and only
 * then `bind(form)`): the resource in the path as the caller sees it (404) and the route's guards
 * (403). It runs only when the input is invalid — a valid request reaches its service, which reads
 * and checks the same in its own round trip — so that a caller who may not use the route learns
 * that, and not what its body got wrong.
 */
export type BindGuard = (ctx: Ctx, params: Readonly<Record<string, string>>) => Promise<void>;

/**
 * Before an input refusal: the route's guards (one round trip), or for a route without any, the
 * credentials and token scopes (401/403) when some were given.
 */
async function beforeBind(c: Context<AppEnv>) {
  if (c.get("bindChecked")) return;
  c.set("bindChecked", true);
  const ctx = ctxOf(c);
  const guard = c.get("bindGuard");
  if (guard) await guard(ctx, c.req.param());
  else if (hasCredentials(c.get("creds"))) await read(ctx, {});
}

/** Validation failures as Gitea's 422 `[Field]: Rule`, after the route's guards. */
export const defaultHook = async (result: { success: boolean; error?: { issues: readonly unknown[] } }, c: Context<AppEnv>) => {
  if (result.success) return;
  await beforeBind(c);
  throw unprocessable(validationMessage((result.error?.issues ?? []) as never));
};

/** A route group: OpenAPIHono with Gitea's validation errors. */
export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: defaultHook as never });

/**
 * Declares the route's auth requirements and fails anonymous callers before any database work;
 * input the request's normalization refused is answered after the route's guards.
 */
const requireAuth = (auth: RouteAuth, guard: BindGuard | undefined, body: z.ZodType | undefined): MiddlewareHandler<AppEnv> => async (c, next) => {
  const hasBody = body !== undefined;
  c.set("routeAuth", auth);
  precheck(c.get("creds"), auth, c.get("settings"));
  if (guard) c.set("bindGuard", guard);
  // A route without a body never reads one, as in Gitea — but a DELETE that takes none refuses one:
  // it is another route's request whose path a `..` segment resolved here (WHATWG URL parsers in
  // clients, workerd and Cloudflare's edge resolve `…/contents/%2e%2e` to the repository itself, so
  // a file delete would delete the repository).
  const misrouted = !hasBody && c.req.method === "DELETE" && c.get("bodySent") ? unprocessable("[Body]: this request takes no body") : undefined;
  const refused = c.get("queryRefusal") ?? (hasBody ? c.get("bodyRefusal") : misrouted);
  if (refused) {
    await beforeBind(c);
    throw refused;
  }
  const form = c.get("formBody");
  if (body && form) {
    // the form as the JSON body it stands for: the route's validator and handler see no difference
    const json = JSON.stringify(formToJson(body, form));
    const headers = new Headers(c.req.raw.headers);
    headers.set("Content-Type", "application/json");
    headers.delete("Content-Length");
    c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers, body: json });
    const cache = c.req.bodyCache as Record<string, unknown>;
    for (const k of Object.keys(cache)) delete cache[k];
    cache.text = Promise.resolve(json);
  }
  await next();
  // The media-type gate of a body route refuses (415, answered as Gitea's 422) before the hook runs.
  const err = c.error;
  if (hasBody && err instanceof HTTPException && !(err instanceof ApiError) && err.status === 415) await beforeBind(c);
};

/**
 * What any API route can answer besides its own responses (issue 8 B.8): bad credentials (401), an
 * account state, sudo or token scope refusal (403), an unknown sudo target (404), an oversized body
 * (413), invalid input such as a NUL character (422) and an unavailable database (503).
 */
const ANY_ROUTE = errorResponses(401, 403, 404, 413, 422, 503);
const RENAMED = { 307: { description: "the repository was renamed: the same request under its new name (callers who may see it)" } };

/** Every API route's auth requirements by operationId, as declared (for tests that build their tables from the code). */
export const ROUTE_AUTH = new Map<string, { method: string; path: string; auth: RouteAuth }>();

/** createRoute plus the route's auth requirements (scopes, sign-in, …) and the answers every route can give. */
export function apiRoute<R extends Omit<RouteConfig, "middleware">>(config: R & { auth: RouteAuth; guard?: BindGuard }) {
  const { auth, guard, ...rest } = config;
  if (rest.operationId) ROUTE_AUTH.set(rest.operationId, { method: rest.method.toUpperCase(), path: rest.path, auth });
  const responses = { ...ANY_ROUTE, ...(rest.path.includes("{owner}/{repo}") ? RENAMED : {}), ...rest.responses };
  const media = rest.request?.body?.content?.["application/json"] as { schema?: unknown } | undefined;
  const body = media?.schema instanceof z.ZodType ? media.schema : undefined;
  const hasBody = rest.request?.body !== undefined;
  return createRoute({ ...rest, responses, middleware: [requireAuth(auth, guard, hasBody ? (body ?? z.object({})) : undefined)] as const } as unknown as R & { middleware: [MiddlewareHandler<AppEnv>] });
}

export { ApiError };
