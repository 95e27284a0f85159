/**
 * Organization webhooks (Gitea routers/api/v1/org/hook.go, utils/hook.go): management only.
 * Secrets (HMAC secret, Authorization header) are encrypted at rest and write-only: no answer ever
 * contains them (GHSA-3r5c-2xxx-h872). Targets must pass [webhook] ALLOWED_HOST_LIST.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { webhook, type WebhookRow } from "../db/schema.ts";
import { isoTime } from "../convert/user.ts";
import { readWithCaller, writeBatch, type Ctx } from "../lib/context.ts";
import { encryptSecret } from "../lib/crypto.ts";
import { ApiError, badRequest, notFound, unprocessable } from "../lib/errors.ts";
import { reqOrgOwnership } from "../lib/guards.ts";
import { isAllowedHost } from "../lib/hosts.ts";
import type { Page } from "../lib/pagination.ts";
import { userVisibleSql } from "../lib/auth.ts";
import { col } from "../db/client.ts";
import { user } from "../db/schema.ts";
import { isOrgOwnerSql } from "../db/queries/accounts.ts";
import { nowUnix } from "./common.ts";

export const HOOK_TYPES = ["gitea", "gogs", "slack", "discord", "dingtalk", "telegram", "msteams", "feishu", "matrix", "wechatwork", "packagist"];
/** Event names accepted on input (Gitea's HookEvents); `*_only` forms are stored under their base name. */
const EVENTS = new Set([
  "create", "delete", "fork", "push", "issues", "issues_only", "issue_assign", "issue_label", "issue_milestone", "issue_comment",
  "pull_request", "pull_request_only", "pull_request_assign", "pull_request_label", "pull_request_milestone", "pull_request_comment",
  "pull_request_review", "pull_request_review_request", "pull_request_sync", "wiki", "repository", "release", "package", "status",
  "workflow_run", "workflow_job",
]);

export interface HookForm {
  type?: string;
  name?: string;
  config?: Record<string, string>;
  events?: string[];
  branch_filter?: string;
  authorization_header?: string;
  active?: boolean;
}

/** Gitea's Hook JSON without the secrets: config has url and content_type (and slack's meta). */
export function toHook(h: WebhookRow) {
  const meta = JSON.parse(h.meta || "{}") as Record<string, string>;
  return {
    id: h.id,
    type: h.type,
    name: h.name,
    branch_filter: h.branchFilter,
    config: { url: h.url, content_type: h.contentType, ...meta },
    events: JSON.parse(h.events) as string[],
    authorization_header: "",
    active: h.isActive,
    updated_at: isoTime(h.updatedUnix),
    created_at: isoTime(h.createdUnix),
  };
}

const normEvents = (events: string[] | undefined) => {
  const out = [...new Set((events ?? []).map((e) => e.trim().toLowerCase().replace(/_only$/, "")).filter((e) => EVENTS.has(e) || EVENTS.has(`${e}_only`)))];
  return out.length ? out : ["push"];
};

const globOk = (g: string) => {
  // Gitea's GlobPattern binding: a brace-balanced glob.
  let depth = 0;
  for (const ch of g) {
    if (ch === "{") depth++;
    if (ch === "}" && --depth < 0) return false;
  }
  return depth === 0;
};

function checkTarget(ctx: Ctx, url: string) {
  let ok = false;
  try {
    const u = new URL(url);
    ok = (u.protocol === "http:" || u.protocol === "https:") && !!u.hostname;
  } catch {
    ok = false;
  }
  if (!ok) throw unprocessable("Invalid url");
  if (!isAllowedHost(url, ctx.settings.webhook.allowedHostList)) throw unprocessable(`webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deliver to ${new URL(url).host} is blocked`);
}

async function seal(ctx: Ctx, value: string) {
  if (!value) return "";
  const key = ctx.settings.security.secretKey;
  if (!key) throw new ApiError(500, "[security] SECRET_KEY is not configured: secrets cannot be stored");
  return encryptSecret(key, value);
}

/** The org in the path: visible (else 404) and owned by the caller (else 403). */
function orgFacts(ctx: Ctx, name: string) {
  return ctx.db
    .select({ org: user, visible: sql<number>`${userVisibleSql(ctx.viewer, col(user.id), col(user.visibility), "org")}`, isOwner: sql<number>`${isOrgOwnerSql(col(user.id), ctx.viewer.id)}` })
    .from(user)
    .where(and(eq(user.lowerName, name.toLowerCase()), eq(user.type, 1)))
    .limit(1);
}
const orgIdSql = (name: string) => sql`(SELECT id FROM user WHERE lower_name = ${name.toLowerCase()} AND type = 1)`;

async function assignOwnedOrg<T extends readonly unknown[]>(ctx: Ctx, name: string, extra: T) {
  const { caller, rows } = await readWithCaller(ctx, [orgFacts(ctx, name), ...(extra as unknown as [])] as never);
  const all = rows as unknown as unknown[][];
  const o = (all[0] as { org: typeof user.$inferSelect; visible: number; isOwner: number }[])[0];
  if (!o || !o.visible) throw notFound();
  reqOrgOwnership(caller, o);
  return { org: o.org, rows: all.slice(1) };
}

const hookOf = (ctx: Ctx, orgName: string, id: number) => ctx.db.select().from(webhook).where(and(eq(webhook.id, id), sql`${col(webhook.ownerId)} = ${orgIdSql(orgName)}`, eq(webhook.repoId, 0))).limit(1);

/** GET /orgs/{org}/hooks (orgListHooks). */
export async function listHooks(ctx: Ctx, orgName: string, page: Page) {
  const where = and(sql`${col(webhook.ownerId)} = ${orgIdSql(orgName)}`, eq(webhook.repoId, 0));
  const { rows } = await assignOwnedOrg(ctx, orgName, [
    ctx.db.select().from(webhook).where(where).orderBy(asc(webhook.id)).limit(page.limit).offset(page.offset),
    ctx.db.select({ n: count() }).from(webhook).where(where),
  ] as const);
  return { total: (rows[1] as { n: number }[])[0]?.n ?? 0, hooks: (rows[0] as WebhookRow[]).map(toHook) };
}

/** GET /orgs/{org}/hooks/{id} (orgGetHook): a hook of another org answers like a missing one. */
export async function getHook(ctx: Ctx, orgName: string, id: number) {
  const { rows } = await assignOwnedOrg(ctx, orgName, [hookOf(ctx, orgName, id)] as const);
  const h = (rows[0] as WebhookRow[])[0];
  if (!h) throw notFound();
  return toHook(h);
}

/** POST /orgs/{org}/hooks (orgCreateHook): the create body is validated before creation. */
export async function createHook(ctx: Ctx, orgName: string, form: HookForm) {
  const { org } = await assignOwnedOrg(ctx, orgName, [] as const);
  const type = (form.type ?? "").toLowerCase();
  if (!HOOK_TYPES.includes(type)) throw unprocessable(`Invalid hook type: ${form.type ?? ""}`);
  const cfg = form.config ?? {};
  for (const k of ["url", "content_type"]) if (!cfg[k]) throw unprocessable(`Missing config option: ${k}`);
  if (cfg.content_type !== "json" && cfg.content_type !== "form") throw unprocessable("Invalid content type");
  checkTarget(ctx, cfg.url);
  const meta: Record<string, string> = {};
  if (type === "slack") {
    if (!cfg.channel) throw unprocessable("Missing config option: channel");
    if (!/^[#@]?[\w.-]+$/.test(cfg.channel.trim())) throw badRequest("Invalid slack channel name");
    meta.channel = cfg.channel.trim();
    for (const k of ["username", "icon_url", "color"]) if (cfg[k]) meta[k] = cfg[k];
  }
  if (form.branch_filter && !globOk(form.branch_filter)) throw unprocessable("[BranchFilter]: GlobPattern");
  const now = nowUnix();
  const res = await writeBatch(ctx, [
    ctx.db
      .insert(webhook)
      .values({
        ownerId: org.id,
        repoId: 0,
        type,
        name: form.name ?? "",
        url: cfg.url,
        contentType: cfg.content_type,
        secretEnc: await seal(ctx, cfg.secret ?? ""),
        authHeaderEnc: await seal(ctx, form.authorization_header ?? ""),
        events: JSON.stringify(normEvents(form.events)),
        branchFilter: form.branch_filter ?? "",
        meta: JSON.stringify(meta),
        isActive: form.active ?? false,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning(),
  ] as const);
  return toHook(res[0][0]);
}

/** PATCH /orgs/{org}/hooks/{id} (orgEditHook): present fields replace; secrets stay write-only. */
export async function editHook(ctx: Ctx, orgName: string, id: number, form: HookForm) {
  const { rows } = await assignOwnedOrg(ctx, orgName, [hookOf(ctx, orgName, id)] as const);
  const h = (rows[0] as WebhookRow[])[0];
  if (!h) throw notFound();
  const patch: Partial<typeof webhook.$inferInsert> = { updatedUnix: nowUnix() };
  const cfg = form.config ?? {};
  if (cfg.url !== undefined) {
    checkTarget(ctx, cfg.url);
    patch.url = cfg.url;
  }
  if (cfg.content_type !== undefined) {
    if (cfg.content_type !== "json" && cfg.content_type !== "form") throw unprocessable("Invalid content type");
    patch.contentType = cfg.content_type;
  }
  if (cfg.secret !== undefined) patch.secretEnc = await seal(ctx, cfg.secret);
  if (h.type === "slack") {
    const meta = JSON.parse(h.meta || "{}") as Record<string, string>;
    if (cfg.channel !== undefined) {
      if (!/^[#@]?[\w.-]+$/.test(cfg.channel.trim())) throw badRequest("Invalid slack channel name");
      meta.channel = cfg.channel.trim();
    }
    for (const k of ["username", "icon_url", "color"]) if (cfg[k] !== undefined) meta[k] = cfg[k];
    patch.meta = JSON.stringify(meta);
  }
  if (form.events !== undefined) patch.events = JSON.stringify(normEvents(form.events));
  if (form.branch_filter !== undefined) {
    if (form.branch_filter && !globOk(form.branch_filter)) throw unprocessable("[BranchFilter]: GlobPattern");
    patch.branchFilter = form.branch_filter;
  }
  if (form.authorization_header !== undefined) patch.authHeaderEnc = await seal(ctx, form.authorization_header);
  if (form.active !== undefined) patch.isActive = form.active;
  if (form.name !== undefined) patch.name = form.name;
  const res = await writeBatch(ctx, [ctx.db.update(webhook).set(patch).where(eq(webhook.id, h.id)).returning()] as const);
  return toHook(res[0][0]);
}

/** DELETE /orgs/{org}/hooks/{id} (orgDeleteHook): 404 when the hook does not exist (in this org). */
export async function deleteHook(ctx: Ctx, orgName: string, id: number) {
  const { rows } = await assignOwnedOrg(ctx, orgName, [hookOf(ctx, orgName, id)] as const);
  const h = (rows[0] as WebhookRow[])[0];
  if (!h) throw notFound();
  await writeBatch(ctx, [ctx.db.delete(webhook).where(eq(webhook.id, h.id))] as const);
}
