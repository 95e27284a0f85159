/**
 * The permission guards (functions/lib/guards.ts), each against the facts that let a caller through
 * and the first that does not: who passes, and the exact refusal (status and Gitea's message) for
 * everyone else. The routes' tests show the guards are called; these pin what each one decides.
 */
import { describe, expect, it } from "vitest";
import type { Caller } from "../../functions/lib/auth.ts";
import { ApiError } from "../../functions/lib/errors.ts";
import {
  mustNotBeArchived,
  reqAnyRepoReader,
  reqOrgMembership,
  reqOrgOwnership,
  reqPublicOwner,
  reqRepoAdmin,
  reqRepoOwner,
  reqRepoReader,
  reqRepoWriter,
  reqSelfOrAdmin,
  reqTeamMembership,
} from "../../functions/lib/guards.ts";
import { ACCESS, UNIT, type Permission } from "../../functions/lib/permissions.ts";

const caller = (over: Partial<Caller> = {}): Caller => ({ id: 7, isAdmin: false, viaToken: true, publicOnly: false, scope: "all", limited: { repository: false, organization: false, user: false }, row: {} as never, ...over }) as Caller;
const admin = caller({ isAdmin: true });
const perm = (mode: number, units: [number, number][] = []): Permission => ({ mode, units: new Map(units) });

/** What `fn` throws: [status, message], or "pass". */
function outcome(fn: () => void): "pass" | [number, string] {
  try {
    fn();
    return "pass";
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return [e.status, e.message];
  }
}

const READ_MSG = "user should have specific read permission or be a repo admin or a site admin";
const WRITE_MSG = "user should have a permission to write to a repo";

describe("repository guards", () => {
  it("reqRepoReader(units…): read on any named unit, a repository admin or a site admin; others 403", () => {
    expect(outcome(() => reqRepoReader(caller(), perm(ACCESS.none, [[UNIT.code, ACCESS.read]]), UNIT.code))).toBe("pass");
    expect(outcome(() => reqRepoReader(caller(), perm(ACCESS.none, [[UNIT.pulls, ACCESS.read]]), UNIT.issues, UNIT.pulls))).toBe("pass");
    expect(outcome(() => reqRepoReader(caller(), perm(ACCESS.admin), UNIT.code))).toBe("pass");
    expect(outcome(() => reqRepoReader(admin, perm(ACCESS.none), UNIT.code))).toBe("pass");
    expect(outcome(() => reqRepoReader(caller(), perm(ACCESS.none, [[UNIT.issues, ACCESS.read]]), UNIT.code))).toEqual([403, READ_MSG]);
    expect(outcome(() => reqRepoReader(caller(), perm(ACCESS.write, [[UNIT.code, ACCESS.none]]), UNIT.code))).toEqual([403, READ_MSG]);
    expect(outcome(() => reqRepoReader(null, perm(ACCESS.none), UNIT.code))).toEqual([403, READ_MSG]);
  });

  it("reqRepoWriter(units…): write on any named unit, a repository admin or a site admin; readers 403", () => {
    expect(outcome(() => reqRepoWriter(caller(), perm(ACCESS.read, [[UNIT.issues, ACCESS.write]]), UNIT.issues, UNIT.pulls))).toBe("pass");
    expect(outcome(() => reqRepoWriter(caller(), perm(ACCESS.admin), UNIT.issues))).toBe("pass");
    expect(outcome(() => reqRepoWriter(admin, perm(ACCESS.none), UNIT.issues))).toBe("pass");
    expect(outcome(() => reqRepoWriter(caller(), perm(ACCESS.read, [[UNIT.issues, ACCESS.read], [UNIT.code, ACCESS.write]]), UNIT.issues))).toEqual([403, WRITE_MSG]);
    expect(outcome(() => reqRepoWriter(null, perm(ACCESS.none), UNIT.issues))).toEqual([403, WRITE_MSG]);
  });

  it("reqAnyRepoReader: any access to any unit, or a site admin", () => {
    expect(outcome(() => reqAnyRepoReader(caller(), perm(ACCESS.read)))).toBe("pass");
    expect(outcome(() => reqAnyRepoReader(caller(), perm(ACCESS.none, [[UNIT.wiki, ACCESS.read]])))).toBe("pass");
    expect(outcome(() => reqAnyRepoReader(admin, perm(ACCESS.none)))).toBe("pass");
    expect(outcome(() => reqAnyRepoReader(caller(), perm(ACCESS.none, [[UNIT.code, ACCESS.none]])))).toEqual([403, "user should have any permission to read repository or permissions of site admin"]);
  });

  it("reqRepoAdmin: admin mode or a site admin; writers 403", () => {
    expect(outcome(() => reqRepoAdmin(caller(), perm(ACCESS.admin)))).toBe("pass");
    expect(outcome(() => reqRepoAdmin(admin, perm(ACCESS.read)))).toBe("pass");
    expect(outcome(() => reqRepoAdmin(caller(), perm(ACCESS.write)))).toEqual([403, "user should be an owner or a collaborator with admin write of a repository"]);
  });

  it("reqRepoOwner: owner mode or a site admin; admins 403", () => {
    expect(outcome(() => reqRepoOwner(caller(), perm(ACCESS.owner)))).toBe("pass");
    expect(outcome(() => reqRepoOwner(admin, perm(ACCESS.read)))).toBe("pass");
    expect(outcome(() => reqRepoOwner(caller(), perm(ACCESS.admin)))).toEqual([403, "user should be the owner of the repo"]);
  });

  it("mustNotBeArchived: an archived repository is 423 'repo is archived'; others pass", () => {
    expect(outcome(() => mustNotBeArchived({ isArchived: false }))).toBe("pass");
    expect(outcome(() => mustNotBeArchived({ isArchived: true }))).toEqual([423, "repo is archived"]);
  });
});

describe("organization and team guards", () => {
  it("reqOrgOwnership: owners and site admins; members 403", () => {
    expect(outcome(() => reqOrgOwnership(caller(), { isOwner: 1 }))).toBe("pass");
    expect(outcome(() => reqOrgOwnership(admin, { isOwner: 0 }))).toBe("pass");
    expect(outcome(() => reqOrgOwnership(caller(), { isOwner: 0 }))).toEqual([403, "Must be an organization owner"]);
    expect(outcome(() => reqOrgOwnership(null, { isOwner: 0 }))).toEqual([403, "Must be an organization owner"]);
  });

  it("reqOrgMembership: members and site admins; others 403", () => {
    expect(outcome(() => reqOrgMembership(caller(), { isMember: 1 }))).toBe("pass");
    expect(outcome(() => reqOrgMembership(admin, { isMember: 0 }))).toBe("pass");
    expect(outcome(() => reqOrgMembership(caller(), { isMember: 0 }))).toEqual([403, "Must be an organization member"]);
  });

  it("reqTeamMembership: site admins, org owners and team members pass; other org members 403; everyone else the missing team", () => {
    const none = { isOwner: 0, isTeamMember: 0, isOrgMember: 0 };
    expect(outcome(() => reqTeamMembership(admin, none))).toBe("pass");
    expect(outcome(() => reqTeamMembership(caller(), { ...none, isOwner: 1 }))).toBe("pass");
    expect(outcome(() => reqTeamMembership(caller(), { ...none, isTeamMember: 1 }))).toBe("pass");
    expect(outcome(() => reqTeamMembership(caller(), { ...none, isOrgMember: 1 }))).toEqual([403, "Must be a team member"]);
    expect(outcome(() => reqTeamMembership(caller(), none))).toEqual([404, "The target couldn't be found."]);
  });
});

describe("account guards", () => {
  it("reqSelfOrAdmin: the user in the path or a site admin; anyone else (and nobody) 403", () => {
    expect(outcome(() => reqSelfOrAdmin(caller({ id: 3 }), { id: 3 }))).toBe("pass");
    expect(outcome(() => reqSelfOrAdmin(admin, { id: 3 }))).toBe("pass");
    expect(outcome(() => reqSelfOrAdmin(caller({ id: 4 }), { id: 3 }))).toEqual([403, "doer should be the site admin or be same as the contextUser"]);
    expect(outcome(() => reqSelfOrAdmin(null, { id: 3 }))).toEqual([403, "doer should be the site admin or be same as the contextUser"]);
  });

  it("reqPublicOwner: a public-only token reaches public users and organizations only, with Gitea's message per kind", () => {
    const po = caller({ publicOnly: true });
    expect(outcome(() => reqPublicOwner(po, { type: 0, visibility: 0 }))).toBe("pass");
    expect(outcome(() => reqPublicOwner(caller(), { type: 1, visibility: 2 }))).toBe("pass");
    expect(outcome(() => reqPublicOwner(null, { type: 1, visibility: 2 }))).toBe("pass");
    expect(outcome(() => reqPublicOwner(po, { type: 0, visibility: 1 }))).toEqual([403, "token scope is limited to public users"]);
    expect(outcome(() => reqPublicOwner(po, { type: 1, visibility: 2 }))).toEqual([403, "token scope is limited to public orgs"]);
  });
});
