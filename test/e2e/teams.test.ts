/** Teams and e-mails end to end on BOTH targets: exact round trips per route. */
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, raceOutcome, rowsWrittenBy, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";

for (const target of targets()) {
  describe(`teams on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    let db: Client;
    beforeAll(() => {
      db = createClient({ url: target.databaseUrl });
    });
    afterAll(() => db.close());

    async function newUser() {
      const name = uniqName("tu");
      await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email: `${name}@example.com`, password: "team-password-1", must_change_password: false } });
      const tok = await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, "team-password-1"), json: { name: "t", scopes: ["all"] } });
      return { name, token: (await tok.json()).sha1 as string };
    }

    it("reads cost one round trip and writes at most two, on every team route", async () => {
      const u = await newUser();
      const m = await newUser();
      const h = tokenAuth(u.token);
      const org = uniqName("torg");
      await call("POST", "/api/v1/orgs", { headers: h, json: { username: org } });
      const repo = uniqName("trepo");
      await call("POST", `/api/v1/orgs/${org}/repos`, { headers: h, json: { name: repo } });
      const created = await call("POST", `/api/v1/orgs/${org}/teams`, { headers: h, json: { name: "devs", permission: "write", units: ["repo.code"], visibility: "limited" } });
      expect(created.status).toBe(201);
      expect(roundTrips(created)).toBe(2);
      const id = (await created.json()).id;
      const cases: [string, string, number, number, unknown?][] = [
        ["GET", `/api/v1/orgs/${org}/teams`, 200, 1],
        ["GET", `/api/v1/orgs/${org}/teams/search?q=dev`, 200, 1],
        ["GET", "/api/v1/user/teams", 200, 1],
        ["GET", `/api/v1/teams/${id}`, 200, 1],
        ["PATCH", `/api/v1/teams/${id}`, 200, 2, { description: "d" }],
        ["PUT", `/api/v1/teams/${id}/members/${m.name}`, 204, 2],
        ["GET", `/api/v1/teams/${id}/members`, 200, 1],
        ["GET", `/api/v1/teams/${id}/members/${m.name}`, 200, 1],
        ["PUT", `/api/v1/teams/${id}/repos/${org}/${repo}`, 204, 2],
        ["GET", `/api/v1/teams/${id}/repos`, 200, 1],
        ["GET", `/api/v1/teams/${id}/repos/${org}/${repo}`, 200, 1],
        ["GET", `/api/v1/teams/${id}/activities/feeds`, 200, 1],
        ["DELETE", `/api/v1/teams/${id}/repos/${org}/${repo}`, 204, 2],
        ["DELETE", `/api/v1/teams/${id}/members/${m.name}`, 204, 2],
        ["DELETE", `/api/v1/teams/${id}`, 204, 2],
        ["GET", `/api/v1/orgs/${org}/hooks`, 200, 1],
        ["POST", `/api/v1/orgs/${org}/hooks`, 201, 2, { type: "gitea", config: { url: "https://hooks.example.com/x", content_type: "json", secret: "hook-secret" } }],
      ];
      for (const [method, path, status, trips, json] of cases) {
        const res = await call(method, path, { headers: h, json });
        expect(res.status, `${method} ${path}: ${res.status === status ? "" : await res.clone().text()}`).toBe(status);
        expect(roundTrips(res), `${method} ${path}`).toBe(trips);
      }
    });

    it("organization hooks: read 1, write 2 round trips; the secret never comes back", async () => {
      const u = await newUser();
      const h = tokenAuth(u.token);
      const org = uniqName("horg");
      await call("POST", "/api/v1/orgs", { headers: h, json: { username: org } });
      const created = await call("POST", `/api/v1/orgs/${org}/hooks`, { headers: h, json: { type: "gitea", config: { url: "https://hooks.example.com/x", content_type: "json", secret: "hook-secret" }, authorization_header: "Bearer hook-auth" } });
      expect(created.status).toBe(201);
      const hook = await created.json();
      for (const [method, path, status, trips, json] of [
        ["GET", `/api/v1/orgs/${org}/hooks/${hook.id}`, 200, 1],
        ["PATCH", `/api/v1/orgs/${org}/hooks/${hook.id}`, 200, 2, { active: true }],
        ["GET", `/api/v1/orgs/${org}/hooks`, 200, 1],
        ["DELETE", `/api/v1/orgs/${org}/hooks/${hook.id}`, 204, 2],
      ] as [string, string, number, number, unknown?][]) {
        const res = await call(method, path, { headers: h, json });
        expect(res.status, `${method} ${path}`).toBe(status);
        expect(roundTrips(res), `${method} ${path}`).toBe(trips);
        const text = await res.text();
        expect(text).not.toContain("hook-secret");
        expect(text).not.toContain("hook-auth");
      }
    });

    it("50 concurrent creations of the same team give one 201 and 49 422s; no losing request leaves a row or a count behind", async () => {
      const u = await newUser();
      const org = uniqName("race");
      await call("POST", "/api/v1/orgs", { headers: tokenAuth(u.token), json: { username: org } });
      const create = (name: string) => call("POST", `/api/v1/orgs/${org}/teams`, { headers: tokenAuth(u.token), json: { name, permission: "read", units: ["repo.code", "repo.issues"] } });
      const one = await rowsWrittenBy(db, () => create("solo"));
      let results: Response[] = [];
      const race = await rowsWrittenBy(db, async () => {
        results = await Promise.all(Array.from({ length: 50 }, () => create("same")));
      });
      expect(race).toEqual(one);
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 422), await raceOutcome(results, [201, 422])).toHaveLength(49);
      const orgId = (await (await call("GET", `/api/v1/orgs/${org}`, { headers: tokenAuth(u.token) })).json()).id;
      const bodies = await Promise.all(results.filter((r) => r.status === 422).map((r) => r.json()));
      expect(bodies.map((b) => b.message)).toEqual(Array(49).fill(`team already exists [org_id: ${orgId}, name: same]`));
      // Owners, solo and same: the organization counts three teams.
      const counted = await db.execute({ sql: "SELECT num_teams AS n, (SELECT COUNT(*) FROM team t WHERE t.org_id = u.id) AS actual FROM user u WHERE id = ?", args: [orgId] });
      expect([Number(counted.rows[0]!.n), Number(counted.rows[0]!.actual)]).toEqual([3, 3]);
    });
  });
}
