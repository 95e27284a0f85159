/** Organizations, membership and blocks (Gitea routers/api/v1/org, shared/block.go). */
import { and, asc, count, eq, sql, type SQLWrapper } from "drizzle-orm";
import { col, uniqueViolation } from "../db/client.ts";
import { orgUser, repository, team, teamRepo, teamUnit, teamUser, user, userBlocking, webhook, type UserRow } from "../db/schema.ts";
import { toOrganization, toUser, visibilityCode } from "../convert/user.ts";
import { publicOnlyViewer, userVisibleSql, type ViewerSql } from "../lib/auth.ts";
import { readWithCaller, writeBatch, type Ctx } from "../lib/context.ts";
import { badRequest, forbidden, notFound, unprocessable } from "../lib/errors.ts";
import { reqOrgOwnership } from "../lib/guards.ts";
import type { Page } from "../lib/pagination.ts";
import type { CreateOrgOption, EditOrgOption } from "../wire/user.ts";
import { checkUsableUsername, guard, isGuardTrip, nowUnix, site, viewerOf } from "./common.ts";
import { forkVisibilityStatements } from "./visibility.ts";
import { isOrgMemberSql, isOrgOwnerSql, ownerByName } from "../db/queries/accounts.ts";

/** Access modes (Gitea models/perm). */
export const ACCESS = { none: 0, read: 1, write: 2, admin: 3, owner: 4 } as const;
/** Repository unit types 1–10 (Gitea models/unit): code … actions. */
export const UNIT_TYPES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;

const orgIdOf = (ctx: Ctx, name: string) => ctx.db.select({ id: user.id }).from(user).where(and(eq(user.lowerName, name.toLowerCase()), eq(user.type, 1)));


/** The org in the path with the viewer's relation to it, as one row. */
function orgWithViewer(ctx: Ctx, name: string) {
  const me = ctx.viewer.id;
  return ctx.db
    .select({
      org: user,
      visible: sql<number>`${userVisibleSql(ctx.viewer, col(user.id), col(user.visibility), "org")}`,
      isOwner: sql<number>`${isOrgOwnerSql(col(user.id), me)}`,
      isMember: sql<number>`${isOrgMemberSql(col(user.id), me)}`,
    })
    .from(user)
    .where(and(eq(user.lowerName, name.toLowerCase()), eq(user.type, 1)))
    .limit(1);
}

type OrgRow = Awaited<ReturnType<typeof orgWithViewer>>[number];

/** orgAssignment: the organization must exist and be visible to the viewer, else 404. */
function assignOrg(found: OrgRow | undefined): OrgRow {
  if (!found || !found.visible) throw notFound();
  return found;
}


/** POST /orgs (orgCreate): the org, its Owners team (all units at owner), the creator in it. */
export async function createOrg(ctx: Ctx, form: CreateOrgOption) {
  const { caller } = await readWithCaller(ctx, [] as const);
  const me = caller!;
  if (!me.isAdmin && !me.row.allowCreateOrganization) throw forbidden("Create organization not allowed");
  checkUsableUsername(form.username);
  const lower = form.username.toLowerCase();
  const orgId = sql`(SELECT id FROM user WHERE lower_name = ${lower} AND type = 1)`;
  const ownersId = sql`(SELECT id FROM team WHERE org_id = ${orgId} AND lower_name = 'owners')`;
  const now = nowUnix();
  try {
    const res = await writeBatch(ctx, [
      ctx.db.insert(user).values({
        name: form.username,
        lowerName: lower,
        fullName: form.full_name ?? "",
        email: form.email ?? "",
        description: form.description ?? "",
        website: form.website ?? "",
        location: form.location ?? "",
        type: 1,
        isActive: true,
        visibility: visibilityCode(form.visibility || "public"),
        repoAdminChangeTeamAccess: form.repo_admin_change_team_access ?? false,
        numTeams: 1,
        numMembers: 1,
        createdUnix: now,
        updatedUnix: now,
      }),
      ctx.db.insert(team).values({
        orgId,
        name: "Owners",
        lowerName: "owners",
        authorize: ACCESS.owner,
        numMembers: 1,
        includesAllRepositories: true,
        canCreateOrgRepo: true,
        createdUnix: now,
        updatedUnix: now,
      }),
      ctx.db.insert(teamUnit).values(UNIT_TYPES.map((type) => ({ orgId, teamId: ownersId, type, accessMode: ACCESS.owner }))),
      ctx.db.insert(teamUser).values({ orgId, teamId: ownersId, uid: me.id }),
      ctx.db.insert(orgUser).values({ orgId, uid: me.id, isPublic: false }),
      ctx.db.select().from(user).where(eq(user.id, orgId)),
    ] as const);
    return toOrganization(res[5][0], site(ctx));
  } catch (err) {
    if (uniqueViolation(err)?.includes("user.lower_name")) throw unprocessable(`user already exists [name: ${form.username}]`);
    throw err;
  }
}

/** GET /orgs/{org} (orgGet). */
export async function getOrg(ctx: Ctx, name: string) {
  const { rows } = await readWithCaller(ctx, [orgWithViewer(ctx, name)] as const);
  return toOrganization(assignOrg(rows[0][0]).org, site(ctx));
}

/** PATCH /orgs/{org} (orgEdit): owners only; present fields only. */
export async function editOrg(ctx: Ctx, name: string, form: EditOrgOption) {
  const { caller, rows } = await readWithCaller(ctx, [orgWithViewer(ctx, name)] as const);
  const o = assignOrg(rows[0][0]);
  reqOrgOwnership(caller, o);
  const patch: Partial<typeof user.$inferInsert> = { updatedUnix: nowUnix() };
  if (form.full_name !== undefined) patch.fullName = form.full_name;
  if (form.email !== undefined) patch.email = form.email;
  if (form.description !== undefined) patch.description = form.description;
  if (form.website !== undefined) patch.website = form.website;
  if (form.location !== undefined) patch.location = form.location;
  if (form.visibility) patch.visibility = visibilityCode(form.visibility);
  if (form.repo_admin_change_team_access !== undefined) patch.repoAdminChangeTeamAccess = form.repo_admin_change_team_access;
  const visibilityChanged = patch.visibility !== undefined && patch.visibility !== o.org.visibility;
  const res = await writeBatch(ctx, [
    ctx.db.update(user).set(patch).where(eq(user.id, o.org.id)),
    // Forks of the org's repositories follow the owner's visibility (issue 8 A.4).
    ...(visibilityChanged ? forkVisibilityStatements(ctx.db, sql`(SELECT id FROM repository WHERE owner_id = ${o.org.id})`) : []),
    ctx.db.select().from(user).where(eq(user.id, o.org.id)),
  ] as const);
  return toOrganization((res.at(-1) as UserRow[])[0], site(ctx));
}

/** DELETE /orgs/{org} (orgDelete): owners only; removes teams, memberships and blocks with it. */
export async function deleteOrg(ctx: Ctx, name: string) {
  const { caller, rows } = await readWithCaller(ctx, [
    orgWithViewer(ctx, name),
    ctx.db.select({ n: count() }).from(repository).where(eq(repository.ownerId, sql`(SELECT id FROM user WHERE lower_name = ${name.toLowerCase()} AND type = 1)`)),
  ] as const);
  const o = assignOrg(rows[0][0]);
  reqOrgOwnership(caller, o);
  // As Gitea: an organization that still owns repositories is not deleted.
  if ((rows[1][0]?.n ?? 0) > 0) throw unprocessable(`organization still owns repositories [uid: ${o.org.id}]`);
  const id = o.org.id;
  await writeBatch(ctx, [
    ctx.db.delete(teamUnit).where(eq(teamUnit.orgId, id)),
    ctx.db.delete(teamRepo).where(eq(teamRepo.orgId, id)),
    ctx.db.delete(teamUser).where(eq(teamUser.orgId, id)),
    ctx.db.delete(team).where(eq(team.orgId, id)),
    ctx.db.delete(orgUser).where(eq(orgUser.orgId, id)),
    ctx.db.delete(userBlocking).where(eq(userBlocking.blockerId, id)),
    ctx.db.delete(webhook).where(eq(webhook.ownerId, id)),
    // Issue 8 C.2: the org's feed, its labels and old repository names go with it.
    ctx.db.run(sql`DELETE FROM action WHERE user_id = ${id} OR act_user_id = ${id}`),
    ctx.db.run(sql`DELETE FROM label WHERE org_id = ${id}`),
    ctx.db.run(sql`DELETE FROM repo_redirect WHERE owner_id = ${id}`),
    ctx.db.delete(user).where(and(eq(user.id, id), eq(user.type, 1))),
  ] as const);
}

/** GET /user/orgs (orgListCurrentUserOrgs): a public-only token sees public organizations only. */
export async function listMyOrgs(ctx: Ctx, page: Page) {
  const where = and(
    eq(user.type, 1),
    sql`${col(user.id)} IN (SELECT org_id FROM org_user WHERE uid = ${ctx.viewer.id})`,
    sql`(${col(user.visibility)} = 0 OR NOT ${ctx.viewer.publicOnly})`,
  );
  const { rows } = await readWithCaller(ctx, [
    ctx.db.select().from(user).where(where).orderBy(asc(user.lowerName)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(user).where(where),
  ] as const);
  return { total: rows[1][0]?.n ?? 0, orgs: rows[0].map((o) => toOrganization(o, site(ctx))) };
}

/** GET /orgs/{org}/members (orgListMembers): non-members see public members only; never a user the caller may not see. */
export async function listMembers(ctx: Ctx, name: string, page: Page) {
  const me = ctx.viewer.id;
  const orgId = orgIdOf(ctx, name);
  const where = and(
    sql`${col(orgUser.orgId)} = (${orgId})`,
    sql`(${col(orgUser.isPublic)} = 1 OR ${ctx.viewer.isAdmin} OR ${isOrgMemberSql(sql`(${orgId})`, me)})`,
    sql`${col(orgUser.uid)} IN (SELECT mv.id FROM user mv WHERE ${userVisibleSql(ctx.viewer, sql`mv.id`, sql`mv.visibility`, "user")})`,
  );
  const { caller, rows } = await readWithCaller(ctx, [
    orgWithViewer(ctx, name),
    ctx.db.select({ u: user }).from(orgUser).innerJoin(user, eq(user.id, orgUser.uid)).where(where).orderBy(asc(user.lowerName)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(orgUser).where(where),
  ] as const);
  assignOrg(rows[0][0]);
  const viewer = viewerOf(caller);
  return { total: rows[2][0]?.n ?? 0, users: rows[1].map((r) => toUser(r.u, viewer, site(ctx))) };
}

/** Membership facts about `username` in the org, for the member routes; a user the viewer may not see is absent. */
export function memberFacts(ctx: Ctx, orgName: string, username: string, viewer: ViewerSql = ctx.viewer) {
  const orgId = sql`(${orgIdOf(ctx, orgName)})`;
  return ctx.db
    .select({
      u: user,
      isMember: sql<number>`${isOrgMemberSql(orgId, col(user.id))}`,
      isPublicMember: sql<number>`EXISTS (SELECT 1 FROM org_user p WHERE p.org_id = ${orgId} AND p.uid = ${col(user.id)} AND p.is_public = 1)`,
      isOwner: sql<number>`${isOrgOwnerSql(orgId, col(user.id))}`,
    })
    .from(user)
    .where(and(eq(user.lowerName, username.toLowerCase()), userVisibleSql(viewer, col(user.id), col(user.visibility), col(user.type))))
    .limit(1);
}

/** GET /orgs/{org}/members/{username} (orgIsMember): members and admins get 204/404; others are sent to public_members. */
export async function isMember(ctx: Ctx, orgName: string, username: string): Promise<{ status: 204 | 404 } | { redirect: string }> {
  const { caller, rows } = await readWithCaller(ctx, [orgWithViewer(ctx, orgName), memberFacts(ctx, orgName, username)] as const);
  const o = assignOrg(rows[0][0]);
  const target = rows[1][0];
  if (!target) throw notFound();
  if (caller && (o.isMember || caller.isAdmin)) return { status: target.isMember ? 204 : 404 };
  if (caller && caller.id === target.u.id) return { status: 404 };
  return { redirect: `${ctx.rootUrl}api/v1/orgs/${encodeURIComponent(o.org.name)}/public_members/${encodeURIComponent(target.u.name)}` };
}

/** GET /orgs/{org}/public_members/{username} (orgIsPublicMember). */
export async function isPublicMember(ctx: Ctx, orgName: string, username: string) {
  const { rows } = await readWithCaller(ctx, [orgWithViewer(ctx, orgName), memberFacts(ctx, orgName, username)] as const);
  assignOrg(rows[0][0]);
  const target = rows[1][0];
  if (!target || !target.isPublicMember) throw notFound();
}

/** DELETE /orgs/{org}/members/{username} (orgDeleteMember): owners only; the last owner stays. */
export async function deleteMember(ctx: Ctx, orgName: string, username: string) {
  const { caller, rows } = await readWithCaller(ctx, [orgWithViewer(ctx, orgName), memberFacts(ctx, orgName, username, publicOnlyViewer(ctx.viewer))] as const);
  const o = assignOrg(rows[0][0]);
  reqOrgOwnership(caller, o);
  const target = rows[1][0];
  if (!target) throw notFound();
  if (!target.isMember) return;
  const orgId = o.org.id;
  const uid = target.u.id;
  const lastOwner = sql`${isOrgOwnerSql(orgId, uid)} AND (SELECT COUNT(*) FROM team_user tu JOIN team t ON t.id = tu.team_id WHERE t.org_id = ${orgId} AND t.authorize = 4) <= 1`;
  try {
    await writeBatch(ctx, [
      guard(ctx.db, lastOwner),
      ctx.db.update(team).set({ numMembers: sql`${col(team.numMembers)} - 1` }).where(sql`${col(team.id)} IN (SELECT team_id FROM team_user WHERE uid = ${uid} AND org_id = ${orgId})`),
      ctx.db.delete(teamUser).where(and(eq(teamUser.orgId, orgId), eq(teamUser.uid, uid))),
      ctx.db.update(user).set({ numMembers: sql`${col(user.numMembers)} - 1` }).where(and(eq(user.id, orgId), sql`EXISTS (SELECT 1 FROM org_user WHERE org_id = ${orgId} AND uid = ${uid})`)),
      ctx.db.delete(orgUser).where(and(eq(orgUser.orgId, orgId), eq(orgUser.uid, uid))),
    ] as const);
  } catch (err) {
    if (isGuardTrip(err)) throw unprocessable(`user is the last member of owner team [uid: ${uid}]`);
    throw err;
  }
}

// ---- blocks ----

/** The blocker: the caller (`/user/blocks`) or an organization the caller owns (`/orgs/{org}/blocks`). */
export type Blocker = { kind: "user" } | { kind: "org"; name: string };

async function loadBlocker(ctx: Ctx, blocker: Blocker, extra: readonly unknown[]) {
  const reads = blocker.kind === "org" ? [orgWithViewer(ctx, blocker.name), ...extra] : extra;
  const { caller, rows } = await readWithCaller(ctx, reads as never);
  const all = rows as unknown as unknown[][];
  if (blocker.kind === "org") {
    const o = assignOrg(all[0][0] as OrgRow);
    reqOrgOwnership(caller, o);
    return { caller: caller!, blockerId: o.org.id, blockerIsOrg: true, rows: all.slice(1) };
  }
  return { caller: caller!, blockerId: caller!.id, blockerIsOrg: false, rows: all };
}

const blockerIdSql = (ctx: Ctx, blocker: Blocker) => (blocker.kind === "org" ? sql`(${orgIdOf(ctx, blocker.name)})` : ctx.viewer.id);

type Blockee = Awaited<ReturnType<typeof ownerByName>>[number];

/** PUT …/blocks/{username} (userBlockUser / organizationBlockUser): idempotent; note updated. */
export async function blockUser(ctx: Ctx, blocker: Blocker, username: string, note: string) {
  const bid = blockerIdSql(ctx, blocker);
  const { blockerId, blockerIsOrg, rows } = await loadBlocker(ctx, blocker, [
    ownerByName(ctx, username, publicOnlyViewer(ctx.viewer)),
    ctx.db.select({ n: count() }).from(orgUser).where(and(sql`${col(orgUser.orgId)} = ${bid}`, eq(orgUser.uid, sql`(SELECT id FROM user WHERE lower_name = ${username.toLowerCase()})`))),
  ]);
  const blockee = (rows[0] as Blockee[])[0];
  if (!blockee || !blockee.visible) throw notFound();
  if (blockee.u.id === blockerId) throw badRequest("user can not be blocked");
  if (blockee.u.type === 1) throw badRequest("cannot block an organization");
  if (blockerIsOrg && ((rows[1] as { n: number }[])[0]?.n ?? 0) > 0) throw badRequest("user can not be blocked");
  await writeBatch(ctx, [
    ctx.db
      .insert(userBlocking)
      .values({ blockerId, blockeeId: blockee.u.id, note, createdUnix: nowUnix() })
      .onConflictDoUpdate({ target: [userBlocking.blockerId, userBlocking.blockeeId], set: { note } }),
  ] as const);
}

/** DELETE …/blocks/{username}: idempotent; unblocking oneself is a 400 as in Gitea. */
export async function unblockUser(ctx: Ctx, blocker: Blocker, username: string) {
  const { blockerId, rows } = await loadBlocker(ctx, blocker, [ownerByName(ctx, username, publicOnlyViewer(ctx.viewer))]);
  const blockee = (rows[0] as Blockee[])[0];
  if (!blockee || !blockee.visible) throw notFound();
  if (blockee.u.id === blockerId) throw badRequest("user can not be unblocked");
  if (blockee.u.type === 1) throw badRequest("cannot block an organization");
  await writeBatch(ctx, [
    ctx.db.delete(userBlocking).where(and(eq(userBlocking.blockerId, blockerId), eq(userBlocking.blockeeId, blockee.u.id))),
  ] as const);
}

/** GET …/blocks/{username}: 204 when blocked, else 404. */
export async function checkBlock(ctx: Ctx, blocker: Blocker, username: string) {
  const bid = blockerIdSql(ctx, blocker);
  const { rows } = await loadBlocker(ctx, blocker, [
    ctx.db
      .select({ id: userBlocking.id })
      .from(userBlocking)
      .innerJoin(user, eq(user.id, userBlocking.blockeeId))
      .where(and(sql`${col(userBlocking.blockerId)} = ${bid}`, eq(user.lowerName, username.toLowerCase()), userVisibleSql(ctx.viewer, col(user.id), col(user.visibility), "user")))
      .limit(1),
  ]);
  if ((rows[0] as unknown[]).length === 0) throw notFound();
}

/** GET …/blocks: the blocked users, newest first. */
export async function listBlocks(ctx: Ctx, blocker: Blocker, page: Page) {
  const bid = blockerIdSql(ctx, blocker);
  const where = and(sql`${col(userBlocking.blockerId)} = ${bid}`, userVisibleSql(ctx.viewer, col(user.id), col(user.visibility), "user"));
  const { caller, rows } = await loadBlocker(ctx, blocker, [
    ctx.db.select({ u: user }).from(userBlocking).innerJoin(user, eq(user.id, userBlocking.blockeeId)).where(where).orderBy(sql`${col(userBlocking.id)} DESC`).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(userBlocking).innerJoin(user, eq(user.id, userBlocking.blockeeId)).where(where),
  ]);
  const viewer = viewerOf(caller);
  return {
    total: (rows[1] as { n: number }[])[0]?.n ?? 0,
    users: (rows[0] as { u: typeof user.$inferSelect }[]).map((r) => toUser(r.u, viewer, site(ctx))),
  };
}

