/**
 * The shapes of the repository search's access rule (4d49b8f): without a keyword every repository
 * is tested, so the viewer's organizations, co-members, collaborations and teams are computed once
 * per statement (`repoAccessibleSql`/`userVisibleSql` shape "set"); a keyword search tests few
 * repositories and looks them up per row (shape "row"). Both give the same repositories (the other
 * search tests); only the plan tells them apart. In a file of their own: statements are built once
 * per module graph, and the first test to build them is the one a mutation run credits with them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BatchItem, Driver } from "../../functions/db/driver.ts";
import { apiRepo, seedUser, testApp, token, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let viewerToken = "";
let recording = false;
const sent: BatchItem[] = [];

/** Records every statement sent while `recording`. */
const recorder = (d: Driver): Driver => ({
  batch(items, mode) {
    if (recording) sent.push(...items);
    return d.batch(items, mode);
  },
  close: () => d.close(),
});

beforeAll(async () => {
  t = await testApp({}, { wrap: recorder });
  viewerToken = await (await seedUser(t.db)).token();
});
afterAll(() => t.close());

/**
 * The plan of how the one list statement GET `path` sends as the viewer finds its repositories:
 * SQLite's `EXPLAIN QUERY PLAN` details, in order, of the subtree of `cte` — `list_hits` (every hit,
 * a keyword search) or `list_page` (the page, walked in order: a search without a keyword), where
 * the access rule is; the facts of the page's rows follow it.
 */
async function hitsPlan(path: string, cte: "list_hits" | "list_page"): Promise<string[]> {
  const nodes = await planOf(path);
  const root = nodes.find((n) => n.detail === `MATERIALIZE ${cte}`);
  expect(root, path).toBeDefined();
  return subtree(nodes, root!.id).map((n) => n.detail);
}

/** SQLite's `EXPLAIN QUERY PLAN` of the one list statement GET `path` sends as the viewer. */
async function planOf(path: string) {
  sent.length = 0;
  recording = true;
  expect((await t.request(path, { headers: token(viewerToken) })).status, path).toBe(200);
  recording = false;
  const lists = sent.filter((item) => /\blist_page AS MATERIALIZED\b/.test(item.text));
  expect(lists, path).toHaveLength(1);
  const [rows] = await t.driver.batch([{ text: `EXPLAIN QUERY PLAN ${lists[0]!.text}`, args: lists[0]!.args }], "read");
  return rows!.map((row) => {
    const [id, parent, , detail] = row as unknown as [number, number, number, string];
    return { id: Number(id), parent: Number(parent), detail: String(detail) };
  });
}

/** The nodes under (and with) node `id`, in plan order. */
function subtree(nodes: { id: number; parent: number; detail: string }[], id: number) {
  const inside = new Set([id]);
  for (const n of nodes) if (inside.has(n.parent)) inside.add(n.id);
  return nodes.filter((n) => inside.has(n.id));
}

describe("the viewer's sets in the repository search (repoAccessibleSql and userVisibleSql shapes)", () => {
  it("a search without a keyword computes the viewer's organizations, co-members, collaborations and teams once per statement: no correlated subquery", async () => {
    const plan = await hitsPlan("/api/v1/repos/search?limit=10", "list_page");
    expect(plan.filter((d) => d.startsWith("CORRELATED"))).toEqual([]);
    // The viewer's collaborations and team memberships are read by the viewer's id, not per repository.
    expect(plan).toContain("SEARCH ac USING INDEX IDX_collaboration_user_id (user_id=?)");
    expect(plan).toContain("SEARCH vo2 USING INDEX IDX_org_user_org_id (org_id=?)");
    expect(plan.filter((d) => d.startsWith("SEARCH atu ")).length).toBe(2);
  });

  it("a keyword search looks them up for each repository it tests (correlated subqueries by repository and owner)", async () => {
    const plan = await hitsPlan("/api/v1/repos/search?q=hot&limit=10", "list_hits");
    expect(plan).toContain("SEARCH ac USING COVERING INDEX UQE_collaboration_s (repo_id=? AND user_id=?)");
    expect(plan).toContain("SEARCH atr USING COVERING INDEX UQE_team_repo_s (team_id=? AND repo_id=?)");
    expect(plan).toContain("SEARCH vo2 USING COVERING INDEX UQE_org_user_s (uid=?)");
    expect(plan).not.toContain("SEARCH ac USING INDEX IDX_collaboration_user_id (user_id=?)");
    expect(plan.filter((d) => d.startsWith("CORRELATED")).length).toBeGreaterThan(0);
  });
});

describe("the total of a search without a keyword, by class (repo_count)", () => {
  /** Plan lines outside the page's walk (the count, the viewer, the page's facts) that scan a table the count could read in full. */
  const countScans = async (path: string) => {
    const nodes = await planOf(path);
    const page = nodes.find((n) => n.detail === "MATERIALIZE list_page");
    expect(page, path).toBeDefined();
    const walk = new Set(subtree(nodes, page!.id).map((n) => n.id));
    const rest = nodes.filter((n) => !walk.has(n.id)).map((n) => n.detail);
    return { rest, scans: rest.filter((d) => /^SCAN (repository|rr|user|ro|collaboration|rc|team_user|rtu|team_repo|rtr|team|rt|org_user|vo|vo2)\b/.test(d)) };
  };

  it("reads the classes and the viewer's reached repositories through indexes, never every repository", async () => {
    for (const path of ["/api/v1/repos/search?limit=10", "/api/v1/repos/search?limit=10&mode=source&is_private=false&archived=false&template=false&sort=updated&order=desc"]) {
      const { rest, scans } = await countScans(path);
      expect(scans, path).toEqual([]);
      expect(rest.some((d) => /^(SCAN|SEARCH) cls\b/.test(d)), path).toBe(true);
      expect(rest, path).toContain("SEARCH rr USING COVERING INDEX UQE_repository_s (owner_id=?)");
      expect(rest, path).toContain("SEARCH repository USING INTEGER PRIMARY KEY (rowid=?)");
    }
  });

  it("a search with an owner, team, star or collaborative filter counts its matches row by row (none of them by class)", async () => {
    for (const filter of ["uid=1", "team_id=1", "starredBy=1", "mode=collaborative"]) {
      const { rest } = await countScans(`/api/v1/repos/search?limit=10&${filter}`);
      expect(rest.some((d) => /\bcls\b/.test(d)), filter).toBe(false);
    }
  });

  it("a search with an owner, team, star or collaborative filter reads its candidates by id through the relation's index, never every repository", async () => {
    for (const [filter, index] of [
      ["uid=1", "SEARCH uc USING INDEX IDX_collaboration_user_id (user_id=?)"],
      ["uid=1&exclusive=true", "SEARCH ur USING COVERING INDEX UQE_repository_s (owner_id=?)"],
      ["team_id=1", "SEARCH tr USING COVERING INDEX UQE_team_repo_s (team_id=?)"],
      ["starredBy=1", "SEARCH sr USING COVERING INDEX UQE_star_s (uid=?)"],
      ["mode=collaborative", "SEARCH rc USING INDEX IDX_collaboration_user_id (user_id=?)"],
    ]) {
      const plan = await hitsPlan(`/api/v1/repos/search?limit=10&${filter}`, "list_hits");
      expect(plan, filter).toContain("SEARCH repository USING INTEGER PRIMARY KEY (rowid=?)");
      expect(plan, filter).toContain(index);
      expect(plan.filter((d) => /^SCAN repository\b/.test(d)), filter).toEqual([]);
    }
  });

  it("a narrow filter (fork, mirror, template, archived, private) walks the partial index of the few that pass, not every repository", async () => {
    for (const [filter, index] of [
      ["mode=fork", "IDX_repository_forks"],
      ["mode=mirror", "IDX_repository_mirrors"],
      ["template=true", "IDX_repository_templates"],
      ["archived=true", "IDX_repository_archived"],
      ["is_private=true", "IDX_repository_private"],
    ]) {
      const plan = await hitsPlan(`/api/v1/repos/search?limit=10&${filter}`, "list_page");
      expect(plan, filter).toContain(`SCAN repository USING INDEX ${index}`);
    }
  });
});

describe("a search for private repositories only", () => {
  /** The virtual machine operations SQLite ran for the one list statement of GET `path` (`sqlite_stmt`, cumulative per prepared statement). */
  const stepsOf = async (path: string, headers: Record<string, string>) => {
    const steps = async () => {
      const [rows] = await t.driver.batch([{ text: "SELECT COALESCE(SUM(nstep), 0) FROM sqlite_stmt WHERE sql LIKE '%list_few AS MATERIALIZED%' AND sql NOT LIKE '%sqlite_stmt%'", args: [] }], "read");
      return Number((rows![0] as unknown[])[0]);
    };
    const before = await steps();
    const res = await t.request(path, { headers });
    expect(res.status, path).toBe(200);
    const body = (await res.json()) as { data: { full_name: string }[] };
    return { steps: (await steps()) - before, names: body.data.map((r) => r.full_name), total: res.headers.get("X-Total-Count") };
  };
  const privateRepos = async (owner: Awaited<ReturnType<typeof seedUser>>, n: number) => {
    const tok = await owner.token();
    for (let i = 0; i < n; i++) await apiRepo(t, tok, { name: `hidden-${i}`, private: true });
  };

  it("costs a caller who is not a site admin what it reaches, not every private repository there is (found by id, not walked for)", async () => {
    const me = await seedUser(t.db);
    const meTok = await me.token();
    await apiRepo(t, meTok, { name: "mine-a", private: true });
    await apiRepo(t, meTok, { name: "mine-b", private: true });
    const other = await seedUser(t.db);
    const path = "/api/v1/repos/search?is_private=true&limit=10";
    await privateRepos(other, 30);
    const first = await stepsOf(path, token(meTok));
    expect(first.names).toEqual([`${me.name}/mine-a`, `${me.name}/mine-b`]);
    expect(first.total).toBe("2");
    // Thirty more private repositories the caller may not see: not one more step.
    await privateRepos(await seedUser(t.db), 30);
    const second = await stepsOf(path, token(meTok));
    expect(second.names).toEqual(first.names);
    expect(first.steps).toBeGreaterThan(0);
    expect(second.steps).toBe(first.steps);
    // A site admin's hits are every private repository: walked in order, the page ends the walk.
    const admin = await seedUser(t.db, { admin: true });
    const adminTok = await admin.token();
    await apiRepo(t, adminTok, { name: "0-admins", private: true });
    const all = await stepsOf(path, token(adminTok));
    expect(all.names).toHaveLength(10);
    expect(all.names.filter((n) => n === `${admin.name}/0-admins`)).toHaveLength(1);
    expect(new Set(all.names).size).toBe(10);
    expect(Number(all.total)).toBeGreaterThanOrEqual(63);
  });
});
