/** Pagination (reference §4): page/limit normalization and Gitea's Link header. */
import { describe, expect, it } from "vitest";
import { linkHeader, pageOf } from "../../functions/lib/pagination.ts";

const api = { defaultPagingNum: 30, maxResponseItems: 50, enableSwagger: true };
const ROOT = "https://git.example.com/";

describe("pageOf", () => {
  it.each([
    [{}, 1, 30],
    [{ page: "0", limit: "0" }, 1, 30],
    [{ page: "-3", limit: "-1" }, 1, 30],
    [{ page: "2", limit: "10" }, 2, 10],
    [{ page: "x", limit: "y" }, 1, 30],
    [{ limit: "51" }, 1, 50],
    [{ limit: "50" }, 1, 50],
  ])("%j → page %i, limit %i", (q, page, limit) => {
    expect(pageOf(q, api)).toMatchObject({ page, limit, offset: (page - 1) * limit });
  });
});

describe("linkHeader", () => {
  const url = "http://internal:3000/api/v1/users/search?q=a%20b&limit=10&page=2";
  it("orders next, last, first, prev with absolute URLs from ROOT_URL and Go-sorted queries", () => {
    expect(linkHeader(url, ROOT, 35, { page: 2, limit: 10, offset: 10 })).toBe(
      [
        '<https://git.example.com/api/v1/users/search?limit=10&page=3&q=a+b>; rel="next"',
        '<https://git.example.com/api/v1/users/search?limit=10&page=4&q=a+b>; rel="last"',
        '<https://git.example.com/api/v1/users/search?limit=10&page=1&q=a+b>; rel="first"',
        '<https://git.example.com/api/v1/users/search?limit=10&page=1&q=a+b>; rel="prev"',
      ].join(","),
    );
  });

  it("first page of several: next and last only", () => {
    expect(linkHeader(url, ROOT, 25, { page: 1, limit: 10, offset: 0 })).toBe(
      '<https://git.example.com/api/v1/users/search?limit=10&page=2&q=a+b>; rel="next",<https://git.example.com/api/v1/users/search?limit=10&page=3&q=a+b>; rel="last"',
    );
  });

  it("no header for a single page or an empty list", () => {
    expect(linkHeader(url, ROOT, 10, { page: 1, limit: 10, offset: 0 })).toBeNull();
    expect(linkHeader(url, ROOT, 0, { page: 1, limit: 10, offset: 0 })).toBeNull();
  });

  it("a page past the end is clamped to the last page", () => {
    expect(linkHeader(url, ROOT, 25, { page: 9, limit: 10, offset: 80 })).toBe(
      '<https://git.example.com/api/v1/users/search?limit=10&page=1&q=a+b>; rel="first",<https://git.example.com/api/v1/users/search?limit=10&page=2&q=a+b>; rel="prev"',
    );
  });
});
