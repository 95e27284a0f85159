/** Issue 9 B.6: entity tags and If-None-Match, as pure functions (the routes are in test/e2e/conditional.test.ts). */
import { describe, expect, it } from "vitest";
import { ANONYMOUS } from "../../functions/lib/auth.ts";
import { callerKey, entityTag, noneMatch } from "../../functions/lib/etag.ts";

const body = (s: string) => new TextEncoder().encode(s);
const json = new Headers({ "Content-Type": "application/json" });

describe("entity tags", () => {
  it("B.6 a tag depends on the body, the caller, the status and the pagination headers", async () => {
    const base = await entityTag("anonymous", 200, json, body('{"a":1}'));
    expect(base).toMatch(/^W\/"[\w-]{22}"$/);
    // A JSON answer is tagged from its rendered text, any other from its bytes: the same content, the same tag.
    expect(entityTag("anonymous", 200, json, '{"a":1}')).toBe(base);
    expect(entityTag("anonymous", 200, json, '{"a":1} ')).not.toBe(base);
    expect(await entityTag("anonymous", 200, json, body('{"a":1}'))).toBe(base);
    expect(await entityTag("anonymous", 200, json, body('{"a":2}'))).not.toBe(base);
    expect(await entityTag("token:abc", 200, json, body('{"a":1}'))).not.toBe(base);
    expect(await entityTag("anonymous", 204, json, body('{"a":1}'))).not.toBe(base);
    const paged = new Headers({ "Content-Type": "application/json", "X-Total-Count": "2" });
    expect(await entityTag("anonymous", 200, paged, body('{"a":1}'))).not.toBe(base);
    paged.set("Link", '<http://x/?page=2>; rel="next"');
    expect(await entityTag("anonymous", 200, paged, body('{"a":1}'))).not.toBe(await entityTag("anonymous", 200, new Headers({ "Content-Type": "application/json", "X-Total-Count": "2" }), body('{"a":1}')));
  });

  it("B.6 the caller is the credential: each token, each basic-auth user, each sudo target, or anonymous", () => {
    expect(callerKey(ANONYMOUS)).toBe("anonymous");
    expect(callerKey({ ...ANONYMOUS, tokenHash: "h1" })).not.toBe(callerKey({ ...ANONYMOUS, tokenHash: "h2" }));
    expect(callerKey({ ...ANONYMOUS, username: "Alice", password: "x", basic: true })).toBe(callerKey({ ...ANONYMOUS, username: "alice", password: "y", basic: true }));
    expect(callerKey({ ...ANONYMOUS, tokenHash: "h1", sudo: "bob" })).not.toBe(callerKey({ ...ANONYMOUS, tokenHash: "h1" }));
  });
});

describe("If-None-Match", () => {
  const tag = 'W/"abc"';
  it.each([
    ['W/"abc"', true],
    ['"abc"', true],
    ['"x", W/"abc"', true],
    ['"x",W/"abc" , "y"', true],
    ["*", true],
    [' * ', true],
    ['"abcd"', false],
    ['W/"ab"', false],
    ["abc", false],
    ['"abc', false],
    ["W/", false],
    [",,,", false],
    ["", false],
  ])("B.6 %j matches: %s", (header, expected) => {
    expect(noneMatch(header, tag)).toBe(expected);
  });

  it("B.6 no header matches nothing", () => {
    expect(noneMatch(undefined, tag)).toBe(false);
    expect(noneMatch(null, tag)).toBe(false);
  });
});
