/** The error module: Gitea's bodies for bad input, unknown routes and internal failures. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRefusal, failingWrites, seedUser, testApp, token, uniq, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let tok: string;

beforeAll(async () => {
  t = await testApp();
  tok = await (await seedUser(t.db, { admin: true })).token();
});
afterAll(() => t.close());

describe("bad input gets a clear 4xx in Gitea's shape", () => {
  it("malformed JSON → 422 with {message,url}", async () => {
    const res = await t.request("/api/v1/orgs", { method: "POST", headers: { ...token(tok), "Content-Type": "application/json" }, body: "{not json" });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(Object.keys(body)).toEqual(["message", "url"]);
    expect(body.message).toMatch(/DeserializationError/);
  });

  it("a JSON array or scalar where an object is expected → 422; `null` is an empty object (Go's decoder leaves the form untouched)", async () => {
    for (const body of ["[]", "42", '"x"']) {
      const res = await t.request("/api/v1/orgs", { method: "POST", headers: { ...token(tok), "Content-Type": "application/json" }, body });
      await expectRefusal(res, 422, "[]: TypeError: expected object", body);
    }
    const nul = await t.request("/api/v1/orgs", { method: "POST", headers: { ...token(tok), "Content-Type": "application/json" }, body: " null " });
    await expectRefusal(nul, 422, "[Username]: Required");
    const me = await (await t.request("/api/v1/user", { headers: token(tok) })).json();
    const edit = await t.request(`/api/v1/admin/users/${me.login}`, { method: "PATCH", headers: { ...token(tok), "Content-Type": "application/json" }, body: "null" });
    expect(edit.status).toBe(200);
  });

  it("wrong types → 422 naming the field", async () => {
    const res = await t.request("/api/v1/orgs", { method: "POST", headers: token(tok), json: { username: "ok-org", visibility: 3 } });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toMatch(/^\[Visibility\]: /);
  });

  it("oversized fields → 422 MaxSize; an oversized body → 413", async () => {
    const res = await t.request("/api/v1/orgs", { method: "POST", headers: token(tok), json: { username: "big-org", description: "x".repeat(300) } });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe("[Description]: MaxSize");
    const huge = await t.request("/api/v1/orgs", { method: "POST", headers: token(tok), json: { username: "huge", description: "x".repeat(2 * 1024 * 1024) } });
    await expectRefusal(huge, 413, "request body too large");
  });

  it("credentials and scopes are checked before the body (Gitea's order): 401/403 win over 422", async () => {
    const bad = await t.request("/api/v1/orgs", { method: "POST", headers: token("0".repeat(40)), json: { username: 5 } });
    await expectRefusal(bad, 401, "invalid username, password or token");
    const u = await seedUser(t.db);
    const scoped = await t.request("/api/v1/orgs", { method: "POST", headers: token(await u.token(["read:user"])), json: { username: 5 } });
    await expectRefusal(scoped, 403, "token does not have at least one of required scope(s), required=[write:organization], token scope=read:user");
  });

  it("an unknown route → 404 with Gitea's not-found body", async () => {
    const res = await t.request("/api/v1/no/such/route");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: "The target couldn't be found.", url: "http://gitea.test/api/swagger", errors: [] });
  });

  it("a path escape that is not UTF-8 names nothing: 404, nothing written (the router kept `%ff` as literal text); one that is no escape is a 400", async () => {
    const me = await (await t.request("/api/v1/user", { headers: token(tok) })).json();
    const repo = uniq("esc");
    expect((await t.request("/api/v1/user/repos", { method: "POST", headers: token(tok), json: { name: repo, auto_init: true } })).status).toBe(201);
    for (const file of ["%ff%fe", "a%c0%ae", "%e2%82"]) {
      const res = await t.request(`/api/v1/repos/${me.login}/${repo}/contents/${file}`, { method: "POST", headers: token(tok), json: { content: "aGk=" } });
      expect({ file, status: res.status, body: await res.json() }).toEqual({ file, status: 404, body: { message: "The target couldn't be found.", url: "http://gitea.test/api/swagger", errors: [] } });
    }
    // what is no escape at all is Go's 400 before Gitea's router
    for (const [file, esc] of [["100%", "%"], ["a%zzb", "%zz"], ["x%4", "%4"]]) {
      const res = await t.request(`/api/v1/repos/${me.login}/${repo}/contents/${file}`, { method: "POST", headers: token(tok), json: { content: "aGk=" } });
      expect({ file, status: res.status, message: (await res.json()).message }).toEqual({ file, status: 400, message: `invalid URL escape "${esc}"` });
    }
    const listed = await (await t.request(`/api/v1/repos/${me.login}/${repo}/contents`, { headers: token(tok) })).json();
    expect(listed.map((e: { name: string }) => e.name)).toEqual(["README.md"]);
    // an escaped percent sign is a name like any other
    expect((await t.request(`/api/v1/repos/${me.login}/${repo}/contents/100%25`, { method: "POST", headers: token(tok), json: { content: "aGk=" } })).status).toBe(201);
  });

  it("every error, to any method, is not stored by caches and varies by caller", async () => {
    const answers = [
      await t.request("/api/v1/user/repos", { method: "POST", headers: token(tok), json: { name: "" } }),
      await t.request("/api/v1/version", { method: "POST", headers: token(tok) }),
      await t.request("/api/v1/repos/nobody/nothing", { method: "DELETE", headers: token(tok) }),
      await t.request("/api/v1/no/such/route"),
      await t.request("/api/v1/user"),
    ];
    for (const res of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect([res.status, res.headers.get("Cache-Control"), res.headers.get("Vary")]).toEqual([res.status, "no-store", "Authorization, Sudo"]);
    }
  });

  it("a path served under other methods → 405 with `Allow` (Gitea's router), never running a route; a route that answers not found itself stays 404", async () => {
    const u = await seedUser(t.db);
    const repo = await t.request("/api/v1/user/repos", { method: "POST", headers: token(await u.token()), json: { name: "m405" } });
    expect(repo.status).toBe(201);
    for (const [method, path, allow] of [
      ["PUT", "/api/v1/version", "GET, HEAD"],
      ["POST", `/api/v1/repos/${u.name}/m405`, "GET, PATCH, DELETE, HEAD"],
      ["POST", `/api/v1/repos/${u.name}/m405/branches/a/b`, "GET, PUT, PATCH, DELETE, HEAD"],
      ["PATCH", `/api/v1/repos/${u.name}/m405/contents/dir/a.txt`, "GET, POST, PUT, DELETE, HEAD"],
    ] as const) {
      const res = await t.request(path, { method, headers: token(await u.token()), json: {} });
      expect({ path, method, status: res.status, allow: res.headers.get("Allow")?.split(", ").sort() }).toEqual({ path, method, status: 405, allow: allow.split(", ").sort() });
      expect((await res.json()).message).toBe("Method Not Allowed");
    }
    // the repository is untouched, and an unknown repository at a served path is still a 404
    expect((await t.request(`/api/v1/repos/${u.name}/m405`, { headers: token(await u.token()) })).status).toBe(200);
    const missing = await t.request(`/api/v1/repos/${u.name}/nothing-here`, { headers: token(await u.token()) });
    expect([missing.status, missing.headers.get("Allow")]).toEqual([404, null]);
  });

  it("a huge page number is not a 500: as in Gitea (Atoi saturates), it is a page past the end", async () => {
    const res = await t.request("/api/v1/users/search?page=99999999999999999999&limit=-5");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ ok: true, data: [] });
    expect(Number(res.headers.get("X-Total-Count"))).toBeGreaterThan(0);
  });
});

describe("internal failures", () => {
  it("a 500 in production hides its text", async () => {
    const t2 = await testApp();
    const u = await seedUser(t2.db);
    const tk = await u.token();
    t2.driver.close();
    const res = await t2.request("/api/v1/user", { headers: token(tk) });
    expect(res.status).toBe(500);
    expect((await res.json()).message).toBe("");
  });

  it("a 500 shows its text to a site admin, as Gitea's APIContext does, and to nobody else", async () => {
    const writes = failingWrites();
    const t2 = await testApp({}, { wrap: writes.wrap });
    try {
      for (const [admin, expected] of [[true, "the database lost the write"], [false, ""]] as const) {
        const tk = await (await seedUser(t2.db, { admin })).token();
        writes.failNext(new Error("the database lost the write"));
        const res = await t2.request("/api/v1/user/repos", { method: "POST", headers: token(tk), json: { name: uniq("r") } });
        expect([res.status, (await res.json()).message], `admin: ${admin}`).toEqual([500, expected]);
      }
    } finally {
      t2.close();
    }
  });
});
