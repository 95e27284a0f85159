/**
 * The platform end to end, over HTTP, on BOTH targets (Node + embedded file, workerd + sqld):
 * the operator flow, round trips per route, concurrency, documents.
 */
import { describe, expect, it } from "vitest";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";

for (const target of targets()) {
  describe(`platform on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);

    async function newUser() {
      const name = uniqName("e2e");
      const res = await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email: `${name}@example.com`, password: "e2e-password-1", must_change_password: false } });
      expect(res.status).toBe(201);
      return { name, password: "e2e-password-1" };
    }

    it("the operator flow: CLI admin → basic-auth token → working token", async () => {
      const u = await newUser();
      const res = await call("POST", `/api/v1/users/${u.name}/tokens`, { headers: basicAuth(u.name, u.password), json: { name: "cli", scopes: ["all"] } });
      expect(res.status).toBe(201);
      const { sha1 } = await res.json();
      const me = await call("GET", "/api/v1/user", { headers: tokenAuth(sha1) });
      expect(me.status).toBe(200);
      expect((await me.json()).login).toBe(u.name);
    });

    it("reads cost one round trip and writes at most two, authentication included", async () => {
      const u = await newUser();
      const tok = (await (await call("POST", `/api/v1/users/${u.name}/tokens`, { headers: basicAuth(u.name, u.password), json: { name: "rt", scopes: ["all"] } })).json()).sha1;
      const h = tokenAuth(tok);
      const org = uniqName("rtorg");
      const other = await newUser();
      // [method, path, status, round trips, headers, body]: the budget is exact, per route.
      const cases: [string, string, number, number, Record<string, string>, unknown?][] = [
        ["GET", "/api/v1/version", 200, 1, h],
        ["GET", "/api/v1/settings/api", 200, 1, h],
        ["GET", "/api/v1/user", 200, 1, h],
        ["GET", `/api/v1/users/${other.name}`, 200, 1, h],
        ["GET", "/api/v1/users/search?q=e2e", 200, 1, h],
        ["GET", `/api/v1/users/${u.name}/tokens`, 200, 1, basicAuth(u.name, u.password)],
        ["POST", "/api/v1/orgs", 201, 2, h, { username: org }],
        ["GET", `/api/v1/orgs/${org}`, 200, 1, h],
        ["GET", `/api/v1/orgs/${org}/activities/feeds`, 200, 1, h],
        ["GET", `/api/v1/users/${u.name}/activities/feeds`, 200, 1, h],
        ["PATCH", `/api/v1/orgs/${org}`, 200, 2, h, { description: "d" }],
        ["GET", "/api/v1/user/orgs", 200, 1, h],
        ["GET", `/api/v1/orgs/${org}/members`, 200, 1, h],
        ["GET", `/api/v1/orgs/${org}/members/${u.name}`, 204, 1, h],
        ["GET", `/api/v1/orgs/${org}/public_members/${u.name}`, 404, 1, h],
        ["PUT", `/api/v1/orgs/${org}/blocks/${other.name}`, 204, 2, h],
        ["GET", `/api/v1/orgs/${org}/blocks`, 200, 1, h],
        ["GET", `/api/v1/orgs/${org}/blocks/${other.name}`, 204, 1, h],
        ["DELETE", `/api/v1/orgs/${org}/blocks/${other.name}`, 204, 2, h],
        ["PUT", `/api/v1/user/blocks/${other.name}`, 204, 2, h],
        ["GET", "/api/v1/user/blocks", 200, 1, h],
        ["GET", "/api/v1/user/emails", 200, 1, h],
        ["POST", "/api/v1/user/emails", 201, 2, h, { emails: [`${uniqName("m")}@example.com`] }],
        ["DELETE", "/api/v1/user/emails", 204, 1, h, { emails: [] }],
        ["GET", `/api/v1/user/blocks/${other.name}`, 204, 1, h],
        ["DELETE", `/api/v1/user/blocks/${other.name}`, 204, 2, h],
        ["POST", `/api/v1/users/${u.name}/tokens`, 201, 2, basicAuth(u.name, u.password), { name: "second", scopes: ["read:user"] }],
        ["DELETE", `/api/v1/users/${u.name}/tokens/second`, 204, 2, basicAuth(u.name, u.password)],
        ["POST", "/api/v1/admin/users", 201, 2, adminHeaders, { username: uniqName("rtuser"), email: `${uniqName("rt")}@example.com`, password: "e2e-password-1" }],
        ["PATCH", `/api/v1/admin/users/${other.name}`, 200, 2, adminHeaders, { location: "x" }],
        ["DELETE", `/api/v1/orgs/${org}/members/${other.name}`, 204, 1, h],
        ["DELETE", `/api/v1/orgs/${org}`, 204, 2, h],
        ["DELETE", `/api/v1/admin/users/${other.name}`, 204, 2, adminHeaders],
      ];
      for (const [method, path, status, trips, headers, json] of cases) {
        const res = await call(method, path, { headers, json });
        expect(res.status, `${method} ${path}`).toBe(status);
        expect(roundTrips(res), `${method} ${path}`).toBe(trips);
      }
      const anon = await call("GET", "/api/v1/version");
      expect(roundTrips(anon)).toBe(0);
    });

    it("50 concurrent creations of the same user give exactly one success and clean 422s, no partial rows", async () => {
      const name = uniqName("race");
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email: `${name}-${i}@example.com`, password: "race-password-1" } }),
        ),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 422)).toHaveLength(49);
      const bodies = await Promise.all(results.filter((r) => r.status === 422).map((r) => r.json()));
      expect(new Set(bodies.map((b) => b.message))).toEqual(new Set([`user already exists [name: ${name}]`]));
      // No orphan e-mail rows: only the winner's address exists.
      const search = await (await call("GET", `/api/v1/users/search?q=${name}`, { headers: adminHeaders })).json();
      expect(search.data).toHaveLength(1);
      const winner = search.data[0].email as string;
      for (let i = 0; i < 50; i++) {
        const email = `${name}-${i}@example.com`;
        if (email === winner) continue;
        // Any other address is free: reusing it for a new user succeeds.
        if (i > 3) break;
        const reuse = await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: uniqName("reuse"), email, password: "race-password-1" } });
        expect(reuse.status).toBe(201);
      }
    });

    it("50 concurrent creations of the same organization give exactly one success and one Owners team", async () => {
      const u = await newUser();
      const tok = (await (await call("POST", `/api/v1/users/${u.name}/tokens`, { headers: basicAuth(u.name, u.password), json: { name: "race", scopes: ["all"] } })).json()).sha1;
      const name = uniqName("raceorg");
      const results = await Promise.all(Array.from({ length: 50 }, () => call("POST", "/api/v1/orgs", { headers: tokenAuth(tok), json: { username: name } })));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201), JSON.stringify(statuses)).toHaveLength(1);
      expect(statuses.filter((s) => s === 422), JSON.stringify(statuses)).toHaveLength(49);
      const members = await call("GET", `/api/v1/orgs/${name}/members`, { headers: tokenAuth(tok) });
      expect(members.headers.get("X-Total-Count")).toBe("1");
    });

    it("serves both API documents and the Swagger page", async () => {
      const v3 = await call("GET", "/openapi3.v1.json");
      expect(v3.status).toBe(200);
      expect((await v3.json()).openapi).toMatch(/^3\.0\./);
      const v2 = await call("GET", "/swagger.v1.json");
      expect((await v2.json()).swagger).toBe("2.0");
      const page = await call("GET", "/api/swagger");
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("swagger-ui-bundle.js");
      const bundle = await call("GET", "/assets/swagger-ui/swagger-ui-bundle.js");
      expect(bundle.status).toBe(200);
      expect((await bundle.text()).length).toBeGreaterThan(100_000);
      const redirect = await call("GET", "/api/v1/swagger");
      expect(redirect.status).toBe(307);
      expect(redirect.headers.get("Location")).toBe(`${target.url}/api/swagger`);
    });

    it("unknown routes and malformed bodies get Gitea's 4xx bodies", async () => {
      const nf = await call("GET", "/api/v1/nope");
      expect(nf.status).toBe(404);
      expect((await nf.json()).errors).toEqual([]);
      const bad = await fetch(`${target.url}/api/v1/orgs`, { method: "POST", headers: { ...adminHeaders, "Content-Type": "application/json" }, body: "{" });
      expect(bad.status).toBe(422);
    });
  });
}
