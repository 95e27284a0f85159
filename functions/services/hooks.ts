/**
 * Organization webhooks (Gitea routers/api/v1/org/hook.go, utils/hook.go): management only.
 * Secrets (HMAC secret, Authorization header) are encrypted at rest and write-only: no answer ever
 * contains them (GHSA-3r5c-2xxx-h872). Targets must pass [webhook] ALLOWED_HOST_LIST.
 */
import type { WebhookRow } from "../db/schema.ts";
import { deleteHook as deleteHookCmd, hookCountOfOrg, hookOfOrg, hookOwnerExists, hooksOfOrg, insertHook, updateHook, type HookValues } from "../db/queries/hooks.ts";
import { deleteTasksOfHook } from "../db/queries/hook-tasks.ts";
import { only, patchKeys, type Bound } from "../db/sql.ts";
import { isoTime } from "../convert/user.ts";
import { read, write, type Ctx } from "../lib/context.ts";
import { encryptSecret } from "../lib/crypto.ts";
import { ApiError, badRequest, notFound, unprocessable } from "../lib/errors.ts";
import { isAllowedHost } from "../lib/hosts.ts";
import { compileGlob } from "../lib/glob.ts";
import type { Page } from "../lib/pagination.ts";
import { nowUnix } from "./common.ts";
import { assignOwnedOrg, orgRead } from "./orgs.ts";

export const HOOK_TYPES = ["gitea", "gogs", "slack", "discord", "dingtalk", "telegram", "msteams", "feishu", "matrix", "wechatwork", "packagist"];
/**
 * The events a hook's `events` list turns on, as Gitea's updateHookEvents decides them for a create
 * and an edit alike (names compared case-insensitively, nothing trimmed): `issues` turns on every
 * issue event and `pull_request` every pull-request one, `issues_only`/`pull_request_only` the bare
 * event; an unknown name turns on nothing; an empty list means `["push"]`. Listed in one fixed order
 * (Gitea lists a map: any order).
 */
const ISSUE_EVENTS = ["issue_assign", "issue_label", "issue_milestone", "issue_comment"];
const PULL_EVENTS = ["pull_request_assign", "pull_request_label", "pull_request_milestone", "pull_request_comment", "pull_request_review", "pull_request_review_request", "pull_request_sync"];
const EVENT_ORDER = ["create", "delete", "fork", "push", "issues", ...ISSUE_EVENTS, "pull_request", ...PULL_EVENTS, "wiki", "repository", "release", "package", "status", "workflow_run", "workflow_job"];

export interface HookForm {
  type?: string;
  name?: string;
  config?: Record<string, string>;
  events?: string[];
  branch_filter?: string;
  authorization_header?: string;
  active?: boolean;
}

/**
 * The `config` keys a type's messages use (convert/chat-hooks.ts), stored as its meta and shown in
 * its `config`: slack's as Gitea's API takes them; discord's, matrix's and packagist's as Gitea's web
 * form takes them (its API drops them, and such hooks then fail at every delivery — a deliberate
 * difference). None is a secret: tokens go in the URL or the Authorization header, as in Gitea.
 */
const META_KEYS: Record<string, readonly string[]> = {
  slack: ["channel", "username", "icon_url", "color"],
  discord: ["username", "icon_url"],
  matrix: ["message_type"],
  packagist: ["package_url"],
};

/** Gitea's Hook JSON without the secrets: config has url and content_type (and the type's meta keys). */
export function toHook(h: WebhookRow) {
  const meta = JSON.parse(h.meta || "{}") as Record<string, string>;
  return {
    id: h.id,
    type: h.type,
    name: h.name,
    branch_filter: h.branchFilter,
    // A type's meta keys are always there (Gitea's slack config: "" when unset).
    config: { url: h.url, content_type: h.contentType, ...Object.fromEntries((META_KEYS[h.type] ?? []).map((k) => [k, meta[k] ?? ""])) },
    events: JSON.parse(h.events) as string[],
    authorization_header: "",
    active: h.isActive,
    updated_at: isoTime(h.updatedUnix),
    created_at: isoTime(h.createdUnix),
  };
}

function hookEvents(given: readonly string[] | undefined): string[] {
  const names = new Set((given?.length ? given : ["push"]).map((e) => e.toLowerCase()));
  const on = (e: string) => {
    if (e === "issues") return names.has("issues") || names.has("issues_only");
    if (e === "pull_request") return names.has("pull_request") || names.has("pull_request_only");
    if (ISSUE_EVENTS.includes(e)) return names.has(e) || names.has("issues");
    if (PULL_EVENTS.includes(e)) return names.has(e) || names.has("pull_request");
    return names.has(e);
  };
  return EVENT_ORDER.filter(on);
}

/** Gitea's GlobPattern binding: the pattern compiles as a glob (modules/glob: an unclosed `[` or `{`, a trailing backslash, a reversed range fail). */
const globOk = (g: string) => compileGlob(g) !== null;

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

/**
 * An Authorization header value must be one an HTTP request can carry (no CR, LF or NUL): a value
 * that could not be sent is refused when it is given, not at every delivery (Go's client fails then).
 */
function checkHeaderValue(value: string | undefined) {
  if (value !== undefined && /[\r\n\0]/.test(value)) throw unprocessable("[AuthorizationHeader]: invalid header value");
}

async function seal(ctx: Ctx, value: string) {
  if (!value) return "";
  const key = ctx.settings.security.secretKey;
  if (!key) throw new ApiError(500, "[security] SECRET_KEY is not configured: secrets cannot be stored");
  return encryptSecret(key, value);
}

/** A type's meta: `base` with the keys `cfg` gives, each checked. */
function hookMeta(type: string, cfg: Record<string, string>, base: Record<string, string>): Record<string, string> {
  const meta = { ...base };
  for (const key of META_KEYS[type] ?? []) {
    const value = cfg[key];
    // An empty value of a key with a rule keeps what is there; the free-form keys may be cleared.
    if (value === undefined || (value === "" && (key === "message_type" || key === "package_url"))) continue;
    if (key === "channel") {
      // Gitea's IsValidSlackChannel: what Slack takes as a channel name.
      if (!/^#?[a-z0-9_-]{1,80}$/.test(value.trim())) throw badRequest("Invalid slack channel name");
      meta.channel = value.trim();
    } else if (key === "message_type") {
      if (!["1", "2", "m.notice", "m.text"].includes(value)) throw unprocessable("Invalid message_type: 1 (m.notice) or 2 (m.text)");
      meta.message_type = value;
    } else if (key === "package_url") {
      if (!/^https?:\/\/[^\s]+$/.test(value)) throw unprocessable("Invalid package_url");
      meta.package_url = value;
    } else meta[key] = value;
  }
  return meta;
}

const hookOf = (ctx: Ctx, orgName: string, id: number): Bound<WebhookRow> => hookOfOrg.bind({ ...ctx.vv, org: orgName.toLowerCase(), id });

/** GET /orgs/{org}/hooks (orgListHooks). */
export async function listHooks(ctx: Ctx, orgName: string, page: Page) {
  const org = orgName.toLowerCase();
  const { caller, o, hooks, total } = await read(ctx, {
    o: orgRead(ctx, orgName),
    hooks: hooksOfOrg.bind({ ...ctx.vv, org, limit: page.limit, offset: page.offset }),
    total: hookCountOfOrg.bind({ ...ctx.vv, org }),
  });
  assignOwnedOrg(caller, o);
  return { total: total[0] ?? 0, hooks: hooks.map(toHook) };
}

/** GET /orgs/{org}/hooks/{id} (orgGetHook): a hook of another org answers like a missing one. */
export async function getHook(ctx: Ctx, orgName: string, id: number) {
  const { caller, o, hook } = await read(ctx, { o: orgRead(ctx, orgName), hook: hookOf(ctx, orgName, id) });
  assignOwnedOrg(caller, o);
  const h = hook[0];
  if (!h) throw notFound();
  return toHook(h);
}

/** POST /orgs/{org}/hooks (orgCreateHook): the create body is validated before creation. */
export async function createHook(ctx: Ctx, orgName: string, form: HookForm) {
  const { caller, o } = await read(ctx, { o: orgRead(ctx, orgName) });
  const org = assignOwnedOrg(caller, o);
  // Case matters, as in Gitea's IsValidHookTaskType.
  const type = form.type ?? "";
  if (!HOOK_TYPES.includes(type)) throw unprocessable(`Invalid hook type: ${form.type ?? ""}`);
  const cfg = form.config ?? {};
  const { url, content_type: contentType } = cfg;
  if (!url) throw unprocessable("Missing config option: url");
  if (!contentType) throw unprocessable("Missing config option: content_type");
  if (contentType !== "json" && contentType !== "form") throw unprocessable("Invalid content type");
  checkTarget(ctx, url);
  // Gitea: a missing key is 422; an empty channel is judged by the channel rule (400).
  if (type === "slack" && cfg.channel === undefined) throw unprocessable("Missing config option: channel");
  const meta = hookMeta(type, cfg, {});
  if (form.branch_filter && !globOk(form.branch_filter)) throw unprocessable("[BranchFilter]: GlobPattern");
  checkHeaderValue(form.authorization_header);
  const now = nowUnix();
  const values: HookValues = {
    ownerId: org.id,
    repoId: 0,
    type,
    name: form.name ?? "",
    url,
    contentType,
    secretEnc: await seal(ctx, cfg.secret ?? ""),
    authHeaderEnc: await seal(ctx, form.authorization_header ?? ""),
    events: JSON.stringify(hookEvents(form.events)),
    branchFilter: form.branch_filter ?? "",
    meta: JSON.stringify(meta),
    isActive: form.active ?? false,
    createdUnix: now,
    updatedUnix: now,
  };
  const { hook } = await write(ctx, [hookOwnerExists.bind(values)], { hook: insertHook.bind(values) });
  return toHook(only(hook, "insertHook"));
}

/** PATCH /orgs/{org}/hooks/{id} (orgEditHook): present fields replace; secrets stay write-only. */
export async function editHook(ctx: Ctx, orgName: string, id: number, form: HookForm) {
  const { caller, o, hook } = await read(ctx, { o: orgRead(ctx, orgName), hook: hookOf(ctx, orgName, id) });
  assignOwnedOrg(caller, o);
  const h = hook[0];
  if (!h) throw notFound();
  const patch: Partial<HookValues> = { updatedUnix: nowUnix() };
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
  if (META_KEYS[h.type]) patch.meta = JSON.stringify(hookMeta(h.type, cfg, JSON.parse(h.meta || "{}") as Record<string, string>));
  // Gitea's editHook reads an absent list as `["push"]`; here it keeps the hook's events (a deliberate difference)
  if (form.events !== undefined) patch.events = JSON.stringify(hookEvents(form.events));
  if (form.branch_filter !== undefined) {
    if (form.branch_filter && !globOk(form.branch_filter)) throw unprocessable("[BranchFilter]: GlobPattern");
    patch.branchFilter = form.branch_filter;
  }
  if (form.authorization_header !== undefined) {
    checkHeaderValue(form.authorization_header);
    patch.authHeaderEnc = await seal(ctx, form.authorization_header);
  }
  if (form.active !== undefined) patch.isActive = form.active;
  if (form.name !== undefined) patch.name = form.name;
  const { updated } = await write(ctx, [], { updated: updateHook(patchKeys(patch)).bind({ ...patch, id: h.id }) });
  // Another request may have deleted the hook since it was read: the update changed nothing.
  const row = updated[0];
  if (!row) throw notFound();
  return toHook(row);
}

/** DELETE /orgs/{org}/hooks/{id} (orgDeleteHook): 404 when the hook does not exist (in this org). */
export async function deleteHook(ctx: Ctx, orgName: string, id: number) {
  const { caller, o, hook } = await read(ctx, { o: orgRead(ctx, orgName), hook: hookOf(ctx, orgName, id) });
  assignOwnedOrg(caller, o);
  const h = hook[0];
  if (!h) throw notFound();
  // Its pending and recorded deliveries go with it (Gitea's DeleteWebhookByID).
  await write(ctx, [deleteTasksOfHook.bind({ id: h.id }), deleteHookCmd.bind({ id: h.id })]);
}
