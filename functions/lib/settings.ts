/**
 * Instance settings, named after Gitea's app.ini sections and keys and read from environment
 * variables in Gitea's own form `GITEA__section__KEY` (Node: process.env; Worker: wrangler vars).
 * Every key is parsed and validated at start-up; an invalid value throws a SettingsError naming it.
 */
import { isHostListEntry } from "./hosts.ts";

export const UNIT_KEYS = [
  "repo.code",
  "repo.issues",
  "repo.pulls",
  "repo.releases",
  "repo.wiki",
  "repo.ext_wiki",
  "repo.ext_issues",
  "repo.projects",
  "repo.packages",
  "repo.actions",
] as const;

export const USER_FEATURES = ["deletion", "manage_ssh_keys", "manage_gpg_keys", "manage_mfa", "manage_credentials", "change_username", "change_full_name"] as const;

export interface Settings {
  runMode: "prod" | "dev";
  server: { rootUrl: string | null; enableServerTiming: boolean; serverTimingDuration: boolean };
  /**
   * QUERY_TIMEOUT: how long one database round trip may take before the request answers 503 (0 = no limit).
   * `sqlite`: how Node configures every connection to an embedded `file:` database (issue 9 B.3).
   */
  database: { queryTimeoutMs: number; sqlite: SqliteSettings };
  repository: { forcePrivate: boolean; defaultBranch: string; disabledRepoUnits: string[] };
  /** MAX_PUSH_SIZE: the largest pack a push may send, in bytes (keep it ≤ the Worker plan's request-body limit). */
  git: { maxPushBytes: number };
  mirror: { minIntervalMs: number };
  api: { defaultPagingNum: number; maxResponseItems: number; enableSwagger: boolean };
  security: { disableQueryAuthToken: boolean; passwordHashIterations: number; minPasswordLength: number; secretKey: string | null };
  webhook: { allowedHostList: string[]; deliverTimeoutMs: number };
  service: { noReplyAddress: string | null; defaultUserVisibility: "public" | "limited" | "private"; requireSignInView: boolean };
  admin: { userDisabledFeatures: string[]; externalUserDisableFeatures: string[] };
}

/** The embedded file's configuration, applied on every connection Node opens to a `file:` database. */
export interface SqliteSettings {
  /** SQLITE_JOURNAL_MODE (Gitea's key): `wal` lets readers proceed while a writer works. */
  journalMode: "wal" | "delete" | "truncate" | "persist";
  /** SQLITE_SYNCHRONOUS: `normal` in WAL mode may lose the last commits on power loss, never corrupts. */
  synchronous: "off" | "normal" | "full" | "extra";
  /** SQLITE_TIMEOUT (Gitea's key, milliseconds): how long a writer waits for another one (busy timeout). */
  busyTimeoutMs: number;
}

export class SettingsError extends Error {}

type Env = Record<string, unknown>;

/** One key: its section, name, default, and parser; `docs/configuration.md` lists the same. */
interface KeySpec<T> {
  section: string;
  key: string;
  def: string;
  parse: (raw: string, name: string) => T;
}

const fail = (name: string, why: string): never => {
  throw new SettingsError(`invalid setting ${name}: ${why}`);
};

/** An ALLOWED_HOST_LIST: its entries trimmed and lower-cased, each one that means something (lib/hosts.ts). */
const hostList = (raw: string, name: string) =>
  raw
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .map((e) => (isHostListEntry(e) ? e : fail(name, `"${e}" is none of external, private, loopback, *, a CIDR (an IPv4 prefix of 0–32 bits, IPv6 0–128) or a host name pattern`)));

const bool = (raw: string, name: string) => {
  const v = raw.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off", ""].includes(v)) return false;
  return fail(name, `expected true or false, got "${raw}"`);
};

const int = (min: number, max: number) => (raw: string, name: string) => {
  if (!/^-?\d+$/.test(raw.trim())) return fail(name, `expected an integer, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) return fail(name, `expected an integer from ${min} to ${max}, got ${n}`);
  return n;
};

const list = (allowed: readonly string[]) => (raw: string, name: string) => {
  const items = raw
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const item of items) if (!allowed.includes(item)) fail(name, `unknown value "${item}" (allowed: ${allowed.join(", ")})`);
  return [...new Set(items)];
};

const oneOf = <T extends string>(allowed: readonly T[]) => (raw: string, name: string) => {
  const v = raw.trim().toLowerCase() as T;
  return allowed.includes(v) ? v : fail(name, `expected one of ${allowed.join(", ")}, got "${raw}"`);
};

/** Go duration syntax (`10m`, `1h30m`, `90s`, `0`) → milliseconds. */
export function parseGoDuration(raw: string): number | null {
  const s = raw.trim();
  if (s === "0") return 0;
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  if (!s) return null;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return null;
    total += Number(m[1]) * units[m[2]!]!; // !: both groups always participate, and every unit the pattern admits is a key
    pos = re.lastIndex;
  }
  return total;
}

/** Milliseconds → Go's duration string (`8h0m0s`, `10m0s`, `1h30m0s`). */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return "0s";
  const totalSeconds = Math.floor(ms / 1000);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** A size in Gitea's humanize form (`100MiB`, `50MB`, `1GiB`, or plain bytes), bounded. */
const byteSize = (min: number, max: number) => (raw: string, name: string) => {
  const m = /^\s*(\d+)\s*(B|KB|KIB|MB|MIB|GB|GIB)?\s*$/i.exec(raw);
  if (!m) return fail(name, `"${raw}" is not a size (e.g. 100MiB)`);
  const unit = (m[2] ?? "B").toUpperCase();
  const mult: Record<string, number> = { B: 1, KB: 1000, KIB: 1024, MB: 1000 ** 2, MIB: 1024 ** 2, GB: 1000 ** 3, GIB: 1024 ** 3 };
  const n = Number(m[1]) * mult[unit]!;
  if (n < min || n > max) return fail(name, `must be between ${min} and ${max} bytes`);
  return n;
};

const duration = (raw: string, name: string) => {
  const ms = parseGoDuration(raw);
  return ms === null ? fail(name, `expected a duration such as 10m or 1h30m, got "${raw}"`) : ms;
};

const url = (raw: string, name: string) => {
  const v = raw.trim();
  if (!v) return null;
  try {
    const u = new URL(v);
    if (u.protocol !== "http:" && u.protocol !== "https:") fail(name, "expected an http(s) URL");
    return u.href.endsWith("/") ? u.href : `${u.href}/`;
  } catch (e) {
    if (e instanceof SettingsError) throw e;
    return fail(name, `expected an absolute URL, got "${raw}"`);
  }
};

const nullableText = (raw: string) => raw.trim() || null;

/** Every supported key, in the order docs/configuration.md lists them. */
export const SETTING_KEYS = {
  runMode: { section: "", key: "RUN_MODE", def: "prod", parse: oneOf(["prod", "dev"] as const) },
  rootUrl: { section: "server", key: "ROOT_URL", def: "", parse: url },
  enableServerTiming: { section: "server", key: "ENABLE_SERVER_TIMING", def: "true", parse: bool },
  serverTimingDuration: { section: "server", key: "SERVER_TIMING_DURATION", def: "false", parse: bool },
  queryTimeout: { section: "database", key: "QUERY_TIMEOUT", def: "10s", parse: duration },
  sqliteJournalMode: { section: "database", key: "SQLITE_JOURNAL_MODE", def: "wal", parse: oneOf(["wal", "delete", "truncate", "persist"] as const) },
  sqliteSynchronous: { section: "database", key: "SQLITE_SYNCHRONOUS", def: "normal", parse: oneOf(["off", "normal", "full", "extra"] as const) },
  sqliteTimeout: { section: "database", key: "SQLITE_TIMEOUT", def: "5000", parse: int(0, 600_000) },
  forcePrivate: { section: "repository", key: "FORCE_PRIVATE", def: "false", parse: bool },
  defaultBranch: {
    section: "repository",
    key: "DEFAULT_BRANCH",
    def: "main",
    parse: (raw: string, name: string) =>
      /^(?!\/|.*\/\/|.*\/$|.*\.\.|.*@\{)[^\s~^:?*[\\\x00-\x1f\x7f]{1,100}$/.test(raw.trim()) ? raw.trim() : fail(name, `"${raw}" is not a valid branch name`),
  },
  disabledRepoUnits: { section: "repository", key: "DISABLED_REPO_UNITS", def: "", parse: list(UNIT_KEYS) },
  maxPushSize: { section: "git", key: "MAX_PUSH_SIZE", def: "100MiB", parse: byteSize(1024, 4 * 1024 ** 3) },
  minInterval: {
    section: "mirror",
    key: "MIN_INTERVAL",
    def: "10m",
    // Gitea raises values below one minute to one minute.
    parse: (raw: string, name: string) => Math.max(duration(raw, name), 60_000),
  },
  defaultPagingNum: { section: "api", key: "DEFAULT_PAGING_NUM", def: "30", parse: int(1, 10_000) },
  maxResponseItems: { section: "api", key: "MAX_RESPONSE_ITEMS", def: "50", parse: int(1, 10_000) },
  enableSwagger: { section: "api", key: "ENABLE_SWAGGER", def: "true", parse: bool },
  disableQueryAuthToken: { section: "security", key: "DISABLE_QUERY_AUTH_TOKEN", def: "false", parse: bool },
  passwordHashIterations: { section: "security", key: "PASSWORD_HASH_ITERATIONS", def: "100000", parse: int(10_000, 100_000) },
  minPasswordLength: { section: "security", key: "MIN_PASSWORD_LENGTH", def: "8", parse: int(1, 255) },
  secretKey: {
    section: "security",
    key: "SECRET_KEY",
    def: "",
    parse: (raw: string, name: string) => (raw.trim() === "" ? null : raw.trim().length < 16 ? fail(name, "must be at least 16 characters") : raw.trim()),
  },
  // The spec's key for outbound requests is [security] ALLOWED_HOST_LIST; [webhook]'s, Gitea's
  // older one, is honoured when it is not set.
  securityAllowedHostList: { section: "security", key: "ALLOWED_HOST_LIST", def: "", parse: (raw: string, name: string) => (raw.split(",").every((s) => s.trim() === "") ? null : hostList(raw, name)) },
  allowedHostList: { section: "webhook", key: "ALLOWED_HOST_LIST", def: "external", parse: hostList },
  deliverTimeout: { section: "webhook", key: "DELIVER_TIMEOUT", def: "5", parse: int(1, 600) },
  noReplyAddress: { section: "service", key: "NO_REPLY_ADDRESS", def: "", parse: nullableText },
  defaultUserVisibility: { section: "service", key: "DEFAULT_USER_VISIBILITY", def: "public", parse: oneOf(["public", "limited", "private"] as const) },
  requireSignInView: { section: "service", key: "REQUIRE_SIGNIN_VIEW", def: "false", parse: bool },
  userDisabledFeatures: { section: "admin", key: "USER_DISABLED_FEATURES", def: "", parse: list(USER_FEATURES) },
  externalUserDisableFeatures: { section: "admin", key: "EXTERNAL_USER_DISABLE_FEATURES", def: "", parse: list(USER_FEATURES) },
} satisfies Record<string, KeySpec<unknown>>;

type Keys = typeof SETTING_KEYS;
type Parsed = { [K in keyof Keys]: ReturnType<Keys[K]["parse"]> };

/** The environment variable name of a key, e.g. `GITEA__server__ROOT_URL`. */
export const envName = (spec: { section: string; key: string }) => `GITEA__${spec.section}__${spec.key}`;

/** Parses every setting from `env`; throws SettingsError naming the first invalid key. */
export function loadSettings(env: Env): Settings {
  const v = {} as Parsed;
  for (const [field, spec] of Object.entries(SETTING_KEYS) as [keyof Keys, KeySpec<unknown>][]) {
    const name = envName(spec);
    const raw = env[name];
    if (raw !== undefined && typeof raw !== "string") fail(name, "expected a string value");
    (v as Record<string, unknown>)[field] = spec.parse((raw as string | undefined) ?? spec.def, name);
  }
  if (v.maxResponseItems < v.defaultPagingNum) {
    fail(envName(SETTING_KEYS.maxResponseItems), `must be at least ${envName(SETTING_KEYS.defaultPagingNum)} (${v.defaultPagingNum})`);
  }
  return {
    runMode: v.runMode,
    server: { rootUrl: v.rootUrl, enableServerTiming: v.enableServerTiming, serverTimingDuration: v.serverTimingDuration },
    database: {
      queryTimeoutMs: v.queryTimeout,
      sqlite: { journalMode: v.sqliteJournalMode, synchronous: v.sqliteSynchronous, busyTimeoutMs: v.sqliteTimeout },
    },
    repository: { forcePrivate: v.forcePrivate, defaultBranch: v.defaultBranch, disabledRepoUnits: v.disabledRepoUnits },
    git: { maxPushBytes: v.maxPushSize },
    mirror: { minIntervalMs: v.minInterval },
    api: { defaultPagingNum: v.defaultPagingNum, maxResponseItems: v.maxResponseItems, enableSwagger: v.enableSwagger },
    security: {
      disableQueryAuthToken: v.disableQueryAuthToken,
      passwordHashIterations: v.passwordHashIterations,
      minPasswordLength: v.minPasswordLength,
      secretKey: v.secretKey,
    },
    webhook: { allowedHostList: v.securityAllowedHostList ?? v.allowedHostList, deliverTimeoutMs: v.deliverTimeout * 1000 },
    service: { noReplyAddress: v.noReplyAddress, defaultUserVisibility: v.defaultUserVisibility, requireSignInView: v.requireSignInView },
    admin: { userDisabledFeatures: v.userDisabledFeatures, externalUserDisableFeatures: v.externalUserDisableFeatures },
  };
}
