/**
 * Git content → Gitea's JSON (services/convert ToBranch, ToPayloadCommit, ToCommit, ToVerification
 * and the git/refs handler's Reference). Pure: the commits, the users their e-mails name (only
 * those the viewer may see) and the caller's rights come in as arguments.
 */
import type { UserRow } from "../db/schema.ts";
import { goTime, utcTime } from "./time.ts";
import type { Signature } from "../git/objects/commit.ts";
import type { Change, LineStats } from "../git/repo/diff.ts";
import type { CommitInfo } from "../git/repo/repository.ts";
import { escapeComponent, pathEscapeSegments } from "./escape.ts";
import { toUser, ZERO_TIME, type Site, type Viewer } from "./user.ts";

/** A repository's two URL bases: `<root>api/v1/repos/{owner}/{repo}` and `<root>{owner}/{repo}`. */
export interface RepoUrls {
  api: string;
  html: string;
}

export const repoUrls = (rootUrl: string, owner: string, name: string): RepoUrls => {
  const path = `${escapeComponent(owner)}/${escapeComponent(name)}`;
  return { api: `${rootUrl}api/v1/repos/${path}`, html: `${rootUrl}${path}` };
};

/** Users by lower-cased e-mail: only accounts the viewer may see (others stay anonymous). */
export type UsersByEmail = ReadonlyMap<string, UserRow>;


/** What a commit's signature header holds, for the verification object. */
export interface Signed {
  signature: string;
  payload: string;
}

/**
 * Gitea's ToVerification without signing keys on record: unsigned commits are
 * `gpg.error.not_signed_commit`; signed ones carry signature and payload, unverified (no key).
 */
export function toVerification(signed: Signed | null) {
  if (!signed) return { verified: false, reason: "gpg.error.not_signed_commit", signature: "", signer: null, payload: "" };
  return { verified: false, reason: "gpg.error.no_gpg_keys_found", signature: signed.signature, signer: null, payload: signed.payload };
}

const userOf = (users: UsersByEmail, s: Signature) => (s.email ? users.get(s.email.toLowerCase()) : undefined);

/** Gitea's ToPayloadCommit (the commit of a Branch): usernames only of visible accounts. */
export function toPayloadCommit(urls: RepoUrls, c: CommitInfo, users: UsersByEmail, signed: Signed | null) {
  const who = (s: Signature) => ({ name: s.name, email: s.email, username: userOf(users, s)?.name ?? "" });
  return {
    id: c.oid,
    message: c.message,
    url: `${urls.html}/commit/${c.oid}`,
    author: who(c.author),
    committer: who(c.committer),
    verification: toVerification(signed),
    timestamp: goTime(c.author),
    // Gitea leaves the file lists of a branch's commit unset (nil slices).
    added: null,
    removed: null,
    modified: null,
  };
}

/**
 * Gitea's ToBranch for a branch without protection (none exist here): `user_can_push` and
 * `user_can_merge` are the caller's write access to the code unit.
 */
export function toBranch(urls: RepoUrls, name: string, c: CommitInfo, users: UsersByEmail, canWrite: boolean, signed: Signed | null) {
  return {
    name,
    commit: toPayloadCommit(urls, c, users, signed),
    protected: false,
    required_approvals: 0,
    enable_status_check: false,
    status_check_contexts: [] as string[],
    user_can_push: canWrite,
    user_can_merge: canWrite,
    effective_branch_protection_name: "",
  };
}

/** Gitea's reference JSON: the ref, and the object it names with its type (`commit`, `tag`, …). */
export function toReference(urls: RepoUrls, ref: { name: string; oid: string }, type: string) {
  return {
    ref: ref.name,
    url: `${urls.api}/git/${pathEscapeSegments(ref.name)}`,
    object: { type, sha: ref.oid, url: `${urls.api}/git/${type}s/${ref.oid}` },
  };
}

/** What of a commit's details was asked for and computed (null: not asked, Gitea's nil). */
export interface CommitDetails {
  files: Change[] | null;
  stats: LineStats | null;
  /** Undefined: verification not asked for. */
  signed: Signed | null | undefined;
}

const FILE_STATUS: Record<string, string> = { added: "added", removed: "removed", modified: "modified" };

/**
 * Gitea's ToCommit. Its quirks kept: `commit.tree` names the commit itself (Gitea's tree URL
 * takes a commit id), parents carry no `created` time (Go's zero time), and type changes are
 * not listed among the files (Gitea reads only A, D and M from `--name-status`).
 */
export function toCommit(urls: RepoUrls, c: CommitInfo, users: UsersByEmail, viewer: Viewer | null, site: Site, d: CommitDetails) {
  const commitUrl = `${urls.api}/git/commits/${c.oid}`;
  const author = userOf(users, c.author);
  const committer = userOf(users, c.committer);
  return {
    url: commitUrl,
    sha: c.oid,
    created: goTime(c.committer),
    html_url: `${urls.html}/commit/${c.oid}`,
    commit: {
      url: commitUrl,
      author: { name: c.author.name, email: c.author.email, date: goTime(c.author) },
      committer: { name: c.committer.name, email: c.committer.email, date: goTime(c.committer) },
      message: c.message,
      tree: { url: `${urls.api}/git/trees/${c.oid}`, sha: c.oid, created: goTime(c.committer) },
      verification: d.signed === undefined ? null : toVerification(d.signed),
    },
    author: author ? toUser(author, viewer, site) : null,
    committer: committer ? toUser(committer, viewer, site) : null,
    parents: c.parents.map((p) => ({ url: `${urls.api}/git/commits/${p}`, sha: p, created: ZERO_TIME })),
    files: d.files === null ? null : d.files.filter((f) => FILE_STATUS[f.status]).map((f) => ({ filename: f.path, status: FILE_STATUS[f.status]! })),
    stats: d.stats === null ? null : { total: d.stats.additions + d.stats.deletions, additions: d.stats.additions, deletions: d.stats.deletions },
  };
}

/** Gitea's ToCommitUser: a signature with its time in UTC (RFC 3339). */
export const toCommitUser = (s: Signature | null) =>
  s ? { name: s.name, email: s.email, date: utcTime(s) } : { name: "", email: "", date: ZERO_TIME };

/**
 * A tag as Gitea's git.Tag holds it: `id` is what the ref names (the tag object, or the commit of
 * a lightweight tag), `object` what the tag points at; a lightweight tag's tagger and message are
 * its commit's committer and message.
 */
export interface TagInfo {
  name: string;
  id: string;
  object: string;
  tagger: Signature | null;
  message: string;
}

/** Gitea's ToTag, its quirk kept: `commit.url` names the tag's own id. Archive links as Gitea's url.PathEscape writes them. */
export function toTag(urls: RepoUrls, t: TagInfo) {
  const archive = (ext: string) => `${urls.html}/archive/${escapeComponent(`${t.name}${ext}`)}`;
  return {
    name: t.name,
    message: t.message,
    id: t.id,
    commit: { url: `${urls.api}/git/commits/${t.id}`, sha: t.object, created: t.tagger ? goTime(t.tagger) : ZERO_TIME },
    zipball_url: archive(".zip"),
    tarball_url: archive(".tar.gz"),
  };
}

/**
 * Gitea's ToAnnotatedTag: the object is the commit the tag peels to, and `verification` is that
 * commit's (Gitea verifies the commit, not the tag).
 */
export function toAnnotatedTag(urls: RepoUrls, t: TagInfo, commit: string, signed: Signed | null) {
  return {
    tag: t.name,
    sha: t.id,
    url: `${urls.api}/git/tags/${t.id}`,
    message: t.message,
    tagger: toCommitUser(t.tagger),
    object: { type: "commit", url: `${urls.api}/git/commits/${commit}`, sha: commit },
    verification: toVerification(signed),
  };
}

/** One entry of a tree listing. */
export interface GitEntryInfo {
  path: string;
  mode: string;
  oid: string;
  size: number;
}

/** Gitea's GitEntry: the mode in six octal digits, a submodule without URL. */
export function toGitEntry(urls: RepoUrls, e: GitEntryInfo) {
  const type = e.mode === "40000" ? "tree" : e.mode === "160000" ? "commit" : "blob";
  const url = type === "tree" ? `${urls.api}/git/trees/${e.oid}` : type === "commit" ? "" : `${urls.api}/git/blobs/${e.oid}`;
  return { path: e.path, mode: e.mode.padStart(6, "0"), type, size: e.size, sha: e.oid, url };
}

/** Gitea's GitTreeResponse: `sha` is the object the request resolved to (a commit's own id, as Gitea). */
export function toGitTree(urls: RepoUrls, sha: string, page: number, total: number, entries: readonly GitEntryInfo[] | null, truncated: boolean) {
  return {
    sha,
    url: `${urls.api}/git/trees/${sha}`,
    tree: entries ? entries.map((e) => toGitEntry(urls, e)) : null,
    truncated,
    page,
    total_count: total,
  };
}

/** Gitea's GitBlobResponse: no content past the size limit; an LFS pointer's object named. */
export function toGitBlob(urls: RepoUrls, oid: string, size: number, content: string | null, lfs: { oid: string; size: number } | null) {
  return {
    content,
    encoding: content === null ? null : "base64",
    url: `${urls.api}/git/blobs/${oid}`,
    sha: oid,
    size,
    ...(lfs ? { lfs_oid: lfs.oid, lfs_size: lfs.size } : {}),
  };
}
