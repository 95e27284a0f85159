/**
 * Issue 9 B.6 on BOTH targets, over HTTP: conditional requests. Every successful GET carries an
 * ETag tied to the body and to the caller; the same caller polling with If-None-Match gets a 304
 * without a body (and still pays exactly the read's one round trip); another caller never gets a
 * 304 for a tag it did not receive; Cache-Control and Vary say who may keep the answer.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";

for (const target of targets()) {
  describe(`conditional requests on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    let alice: { name: string; password: string; all: Record<string, string>; readOnly: Record<string, string> };
    let bob: { name: string; h: Record<string, string> };
    let org: string;
    let repo: string;

    async function newUser() {
      const name = uniqName("cond");
      const res = await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email: `${name}@example.com`, password: "cond-password-1", must_change_password: false } });
      expect(res.status).toBe(201);
      const tokenOf = async (scopes: string[]) =>
        tokenAuth((await (await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, "cond-password-1"), json: { name: uniqName("t"), scopes } })).json()).sha1);
      return { name, password: "cond-password-1", tokenOf };
    }

    beforeAll(async () => {
      const a = await newUser();
      alice = { name: a.name, password: a.password, all: await a.tokenOf(["all"]), readOnly: await a.tokenOf(["read:user", "read:repository", "read:organization"]) };
      const b = await newUser();
      bob = { name: b.name, h: await b.tokenOf(["all"]) };
      repo = uniqName("condrepo");
      expect((await call("POST", "/api/v1/user/repos", { headers: alice.all, json: { name: repo } })).status).toBe(201);
      org = uniqName("condorg");
      expect((await call("POST", "/api/v1/orgs", { headers: alice.all, json: { username: org } })).status).toBe(201);
    });

    const get = (path: string, headers: Record<string, string> = {}, method = "GET") => call(method, path, { headers });

    it("B.6 every successful GET answers an ETag, Cache-Control: private, no-cache and Vary: Authorization", async () => {
      for (const [path, h] of [
        ["/api/v1/version", {}],
        ["/api/v1/version", alice.all],
        ["/api/v1/user", alice.all],
        [`/api/v1/users/${alice.name}`, {}],
        [`/api/v1/repos/${alice.name}/${repo}`, alice.all],
        ["/api/v1/repos/search?q=condrepo", {}],
        [`/api/v1/orgs/${org}`, bob.h],
        [`/api/v1/orgs/${org}/members/${alice.name}`, alice.all],
      ] as const) {
        const res = await get(path, h);
        expect(res.status, path).toBeLessThan(300);
        expect(res.headers.get("ETag"), path).toMatch(/^W\/"[\w-]+"$/);
        expect(res.headers.get("Cache-Control"), path).toBe("private, no-cache");
        expect(res.headers.get("Vary"), path).toMatch(/\bAuthorization\b/);
      }
    });

    it("B.6 the same caller polling with If-None-Match (strong, weak, a list, *) gets 304 without a body, keeping ETag, Cache-Control and Vary, for the read's one round trip", async () => {
      const path = `/api/v1/repos/${alice.name}/${repo}`;
      const first = await get(path, alice.all);
      expect(first.status).toBe(200);
      const etag = first.headers.get("ETag")!;
      const opaque = etag.replace(/^W\//, "");
      for (const inm of [etag, opaque, `"nope", ${etag}`, `W/"nope",${opaque}`, "*"]) {
        const res = await get(path, { ...alice.all, "If-None-Match": inm });
        expect(res.status, inm).toBe(304);
        expect(await res.text(), inm).toBe("");
        expect(res.headers.get("ETag"), inm).toBe(etag);
        expect(res.headers.get("Cache-Control"), inm).toBe("private, no-cache");
        expect(res.headers.get("Vary"), inm).toMatch(/\bAuthorization\b/);
        expect(roundTrips(res), inm).toBe(1);
      }
      expect((await get(path, { ...alice.all, "If-None-Match": '"nope"' })).status).toBe(200);
    });

    it("B.6 another caller never gets a 304 for a tag it did not receive: anonymous, another user, the same user with another token scope or with a password", async () => {
      // /version is the same body for everyone: only the caller tells the tags apart.
      const versions = await Promise.all([get("/api/v1/version"), get("/api/v1/version", alice.all), get("/api/v1/version", bob.h)]);
      expect(new Set(await Promise.all(versions.map((r) => r.text()))).size).toBe(1);
      expect(new Set(versions.map((r) => r.headers.get("ETag"))).size).toBe(3);

      const path = `/api/v1/users/${alice.name}`;
      const callers = { anonymous: {}, alice: alice.all, aliceReadOnly: alice.readOnly, aliceBasic: basicAuth(alice.name, alice.password), bob: bob.h } as Record<string, Record<string, string>>;
      const tags: Record<string, string> = {};
      for (const [who, h] of Object.entries(callers)) {
        const res = await get(path, h);
        expect(res.status, who).toBe(200);
        tags[who] = res.headers.get("ETag")!;
        // Each caller's own tag still answers 304 for that caller.
        expect((await get(path, { ...h, "If-None-Match": tags[who] })).status, who).toBe(304);
      }
      expect(new Set(Object.values(tags)).size).toBe(Object.keys(callers).length);
      for (const [who, h] of Object.entries(callers)) {
        for (const [owner, tag] of Object.entries(tags)) {
          if (owner === who) continue;
          const res = await get(path, { ...h, "If-None-Match": tag });
          expect(res.status, `${who} with ${owner}'s tag`).toBe(200);
          expect((await res.json()).login, `${who} with ${owner}'s tag`).toBe(alice.name);
        }
      }
      // Sudo is a different caller too.
      const sudo = await get(path, { ...adminHeaders, Sudo: bob.name, "If-None-Match": tags.bob! });
      expect(sudo.status).toBe(200);
    });

    it("B.6 a change of the data changes the tag, and the old tag then gets the new body", async () => {
      const path = `/api/v1/repos/${alice.name}/${repo}`;
      const before = await get(path, alice.all);
      const etag = before.headers.get("ETag")!;
      expect((await call("PATCH", path, { headers: alice.all, json: { description: uniqName("changed") } })).status).toBe(200);
      const after = await get(path, { ...alice.all, "If-None-Match": etag });
      expect(after.status).toBe(200);
      expect(after.headers.get("ETag")).not.toBe(etag);
      expect((await after.json()).description).toMatch(/^changed/);
      expect((await get(path, { ...alice.all, "If-None-Match": after.headers.get("ETag")! })).status).toBe(304);
    });

    it("B.6 HEAD answers the GET's ETag without a body, and 304 for a matching tag", async () => {
      const path = `/api/v1/repos/${alice.name}/${repo}`;
      const res = await get(path, alice.all);
      const etag = res.headers.get("ETag")!;
      const head = await get(path, alice.all, "HEAD");
      expect(head.status).toBe(200);
      expect(head.headers.get("ETag")).toBe(etag);
      expect(await head.text()).toBe("");
      const cond = await get(path, { ...alice.all, "If-None-Match": etag }, "HEAD");
      expect(cond.status).toBe(304);
      expect(cond.headers.get("ETag")).toBe(etag);
    });

    it("B.6 pagination headers are part of the tag: a page with the same items but a new total gets a new tag, and a 304 keeps X-Total-Count and Link", async () => {
      const owner = await newUser();
      const h = await owner.tokenOf(["all"]);
      expect((await call("POST", "/api/v1/user/repos", { headers: h, json: { name: "first" } })).status).toBe(201);
      const path = `/api/v1/users/${owner.name}/repos?limit=1`;
      const one = await get(path, h);
      expect(one.headers.get("X-Total-Count")).toBe("1");
      expect((await call("POST", "/api/v1/user/repos", { headers: h, json: { name: "second" } })).status).toBe(201);
      const two = await get(path, { ...h, "If-None-Match": one.headers.get("ETag")! });
      expect(two.status).toBe(200);
      const [a, b] = [await one.json(), await two.json()];
      expect(b.map((r: { name: string }) => r.name)).toEqual(a.map((r: { name: string }) => r.name));
      expect(two.headers.get("X-Total-Count")).toBe("2");
      expect(two.headers.get("ETag")).not.toBe(one.headers.get("ETag"));
      const polled = await get(path, { ...h, "If-None-Match": two.headers.get("ETag")! });
      expect(polled.status).toBe(304);
      expect(polled.headers.get("X-Total-Count")).toBe("2");
      expect(polled.headers.get("Link")).toBe(two.headers.get("Link"));
      expect(polled.headers.get("Link")).toContain('rel="next"');
    });

    it("B.6 routes that show secrets or personal data (tokens, e-mail addresses, webhooks) answer Cache-Control: no-store", async () => {
      const hook = await call("POST", `/api/v1/orgs/${org}/hooks`, { headers: alice.all, json: { type: "gitea", config: { url: "https://hooks.example.com/cond", content_type: "json" } } });
      expect(hook.status).toBe(201);
      const hookId = (await hook.json()).id;
      for (const [path, h] of [
        [`/api/v1/users/${alice.name}/tokens`, basicAuth(alice.name, alice.password)],
        ["/api/v1/user/emails", alice.all],
        [`/api/v1/orgs/${org}/hooks`, alice.all],
        [`/api/v1/orgs/${org}/hooks/${hookId}`, alice.all],
      ] as const) {
        const res = await get(path, h);
        expect(res.status, path).toBe(200);
        expect(res.headers.get("Cache-Control"), path).toBe("no-store");
        expect(res.headers.get("Vary"), path).toMatch(/\bAuthorization\b/);
      }
    });

    it("B.6 errors carry no tag and are not stored; a malformed If-None-Match is ignored (200, never an error)", async () => {
      const missing = await get(`/api/v1/repos/${alice.name}/${uniqName("missing")}`, alice.all);
      expect(missing.status).toBe(404);
      expect(missing.headers.get("ETag")).toBeNull();
      expect(missing.headers.get("Cache-Control")).toBe("no-store");
      for (const inm of ["garbage", '"unterminated', "W/", ",,,", "W/W/\"x\"", "\u00ff"]) {
        const res = await get("/api/v1/user", { ...alice.all, "If-None-Match": inm });
        expect(res.status, inm).toBe(200);
      }
    });
  });
}
