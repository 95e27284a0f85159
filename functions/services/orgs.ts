/** Organizations, membership and blocks (Gitea routers/api/v1/org, shared/block.go). */
import { uniqueViolation } from "../db/client.ts";
import { accountByNameForWrite, orgByName, updateAccount, userById, userExists, type OrgSeen } from "../db/queries/accounts.ts";
import { forkVisibilityOfOwner } from "../db/queries/forks.ts";
import {
  BLOCKS,
  BLOCK_USER,
  CREATE_ORG,
  DELETE_ORG,
  isMemberOfOrg,
  memberCountOfOrg,
  memberOfOrg,
  memberOfOrgForWrite,
  membersOfOrg,
  myOrgCount,
  myOrgs,
  REMOVE_MEMBER,
  repoCountOfOrg,
  unblockUser as unblockUserCmd,
} from "../db/queries/orgs.ts";
import type { UserRow } from "../db/schema.ts";
import { only, patchKeys } from "../db/sql.ts";
import { toOrganization, toUser, visibilityCode } from "../convert/user.ts";
import type { Caller } from "../lib/auth.ts";
import { read, write, type BindGuard, type Ctx } from "../lib/context.ts";
import { badRequest, forbidden, notFound, unprocessable } from "../lib/errors.ts";
import { reqOrgOwnership } from "../lib/guards.ts";
import type { Page } from "../lib/pagination.ts";
import type { CreateOrgOption, EditOrgOption } from "../wire/user.ts";
import { checkUsableUsername, isGuardTrip, nowUnix, site, viewerOf } from "./common.ts";

/** The org in the path with the viewer's relation to it, for the route's read. */
export const orgRead = (ctx: Ctx, name: string) => orgByName.bind({ ...ctx.vv, name: name.toLowerCase() });

/** orgAssignment: the organization must exist and be visible to the viewer, else 404. */
function assignOrg(found: readonly OrgSeen[]): OrgSeen {
  const o = found[0];
  if (!o || !o.visible) throw notFound();
  return o;
}

/** The org in the path must be visible (else 404) and owned by the caller (else 403): reqOrgOwnership. */
export function assignOwnedOrg(caller: Caller | null, found: readonly OrgSeen[]): UserRow {
  const o = assignOrg(found);
  reqOrgOwnership(caller, o);
  return o.org;
}

/** reqOrgOwnership before the body is bound (orgEdit, the hook writes). */
export const orgOwnerGuard: BindGuard = async (ctx, params) => {
  const { caller, o } = await read(ctx, { o: orgRead(ctx, params.org ?? "") });
  assignOwnedOrg(caller, o);
};

/** POST /orgs (orgCreate): the org, its Owners team (all units at owner), the creator in it. */
export async function createOrg(ctx: Ctx, form: CreateOrgOption) {
  const { caller } = await read(ctx, {});
  const me = caller!;
  if (!me.isAdmin && !me.row.allowCreateOrganization) throw forbidden("Create organization not allowed");
  checkUsableUsername(form.username);
  const lowerName = form.username.toLowerCase();
  const now = nowUnix();
  const org = {
    name: form.username,
    lowerName,
    fullName: form.full_name ?? "",
    email: form.email ?? "",
    description: form.description ?? "",
    website: form.website ?? "",
    location: form.location ?? "",
    visibility: visibilityCode(form.visibility || "public"),
    repoAdminChangeTeamAccess: form.repo_admin_change_team_access ?? false,
    createdUnix: now,
    updatedUnix: now,
  };
  try {
    const { row } = await write(
      ctx,
      [
        userExists.bind({ uid: me.id }),
        CREATE_ORG.org.bind(org),
        CREATE_ORG.owners.bind({ lowerName, now }),
        CREATE_ORG.ownerUnits.bind({ lowerName }),
        CREATE_ORG.ownerMember.bind({ lowerName, uid: me.id }),
        CREATE_ORG.member.bind({ lowerName, uid: me.id }),
      ],
      { row: CREATE_ORG.row.bind({ lowerName }) },
    );
    return toOrganization(only(row, "createdOrg"), site(ctx));
  } catch (err) {
    if (uniqueViolation(err)?.includes("user.lower_name")) throw unprocessable(`user already exists [name: ${form.username}]`);
    throw err;
  }
}

/** GET /orgs/{org} (orgGet). */
export async function getOrg(ctx: Ctx, name: string) {
  const { caller, o } = await read(ctx, { o: orgRead(ctx, name) });
  // Gitea's org.Get: the organization's e-mail is for signed-in callers only
  return toOrganization(assignOrg(o).org, site(ctx), { email: caller !== null });
}

/** PATCH /orgs/{org} (orgEdit): owners only; present fields only. */
export async function editOrg(ctx: Ctx, name: string, form: EditOrgOption) {
  const { caller, o: found } = await read(ctx, { o: orgRead(ctx, name) });
  const o = assignOrg(found);
  reqOrgOwnership(caller, o);
  const patch: Partial<UserRow> = { updatedUnix: nowUnix() };
  if (form.full_name !== undefined) patch.fullName = form.full_name;
  if (form.email !== undefined) patch.email = form.email;
  if (form.description !== undefined) patch.description = form.description;
  if (form.website !== undefined) patch.website = form.website;
  if (form.location !== undefined) patch.location = form.location;
  if (form.visibility) patch.visibility = visibilityCode(form.visibility);
  if (form.repo_admin_change_team_access !== undefined) patch.repoAdminChangeTeamAccess = form.repo_admin_change_team_access;
  const visibilityChanged = patch.visibility !== undefined && patch.visibility !== o.org.visibility;
  const id = o.org.id;
  const { row } = await write(
    ctx,
    [
      updateAccount(patchKeys(patch)).bind({ ...patch, id }),
      // Forks of the org's repositories follow the owner's visibility (issue 8 A.4).
      ...(visibilityChanged ? forkVisibilityOfOwner.map((s) => s.bind({ ownerId: id })) : []),
    ],
    { row: userById.bind({ id }) },
  );
  // Another request may have deleted the organization since it was read: the update changed nothing.
  const updated = row[0];
  if (!updated) throw notFound();
  return toOrganization(updated, site(ctx));
}

/** DELETE /orgs/{org} (orgDelete): owners only; removes teams, memberships and blocks with it. */
export async function deleteOrg(ctx: Ctx, name: string) {
  const { caller, o: found, repos } = await read(ctx, { o: orgRead(ctx, name), repos: repoCountOfOrg.bind({ org: name.toLowerCase() }) });
  const o = assignOrg(found);
  reqOrgOwnership(caller, o);
  // As Gitea: an organization that still owns repositories is not deleted — also one that got a
  // repository after the read (the batch's guard). Gitea's text; its status is a 500.
  const owns = unprocessable(`user still has ownership of repositories [uid: ${o.org.id}]`);
  if ((repos[0] ?? 0) > 0) throw owns;
  try {
    await write(
      ctx,
      DELETE_ORG.map((s) => s.bind({ id: o.org.id })),
    );
  } catch (err) {
    if (isGuardTrip(err)) throw owns;
    throw err;
  }
}

/** GET /user/orgs (orgListCurrentUserOrgs): a public-only token sees public organizations only. */
export async function listMyOrgs(ctx: Ctx, page: Page) {
  const { orgs, total } = await read(ctx, { orgs: myOrgs.bind({ ...ctx.vv, limit: page.limit, offset: page.offset }), total: myOrgCount.bind(ctx.vv) });
  return { total: total[0] ?? 0, orgs: orgs.map((o) => toOrganization(o, site(ctx))) };
}

/** GET /orgs/{org}/members (orgListMembers): non-members see public members only; never a user the caller may not see. */
export async function listMembers(ctx: Ctx, name: string, page: Page) {
  const org = name.toLowerCase();
  const { caller, o, members, total } = await read(ctx, {
    o: orgRead(ctx, name),
    members: membersOfOrg.bind({ ...ctx.vv, org, limit: page.limit, offset: page.offset }),
    total: memberCountOfOrg.bind({ ...ctx.vv, org }),
  });
  assignOrg(o);
  const viewer = viewerOf(caller);
  return { total: total[0] ?? 0, users: members.map((u) => toUser(u, viewer, site(ctx))) };
}

/** The org in the path and the membership facts of `username` in it (a user the viewer may not see is absent). */
const memberReads = (ctx: Ctx, orgName: string, username: string, forWrite = false) => ({
  o: orgRead(ctx, orgName),
  member: (forWrite ? memberOfOrgForWrite : memberOfOrg).bind({ ...ctx.vv, org: orgName.toLowerCase(), name: username.toLowerCase() }),
});

/** GET /orgs/{org}/members/{username} (orgIsMember): members and admins get 204/404; others are sent to public_members. */
export async function isMember(ctx: Ctx, orgName: string, username: string): Promise<{ status: 204 | 404 } | { redirect: string }> {
  const { caller, o: found, member } = await read(ctx, memberReads(ctx, orgName, username));
  const o = assignOrg(found);
  const target = member[0];
  if (!target) throw notFound();
  // members and site admins see concealed memberships — not through a public-only token, which reads public data only
  if (caller && !caller.publicOnly && (o.isMember || caller.isAdmin)) return { status: target.isMember ? 204 : 404 };
  if (caller && caller.id === target.u.id) return { status: 404 };
  return { redirect: `${ctx.rootUrl}api/v1/orgs/${encodeURIComponent(o.org.name)}/public_members/${encodeURIComponent(target.u.name)}` };
}

/** GET /orgs/{org}/public_members/{username} (orgIsPublicMember). */
export async function isPublicMember(ctx: Ctx, orgName: string, username: string) {
  const { o, member } = await read(ctx, memberReads(ctx, orgName, username));
  assignOrg(o);
  const target = member[0];
  if (!target || !target.isPublicMember) throw notFound();
}

/** DELETE /orgs/{org}/members/{username} (orgDeleteMember): owners only; the last owner stays. */
export async function deleteMember(ctx: Ctx, orgName: string, username: string) {
  const { caller, o: found, member } = await read(ctx, memberReads(ctx, orgName, username, true));
  const o = assignOrg(found);
  reqOrgOwnership(caller, o);
  const target = member[0];
  if (!target) throw notFound();
  if (!target.isMember) return;
  const uid = target.u.id;
  try {
    await write(
      ctx,
      REMOVE_MEMBER.map((s) => s.bind({ orgId: o.org.id, uid })),
    );
  } catch (err) {
    if (isGuardTrip(err)) throw unprocessable(`user is the last member of owner team [uid: ${uid}]`);
    throw err;
  }
}

// ---- blocks ----

/** The blocker: the caller (`/user/blocks`) or an organization the caller owns (`/orgs/{org}/blocks`). */
export type Blocker = { kind: "user" } | { kind: "org"; name: string };

/** The blocker's org (when it is one) must be visible and owned by the caller; the blocker's id. */
function blockerOf(caller: Caller | null, blocker: Blocker, found: readonly OrgSeen[]) {
  if (blocker.kind === "org") {
    const o = assignOrg(found);
    reqOrgOwnership(caller, o);
    return { caller: caller!, blockerId: o.org.id, blockerIsOrg: true };
  }
  return { caller: caller!, blockerId: caller!.id, blockerIsOrg: false };
}

/** The blocker's reads: its org (none for the caller) and what its statements bind. */
const blockerReads = (ctx: Ctx, blocker: Blocker) => ({
  o: blocker.kind === "org" ? [orgRead(ctx, blocker.name)] : [],
  values: { ...ctx.vv, org: blocker.kind === "org" ? blocker.name.toLowerCase() : "" },
});

/**
 * PUT …/blocks/{username} (userBlockUser / organizationBlockUser), as Gitea's BlockUser: an
 * organization cannot be blocked; the blocker itself, a member of the blocking organization and a
 * user already blocked are 400 "cannot block the user" (a second PUT is no note update).
 */
export async function blockUser(ctx: Ctx, blocker: Blocker, username: string, note: string) {
  const { o, values } = blockerReads(ctx, blocker);
  const name = username.toLowerCase();
  const out = await read(ctx, {
    ...(o.length ? { o: o[0], member: isMemberOfOrg.bind({ org: values.org, name }) } : {}),
    blockee: accountByNameForWrite.bind({ ...ctx.vv, name }),
    blocked: BLOCKS[blocker.kind].blocks.bind({ ...values, name }),
  });
  const { blockerId, blockerIsOrg } = blockerOf(out.caller, blocker, out.o ?? []);
  const blockee = out.blockee[0];
  if (!blockee || !blockee.visible) throw notFound();
  if (blockee.u.type === 1) throw badRequest("cannot block an organization");
  const cannot = badRequest("cannot block the user");
  if (blockee.u.id === blockerId || blockee.u.id === out.caller?.id) throw cannot;
  if ((out.blocked[0] ?? 0) > 0) throw cannot;
  if (blockerIsOrg && (out.member?.[0] ?? 0) > 0) throw cannot;
  const v = { blockerId, blockeeId: blockee.u.id, note, now: nowUnix() };
  try {
    await write(ctx, BLOCK_USER.map((c) => c.bind(v)));
  } catch (err) {
    // blocked by a request that landed since the read
    if (uniqueViolation(err)) throw cannot;
    throw err;
  }
}

/** DELETE …/blocks/{username}, as Gitea's UnblockUser: a user that is not blocked (or oneself) is 400 "cannot unblock the user". */
export async function unblockUser(ctx: Ctx, blocker: Blocker, username: string) {
  const { o, values } = blockerReads(ctx, blocker);
  const name = username.toLowerCase();
  const out = await read(ctx, {
    ...(o.length ? { o: o[0] } : {}),
    blockee: accountByNameForWrite.bind({ ...ctx.vv, name }),
    blocked: BLOCKS[blocker.kind].blocks.bind({ ...values, name }),
  });
  const { blockerId } = blockerOf(out.caller, blocker, out.o ?? []);
  const blockee = out.blockee[0];
  if (!blockee || !blockee.visible) throw notFound();
  if (blockee.u.type === 1) throw badRequest("cannot block an organization");
  if (blockee.u.id === out.caller?.id || (out.blocked[0] ?? 0) === 0) throw badRequest("cannot unblock the user");
  await write(ctx, [unblockUserCmd.bind({ blockerId, blockeeId: blockee.u.id })]);
}

/** GET …/blocks/{username}: 204 when blocked, else 404. */
export async function checkBlock(ctx: Ctx, blocker: Blocker, username: string) {
  const { o, values } = blockerReads(ctx, blocker);
  const out = await read(ctx, { ...(o.length ? { o: o[0] } : {}), blocked: BLOCKS[blocker.kind].blocks.bind({ ...values, name: username.toLowerCase() }) });
  blockerOf(out.caller, blocker, out.o ?? []);
  if (out.blocked.length === 0) throw notFound();
}

/** GET …/blocks: the blocked users, newest first. */
export async function listBlocks(ctx: Ctx, blocker: Blocker, page: Page) {
  const { o, values } = blockerReads(ctx, blocker);
  const st = BLOCKS[blocker.kind];
  const out = await read(ctx, {
    ...(o.length ? { o: o[0] } : {}),
    users: st.list.bind({ ...values, limit: page.limit, offset: page.offset }),
    total: st.count.bind(values),
  });
  const { caller } = blockerOf(out.caller, blocker, out.o ?? []);
  const viewer = viewerOf(caller);
  return { total: out.total[0] ?? 0, users: out.users.map((u) => toUser(u, viewer, site(ctx))) };
}
