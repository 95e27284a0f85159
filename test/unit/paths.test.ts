/** lib/paths.ts: request paths as Gitea's router takes them. */
import { describe, expect, it } from "vitest";
import { hasDotSegment, withoutStraySlashes } from "../../functions/lib/paths.ts";

describe("dot segments: found in the path as sent, raw or escaped, never in the query", () => {
  it.each([
    ["/api/v1/teams/../repos/o/r", true],
    ["/api/v1/teams/%2E%2E/repos/o/r", true],
    ["/api/v1/teams/%2e./x", true],
    ["/api/v1/teams/.%2e", true],
    ["/api/v1/./version", true],
    ["/api/v1/version/.", true],
    ["/a\\..\\b", true],
    ["http://host:3000/api/v1/../x?y", true],
    ["/api/v1/repos/o/r..x/y", false],
    ["/api/v1/repos/o/.r/y", false],
    ["/api/v1/repos/o/r/contents/...", false],
    ["/api/v1/repos/o/r/contents/%2E%2E%2E", false],
    ["/api/v1/users/x/..%5C..%5Crepos", false],
    ["/api/v1/repos/search?q=/../x", false],
    ["/api/v1/x#/../y", false],
    ["http://host/", false],
    // the contents routes' root named by a single dot (Gitea's contents-ext documents it)
    ["/api/v1/repos/o/r/contents-ext/.", false],
    ["/api/v1/repos/o/r/contents-ext/%2E?ref=main", false],
    ["/api/v1/repos/o/r/contents/./", false],
    ["/api/v1/repos/o/r/contents-ext/..", true],
    ["/api/v1/repos/o/r/contents-ext/./a", true],
    ["/api/v1/repos/../r/contents-ext/.", true],
    ["/api/v1/repos/o/%2e%2e/contents/.", true],
    ["/api/v1/repos/o/r/raw/.", true],
  ])("%s → %s", (target, expected) => {
    expect(hasDotSegment(target)).toBe(expected);
  });
});

describe("stray slashes: collapsed and trailing ones dropped in the path, the query left as it is", () => {
  it.each([
    ["http://h/api/v1//version", "http://h/api/v1/version"],
    ["http://h/api/v1/version/", "http://h/api/v1/version"],
    ["http://h/api/v1///repos//o/r///?q=a//b/", "http://h/api/v1/repos/o/r?q=a//b/"],
    ["http://h//", "http://h/"],
    ["/api//x/", "/api/x"],
  ])("%s → %s", (url, expected) => {
    expect(withoutStraySlashes(url)).toBe(expected);
  });
  it.each(["http://h/", "http://h/api/v1/version", "http://h/api/v1/repos/search?q=a//b/", "/x"])("%s is left alone (null)", (url) => {
    expect(withoutStraySlashes(url)).toBeNull();
  });
});
