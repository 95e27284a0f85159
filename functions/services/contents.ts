/**
 * File contents through the API (Gitea routers/api/v1/repo/file.go, services/repository/files):
 * reading an entry or a directory at a ref, the raw bytes of a file, and writing files — each
 * write ONE commit through the git engine's createCommit, the branch moved by the RefStore's
 * compare-and-swap in the same write batch as the repository row and the activity rows.
 *
 * Round trips: a read is ONE (caller, repository, permission, refs and pack catalog in one batch);
 * a write is TWO (that read, then the commit batch). Objects come from the object store.
 */
import { activeHooksRead, hookSourceOf } from "./common.ts";
import { LibsqlRefStore } from "../db/queries/git-refs.ts";
import { pushEventRows } from "../events/push.ts";
import { identPart, MAX_SIGNATURE_TIME, signatureTimeProblem, type Signature } from "../git/objects/commit.ts";
import { entryNamed, MODE } from "../git/objects/tree.ts";
import { createCommit, type FileChange } from "../git/repo/commit.ts";
import { Repository, type PathEntry } from "../git/repo/repository.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import { LruCache, type ObjectSource } from "../git/pack/reader.ts";
import { DateQueue } from "../git/walk.ts";
import type { Ctx } from "../lib/context.ts";
import { ApiError, badRequest, forbidden, NOT_FOUND_MESSAGE, notFound, unprocessable } from "../lib/errors.ts";
import { canWrite, UNIT } from "../lib/permissions.ts";
import { toContentsResponse, toFileCommitResponse, repoUrls, UNSIGNED_VERIFICATION, type LastCommit, type RefCommit, type RepoUrls } from "../convert/contents.ts";
import { goPathEscape, pathEscapeSegments } from "../convert/escape.ts";
import type { FileOptions } from "../wire/contents.ts";
import { assignRepo, repoGuard, type Assigned } from "./repos.ts";
import { gitState, prefetched, repoStateFrom } from "./git-state.ts";
import { signatureOf } from "./git-init.ts";
import { packAddedTo } from "./git-maintenance.ts";
import { reqRepoReader, reqRepoWriter } from "../lib/guards.ts";

/** Files larger than this come without `content` (Gitea's `[api] DEFAULT_MAX_BLOB_SIZE`, 10 MiB). */
export const MAX_BLOB_SIZE = 10 * 1024 * 1024;

/**
 * How many commits the last-commit walk reads at most (per request). History beyond it is not
 * searched: an entry whose last change lies further back comes without `last_commit_sha`.
 */
export const LAST_COMMIT_WALK = 5000;

/**
 * What the walk found, by commit and directory, for this process (Node) or isolate (Worker): a
 * commit fixes all of its history, so an entry's last commit seen from it never changes. A read at
 * the same commit walks nothing; after a push, the walk from the new tip stops for each name at the
 * first commit whose answer is known (the old tip, typically). `null`: not found within the walk's
 * budget. Keyed by commit id alone — any repository holding the commit holds the same history.
 */
const lastCommitCache = new LruCache<Map<string, LastCommit | null>>(8 * 1024 * 1024);
const lastCommitKey = (commit: string, dir: string) => `${commit}\0${dir}`;
const lastCommitBytes = (m: Map<string, LastCommit | null>) => {
  let n = 64;
  for (const [name, v] of m) n += 48 + name.length * 2 + (v ? 160 + (v.author.name.length + v.author.email.length + v.committer.name.length + v.committer.email.length) * 2 : 0);
  return n;
};

// ---- opening a repository's git data in the request's read batch ----


/** ONE round trip: the assignment (caller, repository, permission) and the repository's git state. */
async function openRepo(ctx: Ctx, owner: string, name: string, opts: { write?: boolean } = {}) {
  const a = await assignRepo(ctx, owner, name, { ...gitState(ctx, owner, name), ...(opts.write ? activeHooksRead(owner) : {}) });
  return { a, state: repoStateFrom(a.facts.repo, a.named.refs, a.named.packs) };
}

/** reqRepoReader(code): a caller who sees the repository but not its code is refused. */
function reqCodeReader(a: Assigned) {
  reqRepoReader(a.caller, a.perm, UNIT.code);
}

/**
 * The file writes' guards, in Gitea's order: reqRepoReader(code), mustEnableEditor (archived
 * repositories and mirrors take no edits: 423), reqRepoWriter(code) — which repository admins pass;
 * the branch check after the body (`changeFiles`) then needs code write or a site admin.
 */
function reqContentsWriter(a: Assigned) {
  reqCodeReader(a);
  if (a.facts.repo.isArchived || a.facts.repo.isMirror) throw new ApiError(423, "repo is not allowed to edit");
  reqRepoWriter(a.caller, a.perm, UNIT.code);
}

/** The file writes' guard before their body is bound. */
export const contentsWriterGuard = repoGuard(reqContentsWriter);

/** A 404 in Gitea's APIErrorNotFound shape with its own message and `errors`. */
const notFoundWith = (ctx: Ctx, message: string, errors: string[]) => new ApiError(404, message, { body: { message, url: `${ctx.rootUrl}api/swagger`, errors } });

/** git.ErrNotExist's text. */
const objectNotExist = (id: string, relPath: string) => `object does not exist [id: ${id}, rel_path: ${relPath}]`;

// ---- paths ----

/**
 * Path rule: THE normaliser of tree paths (contents, raw, file writes, the commit list's `path`),
 * as git reads a pathspec and Gitea's CleanGitTreePath cleans one: slashes trimmed, empty and `.`
 * components dropped, `..` resolved inside the tree ("" is the root). A path that climbs out of the
 * root (Gitea clamps it at the root; git refuses it as outside the repository), `.git` components
 * (any case) and NUL are refused with Gitea's ErrFilenameInvalid → 422.
 */
export function cleanTreePath(path: string): string {
  const malformed = () => unprocessable(`path contains a malformed path component [path: ${path}]`);
  const parts: string[] = [];
  for (const p of path.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") {
      if (parts.length === 0) throw malformed();
      parts.pop();
    } else if (p.includes("\0") || p.toLowerCase() === ".git") throw malformed();
    else parts.push(p);
  }
  return parts.join("/");
}

// ---- refs ----

/** Gitea's ResolveRefCommit: a full branch or tag ref, a branch, a tag, or a full commit id. */
async function resolveRefCommit(git: Repository, input: string): Promise<RefCommit | null> {
  let kind: RefCommit["kind"] | null = null;
  let short = input;
  let full = "";
  if (input.startsWith("refs/heads/") && git.ref(input)) [kind, short, full] = ["branch", input.slice(11), input];
  else if (input.startsWith("refs/tags/") && git.ref(input)) [kind, short, full] = ["tag", input.slice(10), input];
  else if (!input.startsWith("refs/") && git.ref(`refs/heads/${input}`)) [kind, full] = ["branch", `refs/heads/${input}`];
  else if (!input.startsWith("refs/") && git.ref(`refs/tags/${input}`)) [kind, full] = ["tag", `refs/tags/${input}`];
  else if (/^[0-9a-f]{40}$/.test(input)) [kind, full] = ["commit", input];
  if (!kind) return null;
  const r = await git.resolve(full);
  if (!r) return null;
  return { inputRef: input, kind, name: short, commit: r.oid };
}

// ---- the last commit of entries ----

/**
 * `git log -1 -- <dir>/<name>` for every name at once (git's default history simplification: a
 * commit TREESAME to a parent at the path hands the path to that parent alone; the first commit that
 * differs from every parent, or a root commit holding the path, is its last commit). Reads at most
 * LAST_COMMIT_WALK commits; names not resolved by then are absent from the answer.
 */
export async function lastCommits(git: Repository, from: string, dir: string, names: readonly string[]): Promise<Map<string, LastCommit>> {
  const out = new Map<string, LastCommit>();
  const known = lastCommitCache.get(lastCommitKey(from, dir));
  if (known && names.every((n) => known.has(n))) {
    for (const n of names) {
      const v = known.get(n);
      if (v) out.set(n, v);
    }
    return out;
  }
  const dirParts = dir ? dir.split("/") : [];
  const treeOf = new Map<string, string | null>();
  /** The directory's tree in a commit; null when it does not exist there. */
  const dirTree = async (commit: string): Promise<string | null> => {
    const hit = treeOf.get(commit);
    if (hit !== undefined) return hit;
    let tree: string | null = (await git.commits.get(commit)).tree;
    for (const part of dirParts) {
      const e: { mode: string; oid: string } | undefined = entryNamed(await git.readTree(tree), part);
      tree = e && e.mode === MODE.tree ? e.oid : null;
      if (!tree) break;
    }
    treeOf.set(commit, tree);
    return tree;
  };
  /** One entry of a directory tree as `mode oid`, or null. */
  const entryIn = async (tree: string | null, name: string): Promise<string | null> => {
    const e = tree ? entryNamed(await git.readTree(tree), name) : undefined;
    return e ? `${e.mode} ${e.oid}` : null;
  };
  const entriesOf = new Map<string, Map<string, string>>();
  /** A directory tree's entries (`mode oid` by name); empty for none. */
  const dirEntries = async (tree: string | null): Promise<Map<string, string>> => {
    const key = tree ?? "";
    const hit = entriesOf.get(key);
    if (hit) return hit;
    const m = new Map<string, string>();
    if (tree) for (const e of await git.readTree(tree)) m.set(e.name, `${e.mode} ${e.oid}`);
    entriesOf.set(key, m);
    return m;
  };
  const pending = new Map<string, Set<string>>([[from, new Set(names)]]);
  const queue = new DateQueue();
  queue.push(from, (await git.commits.get(from)).time);
  let left = names.length;
  let walked = 0;
  while (queue.length > 0 && left > 0 && walked++ < LAST_COMMIT_WALK) {
    const { oid } = queue.pop()!;
    const wanted = pending.get(oid);
    pending.delete(oid);
    if (!wanted) continue;
    // a directory of 500,000 names walks them at every commit: other requests run in between
    const y = git.pace.step(1 + (wanted.size >> 4));
    if (y) await y;
    // a name pending here has, from the start, the last commit it has from here
    const cached = lastCommitCache.get(lastCommitKey(oid, dir));
    if (cached) {
      for (const name of wanted) {
        if (!cached.has(name)) continue;
        const v = cached.get(name);
        if (v) out.set(name, v);
        wanted.delete(name);
        left--;
      }
      if (wanted.size === 0) continue;
    }
    const c = await git.commits.get(oid);
    const mineTree = await dirTree(oid);
    const parentTrees = await Promise.all(c.parents.map((p) => dirTree(p)));
    const handed = c.parents.map(() => new Set<string>());
    const resolved: string[] = [];
    // The directory unchanged from a parent (the same tree, or absent in both): every name is
    // TREESAME to that parent, and no tree needs reading — most commits of a long history.
    const sameDir = parentTrees.indexOf(mineTree);
    if (sameDir >= 0) for (const name of wanted) handed[sameDir]!.add(name);
    else {
      // One name (a file's read): found in the parsed trees, no map of every entry built per commit.
      const lookup = wanted.size === 1 ? entryIn : async (tree: string | null, name: string) => (await dirEntries(tree)).get(name) ?? null;
      for (const name of wanted) {
        const key = await lookup(mineTree, name);
        let same = -1;
        for (let i = 0; i < parentTrees.length && same < 0; i++) if ((await lookup(parentTrees[i]!, name)) === key) same = i; // !: i is in range
        if (same >= 0) handed[same]!.add(name);
        else if (key !== null) resolved.push(name);
      }
    }
    if (resolved.length) {
      const info = await git.readCommit(oid);
      for (const name of resolved) out.set(name, { oid, author: info.author, committer: info.committer });
      left -= resolved.length;
    }
    for (const [i, p] of c.parents.entries()) {
      if (handed[i]!.size === 0) continue;
      const set = pending.get(p);
      if (set) for (const n of handed[i]!) set.add(n);
      else {
        pending.set(p, handed[i]!);
        queue.push(p, (await git.commits.get(p)).time);
      }
    }
  }
  const answer = new Map(known);
  for (const n of names) answer.set(n, out.get(n) ?? null);
  lastCommitCache.set(lastCommitKey(from, dir), answer, lastCommitBytes(answer));
  return out;
}

const dirOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");

/** The URL of a submodule at `path` from the commit's `.gitmodules` (Gitea's GetSubModule). */
async function submoduleUrl(git: Repository, commit: string, path: string): Promise<string | null> {
  const e = await git.entryAt(commit, ".gitmodules");
  if (!e || e.type !== "blob") return null;
  const text = new TextDecoder().decode(await git.readBlob(e.oid));
  let cur: { path?: string; url?: string } | null = null;
  const found: { path?: string; url?: string }[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("[")) {
      cur = /^\[submodule\s+"[^"]*"\]$/.test(line) ? {} : null;
      if (cur) found.push(cur);
      continue;
    }
    const m = /^(\w+)\s*=\s*(.*)$/.exec(line);
    if (cur && m) (cur as Record<string, string>)[m[1]!.toLowerCase()] = m[2]!;
  }
  return found.find((s) => s.path === path)?.url || null;
}

/** Gitea's lfs.MetaFileMaxSize: only a blob smaller than this can be an LFS pointer. */
export const LFS_POINTER_MAX = 1024;

/** Gitea's lfs.ReadPointerFromBuffer: the object an LFS pointer file names, or null. */
export function lfsPointer(data: Uint8Array): { oid: string; size: number } | null {
  const text = new TextDecoder().decode(data);
  if (!text.startsWith("version https://git-lfs.github.com/spec/v1")) return null;
  const lines = text.split("\n");
  if (lines.length < 3) return null;
  const oid = lines[1]!.startsWith("oid sha256:") ? lines[1]!.slice(11) : lines[1]!;
  if (!/^[a-f0-9]{64}$/.test(oid)) return null;
  const sizeText = lines[2]!.startsWith("size ") ? lines[2]!.slice(5) : lines[2]!;
  if (!/^[+-]?\d+$/.test(sizeText)) return null;
  const size = Number(sizeText);
  return Number.isSafeInteger(size) && size >= 0 ? { oid, size } : null;
}

/** What of an entry contents-ext adds besides the plain contents answer. */
interface EntryMore {
  /** LFS metadata without the content (`includes=lfs_metadata`). */
  lfs?: boolean;
  /** The last commit's message (`includes=commit_message`). */
  lastMessage?: string | null;
}

/**
 * One entry as ContentsResponse (file content only when `withContent`: then, as Gitea's
 * GetBlobBySHA, an LFS pointer's object too).
 */
async function entryResponse(git: Repository, urls: RepoUrls, ref: RefCommit, e: PathEntry, last: LastCommit | null | undefined, withContent: boolean, more: EntryMore = {}) {
  const lastMessage = more.lastMessage;
  if (e.type === "blob") {
    if (e.mode === MODE.symlink) {
      const data = await git.readBlob(e.oid);
      return toContentsResponse(urls, ref, e, { size: data.length, target: new TextDecoder().decode(data.subarray(0, 1024)), last, lastMessage });
    }
    // Listings need sizes only: read from the pack entry's header, the blob stays unread.
    const size = (await git.reader.sizeOf(e.oid)) ?? 0;
    const data = withContent && size <= MAX_BLOB_SIZE ? await git.readBlob(e.oid) : null;
    const content = data ? Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64") : null;
    const pointer = size > 0 && size < LFS_POINTER_MAX && (data || more.lfs) ? lfsPointer(data ?? (await git.readBlob(e.oid))) : null;
    return toContentsResponse(urls, ref, e, { size, content, last, lastMessage, lfs: pointer });
  }
  if (e.type === "commit") return toContentsResponse(urls, ref, e, { size: 0, submoduleUrl: await submoduleUrl(git, ref.commit, e.path), last, lastMessage });
  return toContentsResponse(urls, ref, e, { size: 0, last, lastMessage });
}

// ---- reading ----

/** Opens the repository's git data for a code read (1 round trip). */
async function openForRead(ctx: Ctx, objects: ObjectStore, owner: string, name: string) {
  const { a, state } = await openRepo(ctx, owner, name);
  reqCodeReader(a);
  const git = await Repository.open({ repoId: String(a.facts.repo.id), objects, state, signal: ctx.signal });
  return { a, git, urls: repoUrls(ctx.rootUrl, a.facts.owner.name, a.facts.repo.name) };
}

/** The repository opened for a read at `ref` (default: the default branch; Gitea's ResolveRefCommit, 404 naming it). */
async function openAtRef(ctx: Ctx, objects: ObjectStore, owner: string, name: string, refParam: string | undefined) {
  const { a, git, urls } = await openForRead(ctx, objects, owner, name);
  const input = refParam?.trim() || a.facts.repo.defaultBranch;
  const ref = await resolveRefCommit(git, input);
  if (!ref) throw notFoundWith(ctx, NOT_FOUND_MESSAGE, [objectNotExist(input, "")]);
  return { git, urls, ref };
}

/** The entry at a path (the path rule) of the revision `ref` names: Gitea's GetContentsOrList lookup, 404 when absent. */
async function openEntry(ctx: Ctx, objects: ObjectStore, owner: string, name: string, rawPath: string, refParam: string | undefined) {
  const opened = await openAtRef(ctx, objects, owner, name, refParam);
  const path = cleanTreePath(rawPath);
  const entry = await opened.git.entryAt(opened.ref.commit, path);
  if (!entry) throw notFoundWith(ctx, "GetContentsOrList", [objectNotExist("", path)]);
  return { ...opened, path, entry };
}

/**
 * GET …/contents[/{filepath}] (repoGetContents, repoGetContentsList): a file, symlink or submodule
 * as one ContentsResponse (a file with its base64 content), a directory as the list of its entries
 * without content; every entry with its last commit.
 */
export async function getContents(ctx: Ctx, objects: ObjectStore, owner: string, name: string, rawPath: string, refParam: string | undefined) {
  const { git, urls, ref, path, entry } = await openEntry(ctx, objects, owner, name, rawPath, refParam);
  if (entry.type !== "tree") {
    const last = await lastCommits(git, ref.commit, dirOf(path), [entry.name]);
    return entryResponse(git, urls, ref, entry, last.get(entry.name), true);
  }
  const list = (await git.listDir(ref.commit, path))!;
  const last = await lastCommits(git, ref.commit, path, list.map((e) => e.name));
  const out = [];
  for (const e of list) {
    const y = git.pace.step();
    if (y) await y;
    out.push(await entryResponse(git, urls, ref, e, last.get(e.name), false));
  }
  return out;
}

/** Gitea's `[api] DEFAULT_MAX_RESPONSE_SIZE`: the file-contents answer stops before its contents pass this. */
export const MAX_RESPONSE_SIZE = 104857600;

/**
 * GET/POST …/file-contents (repoGetFileContents, repoGetFileContentsPost: Gitea's
 * GetContentsListFromTreePaths): each requested path's ContentsResponse with its content, in the
 * request's order — `null` for a path that is not there or not valid — at most `[api]
 * DEFAULT_PAGING_NUM` of them, ending before the base64 contents would pass
 * DEFAULT_MAX_RESPONSE_SIZE. No last-commit fields: Gitea leaves commit metadata out here.
 */
export async function getFileContents(ctx: Ctx, objects: ObjectStore, owner: string, name: string, paths: readonly unknown[] | null, refParam: string | undefined, bound = false) {
  const { git, urls, ref } = await openAtRef(ctx, objects, owner, name, refParam);
  // after the repository, as Gitea's handler: GET's `body` that does not unmarshal (null here) is
  // a 400; POST binds the body, whose `files` is Required (go-chi binding: a missing or empty
  // list), while GET's `{}` is an empty answer
  if (paths === null) throw badRequest("invalid body parameter");
  if (bound && paths.length === 0) throw unprocessable("[Files]: Required");
  const out: (Awaited<ReturnType<typeof entryResponse>> | null)[] = [];
  let size = 0;
  for (const raw of paths) {
    let path: string | null = null;
    try {
      path = typeof raw === "string" ? cleanTreePath(raw) || null : null;
    } catch {
      path = null; // Gitea's ErrFilenameInvalid: this file is null
    }
    const entry = path === null ? null : await git.entryAt(ref.commit, path);
    const file = entry ? await entryResponse(git, urls, ref, entry, undefined, true) : null;
    if (typeof file?.content === "string") size += file.content.length;
    if (size > MAX_RESPONSE_SIZE) break;
    out.push(file);
    if (out.length === ctx.settings.api.defaultPagingNum) break;
  }
  return out;
}

/** What contents-ext's `includes` asks for. */
export interface ExtIncludes {
  fileContent: boolean;
  lfsMetadata: boolean;
  commitMetadata: boolean;
  commitMessage: boolean;
}

/** contents-ext's comma-separated `includes` (empty items skipped); an unknown option is 400, as Gitea. */
export function parseIncludes(v: string | undefined): ExtIncludes {
  const out: ExtIncludes = { fileContent: false, lfsMetadata: false, commitMetadata: false, commitMessage: false };
  const keys: Record<string, keyof ExtIncludes> = { file_content: "fileContent", lfs_metadata: "lfsMetadata", commit_metadata: "commitMetadata", commit_message: "commitMessage" };
  for (const opt of (v ?? "").split(",")) {
    if (opt === "") continue;
    const k = keys[opt];
    if (!k) throw new ApiError(400, `unknown include option ${JSON.stringify(opt)}`);
    out[k] = true;
  }
  return out;
}

/**
 * GET …/contents-ext[/{filepath}] (repoGetContentsExt, Gitea's GetContentsOrList): a file as
 * `{file_contents}` (its content only with `includes=file_content`), a directory as
 * `{dir_contents}` (never content); LFS metadata, the last commit (`last_commit_sha` and dates)
 * and its message only when asked; errors as the contents route's.
 */
export async function getContentsExt(ctx: Ctx, objects: ObjectStore, owner: string, name: string, rawPath: string, refParam: string | undefined, inc: ExtIncludes) {
  const { git, urls, ref, path, entry } = await openEntry(ctx, objects, owner, name, rawPath, refParam);
  const withLast = inc.commitMetadata || inc.commitMessage;
  const messages = new Map<string, string>();
  const messageOf = async (oid: string) => {
    if (!messages.has(oid)) messages.set(oid, (await git.readCommit(oid)).message);
    return messages.get(oid)!;
  };
  const one = async (e: PathEntry, last: LastCommit | undefined, withContent: boolean) =>
    entryResponse(git, urls, ref, e, inc.commitMetadata ? last : undefined, withContent, {
      lfs: inc.lfsMetadata,
      lastMessage: inc.commitMessage && last ? await messageOf(last.oid) : undefined,
    });
  if (entry.type !== "tree") {
    const last = withLast ? (await lastCommits(git, ref.commit, dirOf(path), [entry.name])).get(entry.name) : undefined;
    return { file_contents: await one(entry, last, inc.fileContent) };
  }
  const list = (await git.listDir(ref.commit, path))!;
  const lasts = withLast ? await lastCommits(git, ref.commit, path, list.map((e) => e.name)) : new Map<string, LastCommit>();
  const dir = [];
  for (const e of list) {
    const y = git.pace.step();
    if (y) await y;
    dir.push(await one(e, lasts.get(e.name), false));
  }
  // Go's omitempty: an empty directory listing is left out
  return dir.length ? { dir_contents: dir } : {};
}

/** What the raw route serves. */
export interface RawBlob {
  name: string;
  oid: string;
  objectType: "file" | "symlink";
  lastModified: Date | null;
  /** The repository is public and its owner too (Gitea's public cache). */
  isPublic: boolean;
  /** The bytes (streamed when large), read only when the caller does not hold them already (`null` on a matching ETag). */
  body: ObjectSource | null;
}

/** The kinds of ref Gitea's web paths name: `/raw/branch/…`, `/raw/tag/…`, `/raw/commit/…`. */
export type RawRefType = "branch" | "tag" | "commit";

/**
 * Which file a raw read asks for: `legacy` is the API's `{ref}/{filepath}` guess (with `?ref=`) and
 * the web's deprecated `/raw/*`; a typed ref is the web's `/raw/{branch|tag|commit}/*`; `blob` is
 * `/raw/blob/{sha}`.
 */
export type RawAt = { type: "legacy"; path: string; ref?: string } | { type: RawRefType; path: string } | { type: "blob"; sha: string };

/** A ref a raw path names, the commit it resolves to (null: it does not) and the rest of the path. */
interface RawRef {
  type: RawRefType;
  name: string;
  commit: string | null;
  treePath: string;
}

/**
 * Gitea's getRefNameFromPath: the first (shortest) leading run of `parts` that names a ref under
 * `prefix` — a branch `a/b` wins over `a/b/c` — and the path after it.
 */
async function refPrefixOf(git: Repository, prefix: "refs/heads/" | "refs/tags/", parts: string[]): Promise<{ name: string; commit: string | null; treePath: string } | null> {
  for (let i = 1; i <= parts.length; i++) {
    const name = parts.slice(0, i).join("/");
    if (git.ref(`${prefix}${name}`)) return { name, commit: (await git.resolve(`${prefix}${name}`))?.oid ?? null, treePath: parts.slice(i).join("/") };
  }
  return null;
}

/** Gitea's git.IsStringLikelyCommitID (SHA-1): 7 to 40 hex digits. */
const likelyCommitId = (s: string | undefined): s is string => !!s && /^[0-9a-f]{7,40}$/.test(s);

/**
 * Gitea's getRefName / getRefNameLegacy (services/context/repo.go) for raw paths. `legacy`: a branch
 * (shortest prefix), then a tag, then a full commit id, else the default branch with the whole
 * path. `branch`: a branch prefix, or `HEAD` for the default branch. `tag`: a tag prefix. `commit`:
 * an id of 7–40 hex digits (abbreviated ones resolved), or `HEAD`. Null when the path names none.
 */
async function rawRefOf(git: Repository, defaultBranch: string, at: Exclude<RawAt, { type: "blob" }>): Promise<RawRef | null> {
  const extra = at.type === "legacy" ? (at.ref?.trim() ?? "") : "";
  const parts = [...extra.split("/"), ...at.path.split("/")].filter((p) => p !== "");
  const head = async (): Promise<RawRef> => ({ type: "branch", name: defaultBranch, commit: (await git.resolve(`refs/heads/${defaultBranch}`))?.oid ?? null, treePath: parts.slice(1).join("/") });
  if (at.type === "legacy" || at.type === "branch") {
    const b = await refPrefixOf(git, "refs/heads/", parts);
    if (b) return { type: "branch", ...b };
    if (at.type === "branch") return parts[0] === "HEAD" ? head() : null;
  }
  if (at.type === "legacy" || at.type === "tag") {
    const t = await refPrefixOf(git, "refs/tags/", parts);
    if (t) return { type: "tag", ...t };
    if (at.type === "tag") return null;
  }
  if (at.type === "legacy") {
    if (parts[0] && /^[0-9a-f]{40}$/.test(parts[0])) return { type: "commit", name: parts[0], commit: (await git.resolve(parts[0]))?.oid ?? null, treePath: parts.slice(1).join("/") };
    return { type: "branch", name: defaultBranch, commit: (await git.resolve(`refs/heads/${defaultBranch}`))?.oid ?? null, treePath: at.path };
  }
  if (parts[0] === "HEAD") return { ...(await head()), type: "commit" };
  if (!likelyCommitId(parts[0])) return null;
  // GetCommit of the id alone (an abbreviated one too), never a branch or tag of that name
  const id = await git.objectById(parts[0]);
  return { type: "commit", name: parts[0], commit: id && (await git.reader.typeOf(id)) === "commit" ? id : null, treePath: parts.slice(1).join("/") };
}

/** ONE round trip: the repository, readable code, not empty (Gitea's MustBeNotEmpty), opened. */
async function openRawRepo(ctx: Ctx, objects: ObjectStore, owner: string, name: string) {
  const { state, a } = await openRepo(ctx, owner, name);
  reqCodeReader(a);
  if (!state.refs.some((r) => r.name.startsWith("refs/heads/"))) throw notFound();
  return { a, git: await Repository.open({ repoId: String(a.facts.repo.id), objects, state, signal: ctx.signal }) };
}

/**
 * GET …/raw/{filepath} and …/media/{filepath} (Gitea's RepoRefForAPI + GetRawFile), and the web's
 * `/{owner}/{repo}/raw/{branch|tag|commit}/{ref}/{path}` and `/raw/blob/{sha}` (RepoRefByType +
 * SingleDownload / DownloadByID): the ref as `rawRefOf` reads it. `etag` (If-None-Match) lets the
 * bytes stay unread when they match.
 */
export async function getRawFile(ctx: Ctx, objects: ObjectStore, owner: string, name: string, at: RawAt, ifNoneMatch?: string | null): Promise<RawBlob> {
  const { a, git } = await openRawRepo(ctx, objects, owner, name);
  const repo = a.facts.repo;
  const isPublic = !repo.isPrivate && a.facts.owner.visibility === 0;
  const matchesTag = (oid: string) => !!ifNoneMatch && (ifNoneMatch.trim() === "*" || [...ifNoneMatch.matchAll(/(?:W\/)?("[^"]*")/g)].some((m) => m[1] === `"${oid}"`));
  if (at.type === "blob") {
    // DownloadByID: GetBlob of a full id; no tree path, so Gitea's file name is path.Base("") = "."
    const oid = /^[0-9a-f]{40}$/.test(at.sha) ? await git.objectById(at.sha) : null;
    if (!oid || (await git.reader.typeOf(oid)) !== "blob") throw notFound();
    const matches = matchesTag(oid);
    return { name: ".", oid, objectType: "file", lastModified: null, isPublic, body: matches ? null : await git.blobSource(oid) };
  }
  const ref = await rawRefOf(git, repo.defaultBranch, at);
  if (!ref?.commit) throw notFoundWith(ctx, "unable to find a git ref", []);
  const path = cleanTreePath(ref.treePath);
  const entry = await git.entryAt(ref.commit, path);
  if (!entry) throw notFound();
  if (entry.type !== "blob") throw notFoundWith(ctx, "getBlobForEntry", []);
  const matches = matchesTag(entry.oid);
  // A 304 carries no Last-Modified (RFC 9110 15.4.5): the history walk is for a 200 only.
  const last = matches ? undefined : (await lastCommits(git, ref.commit, dirOf(path), [entry.name])).get(entry.name);
  return {
    name: entry.name,
    oid: entry.oid,
    objectType: entry.mode === MODE.symlink ? "symlink" : "file",
    // an HTTP date needs a four-digit year: a commit time outside that range sends none
    lastModified: last && last.committer.timestamp >= 0 && last.committer.timestamp <= MAX_SIGNATURE_TIME ? new Date(last.committer.timestamp * 1000) : null,
    isPublic,
    body: matches ? null : await git.blobSource(entry.oid),
  };
}

/**
 * The web's deprecated `/{owner}/{repo}/raw/*` (RepoRefByType with the legacy guess): Gitea
 * resolves the ref as the API does and redirects to the typed path,
 * `{repo link}/raw/{branch|tag|commit}/{ref}/{path}` (each segment escaped as Go's url.PathEscape).
 */
export async function legacyRawLocation(ctx: Ctx, objects: ObjectStore, owner: string, name: string, reqPath: string, kind: "raw" | "media"): Promise<string> {
  const { a, git } = await openRawRepo(ctx, objects, owner, name);
  const repo = a.facts.repo;
  const ref = await rawRefOf(git, repo.defaultBranch, { type: "legacy", path: reqPath });
  if (!ref?.commit) throw notFound();
  const link = `${new URL(ctx.rootUrl).pathname}${goPathEscape(a.facts.owner.name)}/${goPathEscape(repo.name)}`;
  return `${link}/${kind}/${ref.type}/${pathEscapeSegments(ref.name)}${ref.treePath ? `/${pathEscapeSegments(ref.treePath)}` : ""}`;
}

// ---- writing ----

/** One file operation of a change (Gitea's ChangeRepoFile). */
export interface FileOperation {
  operation: "create" | "update" | "upload" | "rename" | "delete";
  path: string;
  /** Base64, as the API takes it. */
  content?: string;
  sha?: string;
  fromPath?: string;
}

/** Go's base64.StdEncoding.DecodeString (CR and LF ignored): the bytes, or its error text. */
export function decodeBase64(s: string): Uint8Array | string {
  const clean = s.replace(/[\r\n]/g, "");
  const bad = /[^A-Za-z0-9+/=]/.exec(clean);
  const pad = clean.indexOf("=");
  if (bad && (pad < 0 || bad.index < pad)) return `illegal base64 data at input byte ${bad.index}`;
  if (pad >= 0) {
    const tail = clean.slice(pad);
    if (!/^={1,2}$/.test(tail) || clean.length % 4 !== 0 || (tail.length === 2 && clean.length % 4 !== 0)) return `illegal base64 data at input byte ${pad}`;
  } else if (clean.length % 4 !== 0) return `illegal base64 data at input byte ${clean.length - (clean.length % 4)}`;
  return new Uint8Array(Buffer.from(clean, "base64"));
}

/** Gitea's default commit message (`repo.editor.add/update/delete`). */
function defaultMessage(ops: FileOperation[]): string {
  const of = (kinds: string[]) => ops.filter((o) => kinds.includes(o.operation)).map((o) => o.path);
  const lines: string[] = [];
  const created = of(["create"]);
  const updated = of(["update", "upload", "rename"]);
  const deleted = of(["delete"]);
  if (created.length) lines.push(`Add ${created.join(", ")}`);
  if (updated.length) lines.push(`Update ${updated.join(", ")}`);
  if (deleted.length) lines.push(`Delete ${deleted.join(", ")}`);
  return lines.join("\n");
}

/**
 * A Go time.Time from RFC 3339 as a git signature time (seconds and the written offset as git's
 * ±hhmm). Date rule: a time git cannot store (before 1970) or the API cannot show (after 9999) is
 * 422, before anything is written.
 */
function signatureTime(iso: string | undefined, now: Date): { timestamp: number; timezone: string } {
  if (!iso) return { timestamp: Math.floor(now.getTime() / 1000), timezone: "+0000" };
  const ms = Date.parse(iso);
  const m = /([+-])(\d\d):?(\d\d)$/.exec(iso);
  if (Number.isNaN(ms)) throw unprocessable(`[Dates]: parsing time ${JSON.stringify(iso)} as RFC 3339 failed`);
  const timestamp = Math.floor(ms / 1000);
  if (signatureTimeProblem(timestamp)) throw unprocessable(`[Dates]: ${iso} is out of range: git commits hold times from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z`);
  return { timestamp, timezone: m ? `${m[1]}${m[2]}${m[3]}` : "+0000" };
}

const given = (i: { name?: string; email?: string } | undefined) => (i?.name && i.email ? { name: i.name, email: i.email } : null);


/** Which answer a change gives: one file (create/update), a deleted file, or every file (ChangeFiles). */
export type ChangeKind = "file" | "delete" | "files";

/**
 * Gitea's ChangeRepoFiles through the API: the route guards (code reader, editor enabled, code
 * writer), Gitea's checks against the base commit with its messages, then ONE commit on the
 * target branch (created from `branch` when `new_branch` names another one). Answers the
 * FileResponse / FileDeleteResponse / FilesResponse and whether a file was created (for PUT's 201).
 */
export async function changeFiles(ctx: Ctx, objects: ObjectStore, owner: string, name: string, form: FileOptions, ops: FileOperation[], kind: ChangeKind) {
  const { a, state } = await openRepo(ctx, owner, name, { write: true });
  reqContentsWriter(a);
  const repo = a.facts.repo;
  const caller = a.caller!;
  // ReqChangeRepoFileOptionsAndCheck: CanWriteToBranch (code write) or a site admin
  if (!canWrite(a.perm, UNIT.code) && !caller.isAdmin) throw forbidden("user should have a permission to write to the target branch");

  const contents = new Map<FileOperation, Uint8Array>();
  let total = 0;
  for (const op of ops) {
    if (op.operation === "delete" || op.content === undefined) continue;
    const bytes = decodeBase64(op.content);
    if (typeof bytes === "string") throw unprocessable(bytes);
    contents.set(op, bytes);
    total += bytes.length;
  }
  // [git] MAX_PUSH_SIZE: what a push may carry, an API write may too.
  if (total > ctx.settings.git.maxPushBytes) throw new ApiError(413, `the files exceed the maximum allowed size (${ctx.settings.git.maxPushBytes} bytes)`);

  const git = await Repository.open({ repoId: String(repo.id), objects, state });
  const oldBranch = form.branch || repo.defaultBranch;
  const newBranch = form.new_branch || oldBranch;
  const hasOldBranch = !!git.ref(`refs/heads/${oldBranch}`);
  if (!hasOldBranch && !git.isEmpty) throw new ApiError(404, `branch does not exist [repo_id: ${repo.id} name: ${oldBranch}]`);
  for (const op of ops) {
    const raw = op.path;
    op.path = cleanTreePath(raw);
    if (!op.path) throw unprocessable(`path contains a malformed path component [path: ${raw}]`);
    op.fromPath = op.fromPath ? cleanTreePath(op.fromPath) : op.path;
  }
  // force_push is not served: an existing new_branch is refused either way.
  if (newBranch !== oldBranch && git.ref(`refs/heads/${newBranch}`)) throw unprocessable(`branch already exists [name: ${newBranch}]`);
  if (!hasOldBranch && ops.some((o) => o.operation === "delete")) throw new ApiError(404, `branch does not exist [name: ${oldBranch}]`);

  const changes: FileChange[] = [];
  let created = false;
  const base = hasOldBranch ? (await git.resolve(`refs/heads/${oldBranch}`))!.oid : null;
  for (const op of ops) {
    let executable = false;
    let from: PathEntry | null = null;
    if (base && op.operation !== "create") {
      // handleCheckErrors: the old entry and its sha.
      from = await git.entryAt(base, op.fromPath!);
      if (!from && op.operation !== "upload") throw new ApiError(404, objectNotExist("", op.fromPath!));
      if (op.sha && op.sha !== (from?.oid ?? "")) throw unprocessable(`sha does not match [given: ${op.sha}, expected: ${from?.oid ?? ""}]`);
      executable = from?.mode === MODE.executable;
    }
    if (base && op.operation !== "delete") {
      // The target path: no file on the way, no directory or symlink at it, no file unless updating it.
      const parts = op.path.split("/");
      for (let i = 0; i < parts.length; i++) {
        const sub = parts.slice(0, i + 1).join("/");
        const e = await git.entryAt(base, sub);
        if (!e) break;
        if (i < parts.length - 1) {
          if (e.type !== "tree") throw unprocessable(`a file exists where you’re trying to create a subdirectory [path: ${sub}]`);
        } else if (e.mode === MODE.symlink) throw unprocessable(`a symbolic link exists where you’re trying to create a subdirectory [path: ${sub}]`);
        else if (e.type === "tree") throw unprocessable(`a directory exists where you’re trying to create a file [path: ${sub}]`);
        else if (op.fromPath !== op.path || op.operation === "create") throw unprocessable(`repository file already exists [path: ${op.path}]`);
      }
    }
    if (op.operation === "delete") {
      if (from && from.type !== "blob") throw unprocessable(`a directory exists where you’re trying to create a file [path: ${op.fromPath}]`);
      changes.push({ op: "delete", path: op.path, expect: from?.oid ?? "present" });
      continue;
    }
    if (op.fromPath !== op.path && from) changes.push({ op: "delete", path: op.fromPath!, expect: from.oid });
    const bytes = contents.get(op) ?? (from && op.operation === "rename" ? await git.readBlob(from.oid) : new Uint8Array(0));
    const atTarget = base && op.fromPath === op.path ? from : null;
    // PUT without sha creates the file when it is not there (201).
    if (op.operation === "create" || (op.operation === "upload" && !atTarget)) created = true;
    changes.push({ op: "put", path: op.path, content: bytes, mode: executable ? MODE.executable : MODE.file, expect: atTarget ? atTarget.oid : "absent" });
  }

  const now = new Date();
  const doer = signatureOf(caller.row, ctx.settings.service.noReplyAddress ?? `noreply.${new URL(ctx.rootUrl).hostname}`, now);
  const author = given(form.author) ?? given(form.committer) ?? doer;
  const committer = given(form.committer) ?? given(form.author) ?? doer;
  const authorSig: Signature = { ...author, ...signatureTime(form.dates?.author, now) };
  const committerSig: Signature = { ...committer, ...signatureTime(form.dates?.committer, now) };
  // Gitea's CommitTreeWithDate: the trimmed message, "\n", then with signoff "\nSigned-off-by: <sig>"
  // and no newline after it (commit-tree stores what it is given)
  let message = (form.message ?? "").trim() || defaultMessage(ops);
  message += "\n";
  // git's sign-off trailer names the committer as its ident line does (identPart).
  if (form.signoff) message += `\nSigned-off-by: ${identPart(committer.name)} <${identPart(committer.email)}>`;

  const hooks = hookSourceOf(ctx, a, caller.row, (a.named as { activeHooks?: number[] }).activeHooks);
  const events = pushEventRows({ actUserId: caller.id, ownerId: repo.ownerId, ownerName: a.facts.owner.name, repoName: repo.name, isPrivate: repo.isPrivate, hooks });
  const refs = prefetched(new LibsqlRefStore(ctx.driver, events, packAddedTo(ctx.outbox)), String(repo.id), state);
  const out = await createCommit(
    { repoId: String(repo.id), objects, refs, state, commitFiles: !!hooks },
    { branch: newBranch, startFrom: newBranch !== oldBranch && hasOldBranch ? `refs/heads/${oldBranch}` : undefined, message, author: authorSig, committer: committerSig, changes },
  );

  // The answer, read from the new commit (its pack is in the object store already).
  const after = await Repository.open({ repoId: String(repo.id), objects, state: { ...state, packs: [...state.packs, out.pack] } });
  const urls = repoUrls(ctx.rootUrl, a.facts.owner.name, repo.name);
  const ref: RefCommit = { inputRef: newBranch, kind: "branch", name: newBranch, commit: out.commit };
  // one after another: concurrent lookups would each parse the same (large) trees before the first is cached
  const entries: (PathEntry | null)[] = [];
  for (const op of ops) entries.push(op.operation === "delete" ? null : await after.entryAt(out.commit, op.path));
  // the last commits of a directory's files in one walk (one per file was quadratic in files)
  const names = new Map<string, string[]>();
  for (const e of entries) {
    if (!e) continue;
    const list = names.get(dirOf(e.path));
    if (list) list.push(e.name);
    else names.set(dirOf(e.path), [e.name]);
  }
  const lasts = new Map<string, LastCommit>();
  for (const [dir, list] of names) for (const [name, last] of await lastCommits(after, out.commit, dir, list)) lasts.set(dir ? `${dir}/${name}` : name, last);
  const files = [];
  for (const e of entries) files.push(e ? await entryResponse(after, urls, ref, e, lasts.get(e.path), true) : null);
  const commit = toFileCommitResponse(urls, await after.readCommit(out.commit));
  if (kind === "files") return { created, body: { files, commit, verification: UNSIGNED_VERIFICATION } };
  if (kind === "delete") return { created, body: { content: null, commit, verification: UNSIGNED_VERIFICATION } };
  return { created, body: { content: files[0] ?? null, commit, verification: UNSIGNED_VERIFICATION } };
}
