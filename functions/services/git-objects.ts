/**
 * Git objects by id (Gitea routers/api/v1/repo/tree.go, blob.go and tag.go's GetAnnotatedTag; files
 * service GetTreeBySHA and GetBlobBySHA). One read round trip: the repository and its git state
 * (openRepo), then the object store. Gitea answers every failure of these three with 400 and the
 * error's text; so do we. Only objects a ref reaches are served (Repository.reaches): what a
 * force-push or a deleted ref left behind is as missing here as on the wire.
 */
import { type GitEntryInfo, toAnnotatedTag, toGitBlob, toGitTree } from "../convert/git.ts";
import { parseTag, splitTagSignature } from "../git/objects/commit.ts";
import type { Repository } from "../git/repo/repository.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import type { Ctx } from "../lib/context.ts";
import { badRequest } from "../lib/errors.ts";
import { LFS_POINTER_MAX, lfsPointer, MAX_BLOB_SIZE } from "./contents.ts";
import { openRepo, resolveObject, signedOf } from "./git-repo.ts";

/** Gitea's `[api] DEFAULT_GIT_TREES_PER_PAGE`: the most entries a page of a tree holds. */
export const GIT_TREES_PER_PAGE = 1000;

/** git's ErrNotExist text. */
const notExist = (id: string) => `object does not exist [id: ${id}, rel_path: ]`;

/**
 * Go's NewIDFromString: a full SHA-1 id in hex (either case; answered lower-case), or its error.
 * `{ error }` carries Go's message: a length no object format has, or hex.DecodeString's.
 */
function fullId(sha: string): { id: string } | { error: string } {
  // Go counts bytes
  const length = Buffer.byteLength(sha);
  if (length !== 40) return { error: `length ${length} has no matched object format: ${sha}` };
  const bad = /[^0-9a-fA-F]/.exec(sha);
  if (bad) return { error: `encoding/hex: invalid byte: U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")} ${JSON.stringify(bad[0]).replace(/^"|"$/g, "'")}` };
  return { id: sha.toLowerCase() };
}

export interface TreeQuery {
  recursive: boolean;
  page: number;
  perPage: number;
}

/**
 * GET /repos/{owner}/{repo}/git/trees/{sha} (GetTree): `sha` a full id, else any name
 * cat-file reads (resolveObject: a branch, a tag, an abbreviated id, `rev:path`). A commit or tag
 * answers with its tree but keeps its own id as `sha` (Gitea's ResolvedID). Entries in git's
 * order; `recursive` lists every tree and file below, each tree before what it holds (`git
 * ls-tree -r -t`). Pages of `per_page` (≤ 0 or > 1000: 1000); a page past the end lists `null`.
 * Unknown, left behind, or a blob: 400 `sha not found [<sha>]`.
 */
export async function getTree(ctx: Ctx, objects: ObjectStore, owner: string, name: string, sha: string, q: TreeQuery) {
  const o = await openRepo(ctx, objects, owner, name);
  const repo = o.repo;
  const notFound = badRequest(`sha not found [${sha}]`);
  // both lookups count only what a ref reaches (Repository.objectById)
  const id = sha.length === 40 ? ("id" in fullId(sha) ? await repo.objectById(sha) : null) : await resolveObject(repo, sha);
  if (!id) throw notFound;
  const tree = await treeOf(repo, id);
  if (!tree) throw notFound;
  const entries: Omit<GitEntryInfo, "size">[] = [];
  const list = async (treeOid: string, prefix: string) => {
    for (const e of await repo.readTree(treeOid)) {
      const path = `${prefix}${e.name}`;
      entries.push({ path, mode: e.mode, oid: e.oid });
      if (q.recursive && e.mode === "40000") await list(e.oid, `${path}/`);
    }
  };
  await list(tree, "");
  const perPage = q.perPage <= 0 || q.perPage > GIT_TREES_PER_PAGE ? GIT_TREES_PER_PAGE : q.perPage;
  const page = Math.max(q.page, 1);
  const start = perPage * (page - 1);
  if (start >= entries.length) return toGitTree(o.urls, id, page, entries.length, null, false);
  const end = Math.min(start + perPage, entries.length);
  // sizes only for the page: a blob's size is read from its pack entry's header
  const sized = await Promise.all(
    entries.slice(start, end).map(async (e) => ({ ...e, size: e.mode === "40000" || e.mode === "160000" ? 0 : ((await repo.reader.sizeOf(e.oid)) ?? 0) })),
  );
  return toGitTree(o.urls, id, page, entries.length, sized, end < entries.length);
}

/** The tree an object stands for: a tree itself, a commit's, a tag's commit's (tags peeled to a commit, as Gitea's getTree). */
async function treeOf(repo: Repository, oid: string): Promise<string | null> {
  let cur = oid;
  for (let i = 0; i < 100; i++) {
    const o = await repo.reader.read(cur);
    if (!o) return null;
    if (o.type === "tree") return i === 0 ? cur : null;
    if (o.type === "commit") return (await repo.commits.get(cur)).tree;
    if (o.type !== "tag") return null;
    cur = parseTag(o.data).object;
  }
  return null;
}

/**
 * GET /repos/{owner}/{repo}/git/blobs/{sha} (GetBlob): `sha` a full id (Go's NewIDFromString:
 * its error text otherwise). The object's bytes in base64 — whatever its type, as Gitea's
 * cat-file — none past `[api] DEFAULT_MAX_BLOB_SIZE`; an LFS pointer names its object.
 */
export async function getBlob(ctx: Ctx, objects: ObjectStore, owner: string, name: string, sha: string) {
  const o = await openRepo(ctx, objects, owner, name);
  const parsed = fullId(sha);
  if ("error" in parsed) throw badRequest(parsed.error);
  const id = parsed.id;
  if (!(await o.repo.objectById(id))) throw badRequest(notExist(id));
  const size = (await o.repo.reader.sizeOf(id)) ?? 0;
  if (size > MAX_BLOB_SIZE) return toGitBlob(o.urls, id, size, null, null);
  const obj = (await o.repo.reader.read(id))!;
  const content = Buffer.from(obj.data.buffer, obj.data.byteOffset, obj.data.byteLength).toString("base64");
  return toGitBlob(o.urls, id, size, content, size > 0 && size < LFS_POINTER_MAX ? lfsPointer(obj.data) : null);
}

/**
 * GET /repos/{owner}/{repo}/git/tags/{sha} (GetAnnotatedTag): `sha` the full id of an annotated
 * tag object a tag ref names (Gitea's GetTagNameBySHA: the first such ref by name gives `tag`).
 * A lightweight tag's commit, a tag object no ref names, or one that does not peel to a commit: 400.
 */
export async function getAnnotatedTag(ctx: Ctx, objects: ObjectStore, owner: string, name: string, sha: string) {
  const o = await openRepo(ctx, objects, owner, name);
  const parsed = fullId(sha);
  if ("error" in parsed) throw badRequest(parsed.error);
  const id = parsed.id;
  const ref = o.repo.tags().find((r) => r.oid === id);
  if (!ref || (await o.repo.reader.typeOf(id)) !== "tag") throw badRequest(notExist(id));
  const tag = parseTag((await o.repo.reader.read(id))!.data);
  const commit = await o.repo.commits.peel(id).catch(() => null);
  if (commit?.type !== "commit") throw badRequest(notExist(id));
  const c = await o.repo.readCommit(commit.oid);
  const info = { name: ref.name.slice("refs/tags/".length), id, object: tag.object, tagger: tag.tagger, message: splitTagSignature(tag.message).message };
  return toAnnotatedTag(o.urls, info, commit.oid, await signedOf(o.repo, c.oid, c.extraHeaders));
}
