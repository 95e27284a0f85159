/**
 * The permission model through the routes (issue 12): every caller kind it knows — anonymous,
 * stranger, restricted users (outside and inside an organization), the owner, collaborators by mode,
 * team members by unit mode, organization owners, site admins, sudo, public-only tokens and tokens
 * without the repository scope — on every kind of repository: public and private, of a user, of a
 * public and of a private organization, archived. The expectations are written out by hand from
 * Gitea's rules, not computed by the code under test. Every answer, refusals included, is one round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCollaborator, addTeamMember, apiRepo, expectRefusal, roundTrips, seedOrg, seedTeam, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

type Repo = "userPub" | "userPriv" | "orgPub" | "orgPriv" | "privOrgPub" | "archived";
type Perm = "none" | "read" | "write" | "admin";
const JSON_OF: Record<Exclude<Perm, "none">, { admin: boolean; push: boolean; pull: boolean }> = {
  read: { admin: false, push: false, pull: true },
  write: { admin: false, push: true, pull: true },
  admin: { admin: true, push: true, pull: true },
};

let t: TestApp;
const full = {} as Record<Repo, string>;
const callers: Record<string, Record<string, string>> = {};
const users: Record<string, SeededUser> = {};

beforeAll(async () => {
  t = await testApp();
  for (const k of ["owner", "orgOwner", "stranger", "collabRead", "collabWrite", "collabAdmin", "teamCode", "teamIssues", "teamAdmin"]) users[k] = await seedUser(t.db);
  users.restricted = await seedUser(t.db, { restricted: true });
  users.restrictedMember = await seedUser(t.db, { restricted: true });
  users.admin = await seedUser(t.db, { admin: true });
  const ownerTok = await users.owner!.token();
  const org = await seedOrg(t, users.orgOwner!);
  const privOrg = await seedOrg(t, users.orgOwner!, { visibility: 2 });
  const tag = uniq("pm");
  const mk = async (key: Repo, tk: string, priv: boolean, owner?: string) => (full[key] = (await apiRepo(t, tk, { name: `${tag}-${key}`, private: priv, issue_labels: "Default" }, owner)).full_name);
  await mk("userPub", ownerTok, false);
  await mk("userPriv", ownerTok, true);
  await mk("archived", ownerTok, false);
  await mk("orgPub", org.ownerToken, false, org.name);
  await mk("orgPriv", org.ownerToken, true, org.name);
  await mk("privOrgPub", privOrg.ownerToken, false, privOrg.name);
  await addCollaborator(t, ownerTok, full.userPriv, users.collabRead!, "read");
  await addCollaborator(t, ownerTok, full.userPriv, users.collabWrite!, "write");
  await addCollaborator(t, ownerTok, full.userPriv, users.collabAdmin!, "admin");
  await addCollaborator(t, ownerTok, full.archived, users.collabWrite!, "write");
  await addCollaborator(t, privOrg.ownerToken, full.privOrgPub, users.collabRead!, "read");
  const archive = await t.request(`/api/v1/repos/${full.archived}`, { method: "PATCH", headers: token(ownerTok), json: { archived: true } });
  expect(archive.status).toBe(200);
  // Teams of the public organization that cover only its private repository, one per unit mode.
  const covering = async (opts: Parameters<typeof seedTeam>[2], members: SeededUser[]) => {
    const team = await seedTeam(t, org, opts);
    const res = await t.request(`/api/v1/teams/${team.id}/repos/${full.orgPriv}`, { method: "PUT", headers: token(org.ownerToken) });
    expect(res.status).toBe(204);
    for (const m of members) await addTeamMember(t, org, team.id, m);
  };
  await covering({ permission: "read", units: ["repo.code"] }, [users.teamCode!, users.restrictedMember!]);
  await covering({ unitsMap: { "repo.code": "read", "repo.issues": "write" } }, [users.teamIssues!]);
  await covering({ permission: "admin" }, [users.teamAdmin!]);
  callers.anonymous = {};
  for (const [k, u] of Object.entries(users)) callers[k] = token(await u.token());
  callers["admin sudo collabWrite"] = { ...callers.admin, Sudo: users.collabWrite!.name };
  callers["admin sudo restricted"] = { ...callers.admin, Sudo: users.restricted.name };
  callers["admin public-only"] = token(await users.admin.token(["public-only", "all"]));
  callers["owner public-only"] = token(await users.owner!.token(["public-only", "all"]));
});
afterAll(() => t.close());

/** What each caller may do on each repository (absent: none, the repository answers 404). */
const RULES: Record<string, { rule: string; perms: Partial<Record<Repo, Perm>> }> = {
  anonymous: { rule: "public repositories of public owners, read-only", perms: { userPub: "read", orgPub: "read", archived: "read" } },
  stranger: { rule: "public repositories of owners it may see, read-only", perms: { userPub: "read", orgPub: "read", archived: "read" } },
  restricted: { rule: "a restricted user sees nothing it is not given, not even public repositories", perms: {} },
  restrictedMember: { rule: "a restricted user sees what its team covers, and no other repository of the organization", perms: { orgPriv: "read" } },
  owner: { rule: "owns its repositories; an archived one keeps admin but not push", perms: { userPub: "admin", userPriv: "admin", orgPub: "read", archived: "admin" } },
  collabRead: { rule: "read collaborator; a collaborator reaches a public repository of a hidden organization", perms: { userPub: "read", userPriv: "read", orgPub: "read", archived: "read", privOrgPub: "read" } },
  collabWrite: { rule: "write collaborator; on an archived repository only read", perms: { userPub: "read", userPriv: "write", orgPub: "read", archived: "read" } },
  collabAdmin: { rule: "admin collaborator", perms: { userPub: "read", userPriv: "admin", orgPub: "read", archived: "read" } },
  teamCode: { rule: "a read team member reads what the team covers, and public repositories", perms: { userPub: "read", orgPub: "read", orgPriv: "read", archived: "read" } },
  teamIssues: { rule: "a team member with code read and issues write", perms: { userPub: "read", orgPub: "read", orgPriv: "read", archived: "read" } },
  teamAdmin: { rule: "an admin team member administrates what the team covers only", perms: { userPub: "read", orgPub: "read", orgPriv: "admin", archived: "read" } },
  orgOwner: { rule: "an organization owner owns every repository of its organizations", perms: { userPub: "read", orgPub: "admin", orgPriv: "admin", privOrgPub: "admin", archived: "read" } },
  admin: { rule: "a site admin administrates everything", perms: { userPub: "admin", userPriv: "admin", orgPub: "admin", orgPriv: "admin", privOrgPub: "admin", archived: "admin" } },
  "admin sudo collabWrite": { rule: "sudo acts with the target's rights, not the admin's", perms: { userPub: "read", userPriv: "write", orgPub: "read", archived: "read" } },
  "admin sudo restricted": { rule: "sudo to a restricted user is restricted", perms: {} },
  "admin public-only": { rule: "a public-only token keeps its rights on public repositories of public owners only", perms: { userPub: "admin", orgPub: "admin", archived: "admin" } },
  "owner public-only": { rule: "a public-only token does not reach its owner's private repositories", perms: { userPub: "admin", orgPub: "read", archived: "admin" } },
};
const REPOS: Repo[] = ["userPub", "userPriv", "orgPub", "orgPriv", "privOrgPub", "archived"];

describe("GET /repos/{owner}/{repo}: who reaches what, with which permission", () => {
  it("the table covers every caller", () => {
    expect(Object.keys(RULES).sort()).toEqual(Object.keys(callers).sort());
  });

  for (const [who, { rule, perms }] of Object.entries(RULES)) {
    it(`${who}: ${rule}`, async () => {
      for (const repo of REPOS) {
        const res = await t.request(`/api/v1/repos/${full[repo]}`, { headers: callers[who] });
        const want = perms[repo] ?? "none";
        expect(res.status, `${who} ${repo}`).toBe(want === "none" ? 404 : 200);
        expect(roundTrips(res), `${who} ${repo}`).toBe(1);
        const body = await res.json();
        if (want === "none") expect(body, `${who} ${repo}`).toEqual({ message: "The target couldn't be found.", url: "http://gitea.test/api/swagger", errors: [] });
        else {
          // An archived repository is read-only in every unit: no push, whatever the mode.
          const expected = repo === "archived" ? { ...JSON_OF[want], push: false } : JSON_OF[want];
          expect(body.permissions, `${who} ${repo}`).toEqual(expected);
        }
      }
    });
  }
});

describe("lists agree with the permission model (the SQL twin of the same rules)", () => {
  for (const [who, { perms }] of Object.entries(RULES)) {
    it(`${who}: search lists exactly the repositories it reaches, with the same permissions`, async () => {
      const tag = full.userPub.split("/")[1]!.split("-")[0];
      const res = await t.request(`/api/v1/repos/search?q=${tag}&limit=50`, { headers: callers[who] });
      expect(res.status).toBe(200);
      expect(roundTrips(res)).toBe(1);
      const got = ((await res.json()).data as { full_name: string; permissions: unknown }[]).map((r) => [r.full_name, r.permissions]).sort();
      const want = REPOS.filter((r) => (perms[r] ?? "none") !== "none")
        .map((r) => [full[r], r === "archived" ? { ...JSON_OF[perms[r] as Exclude<Perm, "none">], push: false } : JSON_OF[perms[r] as Exclude<Perm, "none">]])
        .sort();
      expect(got).toEqual(want);
      expect(res.headers.get("X-Total-Count")).toBe(String(want.length));
    });
  }
});

describe("units: what a team's unit modes allow", () => {
  const labels = (who: string) => t.request(`/api/v1/repos/${full.orgPriv}/labels`, { headers: callers[who] });
  const addLabel = (who: string) => t.request(`/api/v1/repos/${full.orgPriv}/labels`, { method: "POST", headers: callers[who], json: { name: uniq("l"), color: "00aabb" } });

  it("a team with only the code unit reads the repository but not its issues (labels 403)", async () => {
    const res = await labels("teamCode");
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("user should have specific read permission or be a repo admin or a site admin");
    expect(roundTrips(res)).toBe(1);
  });

  it("issues write without code write: labels can be written, code cannot be pushed", async () => {
    expect((await labels("teamIssues")).status).toBe(200);
    const res = await addLabel("teamIssues");
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
  });

  it("read modes do not write: a read team member is refused with Gitea's message, in one round trip", async () => {
    const res = await addLabel("restrictedMember");
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("user should have a permission to write to a repo");
    expect(roundTrips(res)).toBe(1);
  });

  it("admin team members, organization owners and site admins write every unit", async () => {
    for (const who of ["teamAdmin", "orgOwner", "admin"]) expect((await addLabel(who)).status, who).toBe(201);
  });

  it("only repository admins edit the repository: readers and writers are refused with Gitea's message", async () => {
    for (const [who, repo] of [
      ["collabWrite", "userPriv"],
      ["teamIssues", "orgPriv"],
      ["admin sudo collabWrite", "userPriv"],
    ] as const) {
      const res = t.request(`/api/v1/repos/${full[repo]}`, { method: "PATCH", headers: callers[who], json: { description: `by ${who}` } });
      expect(roundTrips(await expectRefusal(res, 403, "user should be an owner or a collaborator with admin write of a repository", who)), who).toBe(1);
    }
  });

  it("repository admins by collaboration or by team edit it", async () => {
    for (const [who, repo] of [
      ["collabAdmin", "userPriv"],
      ["teamAdmin", "orgPriv"],
    ] as const) {
      const res = await t.request(`/api/v1/repos/${full[repo]}`, { method: "PATCH", headers: callers[who], json: { description: `by ${who}` } });
      expect(res.status, who).toBe(200);
      expect((await res.json()).description, who).toBe(`by ${who}`);
    }
  });
});

describe("tokens without the repository scope", () => {
  it("a read:organization token lists only public repositories of public owners, with the caller's own rights on them", async () => {
    const tk = await users.orgOwner!.token(["read:organization"]);
    const org = full.orgPub.split("/")[0];
    const res = await t.request(`/api/v1/orgs/${org}/repos?limit=50`, { headers: token(tk) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { full_name: string; permissions: unknown }[];
    expect(body.map((r) => [r.full_name, r.permissions])).toEqual([[full.orgPub, JSON_OF.admin]]);
    expect(res.headers.get("X-Total-Count")).toBe("1");
    // The same owner with a full token sees both.
    const all = await (await t.request(`/api/v1/orgs/${org}/repos?limit=50`, { headers: callers.orgOwner })).json();
    expect(all.map((r: { full_name: string }) => r.full_name).sort()).toEqual([full.orgPub, full.orgPriv].sort());
  });

  it("the route itself needs the repository scope: read:user → 403 naming it", async () => {
    const res = await t.request(`/api/v1/repos/${full.userPub}`, { headers: token(await users.owner!.token(["read:user"])) });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("token does not have at least one of required scope(s), required=[read:repository], token scope=read:user");
    expect(roundTrips(res)).toBe(1);
  });
});
