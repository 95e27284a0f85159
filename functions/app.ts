/**
 * createApp(): the one Hono app both runtimes serve. It owns the middleware (settings, metered
 * database, security headers, body limit, credentials, Server-Timing), mounts every route group
 * under /api/v1, renders errors as Gitea does, and serves the API documents.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, ExecutionContext } from "hono";
import { bodyLimit } from "hono/body-limit";
import { metered, newMeter, type Driver } from "./db/driver.ts";
import { credentials } from "./lib/auth.ts";
import { CACHE_NONE, conditionalRequests, varyByCaller } from "./lib/etag.ts";
import { hasDotSegment, servedMethods, withoutStraySlashes } from "./lib/paths.ts";
import { normalizeRequest, setAnswerHeader } from "./lib/request.ts";
import { createRouter, newOutbox, type AppEnv } from "./lib/context.ts";
import { methodNotAllowed, notFound, renderError } from "./lib/errors.ts";
import { GITEA_API_VERSION, security, securitySchemes } from "./lib/openapi.ts";
import type { Settings } from "./lib/settings.ts";
import { toSwagger2 } from "./lib/swagger2.ts";
import { SWAGGER_ASSETS, swaggerPage, type SwaggerAsset } from "./lib/swagger-ui.ts";
import { admin } from "./routes/admin.ts";
import { misc } from "./routes/misc.ts";
import { orgs } from "./routes/orgs.ts";
import { repos } from "./routes/repos.ts";
import { collaborators } from "./routes/collaborators.ts";
import { labels } from "./routes/labels.ts";
import { gitApi } from "./routes/git-api.ts";
import { emails } from "./routes/emails.ts";
import { teams } from "./routes/teams.ts";
import { hooks } from "./routes/hooks.ts";
import { users } from "./routes/users.ts";
import { gitHttp } from "./routes/git-http.ts";
import { templates } from "./routes/templates.ts";
import { contents } from "./routes/contents.ts";
import { archives } from "./routes/archives.ts";
import { gitStorage, type ObjectStoreOf } from "./lib/git-storage.ts";
import { MemoryObjectStore } from "./git/storage/memory-object-store.ts";

export interface AppDeps {
  settings: Settings;
  /** The database driver for this request (shared on Node, per request on the Worker). */
  driver: (env: Record<string, unknown>) => Driver;
  /** Swagger UI's static files (read from swagger-ui-dist by each entry point). */
  assets: (name: SwaggerAsset, env: Record<string, unknown>) => Promise<string | null>;
  /** Git pack and index files (a directory under DATA_DIR on Node, R2 on the Worker); in memory when absent. */
  objects?: ObjectStoreOf;
  /**
   * Called after a request whose write recorded webhook deliveries (the event outbox), once its
   * answer is ready: Node's deliverer sweeps in the background, the Worker queues a delivery.
   */
  deliverHooks?: (env: Record<string, unknown>, waitUntil: (p: Promise<unknown>) => void) => void;
  /**
   * Called after a request whose write left repositories due for a pack compaction
   * (services/git-maintenance.ts): Node's maintainer compacts them in the background, the Worker
   * queues a message.
   */
  compactGit?: (repoIds: number[], env: Record<string, unknown>, waitUntil: (p: Promise<unknown>) => void) => void;
}

/** Every route group, in registration order (static paths before parameterized ones). */
export const routeGroups = [misc, templates, users, orgs, admin, repos, collaborators, labels, emails, teams, hooks, gitApi, contents, archives];

/** The API's request body limit. */
export const API_BODY_LIMIT = 1024 * 1024;

/** Writes of file contents (base64 in JSON): their own cap, for files up to `[git] MAX_PUSH_SIZE` and at most 16 MiB of body. */
const CONTENTS_WRITE = /^\/api\/v1\/repos\/[^/]+\/[^/]+\/contents(\/|$)/;
export const contentsBodyLimit = (settings: Settings) => Math.min(16 * 1024 * 1024, Math.ceil((settings.git.maxPushBytes * 4) / 3) + 64 * 1024);

/** The API sub-app mounted at /api/v1; its OpenAPI registry is the source of both documents. */
export function createApi() {
  const api = createRouter();
  for (const group of routeGroups) api.route("/", group);
  for (const [name, scheme] of Object.entries(securitySchemes)) api.openAPIRegistry.registerComponent("securitySchemes", name, scheme as never);
  return api;
}

/**
 * zod-openapi writes a nullable reference as `allOf: [$ref, {nullable: true}]`, which no validator
 * reads as "null allowed"; OpenAPI 3.0's form is `allOf: [$ref]` with `nullable: true` beside it.
 */
function fixNullableRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(fixNullableRefs);
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = fixNullableRefs(v);
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    const branches = out[key];
    if (!Array.isArray(branches)) continue;
    const marker = branches.findIndex((s) => s && typeof s === "object" && Object.keys(s).length === 1 && (s as { nullable?: unknown }).nullable === true);
    if (marker < 0) continue;
    delete out[key];
    out.allOf = branches.filter((_, i) => i !== marker);
    out.nullable = true;
  }
  return out;
}

/** The OpenAPI 3.0 document of the API, generated from the route definitions. */
export function openApiDocument(api: OpenAPIHono<AppEnv>, rootUrl: string) {
  return fixNullableRefs(api.getOpenAPIDocument({
    openapi: "3.0.3",
    info: {
      title: "Gitea API",
      description: "This documentation describes the Gitea API.",
      version: GITEA_API_VERSION,
      license: { name: "MIT", url: "http://opensource.org/licenses/MIT" },
    },
    servers: [{ url: `${rootUrl}api/v1` }],
    security,
  })) as ReturnType<OpenAPIHono<AppEnv>["getOpenAPIDocument"]>;
}

/** The runtime's `waitUntil` (the Worker's execution context); on Node a promise simply runs on. */
function waitUntilOf(c: Context<AppEnv>): (p: Promise<unknown>) => void {
  try {
    const ec = c.executionCtx;
    return (p) => ec.waitUntil(p);
  } catch {
    return (p) => void p.catch(() => undefined);
  }
}

export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>();
  const api = createApi();
  let docs: { key: string; v3: unknown; v2: unknown } | null = null;
  const documents = (rootUrl: string) => {
    if (docs?.key !== rootUrl) {
      const v3 = openApiDocument(api, rootUrl);
      docs = { key: rootUrl, v3, v2: toSwagger2(v3 as never) };
    }
    return docs;
  };

  app.use(async (c, next) => {
    const { settings } = deps;
    c.set("settings", settings);
    c.set("rootUrl", settings.server.rootUrl ?? `${new URL(c.req.url).origin}/`);
    const meter = newMeter();
    c.set("meter", meter);
    const outbox = newOutbox();
    c.set("outbox", outbox);
    const driver = metered(deps.driver(c.env ?? {}), meter, settings.database.queryTimeoutMs);
    c.set("driver", driver);
    if (dotted.has(c.req.raw)) c.res = renderError(notFound(), c);
    else await next();
    // Every error, to any method, is answered for this request alone (the GETs' errors are also
    // marked by conditionalRequests; writes, 405s and refusals before routing are not otherwise).
    if (c.res.status >= 400) {
      if (!c.res.headers.has("Cache-Control")) setAnswerHeader(c, "Cache-Control", CACHE_NONE);
      if (c.req.path.startsWith("/api/v1/")) {
        try {
          varyByCaller(c.res.headers);
        } catch {
          // an answer passed through with immutable headers keeps them
        }
      }
    }
    if (outbox.hookTasks && deps.deliverHooks) deps.deliverHooks(c.env ?? {}, waitUntilOf(c));
    if (outbox.compact.size > 0 && deps.compactGit) deps.compactGit([...outbox.compact], c.env ?? {}, waitUntilOf(c));
    setAnswerHeader(c, "X-Content-Type-Options", "nosniff");
    if (settings.server.enableServerTiming) {
      // the database time only when asked for: how long a hidden row took to read would tell it exists
      const dur = settings.server.serverTimingDuration ? `dur=${meter.ms.toFixed(1)};` : "";
      setAnswerHeader(c, "Server-Timing", `db;${dur}desc="${meter.roundTrips}"`);
    }
  });
  const memoryObjects = new MemoryObjectStore();
  app.use(gitStorage(deps.objects ?? (() => memoryObjects)));
  // The rest of the body is never read: the connection closes after the answer (as Node's own
  // answers to requests it refuses do), so a keep-alive client does not send its next request
  // into a connection the server drops.
  const tooLarge = (c: Context<AppEnv>) => c.json({ message: "request body too large", url: `${c.get("rootUrl")}api/swagger` }, 413, { Connection: "close" });
  const apiLimit = bodyLimit({ maxSize: API_BODY_LIMIT, onError: tooLarge });
  const contentsLimit = bodyLimit({ maxSize: contentsBodyLimit(deps.settings), onError: tooLarge });
  // No GET or HEAD route reads a body; asking for one would make Node's adapter build a full web
  // Request for every read.
  app.use("/api/v1/*", (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return next();
    return (CONTENTS_WRITE.test(c.req.path) ? contentsLimit : apiLimit)(c, next);
  });
  app.use("/api/v1/*", normalizeRequest());
  app.use("/api/v1/*", credentials());
  app.use("/api/v1/*", conditionalRequests());

  app.route("/api/v1", api);
  app.route("/", gitHttp);

  // [api] ENABLE_SWAGGER = false: Gitea registers neither the documents nor the page
  const swaggerOn = (c: Context<AppEnv>) => c.get("settings").api.enableSwagger;
  app.get("/openapi3.v1.json", (c) => (swaggerOn(c) ? c.json(documents(c.get("rootUrl")).v3 as object) : c.notFound()));
  app.get("/swagger.v1.json", (c) => (swaggerOn(c) ? c.json(documents(c.get("rootUrl")).v2 as object) : c.notFound()));
  app.get("/api/swagger", (c) => (swaggerOn(c) ? c.html(swaggerPage(c.get("rootUrl"))) : c.notFound()));
  app.get("/api/v1/swagger", (c) => (swaggerOn(c) ? c.redirect(`${c.get("rootUrl")}api/swagger`, 307) : c.notFound()));
  app.get("/assets/swagger-ui/:file", async (c) => {
    const file = c.req.param("file") as SwaggerAsset;
    const body = SWAGGER_ASSETS.includes(file) ? await deps.assets(file, c.env ?? {}) : null;
    if (body === null) return renderError(notFound(), c);
    c.header("Cache-Control", "public, max-age=86400");
    return c.body(body, 200, { "Content-Type": file.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8" });
  });
  app.get("/", (c) => (swaggerOn(c) ? c.redirect(`${c.get("rootUrl")}api/swagger`, 302) : c.notFound()));

  const methodsAt = servedMethods(api.routes, "/api/v1");
  app.notFound((c) => {
    // a route of this method that answered "not found" itself is a 404, not a wrong method
    const allow = c.req.path.startsWith("/api/v1/") ? methodsAt(c.req.path) : [];
    return renderError(allow.length > 0 && !allow.includes(c.req.method) ? methodNotAllowed(allow) : notFound(), c);
  });
  app.onError((err, c) => renderError(err, c));

  // Paths as Gitea's router takes them (lib/paths.ts), before routing: a dot segment is refused as
  // the client sent it (Node's adapter has already resolved it in `req.url`; the raw target is in
  // `incoming`), stray slashes are dropped.
  const route = app.fetch;
  app.fetch = (req: Request, env?: AppEnv["Bindings"] | { incoming?: { url?: string } }, ctx?: ExecutionContext) => {
    const raw = (env as { incoming?: { url?: string } } | undefined)?.incoming?.url ?? req.url;
    if (hasDotSegment(raw)) dotted.add(req);
    else {
      const clean = withoutStraySlashes(req.url);
      if (clean !== null) req = new Request(clean, req);
    }
    return route(req, env as never, ctx);
  };
  return app;
}

/** Requests whose path names a dot segment: answered 404 by the first middleware. */
const dotted = new WeakSet<Request>();
