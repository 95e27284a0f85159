/** Activity feeds (Gitea models/activities GetFeeds): entries the caller may see, filtered to one repository. */
import { and, count, desc, eq, sql } from "drizzle-orm";
import { col } from "../db/client.ts";
import { action, user, type UserRow } from "../db/schema.ts";
import { isoTime, toUser } from "../convert/user.ts";
import type { Ctx } from "../lib/context.ts";
import { unprocessable } from "../lib/errors.ts";
import type { Page } from "../lib/pagination.ts";
import { site, viewerOf } from "./common.ts";
import { assignRepo, OP_NAMES, repoIdByPath, repoJson } from "./repos.ts";

/** `date` (YYYY-MM-DD) → [start, end) in unix seconds (UTC day). */
function dayRange(date: string | undefined): [number, number] | null {
  if (!date) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const start = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(start) || new Date(start).getUTCDate() !== Number(m[3])) throw unprocessable(`[Date]: invalid date "${date}"`);
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
