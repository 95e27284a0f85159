/** Token scopes (Gitea models/auth/access_token_scope.go). */
import { describe, expect, it } from "vitest";
import { hasScopes, normalizeScope, ScopeError } from "../../functions/lib/auth.ts";

describe("normalizeScope", () => {
  it("drops reads implied by writes, puts public-only first, collapses the full write set to all", () => {
    expect(normalizeScope(["read:user", "write:user"])).toBe("write:user");
    expect(normalizeScope(["write:repository", "public-only", "read:issue"])).toBe("public-only,read:issue,write:repository");
    expect(normalizeScope(["all"])).toBe("all");
    const everyWrite = ["activitypub", "admin", "misc", "notification", "organization", "package", "issue", "repository", "user"].map((c) => `write:${c}`);
    expect(normalizeScope(everyWrite)).toBe("all");
    expect(normalizeScope(["read:user,read:organization"])).toBe("read:organization,read:user");
    expect(normalizeScope([])).toBe("");
  });

  it("rejects unknown scopes", () => {
    expect(() => normalizeScope(["read:secrets"])).toThrow(ScopeError);
    expect(() => normalizeScope(["sudo"])).toThrow("invalid access token scope: sudo");
  });
});

describe("hasScopes", () => {
  it("write implies read; all implies every write; every required scope must be present", () => {
    expect(hasScopes("write:user", ["read:user"])).toBe(true);
    expect(hasScopes("read:user", ["write:user"])).toBe(false);
    expect(hasScopes("all", ["write:admin", "read:user"])).toBe(true);
    expect(hasScopes("read:user", ["read:user", "read:organization"])).toBe(false);
    expect(hasScopes("public-only,read:user", ["read:user"])).toBe(true);
    expect(hasScopes("", ["read:user"])).toBe(false);
  });
});
