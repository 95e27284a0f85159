/**
 * Git content → Gitea's contents JSON (services/repository/files/content.go and file.go): pure,
 * everything comes in as arguments. URLs follow Gitea's: the API URL of the entry with `?ref=`, the
 * web `src`/`raw` links with the ref's web path (`branch/…`, `tag/…`, `commit/…`), `git/blobs/`.
 */
import type { CommitInfo, PathEntry } from "../git/repo/repository.ts";
import type { Signature } from "../git/objects/commit.ts";
import { escapeComponent, goPathEscape, pathEscapeSegments } from "./escape.ts";
import { ZERO_TIME } from "./user.ts";
import { goTime, utcTime } from "./time.ts";

/** Where the repository lives: its API and web URLs. */
export interface RepoUrls {
  api: string;
  html: string;
}

/** The revision a request named, as Gitea's RefCommit holds it. */
export interface RefCommit {
  /** The `ref` as the caller gave it (or the default branch). */
  inputRef: string;
  kind: "branch" | "tag" | "commit";
  /** Short name of the branch or tag, or the commit id. */
  name: string;
  /** The commit the revision resolves to. */
  commit: string;
}

/** The last commit that changed an entry. */
export interface LastCommit {
  oid: string;
  author: Signature;
  committer: Signature;
}


/** Go's url.QueryEscape: space as `+`. */
export const goQueryEscape = (s: string) => escapeComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, "+");


/** Gitea's RefName.RefWebLinkPath. */
export const refWebLinkPath = (r: RefCommit) => `${r.kind}/${r.kind === "commit" ? r.name : pathEscapeSegments(r.name)}`;

export function repoUrls(rootUrl: string, owner: string, name: string): RepoUrls {
  return { api: `${rootUrl}api/v1/repos/${goPathEscape(owner)}/${goPathEscape(name)}`, html: `${rootUrl}${goPathEscape(owner)}/${goPathEscape(name)}` };
}


/** Gitea's ContentType of a tree entry. */
export const contentType = (mode: string) => (mode === "40000" ? "dir" : mode === "160000" ? "submodule" : mode === "120000" ? "symlink" : "file");

/** What a ContentsResponse needs besides the entry. */
export interface EntryExtras {
  size: number;
  /** Base64 of the file (files only, when read and not too large). */
  content?: string | null;
  /** A symlink's target. */
  target?: string | null;
  /** A submodule's URL from `.gitmodules`. */
  submoduleUrl?: string | null;
  last?: LastCommit | null;
  /** The last commit's message (contents-ext `includes=commit_message`). */
  lastMessage?: string | null;
  /** The object an LFS pointer file names. */
  lfs?: { oid: string; size: number } | null;
}

/** Gitea's getFileContentsByEntryInternal. */
export function toContentsResponse(urls: RepoUrls, ref: RefCommit, e: PathEntry, x: EntryExtras) {
  const type = contentType(e.mode);
  const self = `${urls.api}/contents/${pathEscapeSegments(e.path)}?ref=${goQueryEscape(ref.inputRef)}`;
  const submodule = type === "submodule";
  const html = submodule ? null : `${urls.html}/src/${refWebLinkPath(ref)}/${pathEscapeSegments(e.path)}`;
  const git = submodule ? null : `${urls.api}/git/blobs/${goPathEscape(e.oid)}`;
  const download = type === "file" || type === "symlink" ? `${urls.html}/raw/${refWebLinkPath(ref)}/${pathEscapeSegments(e.path)}` : null;
  const file = type === "file" && x.content !== undefined && x.content !== null;
  const out: Record<string, unknown> = {
    name: e.name,
    path: e.path,
    sha: e.oid,
  };
  if (x.last) {
    out.last_commit_sha = x.last.oid;
    out.last_committer_date = goTime(x.last.committer);
    out.last_author_date = goTime(x.last.author);
  }
  if (typeof x.lastMessage === "string") out.last_commit_message = x.lastMessage;
  Object.assign(out, {
    type,
    size: x.size,
    encoding: file ? "base64" : null,
    content: file ? x.content : null,
    target: type === "symlink" ? (x.target ?? null) : null,
    url: self,
    html_url: html,
    git_url: git,
    download_url: download,
    submodule_git_url: submodule ? (x.submoduleUrl ?? null) : null,
    ...(x.lfs ? { lfs_oid: x.lfs.oid, lfs_size: x.lfs.size } : {}),
    // Gitea's FileLinksResponse: pointers without omitempty, so a submodule's git and html are null
    _links: { self, git, html },
  });
  return out as { name: string; path: string; sha: string; type: string; size: number } & Record<string, unknown>;
}

/** Gitea's GetFileCommitResponse: its CommitMetas leave `created` unset, which Go writes as the zero time. */
export function toFileCommitResponse(urls: RepoUrls, c: CommitInfo) {
  const who = (s: Signature) => ({ name: s.name, email: s.email, date: utcTime(s) });
  return {
    url: `${urls.api}/git/commits/${c.oid}`,
    sha: c.oid,
    created: ZERO_TIME,
    html_url: `${urls.html}/commit/${c.oid}`,
    author: who(c.author),
    committer: who(c.committer),
    parents: c.parents.map((p) => ({ url: `${urls.api}/git/commits/${p}`, sha: p, created: ZERO_TIME })),
    message: c.message,
    tree: { url: `${urls.api}/git/trees/${c.tree}`, sha: c.tree, created: ZERO_TIME },
  };
}

/** Gitea's verification of an unsigned commit (commits made here are never signed). */
export const UNSIGNED_VERIFICATION = { verified: false, reason: "gpg.error.not_signed_commit", signature: "", signer: null, payload: "" } as const;
