/** Activity feeds (Gitea models/activities GetFeeds): entries the caller may see, filtered to one repository. */
import { and, count, desc, eq, sql, type SQL } from "drizzle-orm";
import { col } from "../db/client.ts";
import { action, repository, user, type UserRow } from "../db/schema.ts";
import { isoTime, toUser } from "../convert/user.ts";
import { userVisibleSql, type Caller } from "../lib/auth.ts";
import { readWithCaller, type Ctx } from "../lib/context.ts";
import { parseUnits, repoAccessibleSql, repoFactsColumns, repoPermission, repoViewOf, type RepoFacts } from "../lib/permissions.ts";
import { isOrgMemberSql, ownerByName } from "../db/queries/accounts.ts";
import { notFound } from "../lib/errors.ts";
import type { Page } from "../lib/pagination.ts";
import { site, viewerOf } from "./common.ts";
import { assignRepo, repoIdByPath, repoJson } from "./repos.ts";
import { OP_NAMES } from "../events/index.ts";

/**
 * `date` (YYYY-MM-DD) → [start, end) in unix seconds (UTC day). A date that does not parse is
 * ignored, as Gitea's FeedDateCond logs it and applies no filter.
 */
function dayRange(date: string | undefined): [number, number] | null {
  if (!date) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const start = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(start) || new Date(start).getUTCDate() !== Number(m[3]) || new Date(start).getUTCMonth() !== Number(m[2]) - 1) return null;
  return [start / 1000, start / 1000 + 86400];
}

/** GET /repos/{owner}/{repo}/activities/feeds (repoListActivityFeeds). */
export async function repoFeeds(ctx: Ctx, owner: string, name: string, date: string | undefined, page: Page) {
  const range = dayRange(date);
  const rid = repoIdByPath(owner, name);
  // One row per action: the copy delivered to the repository owner.
  const where = and(
    sql`${col(action.repoId)} = ${rid}`,
    sql`${col(action.userId)} = (SELECT owner_id FROM repository WHERE id = ${rid})`,
    actorVisible(ctx),
    range ? sql`${col(action.createdUnix)} >= ${range[0]} AND ${col(action.createdUnix)} < ${range[1]}` : undefined,
  );
  const a = await assignRepo(ctx, owner, name, [
    ctx.db.select({ a: action, actUser: user }).from(action).innerJoin(user, eq(user.id, action.actUserId)).where(where).orderBy(desc(action.createdUnix), desc(action.id)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(action).where(where),
  ] as const);
  const viewer = viewerOf(a.caller);
  const repo = repoJson(ctx, a.caller, a.view);
  const rows = a.rows[0] as { a: typeof action.$inferSelect; actUser: UserRow }[];
  return {
    total: (a.rows[1] as { n: number }[])[0]?.n ?? 0,
    feeds: rows.map(({ a: act, actUser }) => ({
      id: act.id,
      user_id: act.userId,
      op_type: OP_NAMES[act.opType] ?? String(act.opType),
      act_user_id: act.actUserId,
      act_user: toUser(actUser, viewer, site(ctx)),
      repo_id: act.repoId,
      repo,
      comment_id: act.commentId,
      comment: null,
      ref_name: act.refName,
      is_private: act.isPrivate,
      content: act.content,
      created: isoTime(act.createdUnix),
    })),
  };
}

/**
 * SQL: the action's actor may appear to the viewer (Gitea's ActivityQueryCondition): site admins see
 * every actor; others see public and limited actors, themselves, and `also` (the organization of an
 * org feed, the organizations of the user of a user feed) — and never an account they may not see.
 */
export function actorVisible(ctx: Ctx, also?: SQL): SQL {
  const v = ctx.viewer;
  const gitea = sql`(CASE WHEN ${v.id} IS NULL THEN au.visibility = 0
    ELSE (${v.isAdmin} OR au.visibility IN (0, 1) OR au.id = ${v.id}${also ? sql` OR ${also}` : sql``}) END)`;
  return sql`EXISTS (SELECT 1 FROM user au WHERE au.id = ${col(action.actUserId)} AND ${gitea} AND ${userVisibleSql(v, sql`au.id`, sql`au.visibility`, sql`au.type`)})`;
}

/**
 * SQL: the viewer may access the repository of this activity row (the filter every feed applies) —
 * checked per row through the primary key, never by listing every accessible repository.
 */
export const accessibleRepo = (ctx: Ctx, repoId: SQL) =>
  sql`EXISTS (SELECT 1 FROM repository r WHERE r.id = ${repoId} AND ${repoAccessibleSql(ctx.viewer, sql`r.id`, sql`r.owner_id`, sql`r.is_private`)})`;

/** SQL: the `date` day filter on action rows. */
export const dayFilter = (date: string | undefined) => {
  const range = dayRange(date);
  return range ? sql`${col(action.createdUnix)} >= ${range[0]} AND ${col(action.createdUnix)} < ${range[1]}` : undefined;
};

/** The three reads of a feed page: the actions with their actors, the count, and their repositories' facts. */
export function feedReads(ctx: Ctx, where: SQL, page: Page) {
  return [
    ctx.db.select({ a: action, actUser: user }).from(action).innerJoin(user, eq(user.id, action.actUserId)).where(where).orderBy(desc(action.createdUnix), desc(action.id)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(action).where(where),
    ctx.db
      .select(repoFactsColumns(ctx.viewer))
      .from(repository)
      .innerJoin(user, eq(user.id, repository.ownerId))
      .where(sql`${col(repository.id)} IN (SELECT repo_id FROM action WHERE ${where} ORDER BY created_unix DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset})`),
  ] as const;
}

/** Gitea's Activity JSON for the rows `feedReads` returned. */
export function renderFeeds(ctx: Ctx, caller: Caller | null, rows: readonly unknown[][]) {
  const viewer = viewerOf(caller);
  const disabled = ctx.settings.repository.disabledRepoUnits;
  const repos = new Map(
    (rows[2] as RepoFacts[]).map((f) => {
      return [f.repo.id, repoJson(ctx, caller, repoViewOf(caller, f, disabled))];
    }),
  );
  const feeds = (rows[0] as { a: typeof action.$inferSelect; actUser: UserRow }[]).map(({ a, actUser }) => ({
    id: a.id,
    user_id: a.userId,
    op_type: OP_NAMES[a.opType] ?? String(a.opType),
    act_user_id: a.actUserId,
    act_user: toUser(actUser, viewer, site(ctx)),
    repo_id: a.repoId,
    repo: repos.get(a.repoId) ?? null,
    comment_id: a.commentId,
    comment: null,
    ref_name: a.refName,
    is_private: a.isPrivate,
    content: a.content,
    created: isoTime(a.createdUnix),
  }));
  return { total: (rows[1] as { n: number }[])[0]?.n ?? 0, feeds };
}

/** GET /users/{username}/activities/feeds (userListActivityFeeds): private entries only for the user and admins. */
export async function userFeeds(ctx: Ctx, username: string, onlyPerformedBy: boolean, date: string | undefined, page: Page) {
  const uid = sql`(SELECT id FROM user WHERE lower_name = ${username.toLowerCase()})`;
  const where = and(
    sql`${col(action.userId)} = ${uid}`,
    accessibleRepo(ctx, col(action.repoId)),
    sql`(${col(action.isPrivate)} = 0 OR ${ctx.viewer.isAdmin} OR ${uid} = ${ctx.viewer.id})`,
    actorVisible(ctx, sql`(au.type = 1 AND au.id IN (SELECT org_id FROM team_user WHERE uid = ${uid}))`),
    onlyPerformedBy ? sql`${col(action.actUserId)} = ${uid}` : undefined,
    dayFilter(date),
  )!;
  const { caller, rows } = await readWithCaller(ctx, [ownerByName(ctx, username), ...feedReads(ctx, where, page)] as const);
  const o = rows[0][0];
  if (!o || !o.visible) throw notFound();
  return renderFeeds(ctx, caller, rows.slice(1) as unknown as unknown[][]);
}

/** GET /orgs/{org}/activities/feeds (orgListActivityFeeds): private entries for members and admins. */
export async function orgFeeds(ctx: Ctx, orgName: string, date: string | undefined, page: Page) {
  const oid = sql`(SELECT id FROM user WHERE lower_name = ${orgName.toLowerCase()} AND type = 1)`;
  const where = and(
    sql`${col(action.userId)} = ${oid}`,
    accessibleRepo(ctx, col(action.repoId)),
    sql`(${col(action.isPrivate)} = 0 OR ${ctx.viewer.isAdmin} OR ${isOrgMemberSql(oid, ctx.viewer.id)})`,
    actorVisible(ctx, sql`au.id = ${oid}`),
    dayFilter(date),
  )!;
  const { caller, rows } = await readWithCaller(ctx, [ownerByName(ctx, orgName), ...feedReads(ctx, where, page)] as const);
  const o = rows[0][0];
  if (!o || !o.visible || o.u.type !== 1) throw notFound();
  return renderFeeds(ctx, caller, rows.slice(1) as unknown as unknown[][]);
}
