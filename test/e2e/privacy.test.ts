/**
 * The privacy matrix on BOTH targets (issue 8 A.1–A.6, issue 12 item 3): every caller kind of the
 * privacy world × every route that returns a user, organization, team or repository. What a caller
 * may not see must be indistinguishable from what does not exist — the same status and body as a
 * missing thing — and absent from every list and count. The table of routes is checked against
 * the served API document, so a new route that returns such objects fails here until it is covered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routeGroups } from "../../functions/app.ts";
import { ROUTE_AUTH } from "../../functions/lib/context.ts";
import { client, targets, uniqName } from "../fixtures/targets.ts";
import { buildWorld, type CallerModel, type World } from "../fixtures/world.ts";

interface Expect {
  status: number;
  /** The exact identifiers the answer lists (any order), when it is a list. */
  list?: string[];
  /** A path to the same kind of thing that does not exist: a hidden thing must answer exactly as it does. */
  twin?: string;
}
interface Case {
  path: string;
  expect: (c: CallerModel) => Expect;
}
interface Probe {
  op: string;
  rule: string;
  cases: (w: World) => Case[];
  /** The identifiers of a list answer. */
  ids?: (body: unknown) => string[];
}

const repoNames = (body: unknown) => (body as { full_name: string }[]).map((r) => r.full_name);
const logins = (body: unknown) => (body as { login: string }[]).map((u) => u.login);
const teamIds = (body: unknown) => (body as { id: number }[]).map((t) => String(t.id));
const feedIds = (body: unknown) => (body as { repo: { full_name: string }; act_user: { login: string } }[]).map((a) => `${a.repo.full_name}<-${a.act_user.login}`);
const dataOf = (f: (b: unknown) => string[]) => (body: unknown) => f((body as { data: unknown }).data);
const orgNames = (body: unknown) => (body as { username: string }[]).map((o) => o.username);

const MISSING = "zz-missing-zz";

/** The probes: one per route, named after the rule it checks. */
const PROBES: Probe[] = [
  {
    op: "userGetCurrent",
    rule: "the caller reads itself",
    cases: () => [{ path: "/api/v1/user", expect: (c) => ({ status: 200, list: [c.user!] }) }],
    ids: (b) => [(b as { login: string }).login],
  },
  {
    op: "userGet",
    rule: "a hidden user answers exactly as a missing one",
    cases: (w) => w.individuals.map((u) => ({ path: `/api/v1/users/${u.name}`, expect: (c) => (w.sees(c, u.name) ? { status: 200 } : { status: 404, twin: `/api/v1/users/${w.tag}${MISSING}` }) })),
  },
  {
    op: "userSearch",
    rule: "user search lists exactly the users the caller may see",
    cases: (w) => [{ path: `/api/v1/users/search?q=${w.tag}&limit=50`, expect: (c) => ({ status: 200, list: w.individuals.filter((u) => w.sees(c, u.name)).map((u) => u.name) }) }],
    ids: dataOf(logins),
  },
  {
    op: "orgGet",
    rule: "a hidden organization answers exactly as a missing one",
    cases: (w) => w.orgs.map((o) => ({ path: `/api/v1/orgs/${o.name}`, expect: (c) => (w.sees(c, o.name) ? { status: 200 } : { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}` }) })),
  },
  {
    op: "orgListCurrentUserOrgs",
    rule: "the caller's organizations, as far as its token may see them",
    cases: (w) => [{ path: "/api/v1/user/orgs?limit=50", expect: (c) => ({ status: 200, list: w.orgs.filter((o) => w.isMember(c.user, o.name) && w.sees(c, o.name)).map((o) => o.name) }) }],
    ids: orgNames,
  },
  {
    op: "orgListMembers",
    rule: "members: the organization hidden → 404; never a member the caller may not see",
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/members?limit=50`,
        expect: (c) => {
          if (!w.sees(c, o.name)) return { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/members` };
          const all = w.isMember(c.user, o.name) || w.isAdmin(c) ? [...w.orgMembers.get(o.name)!] : [];
          return { status: 200, list: all.filter((u) => w.sees(c, u)) };
        },
      })),
    ids: logins,
  },
  {
    op: "orgIsMember",
    rule: "membership checks: a hidden organization or user answers as a missing one",
    cases: (w) =>
      w.orgs.flatMap((o) =>
        [`${w.tag}owner`, `${w.tag}member`, `${w.tag}privuser`, `${w.tag}rmember`, `${w.tag}outsider`].map((u) => ({
          path: `/api/v1/orgs/${o.name}/members/${u}`,
          expect: (c): Expect => {
            if (!w.sees(c, o.name)) return { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/members/${u}` };
            if (!w.sees(c, u)) return { status: 404, twin: `/api/v1/orgs/${o.name}/members/${w.tag}${MISSING}` };
            if (c.user !== null && (w.isMember(c.user, o.name) || w.acct(c.user).admin)) return { status: w.isMember(u, o.name) ? 204 : 404 };
            if (c.user === u) return { status: 404 };
            return { status: 303 };
          },
        })),
      ),
  },
  {
    op: "orgIsPublicMember",
    rule: "public membership checks: a hidden organization or user answers as a missing one",
    cases: (w) =>
      w.orgs.flatMap((o) =>
        [`${w.tag}owner`, `${w.tag}privuser`].map((u) => ({
          path: `/api/v1/orgs/${o.name}/public_members/${u}`,
          expect: (): Expect => ({ status: 404, twin: `/api/v1/orgs/${o.name}/public_members/${w.tag}${MISSING}` }),
        })),
      ),
  },
  {
    op: "userListBlocks",
    rule: "the caller's blocks",
    cases: () => [{ path: "/api/v1/user/blocks", expect: () => ({ status: 200, list: [] }) }],
    ids: logins,
  },
  {
    op: "userCheckUserBlock",
    rule: "block checks: a hidden user answers as a missing one",
    cases: (w) => [`${w.tag}privuser`, `${w.tag}limuser`].map((u) => ({ path: `/api/v1/user/blocks/${u}`, expect: () => ({ status: 404, twin: `/api/v1/user/blocks/${w.tag}${MISSING}` }) })),
  },
  {
    op: "organizationListBlocks",
    rule: "an organization's blocks: hidden organization → 404, others 403 unless owner",
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/blocks`,
        expect: (c) => (!w.sees(c, o.name) ? { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/blocks` } : w.isOrgOwner(c.user, o.name) || w.acct(c.user!).admin ? { status: 200, list: [] } : { status: 403 }),
      })),
    ids: logins,
  },
  {
    op: "organizationCheckUserBlock",
    rule: "an organization's block checks: a hidden organization answers as a missing one",
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/blocks/${w.tag}outsider`,
        expect: (c) => (!w.sees(c, o.name) ? { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/blocks/${w.tag}outsider` } : w.isOrgOwner(c.user, o.name) || w.acct(c.user!).admin ? { status: 404 } : { status: 403 }),
      })),
  },
  {
    op: "repoGet",
    rule: "a hidden repository answers exactly as a missing one",
    cases: (w) => w.repos.map((r) => ({ path: `/api/v1/repos/${r.full}`, expect: (c) => (w.reaches(c, r.full) ? { status: 200 } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}` }) })),
  },
  {
    op: "repoGetByID",
    rule: "a hidden repository id answers exactly as a missing one",
    cases: (w) => w.repos.map((r) => ({ path: `/api/v1/repositories/${r.id}`, expect: (c) => (w.reaches(c, r.full) ? { status: 200 } : { status: 404, twin: "/api/v1/repositories/999999999" }) })),
  },
  {
    op: "repoSearch",
    rule: "search, and its uid and team_id filters, reveal nothing the caller may not see",
    cases: (w) => {
      const reach = (c: CallerModel) => w.repos.filter((r) => w.reaches(c, r.full));
      return [
        { path: `/api/v1/repos/search?q=${w.tag}&limit=50`, expect: (c: CallerModel) => ({ status: 200, list: reach(c).map((r) => r.full) }) },
        ...[...w.accounts.values()].map((a) => ({
            path: `/api/v1/repos/search?q=${w.tag}&limit=50&uid=${a.id}`,
            expect: (c: CallerModel) => ({ status: 200, list: w.sees(c, a.name) ? reach(c).filter((r) => r.owner === a.name || r.collaborators.has(a.name)).map((r) => r.full) : [] }),
          })),
        ...w.teams.map((t) => ({
          path: `/api/v1/repos/search?q=${w.tag}&limit=50&team_id=${t.id}`,
          expect: (c: CallerModel) => ({ status: 200, list: w.seesTeam(c, t) && t.repos !== "all" ? reach(c).filter((r) => (t.repos as Set<string>).has(r.full)).map((r) => r.full) : [] }),
        })),
        ...w.orgs.map((o) => ({
          path: `/api/v1/repos/search?q=${w.tag}&limit=50&priority_owner_id=${o.id}&sort=id`,
          expect: (c: CallerModel) => ({ status: 200, list: reach(c).map((r) => r.full) }),
        })),
      ];
    },
    ids: dataOf(repoNames),
  },
  {
    op: "userCurrentListRepos",
    rule: "the caller's repositories, as far as its token may see them",
    cases: (w) => [
      {
        path: "/api/v1/user/repos?limit=50",
        expect: (c) => ({
          status: 200,
          list: w.repos.filter((r) => (r.owner === c.user || r.collaborators.has(c.user!) || w.teams.some((t) => w.covers(t, r) && t.members.has(c.user!))) && w.reaches(c, r.full)).map((r) => r.full),
        }),
      },
    ],
    ids: repoNames,
  },
  {
    op: "userListRepos",
    rule: "an owner's repositories: the owner hidden → 404; never a repository the caller may not see",
    cases: (w) =>
      [...w.accounts.values()].map((a) => ({
          path: `/api/v1/users/${a.name}/repos?limit=50`,
          expect: (c) => (w.sees(c, a.name) ? { status: 200, list: w.repos.filter((r) => r.owner === a.name && w.reaches(c, r.full)).map((r) => r.full) } : { status: 404, twin: `/api/v1/users/${w.tag}${MISSING}/repos` }),
        })),
    ids: repoNames,
  },
  {
    op: "orgListRepos",
    rule: "an organization's repositories: the organization hidden → 404; never a repository the caller may not see",
    cases: (w) =>
      [...w.orgs, ...w.individuals.slice(0, 3)].map((a) => ({
        path: `/api/v1/orgs/${a.name}/repos?limit=50`,
        expect: (c) =>
          a.org && w.sees(c, a.name) ? { status: 200, list: w.repos.filter((r) => r.owner === a.name && w.reaches(c, r.full)).map((r) => r.full) } : { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/repos` },
      })),
    ids: repoNames,
  },
  {
    op: "listForks",
    rule: "forks the caller may not see are not listed",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/forks?limit=50`,
        expect: (c) => (w.reaches(c, r.full) ? { status: 200, list: w.repos.filter((f) => f.forkOf === r.full && w.reaches(c, f.full)).map((f) => f.full) } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/forks` }),
      })),
    ids: repoNames,
  },
  {
    op: "repoListCollaborators",
    rule: "collaborators: never a user the caller may not see",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/collaborators?limit=50`,
        expect: (c) => (w.reaches(c, r.full) ? { status: 200, list: [...r.collaborators.keys()].filter((u) => w.sees(c, u)) } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/collaborators` }),
      })),
    ids: logins,
  },
  {
    op: "repoCheckCollaborator",
    rule: "collaborator checks: a hidden user answers as a missing one (422)",
    cases: (w) =>
      w.repos.flatMap((r) =>
        [`${w.tag}collab`, `${w.tag}privuser`, `${w.tag}outsider`].map((u) => ({
          path: `/api/v1/repos/${r.full}/collaborators/${u}`,
          expect: (c): Expect => {
            if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/collaborators/${u}` };
            if (!w.sees(c, u)) return { status: 422, twin: `/api/v1/repos/${r.full}/collaborators/${w.tag}${MISSING}` };
            return { status: r.collaborators.has(u) ? 204 : 404 };
          },
        })),
      ),
  },
  {
    op: "repoGetRepoPermissions",
    rule: "permission reads: a hidden user answers as a missing one",
    cases: (w) =>
      w.repos.flatMap((r) =>
        [`${w.tag}collab`, `${w.tag}privuser`].map((u) => ({
          path: `/api/v1/repos/${r.full}/collaborators/${u}/permission`,
          expect: (c): Expect => {
            if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/collaborators/${u}/permission` };
            if (!(w.repoAdmin(c, r.full) || c.user === u)) return { status: 403 };
            return w.sees(c, u) ? { status: 200 } : { status: 404, twin: `/api/v1/repos/${r.full}/collaborators/${w.tag}${MISSING}/permission` };
          },
        })),
      ),
  },
  {
    op: "repoGetAssignees",
    rule: "assignees: never a user the caller may not see",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/assignees`,
        expect: (c) => (w.reaches(c, r.full) ? { status: 200, list: [...w.usersWithAccess(r.full, 2)].filter((u) => w.sees(c, u)) } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/assignees` }),
      })),
    ids: logins,
  },
  {
    op: "repoGetReviewers",
    rule: "reviewers: never a user the caller may not see",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/reviewers`,
        expect: (c) => {
          if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/reviewers` };
          if (!w.writesPulls(c, r.full)) return { status: 403 };
          return { status: 200, list: [...w.usersWithAccess(r.full, 1)].filter((u) => u !== c.user && w.sees(c, u)) };
        },
      })),
    ids: logins,
  },
  {
    op: "repoListActivityFeeds",
    rule: "a repository's feed: never an actor the caller may not see",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/activities/feeds?limit=50`,
        expect: (c) =>
          w.reaches(c, r.full)
            ? { status: 200, list: w.actions.filter((a) => a.repo === r.full && a.userId === r.owner && w.actorVisible(c, a.actor)).map((a) => `${a.repo}<-${a.actor}`) }
            : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/activities/feeds` },
      })),
    ids: feedIds,
  },
  {
    op: "userListActivityFeeds",
    rule: "a user's feed: the user hidden → 404; only repositories and actors the caller (and its token) may see",
    cases: (w) =>
      w.individuals.map((u) => ({
        path: `/api/v1/users/${u.name}/activities/feeds?limit=50`,
        expect: (c) => {
          if (!w.sees(c, u.name)) return { status: 404, twin: `/api/v1/users/${w.tag}${MISSING}/activities/feeds` };
          const list = w.actions.filter(
            (a) =>
              a.userId === u.name &&
              w.reaches(c, a.repo) &&
              (!w.repo(a.repo).private || w.isAdmin(c) || c.user === u.name) &&
              w.actorVisible(c, a.actor, (x) => x.org && w.isMember(u.name, x.name)),
          );
          return { status: 200, list: list.map((a) => `${a.repo}<-${a.actor}`) };
        },
      })),
    ids: feedIds,
  },
  {
    op: "orgListActivityFeeds",
    rule: "an organization's feed: the organization hidden → 404; only repositories and actors the caller (and its token) may see",
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/activities/feeds?limit=50`,
        expect: (c) => {
          if (!w.sees(c, o.name)) return { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/activities/feeds` };
          const list = w.actions.filter(
            (a) => a.userId === o.name && w.reaches(c, a.repo) && (!w.repo(a.repo).private || w.isAdmin(c) || w.isMember(c.user, o.name)) && w.actorVisible(c, a.actor, (x) => x.name === o.name),
          );
          return { status: 200, list: list.map((a) => `${a.repo}<-${a.actor}`) };
        },
      })),
    ids: feedIds,
  },
  {
    op: "orgListTeams",
    rule: "what hides an organization hides its teams; only the teams the caller may see",
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/teams?limit=50`,
        expect: (c) => (w.sees(c, o.name) ? { status: 200, list: w.teams.filter((t) => t.org === o.name && w.seesTeam(c, t)).map((t) => String(t.id)) } : { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/teams` }),
      })),
    ids: teamIds,
  },
  {
    op: "teamSearch",
    rule: "team search: only the teams the caller may see",
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/teams/search?limit=50`,
        expect: (c) => (w.sees(c, o.name) ? { status: 200, list: w.teams.filter((t) => t.org === o.name && w.seesTeam(c, t)).map((t) => String(t.id)) } : { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/teams/search` }),
      })),
    ids: dataOf(teamIds),
  },
  {
    op: "userListTeams",
    rule: "the caller's teams, as far as its token may see them (never a team of a hidden organization)",
    cases: (w) => [{ path: "/api/v1/user/teams?limit=50", expect: (c) => ({ status: 200, list: w.teams.filter((t) => t.members.has(c.user!) && w.seesTeam(c, t)).map((t) => String(t.id)) }) }],
    ids: teamIds,
  },
  ...(
    [
      ["orgGetTeam", "", undefined],
      ["orgListTeamMembers", "/members?limit=50", logins],
      ["orgListTeamRepos", "/repos?limit=50", repoNames],
      ["orgListTeamActivityFeeds", "/activities/feeds?limit=50", feedIds],
    ] as const
  ).map(
    ([op, suffix, ids]): Probe => ({
      op,
      rule: "a team of an organization the caller may not see is 404, whatever the team's own visibility",
      cases: (w) =>
        w.teams.map((t) => ({
          path: `/api/v1/teams/${t.id}${suffix}`,
          expect: (c): Expect => {
            if (!w.seesTeam(c, t)) return { status: 404, twin: `/api/v1/teams/999999999${suffix}` };
            if (op === "orgListTeamMembers") return { status: 200, list: [...t.members].filter((u) => w.sees(c, u)) };
            if (op === "orgListTeamRepos") return { status: 200, list: w.repos.filter((r) => w.covers(t, r) && w.reaches(c, r.full)).map((r) => r.full) };
            if (op === "orgListTeamActivityFeeds") {
              const list = w.actions.filter((a) => a.userId === t.org && w.covers(t, w.repo(a.repo)) && w.reaches(c, a.repo) && w.actorVisible(c, a.actor, (x) => x.name === t.org));
              return { status: 200, list: list.map((a) => `${a.repo}<-${a.actor}`) };
            }
            return { status: 200 };
          },
        })),
      ids,
    }),
  ),
  {
    op: "orgListTeamMember",
    rule: "a team member: hidden team or user → 404 as missing",
    cases: (w) =>
      w.teams.flatMap((t) =>
        [`${w.tag}member`, `${w.tag}privuser`, `${w.tag}rmember`].map((u) => ({
          path: `/api/v1/teams/${t.id}/members/${u}`,
          expect: (c): Expect => (w.seesTeam(c, t) && w.sees(c, u) && t.members.has(u) ? { status: 200 } : { status: 404, twin: `/api/v1/teams/999999999/members/${u}` }),
        })),
      ),
  },
  {
    op: "orgListTeamRepo",
    rule: "a team repository: hidden team or repository → 404 as missing",
    cases: (w) =>
      w.teams.flatMap((t) =>
        w.repos
          .filter((r) => r.owner === t.org)
          .map((r) => ({
            path: `/api/v1/teams/${t.id}/repos/${r.full}`,
            expect: (c): Expect => (w.seesTeam(c, t) && w.reaches(c, r.full) && w.covers(t, r) ? { status: 200 } : { status: 404, twin: `/api/v1/teams/999999999/repos/${r.full}` }),
          })),
      ),
  },
];

/** Runs `jobs` with at most `n` at a time. */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]();
      }
    }),
  );
  return out;
}

/** A body with the path's varying name replaced, for comparing a hidden thing with a missing one. */
const normalize = (body: string, names: string[]) => names.reduce((b, n) => b.split(n).join("<name>"), body);

for (const target of targets()) {
  describe(`privacy matrix on ${target.name}`, () => {
    const { call } = client(target);
    let w: World;
    const twinCache = new Map<string, Promise<{ status: number; body: string }>>();

    beforeAll(async () => {
      w = await buildWorld(target, uniqName("pw"));
    }, 120_000);
    afterAll(() => twinCache.clear());

    it("every GET route that returns users, organizations, teams or repositories is in the matrix", async () => {
      const doc = await (await call("GET", "/openapi3.v1.json")).json();
      const embeds = /#\/components\/schemas\/(User|Organization|Team|Repository|Activity)"/;
      const missing: string[] = [];
      for (const ops of Object.values(doc.paths) as Record<string, { operationId: string; responses: Record<string, unknown> }>[]) {
        const get = ops.get;
        if (!get) continue;
        if (embeds.test(JSON.stringify(get.responses["200"] ?? {})) && !PROBES.some((p) => p.op === get.operationId)) missing.push(get.operationId);
      }
      expect(missing).toEqual([]);
      expect(routeGroups.length).toBeGreaterThan(0);
      for (const p of PROBES) expect(ROUTE_AUTH.has(p.op), p.op).toBe(true);
    });

    for (const probe of PROBES) {
      it(`${probe.op}: ${probe.rule}`, async () => {
        const { auth } = ROUTE_AUTH.get(probe.op)!;
        const failures: string[] = [];
        const cases = probe.cases(w);
        expect(cases.length).toBeGreaterThan(0);
        const twin = (c: CallerModel, path: string) => {
          const key = `${c.key} ${path}`;
          if (!twinCache.has(key)) twinCache.set(key, call("GET", path, { headers: c.headers }).then(async (r) => ({ status: r.status, body: await r.text() })));
          return twinCache.get(key)!;
        };
        const jobs = w.callers.flatMap((c) =>
          cases.map((cs) => async () => {
            let e: Expect;
            if (c.user === null && auth.signIn) e = { status: 401 };
            else if (c.scopes && auth.scopes.some((s) => !w.hasScope(c, s))) e = { status: 403 };
            else e = cs.expect(c);
            const res = await call("GET", cs.path, { headers: c.headers });
            const body = await res.text();
            const where = `${c.key} GET ${cs.path}`;
            if (res.status !== e.status) {
              failures.push(`${where}: ${res.status}, expected ${e.status} ${body.slice(0, 160)}`);
              return;
            }
            if (e.list && probe.ids) {
              const got = probe.ids(JSON.parse(body)).sort();
              const want = [...e.list].sort();
              if (JSON.stringify(got) !== JSON.stringify(want)) failures.push(`${where}: listed ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
              const total = res.headers.get("X-Total-Count");
              if (total !== null && Number(total) !== want.length) failures.push(`${where}: X-Total-Count ${total}, expected ${want.length}`);
            }
            if (e.twin) {
              const t = await twin(c, e.twin);
              const names = [...cs.path.split(/[/?&=]/), ...e.twin.split(/[/?&=]/)].filter((s) => s.startsWith(w.tag) || /^\d+$/.test(s)).sort((a, b) => b.length - a.length);
              if (t.status !== res.status || normalize(t.body, names) !== normalize(body, names)) failures.push(`${where}: ${res.status} ${body.slice(0, 120)} differs from missing ${e.twin}: ${t.status} ${t.body.slice(0, 120)}`);
            }
          }),
        );
        await pool(jobs, 6);
        expect(failures.slice(0, 25), `${failures.length} failures`).toEqual([]);
      });
    }
  });
}
