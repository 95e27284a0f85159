/**
 * Conditional requests (issue 9 B.6). Every successful `GET`/`HEAD` of the API carries an `ETag`
 * computed from what the caller receives — the body, the headers that describe it (type,
 * `X-Total-Count`, `Link`) — and from who asks: the credential (a token fixes its user and its scope
 * set; basic authentication its user name), and the sudo target. Two callers never share a tag, so
 * a caller never gets a 304 for a tag it did not receive, even where both see the same body.
 * `If-None-Match` (strong or weak tags, lists, `*`) then answers 304 without a body: a client that
 * polls costs the server the request's round trip but no body.
 *
 * Caching: `Cache-Control: private, no-cache` (a private cache may keep the answer but revalidates it
 * every time), `no-store` on routes that show secrets or personal data (tokens, e-mail addresses,
 * webhooks) and on errors; `Vary: Authorization, Sudo` on every API answer. A route that tags its
 * own answers (raw files: the blob id, Gitea's caching) keeps its tag, its Cache-Control and its 304.
 */
import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { sha256 } from "./crypto.ts";
import type { Credentials } from "./auth.ts";

/** API routes (OpenAPI paths under /api/v1) whose answers no cache may store. */
export const NO_STORE_ROUTES = ["/users/{username}/tokens", "/user/emails", "/orgs/{org}/hooks", "/orgs/{org}/hooks/{id}"] as const;

/** The request headers every API answer depends on besides the URL. */
export const VARY = ["Authorization", "Sudo"] as const;

export const CACHE_PRIVATE = "private, no-cache";
export const CACHE_NONE = "no-store";

/** The response headers that describe the body and take part in its tag. */
const TAGGED_HEADERS = ["content-type", "x-total-count", "link"] as const;

/** Headers a 304 must not carry: it has no body. */
const BODY_HEADERS = ["content-type", "content-length", "content-encoding"];

/** Who asks, as the credentials say (no I/O): a token, a basic-auth user name, a sudo target, or nobody. */
export function callerKey(creds: Credentials): string {
  const parts: string[] = [];
  if (creds.tokenHash !== null) parts.push(`token:${creds.tokenHash}`);
  if (creds.username !== null) parts.push(`basic:${creds.username.toLowerCase()}`);
  if (creds.sudo) parts.push(`sudo:${creds.sudo.toLowerCase()}`);
  return parts.length ? parts.join(" ") : "anonymous";
}

/**
 * The weak entity tag of an answer for a caller: 132 bits of SHA-256 (22 base64url characters)
 * over the caller, the status, the tagged headers and the body.
 */
export function entityTag(caller: string, status: number, headers: Headers, body: Uint8Array | string): string {
  const head = `${caller}\n${status}\n${TAGGED_HEADERS.map((h) => headers.get(h) ?? "").join("\n")}\n`;
  const digest = typeof body === "string" ? sha256(head + body, "base64url") : createHash("sha256").update(head).update(body).digest("base64url");
  return `W/"${digest.slice(0, 22)}"`;
}

/**
 * Whether `If-None-Match` matches `etag` (RFC 9110 §13.1.2, weak comparison): `*`, or any tag of the
 * list, with or without `W/`. Anything that is not an entity tag is ignored, never an error.
 */
export function noneMatch(header: string | undefined | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  const opaque = etag.replace(/^W\//, "");
  for (const m of header.matchAll(/(?:W\/)?("[^"]*")/g)) if (m[1] === opaque) return true;
  return false;
}

const honoPath = (openApiPath: string) => `/api/v1${openApiPath.replace(/\{(\w+)\}/g, ":$1")}`;
const NO_STORE = new Set<string>(NO_STORE_ROUTES.map(honoPath));

const VARY_VALUE = VARY.join(", ");
export const varyByCaller = (headers: Headers) => {
  const vary = headers.get("Vary");
  if (vary === null) {
    headers.set("Vary", VARY_VALUE);
    return;
  }
  const names = vary.split(",").map((s) => s.trim()).filter(Boolean);
  for (const name of VARY) if (!names.some((n) => n.toLowerCase() === name.toLowerCase())) names.push(name);
  headers.set("Vary", names.join(", "));
};

/** A JSON answer as `c.json` renders it, with Hono's default content type unless one is given. */
type JsonRender = (object: unknown, arg?: unknown, headers?: unknown) => Response;
const withJsonType = (headers: unknown): HeadersInit => {
  if (headers instanceof Headers) {
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
    return headers;
  }
  const record = (headers ?? {}) as Record<string, string>;
  return Object.keys(record).some((k) => k.toLowerCase() === "content-type") ? record : { ...record, "content-type": "application/json" };
};

/**
 * The middleware (after `credentials()`): tags, 304s, Cache-Control and Vary for the API.
 *
 * JSON answers are tagged from the string `c.json` renders (wrapped for GET/HEAD only), so the
 * body is hashed without being read back from the Response — reading it back made Node's adapter
 * build a full web Response and cost ~8 % of a repository read. Any other successful GET answer
 * (none today) is read back and tagged the slow way.
 */
export function conditionalRequests(): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method;
    const conditional = method === "GET" || method === "HEAD";
    let rendered: { res: Response; text: string } | null = null;
    if (conditional) {
      const body = c.body as unknown as (data: string, arg?: unknown, headers?: HeadersInit) => Response;
      (c as unknown as { json: JsonRender }).json = (object, arg, headers) => {
        const text = JSON.stringify(object);
        const res = body(text, arg, withJsonType(headers));
        rendered = { res, text };
        return res;
      };
    }
    await next();
    varyByCaller(c.res.headers);
    if (!conditional) return;
    const res = c.res;
    // A route that tags its own answers (raw files: the blob id) keeps its tag and its caching.
    if (res.status === 304 || res.headers.has("ETag")) return;
    if (res.status < 200 || res.status > 299) {
      res.headers.set("Cache-Control", CACHE_NONE);
      return;
    }
    const caller = callerKey(c.get("creds") as Credentials);
    const cacheControl = NO_STORE.has(routePath(c)) ? CACHE_NONE : CACHE_PRIVATE;
    const json = rendered as { res: Response; text: string } | null;
    if (json && json.res === res) {
      const etag = entityTag(caller, res.status, res.headers, json.text);
      res.headers.set("ETag", etag);
      res.headers.set("Cache-Control", cacheControl);
      if (noneMatch(c.req.header("If-None-Match"), etag)) notModified(c, res.headers);
      return;
    }
    const body = new Uint8Array(await res.arrayBuffer());
    const etag = entityTag(caller, res.status, res.headers, body);
    const headers = new Headers(res.headers);
    headers.set("ETag", etag);
    headers.set("Cache-Control", cacheControl);
    if (noneMatch(c.req.header("If-None-Match"), etag)) return notModified(c, headers);
    // 204 and 205 answers may not carry a body, not even an empty one.
    const nullBody = res.status === 204 || res.status === 205;
    c.res = new Response(nullBody ? null : body, { status: res.status, statusText: res.statusText, headers });
  };
}

/** 304 with the answer's headers but none that describe a body. */
function notModified(c: Context, headers: Headers) {
  const out = new Headers(headers);
  for (const h of BODY_HEADERS) out.delete(h);
  // Hono's `c.res` setter merges the previous answer's headers into the new one: clear it first.
  c.res = undefined as unknown as Response;
  c.res = new Response(null, { status: 304, headers: out });
}
