/**
 * Pagination edges (Gitea's GetListOptions, SetTotalCountHeader, SetLinkHeader): how page and limit
 * are read, where the pages end, and what the headers say — on a real Hono context.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { linkHeader, pageOf, setPageHeaders, type Page } from "../../functions/lib/pagination.ts";

/** Default and maximum differ, so that a mix-up between them shows. */
const api = { defaultPagingNum: 20, maxResponseItems: 40, enableSwagger: true };
const ROOT = "https://git.example.com/";

describe("pageOf: Gitea's reading of page and limit", () => {
  it.each([
    ["absent", {}, 1, 20],
    ["blank", { page: "", limit: "" }, 1, 20],
    ["spaces around digits (Go's Atoi refuses them)", { page: " 3 ", limit: "\t7\n" }, 1, 20],
    ["a plus sign (Go's Atoi reads it)", { page: "+2", limit: "+5" }, 2, 5],
    ["leading zeros", { page: "007", limit: "010" }, 7, 10],
    ["trailing garbage", { page: "2x", limit: "5px" }, 1, 20],
    ["an exponent", { page: "1e1", limit: "1e1" }, 1, 20],
    ["a fraction", { page: "2.5", limit: "2.0" }, 1, 20],
    ["negative", { page: "-2", limit: "-5" }, 1, 20],
    ["minus zero", { page: "-0", limit: "-0" }, 1, 20],
    ["page zero, limit one", { page: "0", limit: "1" }, 1, 1],
    ["limit at the maximum", { limit: "40" }, 1, 40],
    ["limit one above the maximum", { limit: "41" }, 1, 40],
    ["a number beyond every exact one saturates, as Go's Atoi does at its range", { page: "99999999999999999999", limit: "99999999999999999999" }, 9007199254740991, 40],
    ["a negative number beyond range", { page: "-99999999999999999999", limit: "-99999999999999999999" }, 1, 20],
    ["the largest exact number", { page: "9007199254740991", limit: "1" }, 9007199254740991, 1],
  ] as const)("%s: %j → page %i, limit %i", (_, q, page, limit) => {
    const p = pageOf(q, api);
    expect(p.page).toBe(page);
    expect(p.limit).toBe(limit);
    expect(p.offset).toBe(Math.min((page - 1) * limit, Number.MAX_SAFE_INTEGER));
  });

  it("the offset of an absurd page stops at the largest exact number", () => {
    expect(pageOf({ page: "9007199254740991", limit: "40" }, api)).toEqual({ page: 9007199254740991, limit: 40, offset: Number.MAX_SAFE_INTEGER });
    expect(pageOf({ page: "3", limit: "40" }, api)).toEqual({ page: 3, limit: 40, offset: 80 });
  });
});

const page = (n: number, limit = 10): Page => ({ page: n, limit, offset: (n - 1) * limit });
const rels = (link: string | null) => (link ?? "").split(",").filter(Boolean).map((l) => /rel="(\w+)"/.exec(l)![1] + ":" + /[?&]page=(\d+)/.exec(l)![1]);

describe("linkHeader: which pages are linked", () => {
  const url = "http://internal/api/v1/repos/search?limit=10";
  it.each([
    [0, 1, []],
    [10, 1, []],
    [11, 1, ["next:2", "last:2"]],
    [20, 1, ["next:2", "last:2"]],
    [20, 2, ["first:1", "prev:1"]],
    [21, 2, ["next:3", "last:3", "first:1", "prev:1"]],
    [30, 3, ["first:1", "prev:2"]],
    [30, 7, ["first:1", "prev:2"]],
    [5, 0, []],
    [25, 0, ["next:2", "last:3"]],
  ] as const)("total %i, page %i → %j", (total, n, expected) => {
    expect(rels(linkHeader(url, ROOT, total, page(n)))).toEqual(expected);
  });

  it("keeps every other parameter, sorted by key as Go encodes them, values in their order, credentials dropped", () => {
    const link = linkHeader("http://internal/api/v1/users/search?q=a b&z=1&a=x&a=y&token=secret&access_token=s2&limit=10&page=1", ROOT, 11, page(1));
    expect(link).toBe('<https://git.example.com/api/v1/users/search?a=x&a=y&limit=10&page=2&q=a+b&z=1>; rel="next",<https://git.example.com/api/v1/users/search?a=x&a=y&limit=10&page=2&q=a+b&z=1>; rel="last"');
  });

  it("escapes as Go's QueryEscape: space as +, and ! ' ( ) * percent-encoded", () => {
    const link = linkHeader("http://internal/api/v1/repos/search?q=%21%27%28%29%2A%20%2B%26", ROOT, 11, page(1));
    expect(link).toContain("?page=2&q=%21%27%28%29%2A+%2B%26>");
  });
});

/** Runs `setPageHeaders` in a real Hono request and returns the response headers. */
async function headersOf(total: number, p: Page, opts?: { link?: boolean }, before?: string) {
  const app = new Hono<{ Variables: { rootUrl: string; exposeHeaders: string } }>();
  app.get("/api/v1/x", (c) => {
    c.set("rootUrl", ROOT);
    if (before) c.header("Access-Control-Expose-Headers", before);
    setPageHeaders(c as never, total, p, opts);
    return c.text("");
  });
  return (await app.request("http://internal/api/v1/x?limit=10")).headers;
}

describe("setPageHeaders", () => {
  it("X-Total-Count and Link, both exposed to CORS clients", async () => {
    const h = await headersOf(25, page(1));
    expect(h.get("X-Total-Count")).toBe("25");
    expect(h.get("Link")).toBe(linkHeader("http://internal/api/v1/x?limit=10", ROOT, 25, page(1)));
    expect(h.get("Access-Control-Expose-Headers")).toBe("X-Total-Count, Link");
  });

  it("no Link (and none exposed) on a single page or with link: false", async () => {
    for (const h of [await headersOf(3, page(1)), await headersOf(25, page(1), { link: false })]) {
      expect(h.get("Link")).toBeNull();
      expect(h.get("Access-Control-Expose-Headers")).toBe("X-Total-Count");
    }
    expect((await headersOf(0, page(1))).get("X-Total-Count")).toBe("0");
  });

  it("adds to headers already exposed, without repeating one", async () => {
    expect((await headersOf(25, page(1), {}, "X-Request-Id,  Link")).get("Access-Control-Expose-Headers")).toBe("X-Request-Id, Link, X-Total-Count");
  });
});
