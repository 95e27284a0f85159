/**
 * Tags (Gitea routers/api/v1/repo/tag.go, services/release CreateNewTag and DeleteReleaseByID for
 * a plain tag). Reads: one round trip (openRepo), then the object store. Create and delete are
 * pushes in effect: the ref moves by the RefStore's compare-and-swap commit with Gitea's activity
 * and webhook rows (push_tag / delete_tag, create / delete) in that write batch — two round trips.
 */
import { type TagInfo, toTag } from "../convert/git.ts";
import { buildPushEvent } from "../git/events.ts";
import { parseTag, serializeTag, splitTagSignature, stripspace } from "../git/objects/commit.ts";
import { PackBuilder } from "../git/pack/builder.ts";
import { isGitRefName, refNameLengthProblem } from "../git/refname.ts";
import type { Repository } from "../git/repo/repository.ts";
import { type ObjectStore, packFileNames } from "../git/storage/object-store.ts";
import { commitMayHaveLanded, type Ref } from "../git/storage/ref-store.ts";
import type { Ctx } from "../lib/context.ts";
import { ApiError, conflict, notFound, unprocessable } from "../lib/errors.ts";
import { commitWith, eventLimits, reqCodeWriter } from "./branches.ts";
import { signatureOf } from "./git-init.ts";
import { openRepo, resolveObject } from "./git-repo.ts";

const TAGS = "refs/tags/";

/** A tag as listed, with the times Gitea's order reads. */
interface ListedTag extends TagInfo {
  /** The creator's time (`%(creator)`): the tagger's, a lightweight tag's committer's; none: -∞. */
  when: number;
  /** `%(*creatordate)`: the time of the object an annotated tag names; a lightweight tag has none. */
  derefWhen: number;
}

/** Seconds of a signature, -∞ without one (Go's zero time sorts before every other). */
const timeOf = (s: { timestamp: number } | null | undefined) => s?.timestamp ?? Number.NEGATIVE_INFINITY;

/** The creator time of an object (`%(creatordate)`): a commit's committer, a tag's tagger. */
async function creatorTime(repo: Repository, oid: string): Promise<number> {
  const o = await repo.reader.read(oid);
  if (o?.type === "commit") return (await repo.commits.get(oid)).time;
  if (o?.type === "tag") return timeOf(parseTag(o.data).tagger);
  return Number.NEGATIVE_INFINITY;
}

/** Gitea's git.Tag of a tag ref (its for-each-ref parse): an annotated tag's own fields, a lightweight tag's commit's. */
async function tagOf(repo: Repository, ref: Ref): Promise<ListedTag> {
  const name = ref.name.slice(TAGS.length);
  const o = await repo.reader.read(ref.oid);
  if (o?.type === "tag") {
    const t = parseTag(o.data);
    return { name, id: ref.oid, object: t.object, tagger: t.tagger, message: splitTagSignature(t.message).message, when: timeOf(t.tagger), derefWhen: await creatorTime(repo, t.object) };
  }
  if (o?.type === "commit") {
    const c = await repo.readCommit(ref.oid);
    return { name, id: ref.oid, object: ref.oid, tagger: c.committer, message: c.message, when: c.committer.timestamp, derefWhen: Number.NEGATIVE_INFINITY };
  }
  // a tag of a tree or blob: nothing to show but its id
  return { name, id: ref.oid, object: ref.oid, tagger: null, message: "", when: Number.NEGATIVE_INFINITY, derefWhen: Number.NEGATIVE_INFINITY };
}

/**
 * Gitea's order (GetTagInfos): newest creator time first; equal times in git's `for-each-ref
 * --sort=-*creatordate` order — the named object's time, newest first (lightweight tags have
 * none), then the ref name. Two missing times give NaN (-∞ − -∞), which `||` passes on as a tie.
 */
const byGiteaOrder = (a: ListedTag, b: ListedTag) => b.when - a.when || b.derefWhen - a.derefWhen || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** What the tag list's `page`/`limit` select: no page, or one ≤ 0 (Gitea's FormInt and PaginateSlice), is every tag. */
export interface TagPage {
  page: number;
  limit: number;
}

/**
 * GET /repos/{owner}/{repo}/tags (repoListTags): every tag in Gitea's order; `page` ≥ 1 selects
 * `limit` of them, no page lists them all (Gitea: page 0 skips PaginateSlice).
 */
export async function listTags(ctx: Ctx, objects: ObjectStore, owner: string, name: string, page: TagPage) {
  const o = await openRepo(ctx, objects, owner, name);
  const all = await Promise.all(o.repo.tags().map((r) => tagOf(o.repo, r)));
  all.sort(byGiteaOrder);
  const shown = page.page <= 0 ? all : all.slice((page.page - 1) * page.limit, page.page * page.limit);
  return { total: all.length, tags: shown.map((t) => toTag(o.urls, t)) };
}

/** GET /repos/{owner}/{repo}/tags/{tag} (repoGetTag): 404 "tag doesn't exist: <tag>". */
export async function getTag(ctx: Ctx, objects: ObjectStore, owner: string, name: string, tag: string) {
  const o = await openRepo(ctx, objects, owner, name);
  const ref = o.repo.ref(`${TAGS}${tag}`);
  if (!ref) throw notFound(`tag doesn't exist: ${tag}`);
  return toTag(o.urls, await tagOf(o.repo, ref));
}

export interface CreateTagForm {
  tag_name: string;
  message?: string;
  target?: string;
}

/** git's ErrNotExist text. */
const notExist = (id: string) => `object does not exist [id: ${id}, rel_path: ]`;

/**
 * POST /repos/{owner}/{repo}/tags (repoCreateTag) → 201. Gitea's order: the target (default: the
 * default branch; a branch, tag, commit id or any name git reads, peeled to its commit) else 404
 * "target not found: …"; a tag of that name in any case (Gitea's release rows compare lower-cased)
 * 409; a name git refuses (`git check-ref-format`, a leading dash) 422. A message makes an
 * annotated tag (`git tag -a -m`: the message cleaned as git's default "strip" cleanup), none a
 * lightweight one. Deliberately not Gitea: the tagger is the caller (Gitea's git runs as
 * "Gitea <gitea@fake.local>"), with the e-mail their commits carry.
 */
export async function createTag(ctx: Ctx, objects: ObjectStore, owner: string, name: string, form: CreateTagForm) {
  const o = await openRepo(ctx, objects, owner, name, { write: true });
  reqCodeWriter(o.a);
  const want = form.tag_name;
  if (want === "") throw unprocessable("[TagName]: Required");
  const repo = o.repo;
  const target = form.target || o.a.facts.repo.defaultBranch;
  const found = await resolveObject(repo, target);
  const commit = found ? await repo.commits.peel(found).catch(() => null) : null;
  if (commit?.type !== "commit") throw notFound(`target not found: ${notExist(target)}`);
  const lower = want.toLowerCase();
  for (const r of repo.tags()) {
    const have = r.name.slice(TAGS.length);
    if (have.toLowerCase() === lower) throw conflict(`tag already exists [name: ${want}]`);
  }
  // git's rules for a ref name, and the lengths git can store (a component of at most 255 bytes)
  if (want.startsWith("-") || !isGitRefName(want) || refNameLengthProblem(`${TAGS}${want}`) !== null) {
    throw unprocessable(`release tag name is not valid [tag_name: ${want}]`);
  }
  // git's directory/file rule: `a` and `a/b` cannot both be tags
  const inWay = repo.tags().find((r) => `${r.name}/`.startsWith(`${TAGS}${want}/`) || `${TAGS}${want}/`.startsWith(`${r.name}/`));
  if (inWay) throw conflict(`tag ${inWay.name.slice(TAGS.length)} exists; cannot create tag ${want}`);

  const ref = `${TAGS}${want}`;
  const caller = o.a.caller!;
  let info: TagInfo;
  let stored: Awaited<ReturnType<PackBuilder["store"]>> | null = null;
  if (form.message) {
    const tagger = signatureOf(caller.row, ctx.settings.service.noReplyAddress ?? `noreply.${new URL(ctx.rootUrl).hostname}`);
    const message = stripspace(form.message, "#");
    const builder = new PackBuilder();
    const oid = builder.add({ type: "tag", data: serializeTag({ object: commit.oid, type: "commit", tag: want, tagger, message }) });
    stored = await builder.store(objects, String(o.a.facts.repo.id));
    repo.reader.addPack(stored.record, stored.idx);
    info = { name: want, id: oid, object: commit.oid, tagger, message };
  } else {
    const c = await repo.readCommit(commit.oid);
    info = { name: want, id: commit.oid, object: commit.oid, tagger: c.committer, message: c.message };
  }
  // Gitea's CreateTag notifies with the commit's id (a pushed tag's events carry the ref's value)
  const event = await buildPushEvent(repo.commits, [{ name: ref, old: null, new: commit.oid }], repo.branches().map((b) => b.oid), eventLimits(o));
  const tx = {
    updates: [{ name: ref, old: null, new: info.id, peeled: stored ? commit.oid : null }],
    // the case-insensitive check above, again at commit time: a concurrent `V1` and `v1` cannot both land
    caseUnique: [ref],
    ...(stored ? { pack: stored.record } : {}),
    sizeDelta: stored ? stored.record.size + stored.record.idxSize : 0,
    empty: repo.isEmpty,
    event,
  };
  const drop = () => (stored ? objects.delete(String(o.a.facts.repo.id), packFileNames(stored.record.id)).catch(() => {}) : Promise.resolve());
  const { result } = await commitWith(ctx, o, tx).catch(async (e: unknown) => {
    // a commit whose answer never came may have landed: its pack is kept
    if (!commitMayHaveLanded(e)) await drop();
    throw e;
  });
  if (!result.ok) {
    // A concurrent create won the compare-and-swap (or put `a` or `a/b` in the way).
    await drop();
    throw conflict(`tag already exists [name: ${want}]`);
  }
  return toTag(o.urls, info);
}

/**
 * DELETE /repos/{owner}/{repo}/tags/{tag} (repoDeleteTag) → 204; a missing tag 404; the name
 * matched as Gitea's release rows match it (an exact match, else in any letter case). Every tag here
 * is a plain tag (no releases), so none is refused as "attached to a release".
 */
export async function deleteTag(ctx: Ctx, objects: ObjectStore, owner: string, name: string, tag: string) {
  const o = await openRepo(ctx, objects, owner, name, { write: true });
  reqCodeWriter(o.a);
  // Gitea finds the tag by its release row, which compares lower-cased: the exact name first
  const lower = `${TAGS}${tag}`.toLowerCase();
  const ref = o.repo.ref(`${TAGS}${tag}`) ?? o.repo.tags().find((r) => r.name.toLowerCase() === lower) ?? null;
  if (!ref) throw notFound();
  // Gitea's DeleteReleaseByID notifies with the release's commit id as the old value
  const event = await buildPushEvent(o.repo.commits, [{ name: ref.name, old: ref.peeled ?? ref.oid, new: null }], [], eventLimits(o));
  const { result } = await commitWith(ctx, o, { updates: [{ name: ref.name, old: ref.oid, new: null }], sizeDelta: 0, empty: o.repo.isEmpty, event });
  if (!result.ok) {
    if (result.rejected.some((r) => r.actual === null)) throw notFound();
    throw new ApiError(409, `tag ${ref.name.slice(TAGS.length)} was updated by someone else; try again`);
  }
}
