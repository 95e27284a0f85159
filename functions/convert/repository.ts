/** Rows → Gitea's Repository JSON (reference §1.1): pure, key order as Gitea's struct. */
import type { RepositoryRow, UserRow } from "../db/schema.ts";
import { toPermissionJson, UNIT, type Permission, type RepoUnit } from "../lib/permissions.ts";
import { formatGoDuration } from "../lib/settings.ts";
import { escapeComponent } from "./escape.ts";
import { isoTime, tokenReads, toHiddenUser, toUser, ZERO_TIME, type Site, type Viewer } from "./user.ts";

/** Default pull-request unit settings (Gitea's new PR unit). */
export const DEFAULT_PULLS_CONFIG = {
  ignore_whitespace_conflicts: false,
  allow_merge_commits: true,
  allow_rebase: true,
  allow_rebase_explicit: true,
  allow_squash_merge: true,
  allow_fast_forward_only_merge: true,
  allow_manual_merge: true,
  autodetect_manual_merge: false,
  allow_rebase_update: true,
  allow_merge_update: true,
  default_delete_branch_after_merge: false,
  default_merge_style: "merge",
  default_update_style: "merge",
  default_allow_maintainer_edit: false,
};
export const DEFAULT_ISSUES_CONFIG = { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true };
export const DEFAULT_PROJECTS_CONFIG = { projects_mode: "all" };

export interface RepoView {
  repo: RepositoryRow;
  owner: UserRow;
  units: readonly RepoUnit[];
  perm: Permission;
  mirror?: { intervalMs: number; updatedUnix: number } | null;
  parent?: { repo: RepositoryRow; owner: UserRow; units: readonly RepoUnit[]; ownerVisible?: boolean } | null;
  /** The owner is visible to the viewer; false renders it without e-mail or profile. Default true. */
  ownerVisible?: boolean;
}

const TRUST = ["default", "collaborator", "committer", "collaboratorcommitter"];
export const trustModelName = (n: number) => TRUST[n] ?? "default";

/** The host and path of a ROOT_URL, parsed once per URL (a list converts many repositories). */
const rootParts = new Map<string, { host: string; path: string }>();
function partsOf(rootUrl: string): { host: string; path: string } {
  let parts = rootParts.get(rootUrl);
  if (!parts) {
    const url = new URL(rootUrl);
    parts = { host: url.hostname, path: url.pathname.replace(/\/$/, "") };
    // ROOT_URL comes from the settings, not from requests; the bound only guards a mistake.
    if (rootParts.size >= 16) rootParts.clear();
    rootParts.set(rootUrl, parts);
  }
  return parts;
}

/** The pull request settings of a pulls unit over Gitea's defaults, merged once per unit object (lists share them, `parseUnits`). */
const PULLS_CONFIGS = new WeakMap<RepoUnit, Readonly<typeof DEFAULT_PULLS_CONFIG & Record<string, unknown>>>();
function pullsConfig(pulls: RepoUnit | undefined): Readonly<typeof DEFAULT_PULLS_CONFIG & Record<string, unknown>> {
  if (!pulls) return DEFAULT_PULLS_CONFIG;
  let merged = PULLS_CONFIGS.get(pulls);
  if (!merged) {
    merged = Object.freeze({ ...DEFAULT_PULLS_CONFIG, ...pulls.config });
    PULLS_CONFIGS.set(pulls, merged);
  }
  return merged;
}

export function toRepository(v: RepoView, viewer: Viewer | null, site: Site): Record<string, unknown> {
  const { repo, owner, units } = v;
  const unit = (t: number) => units.find((u) => u.type === t);
  const pulls = unit(UNIT.pulls);
  const prCfg = pullsConfig(pulls);
  const issues = unit(UNIT.issues);
  const extIssues = unit(UNIT.extIssues);
  const extWiki = unit(UNIT.extWiki);
  const projects = unit(UNIT.projects);
  const escapedPath = `${escapeComponent(owner.name)}/${escapeComponent(repo.name)}`;
  const base = `${site.rootUrl}${escapedPath}`;
  const apiUrl = `${site.rootUrl}api/v1/repos/${escapedPath}`;
  const { host, path } = partsOf(site.rootUrl);
  // One object literal, in Gitea's key order: V8 gives it a fixed shape, which JSON.stringify walks
  // fast (built by adding keys one group at a time, a list of 30 took measurably longer to render).
  // The keys Gitea leaves out are `undefined` here, which JSON leaves out too.
  return {
    id: repo.id,
    owner: v.ownerVisible === false || !tokenReads(viewer, owner) ? toHiddenUser(owner, site) : toUser(owner, viewer, site),
    name: repo.name,
    full_name: `${owner.name}/${repo.name}`,
    description: repo.description,
    empty: repo.isEmpty,
    private: repo.isPrivate,
    fork: repo.isFork,
    template: repo.isTemplate,
    // The parent is rendered with the child's permission and without its own parent (Gitea).
    parent: v.parent ? toRepository({ ...v.parent, perm: v.perm, parent: null, mirror: null }, viewer, site) : undefined,
    mirror: repo.isMirror,
    size: Math.floor(repo.size / 1024),
    language: "",
    languages_url: `${apiUrl}/languages`,
    html_url: base,
    url: apiUrl,
    link: `${path}/${owner.name}/${repo.name}`,
    ssh_url: `git@${host}:${owner.name}/${repo.name}.git`,
    clone_url: `${base}.git`,
    original_url: repo.originalUrl,
    website: repo.website,
    stars_count: repo.numStars,
    forks_count: repo.numForks,
    watchers_count: repo.numWatches,
    open_issues_count: repo.numIssues - repo.numClosedIssues,
    open_pr_counter: repo.numPulls - repo.numClosedPulls,
    release_counter: repo.numReleases,
    default_branch: repo.defaultBranch,
    default_target_branch: repo.defaultBranch,
    branch_count: 0,
    archived: repo.isArchived,
    created_at: isoTime(repo.createdUnix),
    updated_at: isoTime(repo.updatedUnix),
    archived_at: isoTime(repo.archivedUnix),
    permissions: toPermissionJson(v.perm),
    has_code: !!unit(UNIT.code),
    has_issues: !!issues || !!extIssues,
    internal_tracker: issues ? { ...DEFAULT_ISSUES_CONFIG, ...pick(issues.config, Object.keys(DEFAULT_ISSUES_CONFIG)) } : undefined,
    external_tracker: extIssues
      ? {
          external_tracker_url: String(extIssues.config.external_tracker_url ?? ""),
          external_tracker_format: String(extIssues.config.external_tracker_format ?? ""),
          external_tracker_style: String(extIssues.config.external_tracker_style ?? ""),
          external_tracker_regexp_pattern: String(extIssues.config.external_tracker_regexp_pattern ?? ""),
        }
      : undefined,
    has_wiki: !!unit(UNIT.wiki) || !!extWiki,
    external_wiki: extWiki ? { external_wiki_url: String(extWiki.config.external_wiki_url ?? "") } : undefined,
    has_pull_requests: !!pulls,
    has_projects: !!projects,
    projects_mode: String(projects?.config.projects_mode ?? "all"),
    has_releases: !!unit(UNIT.releases),
    has_packages: !!unit(UNIT.packages),
    has_actions: !!unit(UNIT.actions),
    ignore_whitespace_conflicts: pulls ? !!prCfg.ignore_whitespace_conflicts : false,
    allow_merge_commits: pulls ? !!prCfg.allow_merge_commits : false,
    allow_rebase: pulls ? !!prCfg.allow_rebase : false,
    allow_rebase_explicit: pulls ? !!prCfg.allow_rebase_explicit : false,
    allow_squash_merge: pulls ? !!prCfg.allow_squash_merge : false,
    allow_fast_forward_only_merge: pulls ? !!prCfg.allow_fast_forward_only_merge : false,
    allow_rebase_update: pulls ? !!prCfg.allow_rebase_update : false,
    allow_merge_update: pulls ? !!prCfg.allow_merge_update : false,
    allow_manual_merge: pulls ? !!prCfg.allow_manual_merge : false,
    autodetect_manual_merge: pulls ? !!prCfg.autodetect_manual_merge : false,
    default_delete_branch_after_merge: pulls ? !!prCfg.default_delete_branch_after_merge : false,
    // Gitea's GetDefaultMergeStyle: an empty stored style is the default, merge
    default_merge_style: pulls ? String(prCfg.default_merge_style || "merge") : "merge",
    default_update_style: pulls ? String(prCfg.default_update_style) : "merge",
    default_allow_maintainer_edit: pulls ? !!prCfg.default_allow_maintainer_edit : false,
    avatar_url: "",
    internal: !repo.isPrivate && owner.visibility === 2,
    mirror_interval: repo.isMirror && v.mirror ? formatGoDuration(v.mirror.intervalMs) : "",
    object_format_name: repo.objectFormatName,
    mirror_updated: repo.isMirror && v.mirror ? isoTime(v.mirror.updatedUnix) : ZERO_TIME,
    mirror_last_sync_at: repo.isMirror && v.mirror ? isoTime(v.mirror.updatedUnix) : ZERO_TIME,
    topics: JSON.parse(repo.topics || "[]") as string[],
    licenses: [],
  };
}

function pick(o: Record<string, unknown>, keys: string[]) {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}
