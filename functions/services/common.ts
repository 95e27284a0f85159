/** Small rules shared by services: names, LIKE patterns, write guards, the site for converters. */
import type { Site, Viewer } from "../convert/user.ts";
import type { RepositoryRow, UserRow } from "../db/schema.ts";
import { activeHooksOfOwner } from "../db/queries/hook-tasks.ts";
import { hooksPossible, type HookRepo, type HookSource } from "../events/hooks.ts";
import type { Caller } from "../lib/auth.ts";
import type { Ctx } from "../lib/context.ts";
import { unprocessable } from "../lib/errors.ts";

/** Gitea's reserved user and organization names and patterns (models/user/user.go). */
const RESERVED_USERNAMES = new Set([
  ".", "..", ".well-known", "admin", "api", "assets", "attachments", "avatar", "avatars", "captcha", "commits", "debug",
  "error", "explore", "favicon.ico", "ghost", "issues", "login", "manifest.json", "metrics", "milestones", "new",
  "notifications", "org", "pulls", "raw", "repo", "repo-avatars", "robots.txt", "search", "serviceworker.js",
  "ssh_info", "swagger.v1.json", "user", "v2", "gitea-actions",
]);
const RESERVED_USER_PATTERNS = ["*.keys", "*.gpg", "*.rss", "*.atom", "*.png"];

/** Gitea's IsUsableUsername: reserved names and patterns → 422 with Gitea's message. */
export function checkUsableUsername(name: string) {
  const lower = name.trim().toLowerCase();
  if (RESERVED_USERNAMES.has(lower)) throw unprocessable(`name is reserved [name: ${name}]`);
  for (const p of RESERVED_USER_PATTERNS) {
    if (lower.endsWith(p.slice(1))) throw unprocessable(`name pattern is not allowed [pattern: ${p}]`);
  }
}

/** `%keyword%` for LIKE … ESCAPE '\', lower-cased. */
export const likePattern = (kw: string) => `%${kw.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

/**
 * The keyword as an FTS5 phrase when a trigram index (`repo_search`, `user_search`) can find its
 * candidates, else null (the statement reads every row). A trigram needs 3 characters; and
 * repository topics are matched in their JSON text, where `"`, `\`, control characters and lone
 * surrogates are escaped, so a keyword holding one is left to the scan. Both sides are case-folded
 * by the index, so its candidates include every match of the statements' LIKE (ASCII
 * case-insensitive) and of `lower(topic) = keyword`.
 */
export function indexedKeyword(kwLower: string): string | null {
  // (In `u` mode a surrogate pair is one character: the class matches lone surrogates only.)
  if ([...kwLower].length < 3 || /[\u0000-\u001f"\\\ud800-\udfff]/u.test(kwLower)) return null;
  return `"${kwLower}"`;
}

const GUARD_TRIP = "integer overflow";

/** Whether a write batch failed because one of its guards tripped (`guardCommand`, db/sql.ts: "integer overflow"). */
export function isGuardTrip(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (String((e as { message?: unknown }).message ?? "").includes(GUARD_TRIP)) return true;
  }
  return false;
}

export function site(ctx: Ctx): Site {
  return { rootUrl: ctx.rootUrl, noReplyAddress: ctx.settings.service.noReplyAddress ?? `noreply.${hostOf(ctx.rootUrl)}` };
}

/** The host name of a root URL, parsed once per root URL (one per server, a few on the Worker). */
const hostOf = (rootUrl: string) => {
  let host = HOSTS.get(rootUrl);
  if (host === undefined) {
    host = new URL(rootUrl).hostname;
    if (HOSTS.size >= 64) HOSTS.delete(HOSTS.keys().next().value as string);
    HOSTS.set(rootUrl, host);
  }
  return host;
};
const HOSTS = new Map<string, string>();

/**
 * The viewer a converter shows data to: a site admin's rights over other accounts' private fields
 * (a private e-mail, login name, last login) do not reach through a public-only token, which reads
 * public data only (Gitea's ToUser looks at the admin flag alone).
 */
export const viewerOf = (caller: Caller | null): Viewer | null => (caller ? { id: caller.id, isAdmin: caller.isAdmin && !caller.publicOnly, limited: caller.limited } : null);

/** Whether a setting disables `feature` for this account (USER_DISABLED_FEATURES / EXTERNAL_USER_DISABLE_FEATURES). */
export function featureDisabled(ctx: Ctx, account: { loginType: number }, feature: string): boolean {
  const { userDisabledFeatures, externalUserDisableFeatures } = ctx.settings.admin;
  return userDisabledFeatures.includes(feature) || (account.loginType !== 0 && externalUserDisableFeatures.includes(feature));
}

export const nowUnix = () => Math.floor(Date.now() / 1000);

/**
 * The repository and pusher of a push as webhook payloads show them, when the repository's owner
 * (an organization) has active hooks (`activeHooks`, read in the route's round trip); the request's
 * outbox is marked so a delivery starts after the answer.
 */
export function hookSourceOf(ctx: Ctx, a: { facts: { repo: RepositoryRow; owner: UserRow }; units: HookRepo["units"] }, doer: UserRow, activeHooks: readonly number[] | undefined): HookSource | undefined {
  const src: HookSource = { repo: { repo: a.facts.repo, owner: a.facts.owner, units: a.units }, doer, site: site(ctx) };
  if (!hooksPossible(src.repo) || !(activeHooks?.[0] ?? 0)) return undefined;
  ctx.outbox.hookTasks = true;
  return src;
}

/** The read `hookSourceOf` needs, for the route's batch: the active hooks of the repository's owner. */
export const activeHooksRead = (owner: string) => ({ activeHooks: activeHooksOfOwner.bind({ owner: owner.toLowerCase() }) });
