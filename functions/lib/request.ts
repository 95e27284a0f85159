/**
 * Request normalization for every /api/v1 route, so that Go's and Gitea's input semantics hold
 * before any validator runs (issue 8 B.3, B.5, B.6):
 * - a query parameter given twice counts with its first value, as Go's `FormValue` reads it;
 * - a blank or whitespace-only JSON body is an empty object (Gitea's binding ignores `io.EOF`);
 * - NUL characters are refused: SQLite's C strings would cut them on one target and keep them on
 *   the other, so a name with a NUL could even match a different row. In the path nothing can
 *   have such a name (404); in the query or the body it is invalid input (422);
 * - a lone UTF-16 surrogate escaped in a JSON body (`"\ud800"`) becomes U+FFFD, as Go's decoder
 *   makes it: stored, it would be U+FFFD anyway (UTF-8 has no lone surrogates), so the name a route
 *   answers with and the name it stored are the same, and no encoder meets a malformed string.
 */
import type { Context, MiddlewareHandler } from "hono";
import { goFieldName, notFound, unprocessable } from "./errors.ts";

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;
const NUL = "\u0000";

/** The JSON path of the first string (or key) holding a NUL, or null. */
export function nulPath(value: unknown, path: string[] = []): string[] | null {
  if (typeof value === "string") return value.includes(NUL) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = nulPath(value[i], path);
      if (p) return p;
    }
    return null;
  }
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes(NUL)) return [...path, k];
      const p = nulPath(v, [...path, k]);
      if (p) return p;
    }
  }
  return null;
}

/** `value` with every lone surrogate in its strings and keys replaced by U+FFFD (the same value when it has none). */
export function wellFormed(value: unknown): unknown {
  if (typeof value === "string") return value.isWellFormed() ? value : value.toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toWellFormed(), wellFormed(v)]));
  return value;
}

/** A `\uD800`–`\uDFFF` escape: the only way a lone surrogate reaches JSON text decoded from UTF-8. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

const nulRefused = (field: string | undefined) => unprocessable(`[${field ? goFieldName(field) : "Body"}]: invalid character NUL`);

/** The middleware; runs after the body limit and before credentials and validators. */
export function normalizeRequest(): MiddlewareHandler {
  return async (c, next) => {
    const href = c.req.url;
    const readsBody = c.req.method !== "GET" && c.req.method !== "HEAD";
    // Most reads have no escape in the path and no query: nothing to normalise.
    if (!readsBody && !href.includes("%") && !href.includes("?")) return next();
    const url = new URL(href);
    let path = url.pathname;
    try {
      path = decodeURIComponent(path);
    } catch {
      // A malformed escape matches no route; the router answers 404.
    }
    if (path.includes(NUL)) throw notFound();

    const first = new URLSearchParams();
    let repeated = false;
    for (const [k, v] of url.searchParams) {
      if (k.includes(NUL) || v.includes(NUL)) throw nulRefused(k.replace(/\0/g, ""));
      if (first.has(k)) repeated = true;
      else first.append(k, v);
    }
    if (repeated) {
      url.search = first.toString();
      c.req.raw = new Request(url, c.req.raw);
    }

    const type = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim(); // !: split returns at least one part
    if (readsBody && JSON_TYPE.test(type)) {
      const text = await c.req.text();
      if (text.trim() === "") {
        // Hono's json() parses the cached text: a blank body reads as an empty object.
        (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve("{}");
      } else {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Left to the validator, which answers Gitea's DeserializationError.
          parsed = undefined;
        }
        if (parsed !== undefined) {
          const bad = nulPath(parsed);
          if (bad) throw nulRefused(bad.at(-1));
          // Hono's json() parses the cached text: the validators see the well-formed value.
          if (SURROGATE_ESCAPE.test(text)) (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(JSON.stringify(wellFormed(parsed)));
        }
      }
    }
    await next();
  };
}

/** The request URL without credentials given in the query (`token`, `access_token`), for headers that echo it. */
export function withoutQueryCredentials(url: URL): URL {
  const u = new URL(url);
  u.searchParams.delete("token");
  u.searchParams.delete("access_token");
  return u;
}

/**
 * Sets a header on the answer a handler already made (middleware after `next()`). Hono's
 * `c.header` rebuilds a finished Response to do that, which on Node makes the adapter's light
 * Response build a full web Response (about 5 % of a small read); the answers made here have
 * mutable headers, so they are set in place — falling back to Hono's copy for one that does not.
 */
export function setAnswerHeader(c: Context, name: string, value: string) {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}
