/**
 * Request normalization for every /api/v1 route, so that Go's and Gitea's input semantics hold
 * before any validator runs (issue 8 B.3, B.5, B.6):
 * - a query parameter given twice counts with its first value, as Go's `FormValue` reads it (but for
 *   the lists a route reads whole, `LIST_PARAMS`);
 * - a blank or whitespace-only JSON body, or `null`, is an empty object (Gitea's binding ignores
 *   `io.EOF`; Go's decoder leaves a struct untouched by `null`);
 * - NUL characters are refused: SQLite's C strings would cut them on one target and keep them on
 *   the other, so a name with a NUL could even match a different row. In the path nothing can
 *   have such a name (404); in the query or the body it is invalid input (422);
 * - refusals of the query or the body (422) are answered by the route, after its guards, as Gitea
 *   binds input only after them (lib/context.ts `requireAuth`); a route without a body ignores it;
 * - a lone UTF-16 surrogate escaped in a JSON body (`"\ud800"`) becomes U+FFFD, as Go's decoder
 *   makes it: stored, it would be U+FFFD anyway (UTF-8 has no lone surrogates), so the name a route
 *   answers with and the name it stored are the same, and no encoder meets a malformed string;
 * - a `null` member of a JSON object is as if it were absent (Go's decoder leaves a field untouched
 *   by `null`), so clients that send every optional field, unset ones as null, work as with Gitea;
 * - a body nested deeper than Go's decoder reads (10,000 levels) is refused (422); every walk of the
 *   body here is iterative, so no depth reaches the stack.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { type ApiError, badRequest, goFieldName, notFound, unprocessable } from "./errors.ts";
import { FORM_TYPE } from "./form-body.ts";

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;
const NUL = "\u0000";

/**
 * The JSON path (object keys; array elements add none) of the first string or key holding a NUL,
 * in document order, or null.
 */
export function nulPath(value: unknown): string[] | null {
  const stack: [unknown, string[]][] = [[value, []]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!; // !: the loop runs while the stack has entries
    if (typeof v === "string") {
      if (v.includes(NUL)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path]);
    } else if (v && typeof v === "object") {
      const entries = Object.entries(v);
      for (const [k] of entries) if (k.includes(NUL)) return [...path, k];
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], [...path, entries[i]![0]]]); // !: i is in range
    }
  }
  return null;
}

/**
 * `text`'s JSON as Go's decoder reads it into a struct: every lone surrogate in its strings and keys
 * made U+FFFD, and every `null` object member dropped (`null` leaves a field as it was). The
 * reviver runs inside JSON.parse, children first, so no walk of ours recurses.
 */
export function goJson(text: string): unknown {
  return JSON.parse(text, (_k, v: unknown) => {
    if (typeof v === "string") return v.isWellFormed() ? v : v.toWellFormed();
    if (v && typeof v === "object" && !Array.isArray(v)) {
      let out: Record<string, unknown> | null = null;
      for (const [k, x] of Object.entries(v)) {
        if (x !== null && k.isWellFormed()) continue;
        out ??= { ...v };
        delete out[k];
        if (x !== null) out[k.toWellFormed()] = x;
      }
      if (out) return out;
    }
    return v;
  });
}

/** Go's encoding/json nesting limit. */
export const MAX_JSON_DEPTH = 10_000;

/** Whether `text` nests arrays and objects deeper than `max` (brackets inside strings do not count). */
export function tooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  // A text shorter than twice the limit cannot nest that deep.
  if (text.length <= 2 * max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A `\uD800`–`\uDFFF` escape: the only way a lone surrogate reaches JSON text decoded from UTF-8. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

const nulRefused = (field: string | undefined) => unprocessable(`[${field ? goFieldName(field) : "Body"}]: invalid character NUL`);

/** Query parameters a route reads every value of (Gitea's FormStrings): repeated, they all stay. */
const LIST_PARAMS: readonly { route: RegExp; key: string }[] = [{ route: /^\/api\/v1\/repos\/[^/]+\/[^/]+\/archive\//, key: "path" }];

/** What another route's body looks like: an object with a member (`[]`, `""`, `{}` and `null` say nothing). */
const anotherRoutesBody = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length > 0;

/** A browser request made by a page of another site (Fetch Metadata, else the Origin header). */
function crossSite(c: Context<AppEnv>): boolean {
  const site = c.req.header("Sec-Fetch-Site");
  if (site !== undefined) return site !== "same-origin" && site !== "none";
  const origin = c.req.header("Origin");
  return origin !== undefined && origin !== new URL(c.get("rootUrl")).origin;
}

/** The middleware; runs after the body limit and before credentials and validators. */
export function normalizeRequest(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const href = c.req.url;
    const readsBody = c.req.method !== "GET" && c.req.method !== "HEAD";
    // Most reads have no escape in the path and no query: nothing to normalise.
    if (!readsBody && !href.includes("%") && !href.includes("?")) return next();
    const url = new URL(href);
    // A refusal before the body is read reads it first: workerd drops a connection whose request
    // body the Worker left unread, taking the answer with it.
    const refuse = async (e: ApiError) => {
      if (readsBody && c.req.raw.body) await c.req.arrayBuffer().catch(() => undefined);
      return e;
    };
    // What is no escape (`%zz`, a lone `%`) is Go's "invalid URL escape", a 400 before Gitea's router.
    const bad = /%(?![0-9a-fA-F]{2}).{0,2}/.exec(url.pathname);
    if (bad) throw await refuse(badRequest(`invalid URL escape "${bad[0]}"`));
    let path: string;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      // An escape that is not UTF-8 (`%ff`) names nothing here: the router would keep it as literal
      // text (a file named "%ff" instead of the byte), so it is a 404, as NUL is.
      throw await refuse(notFound());
    }
    if (path.includes(NUL)) throw await refuse(notFound());

    const first = new URLSearchParams();
    let repeated = false;
    const lists = LIST_PARAMS.filter((l) => l.route.test(path)).map((l) => l.key);
    for (const [k, v] of url.searchParams) {
      if (k.includes(NUL) || v.includes(NUL)) {
        c.set("queryRefusal", nulRefused(k.replace(/\0/g, "")));
        break;
      }
      if (lists.includes(k)) first.append(k, v);
      else if (first.has(k)) repeated = true;
      else first.append(k, v);
    }
    if (repeated) {
      url.search = first.toString();
      c.req.raw = new Request(url, c.req.raw);
    }

    const type = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim(); // !: split returns at least one part
    // A form is bound as Gitea binds one (lib/form-body.ts): its text fields, for the route's schema
    // — unless a browser sends it from another site. A page anywhere can post a form here without a
    // preflight, and the browser adds the Basic credentials it keeps for this origin: such a form is
    // refused as any other unsupported body (JSON cannot be sent so, and stays the way in).
    if (readsBody && FORM_TYPE.test(type) && !crossSite(c)) {
      const fields: [string, string][] = [];
      try {
        for (const [k, v] of await c.req.formData()) if (typeof v === "string") fields.push([k, v]);
      } catch {
        c.set("bodyRefusal", unprocessable("[Body]: DeserializationError: malformed form body"));
      }
      const bad = fields.find(([k, v]) => k.includes(NUL) || v.includes(NUL));
      if (bad) c.set("bodyRefusal", nulRefused(bad[0].replace(/\0/g, "")));
      c.set("formBody", fields);
      // a field with a value (`curl -d '{}'` sends the field "{}" with none)
      if (fields.some(([, v]) => v !== "")) c.set("bodySent", true);
    }
    // A body that is not JSON nor a form is refused (422) without being parsed, but it is read first:
    // workerd drops a connection whose request body the Worker left unread, taking the answer with it.
    else if (readsBody && !JSON_TYPE.test(type) && c.req.raw.body) {
      // read, not parsed for the route; but a JSON object in it (Node's fetch sends a string body as
      // text/plain) is another route's body all the same (lib/context.ts, DELETE)
      const text = await c.req.text().catch(() => "");
      if (text.trimStart().startsWith("{") && text.length <= 1 << 20) {
        try {
          const parsed: unknown = JSON.parse(text);
          if (anotherRoutesBody(parsed)) c.set("bodySent", true);
        } catch {
          // not JSON: no route's body
        }
      }
    }
    if (readsBody && JSON_TYPE.test(type)) {
      const text = await c.req.text();
      if (text.trim() === "") {
        // Hono's json() parses the cached text: a blank body reads as an empty object.
        (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve("{}");
      } else {
        const deep = tooDeep(text);
        let parsed: unknown;
        try {
          parsed = deep ? undefined : JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        if (anotherRoutesBody(parsed)) c.set("bodySent", true);
        if (parsed === undefined) {
          c.set("bodyRefusal", unprocessable(`[Body]: DeserializationError: ${deep ? "exceeded max depth" : "Malformed JSON in request body"}`));
        } else if (parsed === null) {
          // Go's decoder leaves a struct untouched by a `null` document: an empty object
          (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve("{}");
        } else {
          const bad = nulPath(parsed);
          if (bad) c.set("bodyRefusal", nulRefused(bad.at(-1)));
          // Hono's json() parses the cached text: the validators see the value as Go reads it.
          if (SURROGATE_ESCAPE.test(text) || text.includes("null")) (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(JSON.stringify(goJson(text)));
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
