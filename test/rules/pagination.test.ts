/** Pagination: which lists answer whole without `page` (Gitea's db.FindAndCount and the models that page only when `Page > 0`). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCollaborator, addTeamMember, apiRepo, basic, roundTrips, seedOrg, seedTeam, seedUser, testApp, token, uniq, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
let ownerTok: string;
let org: SeededOrg;
let repo: string;
let orgRepo: string;
let teamId: number;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  ownerTok = await owner.token();
  org = await seedOrg(t, owner);
  const users = [await seedUser(t.db), await seedUser(t.db), await seedUser(t.db)];
  repo = `${owner.name}/${(await apiRepo(t, ownerTok, { name: uniq("pg"), issue_labels: "Default" })).name}`;
  orgRepo = `${org.name}/${(await apiRepo(t, org.ownerToken, { name: uniq("pgo") }, org.name)).name}`;
  teamId = (await seedTeam(t, org)).id;
  for (const u of users) {
    await addCollaborator(t, ownerTok, repo, u, "read");
    await addTeamMember(t, org, teamId, u);
    // a block ends collaborations: block other users
    expect((await t.request(`/api/v1/user/blocks/${(await seedUser(t.db)).name}`, { method: "PUT", headers: token(ownerTok) })).status).toBe(204);
    expect((await t.request(`/api/v1/orgs/${org.name}/blocks/${(await seedUser(t.db)).name}`, { method: "PUT", headers: token(org.ownerToken) })).status).toBe(204);
    expect((await t.request(`/api/v1/repos/${orgRepo}/forks`, { method: "POST", headers: token(await u.token()), json: {} })).status).toBe(202);
    expect((await t.request(`/api/v1/orgs/${org.name}/hooks`, { method: "POST", headers: token(org.ownerToken), json: { type: "gitea", config: { url: "https://example.com/hook", content_type: "json" } } })).status).toBe(201);
  }
});
afterAll(() => t.close());

describe("list rule: no page is the whole list where Gitea's query pages only with a page", () => {
  // [route, path, headers]: each list holds at least 3 rows (7 labels, 3 collaborators, 3 members, 3 hooks, 3 forks, 3 blocks, 2+ tokens)
  const lists = (): [string, string, Record<string, string>][] => [
    ["GET /repos/{owner}/{repo}/labels (GetLabelsByRepoID: Page > 0)", `/api/v1/repos/${repo}/labels`, token(ownerTok)],
    ["GET /repos/{owner}/{repo}/collaborators (FindAndCount)", `/api/v1/repos/${repo}/collaborators`, token(ownerTok)],
    ["GET /teams/{id}/members (GetTeamMembers: Page > 0)", `/api/v1/teams/${teamId}/members`, token(org.ownerToken)],
    ["GET /orgs/{org}/hooks (FindAndCount)", `/api/v1/orgs/${org.name}/hooks`, token(org.ownerToken)],
    ["GET /repos/{owner}/{repo}/forks (FindAndCount)", `/api/v1/repos/${orgRepo}/forks`, token(org.ownerToken)],
    ["GET /user/blocks (FindAndCount)", "/api/v1/user/blocks", token(ownerTok)],
    ["GET /orgs/{org}/blocks (FindAndCount)", `/api/v1/orgs/${org.name}/blocks`, token(org.ownerToken)],
    ["GET /users/{username}/tokens (FindAndCount)", `/api/v1/users/${owner.name}/tokens`, basic(owner.name, owner.password)],
  ];

  it("list rule: without page (or with page 0), limit is ignored and every row is answered, X-Total-Count the total, no Link, one round trip; page 1 pages by limit", async () => {
    for (const [route, path, headers] of lists()) {
      const whole = await t.request(`${path}?limit=1`, { headers });
      expect(whole.status, route).toBe(200);
      const total = Number(whole.headers.get("X-Total-Count"));
      expect(total, route).toBeGreaterThanOrEqual(2);
      expect((await whole.json()).length, route).toBe(total);
      expect(whole.headers.get("Link"), route).toBeNull();
      expect(roundTrips(whole), route).toBe(1);
      const zero = await t.request(`${path}?page=0&limit=1`, { headers });
      expect((await zero.json()).length, `${route} page=0`).toBe(total);
      const paged = await t.request(`${path}?page=1&limit=1`, { headers });
      expect((await paged.json()).length, `${route} page=1`).toBe(1);
      expect(paged.headers.get("X-Total-Count"), route).toBe(String(total));
    }
  });
});
