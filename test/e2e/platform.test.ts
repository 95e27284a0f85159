/**
 * The platform end to end, over HTTP, on BOTH targets (Node + embedded file, workerd + sqld):
 * the operator flow, round trips per route, concurrency, documents.
 */
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRefusal, NOT_FOUND, roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, raceOutcome, rowsWrittenBy, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";

for (const target of targets()) {
  describe(`platform on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    let db: Client;
    beforeAll(() => {
      db = createClient({ url: target.databaseUrl });
    });
    afterAll(() => db.close());

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

    it("50 concurrent creations of the same user give exactly one success and clean 422s; no losing request leaves a row in any table", async () => {
      const create = (username: string, email: string) => call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username, email, password: "race-password-1" } });
      const solo = uniqName("solo");
      const one = await rowsWrittenBy(db, () => create(solo, `${solo}@example.com`));
      const name = uniqName("race");
      let results: Response[] = [];
      const race = await rowsWrittenBy(db, async () => {
        results = await Promise.all(Array.from({ length: 50 }, (_, i) => create(name, `${name}-${i}@example.com`)));
      });
      // Fifty requests wrote exactly what one writes.
      expect(race).toEqual(one);
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 422), await raceOutcome(results, [201, 422])).toHaveLength(49);
      const bodies = await Promise.all(results.filter((r) => r.status === 422).map((r) => r.json()));
      expect(bodies.map((b) => b.message)).toEqual(Array(49).fill(`user already exists [name: ${name}]`));
      // Every losing address is free: none of the 49 is stored, and one is reused at once.
      const winner = (await (await call("GET", `/api/v1/users/${name}`, { headers: adminHeaders })).json()).email as string;
      const losers = Array.from({ length: 50 }, (_, i) => `${name}-${i}@example.com`).filter((e) => e !== winner);
      expect(losers).toHaveLength(49);
      const stored = await db.execute({ sql: `SELECT COUNT(*) AS n FROM email_address WHERE lower_email IN (${losers.map(() => "?").join(",")})`, args: losers });
      expect(Number(stored.rows[0]!.n)).toBe(0);
      expect((await create(uniqName("reuse"), losers[0]!)).status).toBe(201);
    });

    it("50 concurrent creations of the same organization give exactly one success and one Owners team", async () => {
      const u = await newUser();
      const tok = (await (await call("POST", `/api/v1/users/${u.name}/tokens`, { headers: basicAuth(u.name, u.password), json: { name: "race", scopes: ["all"] } })).json()).sha1;
      const one = await rowsWrittenBy(db, () => call("POST", "/api/v1/orgs", { headers: tokenAuth(tok), json: { username: uniqName("soloorg") } }));
      const name = uniqName("raceorg");
      let results: Response[] = [];
      const race = await rowsWrittenBy(db, async () => {
        results = await Promise.all(Array.from({ length: 50 }, () => call("POST", "/api/v1/orgs", { headers: tokenAuth(tok), json: { username: name } })));
      });
      expect(race).toEqual(one);
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201), await raceOutcome(results, [201, 422])).toHaveLength(1);
      expect(statuses.filter((s) => s === 422), await raceOutcome(results, [201, 422])).toHaveLength(49);
      const bodies = await Promise.all(results.filter((r) => r.status === 422).map((r) => r.json()));
      expect(bodies.map((b) => b.message)).toEqual(Array(49).fill(`user already exists [name: ${name}]`));
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
      await expectRefusal(call("GET", "/api/v1/nope"), 404, NOT_FOUND);
      const bad = fetch(`${target.url}/api/v1/orgs`, { method: "POST", headers: { ...adminHeaders, "Content-Type": "application/json" }, body: "{" });
      await expectRefusal(bad, 422, "[Body]: DeserializationError: Malformed JSON in request body");
    });
  });
}
