/**
 * The permission guards, one place, with Gitea's names (routers/api/v1/api.go): each takes what
 * the service already read (the caller and the repository permission, or the org/team facts) and
 * throws Gitea's refusal. Pure — no I/O; the one round trip that fetched the facts came before.
 *
 * Visibility comes first and is not here: a repository, organization or team the caller may not
 * see was already answered as missing (404) by the lookup, so these refusals (403) only ever reach
 * callers who may know the thing exists.
 */
import type { Caller } from "./auth.ts";
import { ApiError, forbidden, notFound } from "./errors.ts";
import { ACCESS, canRead, canWrite, hasAccess, isRepoAdmin, type Permission } from "./permissions.ts";

const siteAdmin = (caller: Caller | null) => !!caller?.isAdmin;

/** reqRepoReader(units…): read access to one of the units, repository admin or site admin. */
export function reqRepoReader(caller: Caller | null, perm: Permission, ...units: number[]) {
  if (units.some((u) => canRead(perm, u)) || isRepoAdmin(perm) || siteAdmin(caller)) return;
  throw forbidden("user should have specific read permission or be a repo admin or a site admin");
}

/** reqRepoWriter(units…): write access to one of the units, repository admin or site admin. */
export function reqRepoWriter(caller: Caller | null, perm: Permission, ...units: number[]) {
  if (units.some((u) => canWrite(perm, u)) || isRepoAdmin(perm) || siteAdmin(caller)) return;
  throw forbidden("user should have a permission to write to a repo");
}

/**
 * mustNotBeArchived, after reqRepoWriter on the routes that change git data (branches): an
 * archived repository answers 423 to its writers. Give reqRepoWriter `permissionIgnoringArchive`
 * there, as Gitea's permission does not know about archiving.
 */
export function mustNotBeArchived(repo: { isArchived: boolean }) {
  if (repo.isArchived) throw new ApiError(423, "repo is archived");
}

/** reqAnyRepoReader: any access to the repository, or site admin. */
export function reqAnyRepoReader(caller: Caller | null, perm: Permission) {
  if (hasAccess(perm) || siteAdmin(caller)) return;
  throw forbidden("user should have any permission to read repository or permissions of site admin");
}

/** reqAdmin: repository admin (owner, admin collaborator or admin team) or site admin. */
export function reqRepoAdmin(caller: Caller | null, perm: Permission) {
  if (isRepoAdmin(perm) || siteAdmin(caller)) return;
  throw forbidden("user should be an owner or a collaborator with admin write of a repository");
}

/** reqOwner: the repository's owner (or an owner of its organization) or site admin. */
export function reqRepoOwner(caller: Caller | null, perm: Permission) {
  if (perm.mode >= ACCESS.owner || siteAdmin(caller)) return;
  throw forbidden("user should be the owner of the repo");
}

/** reqOrgOwnership with the organization in the path: its owners and site admins. */
export function reqOrgOwnership(caller: Caller | null, org: { isOwner: unknown }) {
  if (siteAdmin(caller) || org.isOwner) return;
  throw forbidden("Must be an organization owner");
}

/** reqOrgMembership with the organization in the path: its members and site admins. */
export function reqOrgMembership(caller: Caller | null, org: { isMember: unknown }) {
  if (siteAdmin(caller) || org.isMember) return;
  throw forbidden("Must be an organization member");
}

/**
 * reqTeamMembership, the guard of every write under /teams/{id}: site admins, owners of the team's
 * organization and the team's members pass; other members of the organization get 403, everyone
 * else the answer for a missing team.
 */
export function reqTeamMembership(caller: Caller | null, team: { isOwner: unknown; isTeamMember: unknown; isOrgMember: unknown }) {
  if (siteAdmin(caller) || team.isOwner || team.isTeamMember) return;
  if (team.isOrgMember) throw forbidden("Must be a team member");
  throw notFound();
}

/** reqSelfOrAdmin: the caller is the user in the path, or a site admin. */
export function reqSelfOrAdmin(caller: Caller | null, target: { id: number }) {
  if (caller && (caller.isAdmin || caller.id === target.id)) return;
  throw forbidden("doer should be the site admin or be same as the contextUser");
}

/** checkTokenPublicOnly for a user or organization in the path. */
export function reqPublicOwner(caller: Caller | null, owner: { type: number; visibility: number }) {
  if (caller?.publicOnly && owner.visibility !== 0) {
    throw forbidden(owner.type === 1 ? "token scope is limited to public orgs" : "token scope is limited to public users");
  }
}

/**
 * A limited or private account does not exist for a public-only token — in the admin routes too,
 * where Gitea's checkTokenPublicOnly does not look (docs/api.md). Sudo applies the same rule (auth.ts).
 */
export function reqPublicAccount(caller: Caller | null, target: { visibility: number }) {
  if (caller?.publicOnly && target.visibility !== 0) throw notFound();
}
