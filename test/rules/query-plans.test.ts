/**
 * Issue 9 B.5: no hot query scans a large table. Every statement the hot read routes send (as a
 * signed-in user with teams and collaborations, and anonymously) is recorded at the driver and
 * explained with SQLite's planner (`EXPLAIN QUERY PLAN`, its bound arguments); a plan that reads a
 * table from end to end (`SCAN <table or alias>`, with or without walking a whole index) fails,
 * unless the table and the reason are listed in ALLOWED below. Without ANALYZE statistics SQLite
 * plans as if every table were large, so the plans are the ones a big database gets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BatchItem, Driver } from "../../functions/db/driver.ts";
import { addCollaborator, apiRepo, seedMember, seedOrg, seedUser, testApp, token, type SeededUser, type TestApp } from "../fixtures/app.ts";

/**
 * Scans that are the route's own work, not a missing index, with the reason. Keyed by the
 * statement's first words and the table.
 */
const ALLOWED: { route: RegExp; scans: RegExp; why: string }[] = [
  {
    // A keyword of 3 characters or more is found through the trigram index repo_search: no scan.
    route: /^GET \/api\/v1\/repos\/search\?(?!q=[^&]{3})/,
    scans: /\(table repository\)$/,
    why: "repository search without a keyword (explore): its page walks the repositories in the order asked and stops after the page (an owner, team or star filter counts its matches row by row too); a keyword under 3 characters is too short for the trigram index and is matched by LIKE '%kw%' over the table",
  },
  {
    route: /^GET \/api\/v1\/repos\/search\?(?!q=[^&]{3})/,
    scans: /\(table repo_count\)$/,
    why: "the total of a search without a keyword, by class: repo_count has a row per owner visibility and repository flags (at most 4 × 32), never one per repository",
  },
  {
    // A keyword of 3 characters or more is found through the trigram index user_search: no scan.
    route: /^GET \/api\/v1\/users\/search\?q=(?![^&]{3})/,
    scans: /\(table user\)$/,
    why: "keyword search over names, full names and public e-mail addresses (LIKE '%kw%', as Gitea's SearchUsers) with a keyword under 3 characters, too short for the trigram index",
  },
];

interface Sent {
  route: string;
  item: BatchItem;
}

let t: TestApp;
let route = "";
const sent: Sent[] = [];
let viewer: SeededUser;
let viewerToken: string;
let orgName = "";
let teamId = 0;
let repoPath = "";

/** Records every statement with the route that sent it. */
const recording = (d: Driver): Driver => ({
  batch(items, mode) {
    for (const item of items) sent.push({ route, item });
    return d.batch(items, mode);
  },
  close: () => d.close(),
});

beforeAll(async () => {
  t = await testApp({}, { wrap: recording });
  const owner = await seedUser(t.db);
  viewer = await seedUser(t.db);
  viewerToken = await viewer.token();
  const org = await seedOrg(t, owner);
  orgName = org.name;
  const team = await seedMember(t, org, viewer, { permission: "write" });
  teamId = team.id;
  const repo = await apiRepo(t, await owner.token(), { name: "hot", private: true }, org.name);
  repoPath = repo.full_name;
  await t.request(`/api/v1/teams/${teamId}/repos/${repoPath}`, { method: "PUT", headers: token(await owner.token()) });
  const own = await apiRepo(t, await owner.token(), { name: "mine", private: true });
  await addCollaborator(t, await owner.token(), own.full_name, viewer, "read");
});
afterAll(() => t.close());

const HOT = () => [
  "/api/v1/user",
  `/api/v1/users/${viewer.name}`,
  `/api/v1/repos/${repoPath}`,
  "/api/v1/repositories/1",
  "/api/v1/repos/search?q=ho&limit=10",
  "/api/v1/repos/search?q=hot&limit=10",
  "/api/v1/repos/search?q=HOT&includeDesc=true&limit=10",
  "/api/v1/repos/search?q=hot&topic=true&limit=10",
  "/api/v1/repos/search?q=hot,cold&limit=10",
  "/api/v1/repos/search?q=hot,cold&topic=true&limit=10",
  `/api/v1/repos/search?q=${viewer.name}/hot&limit=10`,
  `/api/v1/repos/search?q=${viewer.name}/h&limit=10`,
  "/api/v1/repos/search?q=hot&mode=collaborative&sort=updated&order=desc&limit=10",
  "/api/v1/repos/search?limit=10&sort=updated&order=desc",
  "/api/v1/repos/search?limit=10&sort=alpha&order=desc",
  "/api/v1/user/repos?limit=10",
  `/api/v1/users/${viewer.name}/repos?limit=10`,
  `/api/v1/orgs/${orgName}/repos?limit=10`,
  `/api/v1/orgs/${orgName}`,
  `/api/v1/orgs/${orgName}/teams`,
  `/api/v1/teams/${teamId}`,
  `/api/v1/teams/${teamId}/repos`,
  `/api/v1/teams/${teamId}/members`,
  "/api/v1/user/teams",
  "/api/v1/user/orgs",
  "/api/v1/users/search?q=us&limit=10",
  "/api/v1/users/search?q=user&limit=10",
  "/api/v1/users/search?limit=10",
  `/api/v1/users/${viewer.name}/activities/feeds?limit=10`,
  `/api/v1/orgs/${orgName}/activities/feeds?limit=10`,
  `/api/v1/repos/${repoPath}/activities/feeds?limit=10`,
  `/api/v1/repos/${repoPath}/labels`,
  `/api/v1/repos/${repoPath}/collaborators`,
  `/api/v1/repos/${repoPath}/forks`,
  "/api/v1/user/emails",
];

/**
 * The full scans of tables in a plan (`SCAN t`, `SCAN t USING [COVERING] INDEX i`; not `SEARCH`).
 * SQLite names a scanned table by its alias when it has one (`SCAN r`): aliases are resolved from
 * the statement's `FROM`/`JOIN` clauses; CTEs, subqueries and table-valued functions are not tables.
 */
function fullScans(plan: { detail: string }[], text: string, tables: Set<string>): string[] {
  const alias = new Map<string, string>();
  for (const m of text.matchAll(/\b(?:FROM|JOIN)\s+"?(\w+)"?(?:\s+(?:AS\s+)?"?(\w+)"?)?/gi)) {
    if (!tables.has(m[1]!)) continue;
    alias.set(m[1]!, m[1]!);
    if (m[2] && !/^(ON|WHERE|JOIN|LEFT|INNER|CROSS|GROUP|ORDER|LIMIT|USING|AND|OR)$/i.test(m[2])) alias.set(m[2], m[1]!);
  }
  const out: string[] = [];
  for (const { detail } of plan) {
    const m = /^SCAN (\w+)/.exec(detail);
    if (m && !detail.includes("VIRTUAL TABLE") && alias.has(m[1]!)) out.push(`${detail} (table ${alias.get(m[1]!)})`);
  }
  return out;
}

describe("query plans of the hot routes", () => {
  it("B.5 no statement of a hot read route scans a large table, for a signed-in user and anonymously", async () => {
    for (const path of HOT()) {
      for (const [who, headers] of [
        ["viewer", token(viewerToken)],
        ["anonymous", {}],
      ] as const) {
        route = `GET ${path}`;
        const res = await t.request(path, { headers });
        if (who === "viewer") expect(res.status, `${route} as ${who}`).toBe(200);
        else expect([200, 401, 404], `${route} as ${who}`).toContain(res.status);
      }
    }
    route = "";
    const [tableRows] = await t.driver.batch([{ text: "SELECT name FROM sqlite_master WHERE type = 'table'", args: []}], "read");
    const tables = new Set(tableRows!.map((row) => String((row as unknown as unknown[])[0])));
    const explained = new Map<string, string[]>();
    const problems: string[] = [];
    for (const { route: r, item } of sent) {
      if (!r || !/^\s*(select|with)\b/i.test(item.text)) continue;
      const key = `${r}\n${item.text}`;
      if (explained.has(key)) continue;
      const [rows] = await t.driver.batch([{ text: `EXPLAIN QUERY PLAN ${item.text}`, args: item.args}], "read");
      const plan = rows!.map((row) => ({ detail: String((row as unknown as unknown[])[3]) }));
      const scans = fullScans(plan, item.text, tables).filter((d) => !ALLOWED.some((a) => a.route.test(r) && a.scans.test(d)));
      explained.set(key, scans);
      for (const s of scans) problems.push(`${r}: ${s}\n    in: ${item.text.slice(0, 300)}`);
    }
    expect(explained.size).toBeGreaterThan(HOT().length);
    expect(problems).toEqual([]);
  });
});
