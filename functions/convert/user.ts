/**
 * Rows → Gitea's JSON for users, organizations and tokens. Pure: everything arrives as arguments,
 * and only this folder writes snake_case keys. Key order follows Gitea's structs.
 */
import type { AccessTokenRow, UserRow } from "../db/schema.ts";
import { escapeComponent } from "./escape.ts";

export const VISIBILITY = ["public", "limited", "private"] as const;
export const visibilityOf = (n: number) => VISIBILITY[n] ?? "public";
export const visibilityCode = (s: string) => Math.max(0, VISIBILITY.indexOf(s as (typeof VISIBILITY)[number]));

/** Go's zero time.Time, which Gitea emits for unset times. */
export const ZERO_TIME = "0001-01-01T00:00:00Z";

/** `YYYY-MM-DDT` of a UTC day number, from Date once per day; bounded, cleared when full. */
const dayPrefixes = new Map<number, string>();
const dayPrefix = (day: number) => {
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size >= 4096) dayPrefixes.clear();
    prefix = new Date(day * 86_400_000).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  return prefix;
};
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * Unix seconds → RFC 3339 in UTC, as Go marshals time.Time (no fractional seconds). Every UTC day
 * has 86,400 unix seconds, so the time of day is plain arithmetic; only the date goes through Date
 * (a profile of `GET /user` had `toISOString` at 4 % of the server's CPU).
 */
export const isoTime = (unix: number) => {
  const day = Math.floor(unix / 86_400);
  const s = Math.floor(unix) - day * 86_400;
  return `${dayPrefix(day)}${pad2(Math.floor(s / 3600))}:${pad2(Math.floor(s / 60) % 60)}:${pad2(s % 60)}Z`;
};

export interface Viewer {
  id: number;
  isAdmin: boolean;
  /** The token may read only public accounts of these kinds (no `read:user` / `read:organization`, or public-only). */
  limited?: { readonly user: boolean; readonly organization: boolean };
}

/** The account is shown whole to the viewer's token: public, or of a kind its scopes read (else the hidden-user form). */
export const tokenReads = (viewer: Viewer | null, u: { type: number; visibility: number }) => u.visibility === 0 || !viewer?.limited?.[u.type === 1 ? "organization" : "user"];

export interface Site {
  rootUrl: string;
  /** Domain for placeholder e-mails (`[service] NO_REPLY_ADDRESS`, default `noreply.<host>`). */
  noReplyAddress: string;
}

export const avatarUrl = (site: Site, _u: Pick<UserRow, "id">) => `${site.rootUrl}assets/img/avatar_default.png`;

/**
 * Gitea's convert.ToUser: the e-mail only for signed-in viewers (unless kept private, then only
 * for self and admins); login_name, source_id, language, is_admin, last_login, active and
 * prohibit_login only for self and site admins.
 */
export function toUser(u: UserRow, viewer: Viewer | null, site: Site) {
  const authed = !!viewer && (viewer.isAdmin || viewer.id === u.id);
  const signed = !!viewer;
  const email = signed && (!u.keepEmailPrivate || authed) && u.email ? u.email : `${u.lowerName}@${site.noReplyAddress}`;
  return {
    id: u.id,
    login: u.name,
    login_name: authed ? u.loginName : "",
    source_id: authed ? u.loginSource : 0,
    full_name: u.fullName,
    email,
    avatar_url: avatarUrl(site, u),
    html_url: `${site.rootUrl}${escapeComponent(u.name)}`,
    language: authed ? u.language : "",
    is_admin: authed ? u.isAdmin : false,
    last_login: authed ? isoTime(u.lastLoginUnix) : ZERO_TIME,
    created: isoTime(u.createdUnix),
    restricted: u.isRestricted,
    active: authed ? u.isActive : false,
    prohibit_login: authed ? u.prohibitLogin : false,
    location: u.location,
    website: u.website,
    description: u.description,
    visibility: visibilityOf(u.visibility),
    followers_count: u.numFollowers,
    following_count: u.numFollowing,
    starred_repos_count: u.numStars,
    username: u.name,
  };
}

/**
 * An account the viewer may not see, where it is inherent to what is shown (the owner of a
 * repository a collaborator reaches): its identity only — no e-mail, no profile (issue 8 A.5).
 */
export function toHiddenUser(u: UserRow, site: Site) {
  return {
    ...toUser(u, null, site),
    full_name: "",
    created: ZERO_TIME,
    location: "",
    website: "",
    description: "",
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
  };
}

/** Gitea's convert.ToOrganization. */
export function toOrganization(o: UserRow, site: Site, show: { email: boolean } = { email: true }) {
  return {
    id: o.id,
    name: o.name,
    full_name: o.fullName,
    email: show.email ? o.email : "",
    avatar_url: avatarUrl(site, o),
    description: o.description,
    website: o.website,
    location: o.location,
    visibility: visibilityOf(o.visibility),
    repo_admin_change_team_access: o.repoAdminChangeTeamAccess,
    username: o.name,
  };
}

/** An access token; `sha1` carries the plain token only in the create response. */
export function toAccessToken(t: AccessTokenRow, plain = "") {
  return {
    id: t.id,
    name: t.name,
    sha1: plain,
    token_last_eight: t.tokenLastEight,
    scopes: t.scope ? t.scope.split(",") : [],
    created_at: isoTime(t.createdUnix),
    last_used_at: isoTime(t.updatedUnix),
  };
}

/** Gitea's pseudo users for `/users/search?uid=-1|-2`. */
export function pseudoUser(id: -1 | -2, site: Site) {
  const name = id === -1 ? "Ghost" : "gitea-actions";
  const row = {
    id,
    lowerName: name.toLowerCase(),
    name,
    fullName: name,
    email: "",
    keepEmailPrivate: false,
    loginName: "",
    loginSource: 0,
    language: "",
    isAdmin: false,
    lastLoginUnix: 0,
    createdUnix: 0,
    isRestricted: false,
    isActive: false,
    prohibitLogin: false,
    location: "",
    website: "",
    description: "",
    visibility: 0,
    numFollowers: 0,
    numFollowing: 0,
    numStars: 0,
  } as UserRow;
  return toUser(row, null, site);
}
