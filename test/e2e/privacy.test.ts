/**
 * The privacy matrix on BOTH targets (issue 8 A.1–A.6, issue 12 item 3): every caller kind of the
 * privacy world × every route that names or returns a user, organization, team or repository, and
 * every write route. What a caller may not see must be indistinguishable from what does not exist —
 * the same status and body as a missing thing — and absent from every list and count; a caller who
 * sees a target but may not act gets Gitea's refusal; and a write probe writes nothing (every table
 * is compared before and after). The table of routes is checked against the served API document,
 * so a new route fails here until it is covered.
 */
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routeGroups } from "../../functions/app.ts";
import { ROUTE_AUTH } from "../../functions/lib/context.ts";
import { basicAuth, client, targets, uniqName } from "../fixtures/targets.ts";
import { buildWorld, PASSWORD, type CallerModel, type TeamModel, type World } from "../fixtures/world.ts";

interface Expect {
  status: number;
  /** The refusal's exact message. */
  message?: string;
  /** The exact identifiers the answer lists (any order), when it is a list. */
  list?: string[];
  /** A path to the same kind of thing that does not exist: a hidden thing must answer exactly as it does. */
  twin?: string;
}
interface Case {
  path: string;
  /** The expected answer; null: the caller may act and the request would write, so it is not sent. */
  expect: (c: CallerModel) => Expect | null;
}
interface Probe {
  op: string;
  rule: string;
  /** A write route: its method and a body that changes nothing (an empty edit, or one refused after the route has judged its target). */
  method?: "POST" | "PATCH" | "PUT" | "DELETE";
  json?: unknown;
  /** The route takes basic auth only: callers holding an `all` token sign in with their password instead. */
  basic?: boolean;
  cases: (w: World) => Case[];
  /** The identifiers of a list answer. */
  ids?: (body: unknown) => string[];
}

const repoNames = (body: unknown) => (body as { full_name: string }[]).map((r) => r.full_name);
const logins = (body: unknown) => (body as { login: string }[]).map((u) => u.login);
const ids = (body: unknown) => (body as { id: number }[]).map((t) => String(t.id));
const teamIds = ids;
const feedIds = (body: unknown) => (body as { repo: { full_name: string }; act_user: { login: string } }[]).map((a) => `${a.repo.full_name}<-${a.act_user.login}`);
const dataOf = (f: (b: unknown) => string[]) => (body: unknown) => f((body as { data: unknown }).data);
const orgNames = (body: unknown) => (body as { username: string }[]).map((o) => o.username);

const MISSING = "zz-missing-zz";

/** The users whose tokens are probed: hidden from some callers (private, limited), public, and the callers themselves (each basic sign-in hashes a password, so not every account). */
const tokenTargets = (w: World) => w.individuals.filter((u) => u.vis !== 0 || u.name === `${w.tag}pubuser` || u.name === `${w.tag}owner`);

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
          // members see concealed memberships — not through a public-only token (public data only)
          const all = (w.isMember(c.user, o.name) && !w.publicOnly(c)) || w.isAdmin(c) ? [...w.orgMembers.get(o.name)!] : [];
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
            // members and site admins see concealed memberships, as the members list shows them — not through a public-only token
            if (c.user !== null && ((w.isMember(c.user, o.name) && !w.publicOnly(c)) || w.isAdmin(c))) return { status: w.isMember(u, o.name) ? 204 : 404 };
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
            expect: (c: CallerModel) => ({ status: 200, list: w.sees(c, a.name) ? reach(c).filter((r) => w.contributesTo(c, a.name, r)).map((r) => r.full) : [] }),
          })),
        ...w.teams.map((t) => ({
          path: `/api/v1/repos/search?q=${w.tag}&limit=50&team_id=${t.id}`,
          // a team that includes all repositories has its organization's (Gitea keeps team_repo rows for them)
          expect: (c: CallerModel) => ({ status: 200, list: w.seesTeam(c, t) ? reach(c).filter((r) => (t.repos === "all" ? r.owner === t.org : t.repos.has(r.full))).map((r) => r.full) : [] }),
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
          // Gitea's ListMyRepos: also the public repositories of the caller's private organizations
          list: w.repos
            .filter((r) => (r.owner === c.user || r.collaborators.has(c.user!) || w.teams.some((t) => w.covers(t, r) && t.members.has(c.user!)) || (!r.private && w.acct(r.owner).org && w.acct(r.owner).vis === 2 && w.isMember(c.user, r.owner))) && w.reaches(c, r.full))
            .map((r) => r.full),
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
    rule: "assignees: never a user the caller may not see, nor a concealed membership it may not see",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/assignees`,
        expect: (c) => (w.reaches(c, r.full) ? { status: 200, list: [...w.usersWithAccess(r.full, 2, c)].filter((u) => w.sees(c, u)) } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/assignees` }),
      })),
    ids: logins,
  },
  {
    op: "repoGetReviewers",
    rule: "reviewers: never a user the caller may not see, nor a concealed membership it may not see",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/reviewers`,
        expect: (c) => {
          if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/reviewers` };
          if (!w.writesPulls(c, r.full)) return { status: 403 };
          return { status: 200, list: [...w.usersWithAccess(r.full, 1, c)].filter((u) => w.sees(c, u)) };
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
  {
    op: "userGetTokens",
    rule: "a user's tokens (basic auth): a hidden user answers as a missing one; others get 403",
    basic: true,
    cases: (w) =>
      tokenTargets(w).map((u) => ({
        path: `/api/v1/users/${u.name}/tokens`,
        expect: (c): Expect => {
          if (!w.sees(c, u.name)) return { status: 404, twin: `/api/v1/users/${w.tag}${MISSING}/tokens` };
          return c.user !== u.name && !w.acct(c.user!).admin ? { status: 403, message: SELF_OR_ADMIN } : { status: 200 };
        },
      })),
  },
  {
    op: "orgListHooks",
    rule: "an organization's hooks: a hidden organization answers as a missing one; non-owners get 403",
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/hooks`,
        expect: (c) =>
          !w.sees(c, o.name)
            ? { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/hooks` }
            : w.ownsOrg(c, o.name)
              ? { status: 200, list: w.hooks.filter((hk) => hk.org === o.name).map((hk) => String(hk.id)) }
              : { status: 403, message: OWNER_ONLY },
      })),
    ids,
  },
  {
    op: "orgGetHook",
    rule: "a hook of a hidden organization, or of another organization, answers as a missing one",
    cases: (w) =>
      w.orgs.flatMap((o) =>
        w.hooks.map((hk) => ({
          path: `/api/v1/orgs/${o.name}/hooks/${hk.id}`,
          expect: (c): Expect => {
            if (!w.sees(c, o.name)) return { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/hooks/${hk.id}` };
            if (!w.ownsOrg(c, o.name)) return { status: 403, message: OWNER_ONLY };
            return hk.org === o.name ? { status: 200 } : { status: 404, twin: `/api/v1/orgs/${o.name}/hooks/999999999` };
          },
        })),
      ),
  },
  {
    op: "issueListLabels",
    rule: "a hidden repository's labels answer as a missing repository",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/labels`,
        expect: (c) =>
          !w.reaches(c, r.full)
            ? { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/labels` }
            : w.readsIssues(c, r.full)
              ? { status: 200, list: w.labels.filter((l) => l.repo === r.full).map((l) => String(l.id)) }
              : { status: 403, message: REPO_READER_ONLY },
      })),
    ids,
  },
  {
    op: "issueGetLabel",
    rule: "a label of a hidden repository, or of another repository, answers as a missing one",
    cases: (w) =>
      w.repos.flatMap((r) =>
        w.labels.map((l) => ({
          path: `/api/v1/repos/${r.full}/labels/${l.id}`,
          expect: (c): Expect => {
            if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/labels/${l.id}` };
            if (!w.readsIssues(c, r.full)) return { status: 403, message: REPO_READER_ONLY };
            return l.repo === r.full ? { status: 200 } : { status: 404, twin: `/api/v1/repos/${r.full}/labels/999999999` };
          },
        })),
      ),
  },
  ...(
    [
      ["repoGetIssueTemplates", "issue_templates"],
      ["repoGetIssueConfig", "issue_config"],
      ["repoValidateIssueConfig", "issue_config/validate"],
    ] as const
  ).map(
    ([op, suffix]): Probe => ({
      op,
      rule: "a hidden repository's issue templates and configuration answer as a missing repository",
      cases: (w) =>
        w.repos.map((r) => ({
          path: `/api/v1/repos/${r.full}/${suffix}`,
          // Every caller who reaches a repository of the world reads its code.
          expect: (c) => (w.reaches(c, r.full) ? { status: 200 } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/${suffix}` }),
        })),
    }),
  ),
  // Git content of the world's (empty) repositories: what a reader of an empty repository gets, else a missing repository.
  ...(
    [
      ["repoListBranches", "branches", 200],
      ["repoGetBranch", "branches/main", 404],
      ["repoListAllGitRefs", "git/refs", 404],
      ["repoListGitRefs", "git/refs/heads", 404],
      ["repoGetAllCommits", "commits", 409],
      ["repoGetSingleCommit", "git/commits/main", 404],
      ["repoGetArchive", "archive/main.zip", 404],
      ["repoListTags", "tags", 200],
      ["repoGetTag", "tags/v1", 404],
      ["GetTree", "git/trees/main", 400],
      ["GetBlob", `git/blobs/${"0".repeat(40)}`, 400],
      ["GetAnnotatedTag", `git/tags/${"0".repeat(40)}`, 400],
    ] as const
  ).map(
    ([op, suffix, status]): Probe => ({
      op,
      rule: "a hidden repository's branches, tags, refs, commits, objects and archives answer as a missing repository",
      cases: (w) =>
        w.repos.map((r) => ({
          path: `/api/v1/repos/${r.full}/${suffix}`,
          expect: (c) => (w.reaches(c, r.full) ? { status } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/${suffix}` }),
        })),
    }),
  ),
  ...(
    [
      ["repoGetContentsList", "contents"],
      ["repoGetContents", "contents/README.md"],
      ["repoGetFileContents", `file-contents?body=${encodeURIComponent('{"files":["README.md"]}')}`],
      ["repoGetContentsExt", "contents-ext/README.md"],
    ] as const
  ).map(
    ([op, suffix]): Probe => ({
      op,
      rule: "a hidden repository's contents answer as a missing repository (a visible empty one: 404 naming its default branch)",
      cases: (w) =>
        w.repos.map((r) => ({
          path: `/api/v1/repos/${r.full}/${suffix}`,
          expect: (c) => (w.reaches(c, r.full) ? { status: 404 } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/${suffix}` }),
        })),
    }),
  ),
  ...(
    [
      ["repoGetRawFile", "raw/README.md"],
      ["repoGetRawFileOrLFS", "media/main/README.md"],
    ] as const
  ).map(
    ([op, suffix]): Probe => ({
      op,
      rule: "a raw file of a hidden repository, and of an empty one, answers exactly as one of a missing repository",
      cases: (w) => w.repos.map((r) => ({ path: `/api/v1/repos/${r.full}/${suffix}`, expect: () => ({ status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/${suffix}` }) })),
    }),
  ),
];

const OWNER_ONLY = "Must be an organization owner";
const MEMBER_ONLY = "Must be an organization member";
const TEAM_MEMBER_ONLY = "Must be a team member";
const REPO_ADMIN_ONLY = "user should be an owner or a collaborator with admin write of a repository";
const REPO_OWNER_ONLY = "user should be the owner of the repo";
const REPO_WRITER_ONLY = "user should have a permission to write to a repo";
const REPO_READER_ONLY = "user should have specific read permission or be a repo admin or a site admin";
/** Writes the code unit: site admins, owners, organization owners, write collaborators and members of covering teams with write. */
const writesCode = (w: World, c: CallerModel, full: string) =>
  w.writesPulls(c, full) || (c.user !== null && w.teams.some((t) => w.covers(t, w.repo(full)) && t.authorize >= 2 && t.members.has(c.user!)));
const TEAM_REPO_ADMIN_ONLY = "Must have admin-level access to the repository";
const NO_CREATE_RIGHT = "Given user is not allowed to create repository in organization.";
const SELF_OR_ADMIN = "doer should be the site admin or be same as the contextUser";

/**
 * The /teams/{id} guards of a write (Gitea: orgAssignment, reqTeamMembership, then the route's
 * own): a team the caller may not see is missing; a caller outside the team is refused (403 for
 * members of its organization, missing for everyone else); `owners` adds reqOrgOwnership, which
 * answers a team route's non-owner as missing. Undefined: the caller passes.
 */
function teamWriteGuard(w: World, c: CallerModel, t: TeamModel, twin: string, owners: boolean): Expect | undefined {
  if (!w.seesTeam(c, t)) return { status: 404, twin };
  if (!w.inTeam(c, t)) return w.isMember(c.user, t.org) ? { status: 403, message: TEAM_MEMBER_ONLY } : { status: 404, twin };
  if (owners && !w.ownsOrg(c, t.org)) return { status: 404, twin };
  return undefined;
}

/**
 * Write routes that name a user, organization, team or repository (issue 8 A.5, issue 12 item 3):
 * what hides the target hides it from writes too — exactly the answer for a missing one —, a caller
 * who sees it but may not act gets Gitea's refusal, and nothing is written either way (the test
 * compares every table before and after). Bodies are chosen so that a caller who may act changes
 * nothing either: an empty edit, or one refused after the route has judged its target. `null`:
 * the caller may act and the request would write, so it is not sent.
 */
const WRITE_PROBES: Probe[] = [
  {
    op: "orgEdit",
    rule: "editing a hidden organization answers as a missing one; non-owners get 403",
    method: "PATCH",
    json: {},
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}`,
        expect: (c) => (!w.sees(c, o.name) ? { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}` } : w.ownsOrg(c, o.name) ? { status: 200 } : { status: 403, message: OWNER_ONLY }),
      })),
  },
  {
    op: "orgDelete",
    rule: "deleting a hidden organization answers as a missing one; non-owners get 403",
    method: "DELETE",
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}`,
        // Every organization of the world owns repositories: an owner's delete is refused (422).
        expect: (c) => (!w.sees(c, o.name) ? { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}` } : w.ownsOrg(c, o.name) ? { status: 422 } : { status: 403, message: OWNER_ONLY }),
      })),
  },
  {
    op: "orgCreateTeam",
    rule: "creating a team in a hidden organization answers as a missing one; non-members and non-owners get 403",
    method: "POST",
    json: { name: "never", permission: "read", units: ["repo.bogus"] },
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/teams`,
        expect: (c) => {
          if (!w.sees(c, o.name)) return { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/teams` };
          // The teams group's reqOrgMembership, then reqOrgOwnership.
          if (!w.acct(c.user!).admin && !w.isMember(c.user, o.name)) return { status: 403, message: MEMBER_ONLY };
          return w.ownsOrg(c, o.name) ? { status: 422, message: '[Units]: unknown unit "repo.bogus"' } : { status: 403, message: OWNER_ONLY };
        },
      })),
  },
  {
    op: "createOrgRepo",
    rule: "creating a repository in a hidden organization answers as a missing one",
    method: "POST",
    json: { name: "." },
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/repos`,
        expect: (c) =>
          !w.sees(c, o.name, true) || (w.publicOnly(c) && w.acct(o.name).vis !== 0)
            ? { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/repos` }
            : w.createsIn(c, o.name)
              ? { status: 422, message: "name is reserved [name: .]" }
              : { status: 403, message: NO_CREATE_RIGHT },
      })),
  },
  {
    op: "createOrgRepoDeprecated",
    rule: "the deprecated create route answers a hidden organization as a missing one (422)",
    method: "POST",
    json: { name: "." },
    cases: (w) =>
      [...w.orgs, ...w.individuals.slice(0, 2)].map((o) => ({
        path: `/api/v1/org/${o.name}/repos`,
        expect: (c) =>
          !o.org || !w.sees(c, o.name, true) || (w.publicOnly(c) && o.vis !== 0)
            ? { status: 422, twin: `/api/v1/org/${w.tag}${MISSING}/repos` }
            : w.createsIn(c, o.name)
              ? { status: 422, message: "name is reserved [name: .]" }
              : { status: 403, message: NO_CREATE_RIGHT },
      })),
  },
  {
    op: "orgCreateHook",
    rule: "creating a hook of a hidden organization answers as a missing one; non-owners get 403",
    method: "POST",
    json: { type: "bogus", config: { url: "https://example.com/never", content_type: "json" } },
    cases: (w) =>
      w.orgs.map((o) => ({
        path: `/api/v1/orgs/${o.name}/hooks`,
        expect: (c) =>
          !w.sees(c, o.name) ? { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/hooks` } : w.ownsOrg(c, o.name) ? { status: 422, message: "Invalid hook type: bogus" } : { status: 403, message: OWNER_ONLY },
      })),
  },
  ...(["PATCH", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "PATCH" ? "orgEditHook" : "orgDeleteHook",
      rule: "a hook of a hidden organization, or of another organization, answers as a missing one",
      method,
      json: method === "PATCH" ? {} : undefined,
      cases: (w) =>
        w.orgs.flatMap((o) =>
          w.hooks.map((hk) => ({
            path: `/api/v1/orgs/${o.name}/hooks/${hk.id}`,
            expect: (c): Expect | null => {
              if (!w.sees(c, o.name)) return { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/hooks/${hk.id}` };
              if (!w.ownsOrg(c, o.name)) return { status: 403, message: OWNER_ONLY };
              if (hk.org !== o.name) return { status: 404, twin: `/api/v1/orgs/${o.name}/hooks/999999999` };
              return method === "PATCH" ? { status: 200 } : null;
            },
          })),
        ),
    }),
  ),
  {
    op: "orgDeleteMember",
    rule: "removing a member: a hidden organization or user answers as a missing one; non-owners get 403",
    method: "DELETE",
    cases: (w) =>
      w.orgs.flatMap((o) =>
        [`${w.tag}outsider`, `${w.tag}privuser`].map((u) => ({
          path: `/api/v1/orgs/${o.name}/members/${u}`,
          expect: (c): Expect | null => {
            if (!w.sees(c, o.name)) return { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/members/${u}` };
            if (!w.ownsOrg(c, o.name)) return { status: 403, message: OWNER_ONLY };
            if (!w.sees(c, u)) return { status: 404, twin: `/api/v1/orgs/${o.name}/members/${w.tag}${MISSING}` };
            return w.isMember(u, o.name) ? null : { status: 204 };
          },
        })),
      ),
  },
  ...(["PUT", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "PUT" ? "organizationBlockUser" : "organizationUnblockUser",
      rule: "an organization's blocks: a hidden organization or user answers as a missing one; non-owners get 403",
      method,
      cases: (w) =>
        w.orgs.flatMap((o) =>
          [`${w.tag}owner`, `${w.tag}privuser`, `${w.tag}outsider`].map((u) => ({
            path: `/api/v1/orgs/${o.name}/blocks/${u}`,
            expect: (c): Expect | null => {
              if (!w.sees(c, o.name)) return { status: 404, twin: `/api/v1/orgs/${w.tag}${MISSING}/blocks/${u}` };
              if (!w.ownsOrg(c, o.name)) return { status: 403, message: OWNER_ONLY };
              if (!w.sees(c, u)) return { status: 404, twin: `/api/v1/orgs/${o.name}/blocks/${w.tag}${MISSING}` };
              // Nobody is blocked: unblocking is Gitea's 400; a member cannot be blocked (400).
              if (method === "DELETE") return { status: 400, message: "cannot unblock the user" };
              return w.isMember(u, o.name) ? { status: 400, message: "cannot block the user" } : null;
            },
          })),
        ),
    }),
  ),
  ...(["PUT", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "PUT" ? "userBlockUser" : "userUnblockUser",
      rule: "the caller's blocks: a hidden user or organization answers as a missing one",
      method,
      cases: (w) =>
        [...w.orgs, ...w.individuals.filter((u) => !u.admin)].map((a) => ({
          path: `/api/v1/user/blocks/${a.name}`,
          expect: (c): Expect | null => {
            if (!w.sees(c, a.name)) return { status: 404, twin: `/api/v1/user/blocks/${w.tag}${MISSING}` };
            if (a.org) return { status: 400, message: "cannot block an organization" };
            // nobody is blocked: unblocking is Gitea's 400, as is blocking oneself
            if (a.name === c.user || method === "DELETE") return { status: 400, message: method === "PUT" ? "cannot block the user" : "cannot unblock the user" };
            return null;
          },
        })),
    }),
  ),
  ...(["POST", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "POST" ? "userCreateToken" : "userDeleteAccessToken",
      rule: "a user's tokens (basic auth): a hidden user answers as a missing one; others get 403",
      method,
      json: method === "POST" ? { name: "never", scopes: ["public-only"] } : undefined,
      basic: true,
      cases: (w) =>
        tokenTargets(w).map((u) => ({
          path: `/api/v1/users/${u.name}/tokens${method === "POST" ? "" : "/999999999"}`,
          expect: (c): Expect => {
            if (!w.sees(c, u.name)) return { status: 404, twin: `/api/v1/users/${w.tag}${MISSING}/tokens${method === "POST" ? "" : "/999999999"}` };
            if (c.user !== u.name && !w.acct(c.user!).admin) return { status: 403, message: SELF_OR_ADMIN };
            // A public-only scope alone is no scope (400); the token id does not exist (404).
            return method === "POST" ? { status: 400, message: "access token must have a scope" } : { status: 404 };
          },
        })),
    }),
  ),
  {
    op: "repoEdit",
    rule: "editing a hidden repository answers as a missing one; non-admins get 403",
    method: "PATCH",
    json: {},
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}`,
        expect: (c) => (!w.reaches(c, r.full) ? { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}` } : w.repoAdmin(c, r.full) ? { status: 200 } : { status: 403, message: REPO_ADMIN_ONLY }),
      })),
  },
  {
    op: "repoDelete",
    rule: "deleting a hidden repository answers as a missing one; all but its owners get 403",
    method: "DELETE",
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}`,
        expect: (c) => (!w.reaches(c, r.full) ? { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}` } : w.ownsRepo(c, r.full) ? null : { status: 403, message: REPO_OWNER_ONLY }),
      })),
  },
  {
    op: "createFork",
    rule: "forking a hidden repository answers as a missing one",
    method: "POST",
    json: { organization: MISSING },
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/forks`,
        expect: (c) => (!w.reaches(c, r.full) ? { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/forks` } : { status: 422, message: `org does not exist [id: 0, name: ${MISSING}]` }),
      })),
  },
  {
    op: "generateRepo",
    rule: "generating from a hidden repository answers as a missing one",
    method: "POST",
    json: { owner: MISSING, name: "never", labels: true },
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/generate`,
        expect: (c) => (!w.reaches(c, r.full) ? { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/generate` } : { status: 422, message: "this is not a template repo" }),
      })),
  },
  ...(["PUT", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "PUT" ? "repoAddCollaborator" : "repoDeleteCollaborator",
      rule: "collaborator writes: a hidden repository answers as a missing one, a hidden user as a missing user (422); non-admins get 403",
      method,
      json: method === "PUT" ? { permission: "read" } : undefined,
      cases: (w) =>
        w.repos.flatMap((r) =>
          // Hidden from some callers (private, limited), and a public one no repository has as collaborator.
          [`${w.tag}privuser`, method === "PUT" ? `${w.tag}limuser` : `${w.tag}outsider`].map((u) => ({
            path: `/api/v1/repos/${r.full}/collaborators/${u}`,
            expect: (c): Expect | null => {
              if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/collaborators/${u}` };
              if (!w.repoAdmin(c, r.full)) return { status: 403, message: REPO_ADMIN_ONLY };
              if (!w.sees(c, u)) return { status: 422, twin: `/api/v1/repos/${r.full}/collaborators/${w.tag}${MISSING}` };
              if (method === "PUT") return r.owner === u ? { status: 422 } : null;
              return r.collaborators.has(u) ? null : { status: 204 };
            },
          })),
        ),
    }),
  ),
  ...(["POST", "DELETE", "PUT", "PATCH"] as const).map(
    (method): Probe => ({
      op: ({ POST: "repoCreateBranch", DELETE: "repoDeleteBranch", PUT: "repoUpdateBranch", PATCH: "repoRenameBranch" } as const)[method],
      rule: "branch writes: a hidden repository answers as a missing one; non-writers of code get 403; the (empty) repository is refused",
      method,
      json: ({ POST: { new_branch_name: "never" }, DELETE: undefined, PUT: { new_commit_id: "main" }, PATCH: { name: "never" } } as const)[method],
      cases: (w) =>
        w.repos.map((r) => ({
          path: `/api/v1/repos/${r.full}/branches${method === "POST" ? "" : "/main"}`,
          expect: (c): Expect => {
            if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/branches${method === "POST" ? "" : "/main"}` };
            // The world's teams hold the code unit: write teams, collaborators with write, owners and admins write code.
            const writes = c.user !== null && (w.writesPulls(c, r.full) || w.teams.some((t) => w.covers(t, r) && t.authorize >= 2 && t.members.has(c.user!)));
            return writes ? { status: 404, message: "Git Repository is empty." } : { status: 403, message: REPO_WRITER_ONLY };
          },
        })),
    }),
  ),
  ...(["POST", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "POST" ? "repoCreateTag" : "repoDeleteTag",
      rule: "tag writes: a hidden repository answers as a missing one; non-writers of code get 403; the (empty) repository has no target and no tag",
      method,
      json: method === "POST" ? { tag_name: "never" } : undefined,
      cases: (w) =>
        w.repos.map((r) => ({
          path: `/api/v1/repos/${r.full}/tags${method === "POST" ? "" : "/v1"}`,
          expect: (c): Expect => {
            if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/tags${method === "POST" ? "" : "/v1"}` };
            const writes = c.user !== null && (w.writesPulls(c, r.full) || w.teams.some((t) => w.covers(t, r) && t.authorize >= 2 && t.members.has(c.user!)));
            if (!writes) return { status: 403, message: REPO_WRITER_ONLY };
            return method === "POST" ? { status: 404, message: "target not found: object does not exist [id: main, rel_path: ]" } : { status: 404 };
          },
        })),
    }),
  ),
  {
    op: "repoGetFileContentsPost",
    rule: "a hidden repository's files, asked for by POST, answer as a missing repository's (a visible empty one: 404 naming its default branch)",
    method: "POST",
    json: { files: ["README.md"] },
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/file-contents`,
        expect: (c): Expect => (w.reaches(c, r.full) ? { status: 404 } : { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/file-contents` }),
      })),
  },
  {
    op: "issueCreateLabel",
    rule: "creating a label in a hidden repository answers as a missing one; non-writers get 403",
    method: "POST",
    json: { name: "never", color: "not-a-color" },
    cases: (w) =>
      w.repos.map((r) => ({
        path: `/api/v1/repos/${r.full}/labels`,
        expect: (c) =>
          !w.reaches(c, r.full) ? { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/labels` } : w.writesPulls(c, r.full) ? { status: 422 } : { status: 403, message: REPO_WRITER_ONLY },
      })),
  },
  ...(["PATCH", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "PATCH" ? "issueEditLabel" : "issueDeleteLabel",
      rule: "a label of a hidden repository, or of another repository, answers as a missing one",
      method,
      json: method === "PATCH" ? {} : undefined,
      cases: (w) =>
        w.repos.flatMap((r) =>
          w.labels.map((l) => ({
            path: `/api/v1/repos/${r.full}/labels/${l.id}`,
            expect: (c): Expect | null => {
              if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/labels/${l.id}` };
              if (!w.writesPulls(c, r.full)) return { status: 403, message: REPO_WRITER_ONLY };
              // Gitea deletes a label of another repository as a no-op (204), like a missing one.
              if (l.repo !== r.full) return { status: method === "PATCH" ? 404 : 204, twin: `/api/v1/repos/${r.full}/labels/999999999` };
              return method === "PATCH" ? { status: 200 } : null;
            },
          })),
        ),
    }),
  ),
  {
    op: "orgEditTeam",
    rule: "editing a team: hidden → missing; outside the team → 403 for org members, else missing; non-owners → missing",
    method: "PATCH",
    json: {},
    cases: (w) =>
      w.teams.map((t) => ({
        path: `/api/v1/teams/${t.id}`,
        expect: (c) => teamWriteGuard(w, c, t, "/api/v1/teams/999999999", true) ?? { status: 200 },
      })),
  },
  {
    op: "orgDeleteTeam",
    rule: "deleting a team: hidden → missing; outside the team → 403 for org members, else missing; non-owners → missing",
    method: "DELETE",
    cases: (w) =>
      w.teams.map((t) => ({
        path: `/api/v1/teams/${t.id}`,
        expect: (c) => teamWriteGuard(w, c, t, "/api/v1/teams/999999999", true) ?? (t.owners ? { status: 422 } : null),
      })),
  },
  ...(["PUT", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "PUT" ? "orgAddTeamMember" : "orgRemoveTeamMember",
      rule: "team members: a hidden team answers as a missing one, and so does a hidden user",
      method,
      cases: (w) =>
        w.teams.flatMap((t) =>
          [`${w.tag}owner`, `${w.tag}privuser`, `${w.tag}outsider`].map((u) => ({
            path: `/api/v1/teams/${t.id}/members/${u}`,
            expect: (c): Expect | null => {
              const g = teamWriteGuard(w, c, t, `/api/v1/teams/999999999/members/${u}`, true);
              if (g) return g;
              if (!w.sees(c, u)) return { status: 404, twin: `/api/v1/teams/${t.id}/members/${w.tag}${MISSING}` };
              // Adding a member or removing a non-member changes nothing.
              return t.members.has(u) === (method === "PUT") ? { status: 204 } : null;
            },
          })),
        ),
    }),
  ),
  ...(["PUT", "DELETE"] as const).map(
    (method): Probe => ({
      op: method === "PUT" ? "orgAddTeamRepository" : "orgRemoveTeamRepository",
      rule: "team repositories: a hidden team or repository answers as a missing one; outside the team or without repository admin → 403",
      method,
      cases: (w) =>
        w.teams.flatMap((t) =>
          w.repos
            // The team's organization's repositories, and a fork owned by a user (another owner's → missing).
            .filter((r) => r.owner === t.org || r === w.repos.find((f) => f.forkOf !== undefined))
            .map((r) => ({
              path: `/api/v1/teams/${t.id}/repos/${r.full}`,
              expect: (c): Expect | null => {
                const g = teamWriteGuard(w, c, t, `/api/v1/teams/999999999/repos/${r.full}`, false);
                if (g) return g;
                if (r.owner !== t.org || !w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/teams/${t.id}/repos/${r.owner}/${w.tag}${MISSING}` };
                if (!w.repoAdmin(c, r.full)) return { status: 403, message: TEAM_REPO_ADMIN_ONLY };
                // A team that includes all repositories keeps them all: both requests change nothing.
                return t.repos === "all" || w.covers(t, r) === (method === "PUT") ? { status: 204 } : null;
              },
            })),
        ),
    }),
  ),
  ...(
    [
      ["repoChangeFiles", "POST", "contents", { files: [{ operation: "create", path: "never.txt", content: "not base64!" }] }],
      ["repoCreateFile", "POST", "contents/never.txt", { content: "not base64!" }],
      ["repoUpdateFile", "PUT", "contents/never.txt", { content: "not base64!" }],
      ["repoDeleteFile", "DELETE", "contents/never.txt", { sha: "0000000000000000000000000000000000000000" }],
    ] as const
  ).map(
    ([op, method, suffix, json]): Probe => ({
      op,
      rule: "writing files of a hidden repository answers as a missing one; non-writers of the code get 403",
      method,
      json,
      cases: (w) =>
        w.repos.map((r) => ({
          path: `/api/v1/repos/${r.full}/${suffix}`,
          expect: (c) => {
            if (!w.reaches(c, r.full)) return { status: 404, twin: `/api/v1/repos/${r.owner}/${w.tag}${MISSING}/${suffix}` };
            if (!writesCode(w, c, r.full)) return { status: 403, message: REPO_WRITER_ONLY };
            // Invalid base64 → 422; deleting from an empty repository → 404 (its branch does not exist).
            return method === "DELETE" ? { status: 404, message: `branch does not exist [name: main]` } : { status: 422, message: "illegal base64 data at input byte 3" };
          },
        })),
    }),
  ),
];

/** Write routes with no target another caller could be hidden from (each with the reason). */
const NO_HIDDEN_TARGET: Record<string, string> = {
  orgCreate: "creates a new organization of the caller's",
  createCurrentUserRepo: "creates a repository of the caller's",
  userAddEmail: "the caller's own addresses",
  userDeleteEmail: "the caller's own addresses",
  adminCreateUser: "site admins only, who see every account",
  adminEditUser: "site admins only, who see every account",
  adminDeleteUser: "site admins only, who see every account",
};

/** Runs `jobs` with at most `n` at a time. */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

/** A body with the path's varying name replaced, for comparing a hidden thing with a missing one. */
const normalize = (body: string, names: string[]) => names.reduce((b, n) => b.split(n).join("<name>"), body);

/**
 * Every row of every table (its own bookkeeping tables excluded), with the edit time stamps
 * masked: an empty edit by a caller who may make it only touches those.
 */
async function tableRows(db: Client): Promise<Map<string, Set<string>>> {
  const tables = (await db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_\\_%' ESCAPE '\\' AND name NOT LIKE '_cf_%' ORDER BY name")).rows.map((r) => String(r.name));
  const out = new Map<string, Set<string>>();
  for (const t of tables) {
    const res = await db.execute(`SELECT * FROM "${t}"`);
    const cols = res.columns.map((c, i) => [c, i] as const).filter(([c]) => c !== "updated_unix");
    out.set(t, new Set(res.rows.map((r) => JSON.stringify(cols.map(([c, i]) => [c, r[i]])))));
  }
  return out;
}

/** The rows that differ between two snapshots, table by table. */
function rowChanges(before: Map<string, Set<string>>, after: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  for (const t of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(t) ?? new Set<string>();
    const b = after.get(t) ?? new Set<string>();
    for (const r of a) if (!b.has(r)) out.push(`${t}: removed or changed ${r.slice(0, 200)}`);
    for (const r of b) if (!a.has(r)) out.push(`${t}: added or changed to ${r.slice(0, 200)}`);
  }
  return out;
}

for (const target of targets()) {
  describe(`privacy matrix on ${target.name}`, () => {
    const { call } = client(target);
    let w: World;
    let db: Client;
    const twinCache = new Map<string, Promise<{ status: number; body: string }>>();

    beforeAll(async () => {
      db = createClient({ url: target.databaseUrl });
      w = await buildWorld(target, uniqName("pw"));
    }, 120_000);
    afterAll(() => {
      twinCache.clear();
      db.close();
    });

    it("every route that names or returns a user, organization, team or repository, and every write route, is in the matrix", async () => {
      const doc = await (await call("GET", "/openapi3.v1.json")).json();
      const schemas = doc.components.schemas as Record<string, unknown>;
      /** Every schema a node references, following references through schemas. */
      const refs = (node: unknown, seen = new Set<string>()): Set<string> => {
        for (const [, name] of JSON.stringify(node ?? {}).matchAll(/#\/components\/schemas\/(\w+)"/g)) {
          if (!seen.has(name!)) refs(schemas[name!], seen.add(name!));
        }
        return seen;
      };
      const reads: string[] = [];
      const writes: string[] = [];
      for (const [path, ops] of Object.entries(doc.paths) as [string, Record<string, { operationId: string; responses: Record<string, unknown> }>][]) {
        for (const [method, op] of Object.entries(ops)) {
          if (method !== "get") writes.push(op.operationId);
          else if (/\{(owner|repo|org|username|collaborator|id|template_owner)\}/.test(path) || ["User", "Organization", "Team", "Repository", "Activity"].some((s) => refs(Object.entries(op.responses).filter(([code]) => code.startsWith("2"))).has(s))) reads.push(op.operationId);
        }
      }
      const readOps = new Set(PROBES.map((p) => p.op));
      const writeOps = new Set(WRITE_PROBES.map((p) => p.op));
      expect(reads.filter((op) => !readOps.has(op))).toEqual([]);
      expect(writes.filter((op) => !writeOps.has(op) && !(op in NO_HIDDEN_TARGET))).toEqual([]);
      // The exemptions are served write routes, none of them probed anyway.
      expect(Object.keys(NO_HIDDEN_TARGET).filter((op) => !writes.includes(op) || writeOps.has(op))).toEqual([]);
      expect(routeGroups.length).toBeGreaterThan(0);
      for (const p of [...PROBES, ...WRITE_PROBES]) expect(ROUTE_AUTH.get(p.op)?.method, p.op).toBe(p.method ?? "GET");
    });

    for (const probe of [...PROBES, ...WRITE_PROBES]) {
      it(`${probe.op}: ${probe.rule}`, async () => {
        const method = probe.method ?? "GET";
        const level = method === "GET" ? "read" : "write";
        const { auth } = ROUTE_AUTH.get(probe.op)!;
        const failures: string[] = [];
        const cases = probe.cases(w);
        expect(cases.length).toBeGreaterThan(0);
        const before = method === "GET" ? null : await tableRows(db);
        /** Basic-auth routes: a caller holding an `all` token signs in with its password instead. */
        const basic = (c: CallerModel) => !!probe.basic && c.user !== null && c.scopes?.length === 1 && c.scopes[0] === "all";
        const headersOf = (c: CallerModel) => (basic(c) ? basicAuth(c.user!, PASSWORD) : c.headers);
        const twin = (c: CallerModel, path: string) => {
          const key = `${c.key} ${method} ${path}`;
          if (!twinCache.has(key)) twinCache.set(key, call(method, path, { headers: headersOf(c), json: probe.json }).then(async (r) => ({ status: r.status, body: await r.text() })));
          return twinCache.get(key)!;
        };
        let sent = 0;
        const jobs = w.callers.flatMap((c) =>
          cases.map((cs) => async () => {
            let e: Expect | null;
            if (c.user === null && auth.signIn) e = { status: 401, message: "token is required" };
            else if (c.scopes && !basic(c) && auth.scopes.some((s) => !w.hasScope(c, s, level))) e = { status: 403 };
            else if (probe.basic && !basic(c)) e = { status: 401, message: "auth required" };
            else e = cs.expect(c);
            if (e === null) return;
            sent++;
            const res = await call(method, cs.path, { headers: headersOf(c), json: probe.json });
            const body = await res.text();
            const where = `${c.key} ${method} ${cs.path}`;
            if (res.status !== e.status) {
              failures.push(`${where}: ${res.status}, expected ${e.status} ${body.slice(0, 160)}`);
              return;
            }
            if (e.message !== undefined && JSON.parse(body).message !== e.message) failures.push(`${where}: ${body.slice(0, 160)}, expected the message ${e.message}`);
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
        // A write probe writes nothing, whoever asks: not a refused caller, not one whose body changes nothing.
        if (before) failures.unshift(...rowChanges(before, await tableRows(db)));
        expect(sent).toBeGreaterThan(0);
        expect(failures.slice(0, 25), `${failures.length} failures`).toEqual([]);
      });
    }
  });
}
