/** Activity feeds (Gitea models/activities GetFeeds): entries the caller may see, filtered to one repository. */
import { accountByName } from "../db/queries/accounts.ts";
import { orgFeed, repoFeed, userFeed, type FeedRow } from "../db/queries/feeds.ts";
import { repoPath, type ListedRepo, withParents } from "../db/queries/repos.ts";
import { isoTime, toUser } from "../convert/user.ts";
import type { Caller } from "../lib/auth.ts";
import { read, type Ctx } from "../lib/context.ts";
import { notFound } from "../lib/errors.ts";
import type { Page } from "../lib/pagination.ts";
import { site, viewerOf } from "./common.ts";
import { assignRepo, listedRepoJson, repoJson, withParent } from "./repos.ts";
import { OP_NAMES } from "../events/index.ts";
import { codeDisabledArg } from "../lib/permissions.ts";

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

/** The values of a feed page: its limits and, with a valid `date`, the day's range. */
export function pageValues(ctx: Ctx, date: string | undefined, page: Page) {
  const range = dayRange(date);
  const codeDisabled = codeDisabledArg(ctx.settings.repository.disabledRepoUnits);
  return { limit: page.limit, offset: page.offset, codeDisabled, ...(range ? { dayStart: range[0], dayEnd: range[1] } : {}), day: range !== null };
}

/** GET /repos/{owner}/{repo}/activities/feeds (repoListActivityFeeds). */
export async function repoFeeds(ctx: Ctx, owner: string, name: string, date: string | undefined, page: Page) {
  const { day, ...values } = pageValues(ctx, date, page);
  const st = repoFeed(day);
  const path = repoPath(owner, name);
  const a = await assignRepo(ctx, owner, name, { actions: st.actions.bind({ ...ctx.vv, ...path, ...values }), total: st.total.bind({ ...ctx.vv, ...path, ...values }) }, { withParent: true });
  const repo = repoJson(ctx, a.caller, withParent(ctx, a.caller, a.view, a.parent));
  return feedJson(ctx, a.caller, a.named.actions, a.named.total[0] ?? 0, () => repo);
}

/** Gitea's Activity JSON of feed rows, each with its repository's JSON (`repoOf`). */
function feedJson(ctx: Ctx, caller: Caller | null, rows: readonly FeedRow[], total: number, repoOf: (repoId: number) => unknown) {
  const viewer = viewerOf(caller);
  const feeds = rows.map(({ a, actUser }) => ({
    id: a.id,
    user_id: a.userId,
    op_type: OP_NAMES[a.opType] ?? String(a.opType),
    act_user_id: a.actUserId,
    act_user: toUser(actUser, viewer, site(ctx)),
    repo_id: a.repoId,
    repo: repoOf(a.repoId),
    comment_id: a.commentId,
    comment: null,
    ref_name: a.refName,
    is_private: a.isPrivate,
    content: a.content,
    created: isoTime(a.createdUnix),
  }));
  return { total, feeds };
}

/** Gitea's Activity JSON of a feed page: its actions, their count, and their repositories' facts. */
export function feedPage(ctx: Ctx, caller: Caller | null, actions: readonly FeedRow[], total: number, listed: readonly ListedRepo[]) {
  const pool = new Map(listed.map((r) => [r.facts.repo.id, r]));
  const repos = new Map(withParents(listed, pool).map((r) => [r.facts.repo.id, listedRepoJson(ctx, caller, r)]));
  return feedJson(ctx, caller, actions, total, (id) => repos.get(id) ?? null);
}

/** GET /users/{username}/activities/feeds (userListActivityFeeds): private entries only for the user and admins. */
export async function userFeeds(ctx: Ctx, username: string, onlyPerformedBy: boolean, date: string | undefined, page: Page) {
  const { day, ...values } = pageValues(ctx, date, page);
  const st = userFeed({ performedBy: onlyPerformedBy, day });
  const v = { ...ctx.vv, name: username.toLowerCase(), ...values };
  const { caller, account, actions, total, repos } = await read(ctx, { account: accountByName.bind(v), actions: st.actions.bind(v), total: st.total.bind(v), repos: st.repos.bind(v) });
  const o = account[0];
  if (!o || !o.visible) throw notFound();
  return feedPage(ctx, caller, actions, total[0] ?? 0, repos);
}

/** GET /orgs/{org}/activities/feeds (orgListActivityFeeds): private entries for members and admins. */
export async function orgFeeds(ctx: Ctx, orgName: string, date: string | undefined, page: Page) {
  const { day, ...values } = pageValues(ctx, date, page);
  const st = orgFeed(day);
  const v = { ...ctx.vv, name: orgName.toLowerCase(), ...values };
  const { caller, account, actions, total, repos } = await read(ctx, { account: accountByName.bind(v), actions: st.actions.bind(v), total: st.total.bind(v), repos: st.repos.bind(v) });
  const o = account[0];
  if (!o || !o.visible || o.u.type !== 1) throw notFound();
  return feedPage(ctx, caller, actions, total[0] ?? 0, repos);
}
