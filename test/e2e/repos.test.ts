/** Repositories, labels and collaborators end to end on BOTH targets: round trips per route, gitea-js, concurrency. */
import { giteaApi } from "gitea-js";
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roundTrips } from "../fixtures/app.ts";
import { basicAuth, client, raceOutcome, rowsWrittenBy, targets, tokenAuth, uniqName } from "../fixtures/targets.ts";

for (const target of targets()) {
  describe(`repositories on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);
    let db: Client;
    beforeAll(() => {
      db = createClient({ url: target.databaseUrl });
    });
    afterAll(() => db.close());

    async function newUser() {
      const name = uniqName("ru");
      await call("POST", "/api/v1/admin/users", { headers: adminHeaders, json: { username: name, email: `${name}@example.com`, password: "repo-password-1", must_change_password: false } });
      const tok = await call("POST", `/api/v1/users/${name}/tokens`, { headers: basicAuth(name, "repo-password-1"), json: { name: "t", scopes: ["all"] } });
      return { name, token: (await tok.json()).sha1 as string };
    }

    it("reads cost one round trip and writes at most two, on every repository route", async () => {
      const u = await newUser();
      const other = await newUser();
      const h = tokenAuth(u.token);
      const repo = uniqName("rr");
      const tpl = uniqName("tpl");
      const org = uniqName("rorg");
      const created = await call("POST", "/api/v1/user/repos", { headers: h, json: { name: repo, issue_labels: "Default" } });
      expect(created.status).toBe(201);
      expect(roundTrips(created)).toBe(2);
      const id = (await created.json()).id;
      await call("POST", "/api/v1/orgs", { headers: h, json: { username: org } });
      // PATCH and DELETE take a label's id only (GET takes its name too)
      const labelId = (await (await call("POST", `/api/v1/repos/${u.name}/${repo}/labels`, { headers: h, json: { name: "by-id", color: "abcdef" } })).json()).id;
      const cases: [string, string, number, number, unknown?][] = [
        ["GET", `/api/v1/repos/${u.name}/${repo}`, 200, 1],
        ["GET", `/api/v1/repositories/${id}`, 200, 1],
        ["GET", "/api/v1/repos/search?q=rr", 200, 1],
        ["GET", "/api/v1/user/repos", 200, 1],
        ["GET", `/api/v1/users/${u.name}/repos`, 200, 1],
        ["GET", `/api/v1/orgs/${org}/repos`, 200, 1],
        ["POST", `/api/v1/orgs/${org}/repos`, 201, 2, { name: uniqName("or") }],
        ["POST", `/api/v1/org/${org}/repos`, 201, 2, { name: uniqName("od") }],
        ["POST", "/api/v1/user/repos", 201, 2, { name: tpl, template: true }],
        ["POST", `/api/v1/repos/${u.name}/${tpl}/generate`, 201, 2, { owner: u.name, name: uniqName("gen"), labels: true }],
        ["PATCH", `/api/v1/repos/${u.name}/${repo}`, 200, 2, { description: "d", has_wiki: false, allow_squash_merge: false }],
        ["GET", `/api/v1/repos/${u.name}/${repo}/activities/feeds`, 200, 1],
        ["GET", `/api/v1/repos/${u.name}/${repo}/issue_templates`, 200, 1],
        ["GET", `/api/v1/repos/${u.name}/${repo}/issue_config`, 200, 1],
        ["GET", `/api/v1/repos/${u.name}/${repo}/issue_config/validate`, 200, 1],
        ["GET", `/api/v1/repos/${u.name}/${repo}/labels`, 200, 1],
        ["POST", `/api/v1/repos/${u.name}/${repo}/labels`, 201, 2, { name: "e2e", color: "abcdef" }],
        ["GET", `/api/v1/repos/${u.name}/${repo}/labels/e2e`, 200, 1],
        ["PATCH", `/api/v1/repos/${u.name}/${repo}/labels/${labelId}`, 200, 2, { color: "123" }],
        ["DELETE", `/api/v1/repos/${u.name}/${repo}/labels/${labelId}`, 204, 2],
        ["GET", "/api/v1/label/templates", 200, 1],
        ["GET", "/api/v1/label/templates/Advanced", 200, 1],
        ["PUT", `/api/v1/repos/${u.name}/${repo}/collaborators/${other.name}`, 204, 2, { permission: "read" }],
        ["GET", `/api/v1/repos/${u.name}/${repo}/collaborators`, 200, 1],
        ["GET", `/api/v1/repos/${u.name}/${repo}/collaborators/${other.name}`, 204, 1],
        ["GET", `/api/v1/repos/${u.name}/${repo}/collaborators/${other.name}/permission`, 200, 1],
        ["GET", `/api/v1/repos/${u.name}/${repo}/assignees`, 200, 1],
        ["GET", `/api/v1/repos/${u.name}/${repo}/reviewers`, 200, 1],
        ["DELETE", `/api/v1/repos/${u.name}/${repo}/collaborators/${other.name}`, 204, 2],
        ["POST", `/api/v1/repos/${u.name}/${repo}/forks`, 202, 2, { organization: org }],
        ["GET", `/api/v1/repos/${u.name}/${repo}/forks`, 200, 1],
        ["DELETE", `/api/v1/repos/${org}/${repo}`, 204, 2],
        ["DELETE", `/api/v1/repos/${u.name}/${repo}`, 204, 2],
      ];
      for (const [method, path, status, trips, json] of cases) {
        const res = await call(method, path, { headers: h, json });
        expect(res.status, `${method} ${path}: ${res.status === status ? "" : await res.clone().text()}`).toBe(status);
        expect(roundTrips(res), `${method} ${path}`).toBe(trips);
      }
    });

    it("a renamed repository answers 307 to its new path", async () => {
      const u = await newUser();
      const h = tokenAuth(u.token);
      const name = uniqName("mv");
      await call("POST", "/api/v1/user/repos", { headers: h, json: { name } });
      await call("PATCH", `/api/v1/repos/${u.name}/${name}`, { headers: h, json: { name: `${name}-new` } });
      const res = await call("GET", `/api/v1/repos/${u.name}/${name}`, { headers: h });
      expect(res.status).toBe(307);
      expect(res.headers.get("Location")).toBe(`/api/v1/repos/${u.name}/${name}-new`);
    });

    it("10 concurrent renames of one repository: one wins, the others answer 307 to the name it got; every name a 200 reports exists or redirects", async () => {
      const u = await newUser();
      const h = tokenAuth(u.token);
      const name = uniqName("ren");
      expect((await call("POST", "/api/v1/user/repos", { headers: h, json: { name } })).status).toBe(201);
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => call("PATCH", `/api/v1/repos/${u.name}/${name}`, { headers: h, json: { name: `${name}-r${i}` } })));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200), await raceOutcome(results, [200, 307])).toHaveLength(1);
      expect(statuses.filter((s) => s === 307), await raceOutcome(results, [200, 307])).toHaveLength(9);
      const winner = (await results.find((r) => r.status === 200)!.json()).name as string;
      for (const r of results.filter((x) => x.status === 307)) expect(r.headers.get("Location")).toBe(`/api/v1/repos/${u.name}/${winner}`);
      // The old name redirects to the winner; no loser's name exists or redirects.
      const old = await call("GET", `/api/v1/repos/${u.name}/${name}`, { headers: h });
      expect([old.status, old.headers.get("Location")]).toEqual([307, `/api/v1/repos/${u.name}/${winner}`]);
      for (let i = 0; i < 10; i++) {
        const got = await call("GET", `/api/v1/repos/${u.name}/${name}-r${i}`, { headers: h });
        expect(got.status, `${name}-r${i}`).toBe(`${name}-r${i}` === winner ? 200 : 404);
      }
    });

    it("renames and case-only renames racing on one repository: every name a 200 reports still leads to the repository (200, or 307 after a later rename), never a 404", async () => {
      const u = await newUser();
      const h = tokenAuth(u.token);
      const name = uniqName("rcase");
      expect((await call("POST", "/api/v1/user/repos", { headers: h, json: { name } })).status).toBe(201);
      // even i: a real rename; odd i: the same name in other letter cases
      const wanted = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? `${name}-r${i}` : [...name].map((ch, k) => ((k + i) % 2 ? ch.toUpperCase() : ch)).join("")));
      const results = await Promise.all(wanted.map((n) => call("PATCH", `/api/v1/repos/${u.name}/${name}`, { headers: h, json: { name: n } })));
      expect(results.map((r) => r.status).filter((st) => st !== 200 && st !== 307), await raceOutcome(results, [200, 307])).toEqual([]);
      for (const r of results.filter((x) => x.status === 200)) {
        const said = (await r.json()).name as string;
        const at = await call("GET", `/api/v1/repos/${u.name}/${said}`, { headers: h });
        expect([200, 307], `a 200 said ${said}: ${at.status}`).toContain(at.status);
      }
    });

    it("50 concurrent creations of the same repository give one 201 and 49 409s; no losing request leaves a row or a count behind", async () => {
      const u = await newUser();
      const create = (name: string) => call("POST", "/api/v1/user/repos", { headers: tokenAuth(u.token), json: { name, issue_labels: "Default" } });
      const one = await rowsWrittenBy(db, () => create(uniqName("solo")));
      const name = uniqName("race");
      let results: Response[] = [];
      const race = await rowsWrittenBy(db, async () => {
        results = await Promise.all(Array.from({ length: 50 }, () => create(name)));
      });
      expect(race).toEqual(one);
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409), await raceOutcome(results, [201, 409])).toHaveLength(49);
      const bodies = await Promise.all(results.filter((r) => r.status === 409).map((r) => r.json()));
      expect(bodies.map((b) => b.message)).toEqual(Array(49).fill("The repository with the same name already exists."));
      // The owner's repository count counts the two repositories, not the losers.
      const counted = await db.execute({ sql: "SELECT num_repos AS n, (SELECT COUNT(*) FROM repository r WHERE r.owner_id = u.id) AS actual FROM user u WHERE lower_name = ?", args: [u.name.toLowerCase()] });
      expect([Number(counted.rows[0]!.n), Number(counted.rows[0]!.actual)]).toEqual([2, 2]);
      const labels = await call("GET", `/api/v1/repos/${u.name}/${name}/labels?limit=50`, { headers: tokenAuth(u.token) });
      expect(labels.headers.get("X-Total-Count")).toBe("7");
    });

    it("gitea-js drives create, edit, labels, collaborators, search and delete unchanged", async () => {
      const u = await newUser();
      const other = await newUser();
      const api = giteaApi(target.url, { token: u.token, customFetch: fetch });
      const name = uniqName("gjs");
      const repo = await api.user.createCurrentUserRepo({ name, private: true, issue_labels: "Advanced", description: "via gitea-js" });
      expect(repo.data).toMatchObject({ name, private: true, empty: true, permissions: { admin: true, push: true, pull: true } });
      const edited = await api.repos.repoEdit(u.name, name, { description: "edited", has_projects: false });
      expect(edited.data).toMatchObject({ description: "edited", has_projects: false });
      const lbl = await api.repos.issueCreateLabel(u.name, name, { name: "gjs", color: "#00aabb" });
      expect(lbl.data.color).toBe("00aabb");
      const labels = await api.repos.issueListLabels(u.name, name, { limit: 50 });
      expect(labels.data).toHaveLength(19);
      expect((await api.repos.repoAddCollaborator(u.name, name, other.name, { permission: "write" })).status).toBe(204);
      const perm = await api.repos.repoGetRepoPermissions(u.name, name, other.name);
      expect(perm.data.permission).toBe("write");
      const found = await api.repos.repoSearch({ q: name });
      expect(found.data.data?.map((r) => r.name)).toEqual([name]);
      const otherApi = giteaApi(target.url, { token: other.token, customFetch: fetch });
      expect((await otherApi.repos.repoGet(u.name, name)).data.permissions).toEqual({ admin: false, push: true, pull: true });
      expect((await api.repos.repoDelete(u.name, name)).status).toBe(204);
      await expect(otherApi.repos.repoGet(u.name, name)).rejects.toMatchObject({ status: 404 });
    });
  });
}
