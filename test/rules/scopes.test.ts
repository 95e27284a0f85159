/**
 * Token scopes on every route category, feeds included (GHSA-6cqf-375w-639g, GHSA-3pww-vcvm-3gmj):
 * a token without the route's category gets Gitea's 403; with it (read for GET, write otherwise) it passes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRepo, seedOrg, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let u: SeededUser;
let org: { name: string; ownersTeamId: number };
let repo: string;

beforeAll(async () => {
  t = await testApp();
  u = await seedUser(t.db);
  org = await seedOrg(t, u);
  repo = (await apiRepo(t, await u.token(), { name: uniq("s"), issue_labels: "Default" })).name;
});
afterAll(() => t.close());

/** [method, path, categories the route requires]. */
const routes = (): [string, string, string[]][] => [
  ["GET", "/api/v1/user", ["user"]],
  ["GET", `/api/v1/users/${u.name}`, ["user"]],
  ["GET", `/api/v1/users/${u.name}/activities/feeds`, ["user"]],
  ["GET", "/api/v1/user/emails", ["user"]],
  ["GET", "/api/v1/user/teams", ["user"]],
  ["GET", "/api/v1/user/orgs", ["user", "organization"]],
  ["GET", "/api/v1/user/repos", ["user", "repository"]],
  ["GET", `/api/v1/users/${u.name}/repos`, ["user", "repository"]],
  ["GET", `/api/v1/orgs/${org.name}`, ["organization"]],
  ["GET", `/api/v1/orgs/${org.name}/activities/feeds`, ["organization"]],
  ["GET", `/api/v1/orgs/${org.name}/teams`, ["organization"]],
  ["GET", `/api/v1/orgs/${org.name}/hooks`, ["organization"]],
  ["GET", `/api/v1/teams/${org.ownersTeamId}`, ["organization"]],
  ["GET", `/api/v1/teams/${org.ownersTeamId}/activities/feeds`, ["organization"]],
  ["GET", "/api/v1/repos/search", ["repository"]],
  ["GET", `/api/v1/repos/${u.name}/${repo}`, ["repository"]],
  ["GET", `/api/v1/repos/${u.name}/${repo}/activities/feeds`, ["repository"]],
  ["GET", `/api/v1/repos/${u.name}/${repo}/collaborators`, ["repository"]],
  ["GET", `/api/v1/repos/${u.name}/${repo}/labels`, ["issue"]],
  ["PATCH", `/api/v1/repos/${u.name}/${repo}`, ["repository"]],
  ["POST", `/api/v1/repos/${u.name}/${repo}/labels`, ["issue"]],
  ["PATCH", `/api/v1/orgs/${org.name}`, ["organization"]],
];

describe("scope matrix", () => {
  it("a token without the category → 403 naming the required scopes", async () => {
    const misc = await u.token(["read:misc"]);
    for (const [method, path, cats] of routes()) {
      const res = await t.request(path, { method, headers: token(misc), json: method === "GET" ? undefined : {} });
      expect(res.status, `${method} ${path}`).toBe(403);
      const level = method === "GET" ? "read" : "write";
      expect((await res.json()).message, `${method} ${path}`).toContain(`required=[${cats.map((c) => `${level}:${c}`).join(" ")}]`);
    }
  });

  it("read scopes do not allow writes", async () => {
    const reads = await u.token(["read:repository", "read:issue", "read:organization"]);
    for (const [method, path] of routes().filter(([m]) => m !== "GET")) {
      expect((await t.request(path, { method, headers: token(reads), json: {} })).status, `${method} ${path}`).toBe(403);
    }
  });

  it("the route's own categories are enough", async () => {
    for (const [method, path, cats] of routes()) {
      const level = method === "GET" ? "read" : "write";
      const tk = await u.token(cats.map((c) => `${level}:${c}`));
      const json = method === "POST" ? { name: uniq("l"), color: "ffffff" } : method === "GET" ? undefined : { description: "x" };
      const res = await t.request(path, { method, headers: token(tk), json });
      expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(400);
    }
  });
});
