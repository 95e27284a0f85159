/**
 * The one pagination helper (Gitea's utils.GetListOptions / SetTotalCountHeader / SetLinkHeader):
 * page ≥ 1; limit ≤ 0 or absent → [api] DEFAULT_PAGING_NUM; limit > MAX_RESPONSE_ITEMS → the max.
 * `X-Total-Count` and `Link` are added to `Access-Control-Expose-Headers`.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Settings } from "./settings.ts";

/** Lenient integer query parameter: anything unparsable behaves as absent, as in Gitea. */
const lenientInt = (name: string, description: string) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: "query" }, type: "integer", description } as never);

export const PageQuery = z.object({
  page: lenientInt("page", "page number of results to return (1-based)"),
  limit: lenientInt("limit", "page size of results"),
});

export interface Page {
  page: number;
  limit: number;
  offset: number;
}

/** Go's strconv.Atoi as Gitea's FormInt reads it: an optional sign and digits, else 0; out of range saturates. */
const toInt = (raw: string | undefined) => {
  if (raw === undefined || !/^[+-]?\d+$/.test(raw)) return 0;
  const n = Number(raw);
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(n, Number.MAX_SAFE_INTEGER));
};

/** Normalizes `page`/`limit` exactly as Gitea does. */
export function pageOf(q: { page?: string; limit?: string }, api: Settings["api"]): Page {
  const page = Math.max(1, toInt(q.page));
  let limit = toInt(q.limit);
  if (limit <= 0) limit = api.defaultPagingNum;
  if (limit > api.maxResponseItems) limit = api.maxResponseItems;
  // Guard the OFFSET against overflow for absurd page numbers.
  const offset = Math.min((page - 1) * limit, Number.MAX_SAFE_INTEGER);
  return { page, limit, offset };
}

/** The `limit` of a whole list: SQLite reads a negative LIMIT as none. */
export const ALL_ROWS = -1;

/**
 * `page`/`limit` of the lists Gitea reads with db.FindAndCount (or a model that pages only when
 * `Page > 0`): without `page` — absent, unparsable or ≤ 0, as FormInt reads it — the answer is the
 * whole list and `limit` alone is ignored; with a page, as {@link pageOf}.
 */
export function pageOrAll(q: { page?: string; limit?: string }, api: Settings["api"]): Page {
  if (toInt(q.page) <= 0) return { page: 0, limit: ALL_ROWS, offset: 0 };
  return pageOf(q, api);
}

/** Adds `name` to `Access-Control-Expose-Headers` (kept across calls of one request). */
export const expose = (c: Context, name: string) => {
  const prev = c.res.headers.get("Access-Control-Expose-Headers") ?? (c.get("exposeHeaders") as string | undefined);
  const names = new Set((prev ?? "").split(",").map((s) => s.trim()).filter(Boolean));
  names.add(name);
  const value = [...names].join(", ");
  c.set("exposeHeaders", value);
  c.header("Access-Control-Expose-Headers", value);
};

/** Go's url.QueryEscape: query-escaped, space → `+` (a lone surrogate as U+FFFD: never throws). */
const esc = (s: string) => encodeURIComponent(s.toWellFormed()).replace(/%20/g, "+").replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Gitea's Link header entries, in its order: next, last, first, prev. Each is the request's URL
 * under ROOT_URL with its query as Go's url.Values.Encode writes it (keys sorted, values in order,
 * query-escaped) and `page` set. The query is parsed and encoded once; the entries differ only in
 * the page.
 */
export function linkHeader(requestUrl: string, rootUrl: string, total: number, page: Page): string | null {
  const totalPages = Math.max(1, Math.ceil(total / page.limit));
  const current = Math.min(Math.max(1, page.page), totalPages);
  const pages: [number, string][] = [];
  if (total > current * page.limit) pages.push([current + 1, "next"]);
  if (current !== totalPages) pages.push([totalPages, "last"]);
  if (current !== 1) pages.push([1, "first"]);
  if (current > 1) pages.push([current - 1, "prev"]);
  if (!pages.length) return null;
  const u = new URL(requestUrl);
  const params = new URLSearchParams(u.search);
  // Credentials given in the query are never echoed (issue 8 A.8).
  for (const name of ["token", "access_token", "page"]) params.delete(name);
  const keys = [...new Set(params.keys()), "page"].sort();
  const encoded = keys.map((k) => (k === "page" ? null : params.getAll(k).map((v) => `${esc(k)}=${esc(v)}`).join("&")));
  const prefix = `${rootUrl}${u.pathname.slice(1)}?`;
  const at = (n: number) => prefix + encoded.map((e) => e ?? `page=${n}`).join("&");
  return pages.map(([n, rel]) => `<${at(n)}>; rel="${rel}"`).join(",");
}

/** Sets `X-Total-Count` (and `Link` unless `link: false`), exposing both to CORS clients. */
export function setPageHeaders(c: Context, total: number, page: Page, opts: { link?: boolean } = {}) {
  c.header("X-Total-Count", String(total));
  expose(c, "X-Total-Count");
  // A whole list (pageOrAll) has no other page to link to.
  if (opts.link === false || page.limit === ALL_ROWS) return;
  const link = linkHeader(c.req.url, c.get("rootUrl") as string, total, page);
  if (link) {
    c.header("Link", link);
    expose(c, "Link");
  }
}
