/**
 * Branches (Gitea routers/api/v1/repo/branch.go, services/repository/branch.go). Reads: one
 * round trip for the repository, its git state and the accounts its recorded commit e-mails name
 * (services/git-repo.ts usersByEmail). Create and delete are pushes in effect: the ref moves by the RefStore's compare-and-swap
 * commit, with Gitea's activity rows (and, for create, the e-mail lookup of the answer) in that
 * same write batch — two round trips.
 */
import { hookSourceOf } from "./common.ts";
import type { CommitInfo } from "../git/repo/repository.ts";
import { toBranch, type UsersByEmail } from "../convert/git.ts";
import { commitBatch } from "../db/queries/git-refs.ts";
import { batchItems, rowsOf } from "../db/sql.ts";
import { pushEventRows } from "../events/push.ts";
import { buildPushEvent } from "../git/events.ts";
import { isAncestor } from "../git/walk.ts";
import { DEFAULT_LIMITS } from "../git/protocol/common.ts";
import { isGitRefName } from "../git/refname.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import type { RefTransaction } from "../git/storage/ref-store.ts";
import type { Ctx } from "../lib/context.ts";
import { ApiError, conflict, forbidden, NOT_FOUND_MESSAGE, notFound, unprocessable } from "../lib/errors.ts";
import type { Page } from "../lib/pagination.ts";
import { canWrite, permissionIgnoringArchive, UNIT } from "../lib/permissions.ts";
import { mustNotBeArchived, reqRepoAdmin, reqRepoReader, reqRepoWriter } from "../lib/guards.ts";
import { packAddedTo } from "./git-maintenance.ts";
import { openRepo, resolveRevision, signedOf, usersByEmail, usersByEmailOf, usersByEmailReads, type OpenedRepo } from "./git-repo.ts";
import { repoGuard, type Assigned } from "./repos.ts";

const HEADS = "refs/heads/";
export const REPO_WRITER_ONLY = "user should have a permission to write to a repo";
export const EMPTY_REPOSITORY = "Git Repository is empty.";

/** Gitea's reqRepoWriter(code) then mustNotBeArchived: 403 for non-writers, 423 for writers of an archived repository. */
export function reqCodeWriter(a: Assigned) {
  reqRepoWriter(a.caller, permissionIgnoringArchive(a.caller, a.facts, a.units), UNIT.code);
  mustNotBeArchived(a.facts.repo);
}

/** The branch and tag writes' guard before their body is bound: reqRepoReader(code), reqRepoWriter(code), mustNotBeArchived. */
export const codeWriterGuard = repoGuard((a) => {
  reqRepoReader(a.caller, a.perm, UNIT.code);
  reqCodeWriter(a);
});

/** Gitea's Branch JSON of each named branch: tip commits read, then the e-mails looked up once. */
async function branchesJson(o: OpenedRepo, ctx: Ctx, list: { name: string; commit: CommitInfo }[], users?: UsersByEmail) {
  const found = users ?? (await usersByEmail(ctx, list.flatMap((b) => [b.commit.author.email, b.commit.committer.email]), o.identities));
  const canPush = canWrite(o.a.perm, UNIT.code);
  return Promise.all(list.map(async (b) => toBranch(o.urls, b.name, b.commit, found, canPush, await signedOf(o.repo, b.commit.oid, b.commit.extraHeaders))));
}

/** The tip commit of a branch ref (annotated tags are never branch tips, but peel anyway). */
async function tipOf(o: OpenedRepo, oid: string): Promise<CommitInfo> {
  return o.repo.readCommit((await o.repo.commits.peel(oid)).oid);
}

/**
 * GET /repos/{owner}/{repo}/branches (repoListBranches): Gitea's order (tip commit time, newest
 * first, then name), `q` a case-insensitive substring of the name; an empty repository lists none.
 */
export async function listBranches(ctx: Ctx, objects: ObjectStore, owner: string, name: string, page: Page, q?: string) {
  const o = await openRepo(ctx, objects, owner, name, { withAuthors: true });
  const needle = q?.toLowerCase() ?? "";
  const refs = o.repo.branches().filter((r) => r.name.slice(HEADS.length).toLowerCase().includes(needle));
  const timed = await Promise.all(refs.map(async (r) => ({ name: r.name.slice(HEADS.length), oid: r.oid, time: (await o.repo.commits.get(r.oid)).time })));
  timed.sort((x, y) => y.time - x.time || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  const slice = timed.slice(page.offset, page.offset + page.limit);
  const list = await Promise.all(slice.map(async (b) => ({ name: b.name, commit: await tipOf(o, b.oid) })));
  return { total: timed.length, branches: list.length ? await branchesJson(o, ctx, list) : [] };
}

/** GET /repos/{owner}/{repo}/branches/{branch} (repoGetBranch): 404 for a branch that does not exist. */
export async function getBranch(ctx: Ctx, objects: ObjectStore, owner: string, name: string, branch: string) {
  const o = await openRepo(ctx, objects, owner, name, { withAuthors: true });
  const ref = o.repo.ref(`${HEADS}${branch}`);
  if (!ref) throw notFound();
  return (await branchesJson(o, ctx, [{ name: branch, commit: await tipOf(o, ref.oid) }]))[0]!;
}

/** The repository-state checks Gitea's create and delete share: empty 404, mirror 403. */
function checkWritable(o: OpenedRepo) {
  if (o.repo.isEmpty) throw notFound(EMPTY_REPOSITORY);
  if (o.a.facts.repo.isMirror) throw forbidden("Git Repository is a mirror.");
}

/** Gitea's GitRefName binding (git check-ref-format, no leading dash) and MaxSize(100) on a branch name. */
function checkBranchName(field: string, value: string, required: boolean) {
  if (value === "") {
    if (required) throw unprocessable(`[${field}]: Required`);
    return;
  }
  if (value.length > 100) throw unprocessable(`[${field}]: MaxSize`);
  if (value.startsWith("-") || !isGitRefName(value)) throw unprocessable(`[${field}]: GitRefName`);
}

/** The activity and webhook rows of a ref change by the caller (Gitea's CreateRef/PushCommits/DeleteRef). */
function activity(ctx: Ctx, o: OpenedRepo) {
  const r = o.a.facts.repo;
  return pushEventRows({ actUserId: o.a.caller!.id, ownerId: r.ownerId, ownerName: o.a.facts.owner.name, repoName: r.name, isPrivate: r.isPrivate, hooks: hookSourceOf(ctx, o.a, o.a.caller!.row, o.activeHooks) });
}

/** Event limits of a ref change: webhook payloads list each commit's files. */
export const eventLimits = (o: OpenedRepo) => ({ ...DEFAULT_LIMITS, commitFiles: (o.activeHooks?.[0] ?? 0) > 0 });

/** Runs the RefStore commit batch of `tx` plus `reads` in ONE write round trip. */
export async function commitWith(ctx: Ctx, o: OpenedRepo, tx: RefTransaction, reads: ReturnType<typeof usersByEmailReads> = []) {
  const repoId = o.a.facts.repo.id;
  const { items, check, ownPacks } = commitBatch(repoId, tx, activity(ctx, o));
  const rows = await ctx.driver.batch([...items, ...batchItems(reads)], "write");
  const result = check(rows.slice(0, items.length));
  if (result.ok && tx.pack) packAddedTo(ctx.outbox)(repoId, ownPacks(rows));
  return { result, users: usersByEmailOf(rows.slice(items.length).map((rs, i) => rowsOf(reads[i]!, rs))) };
}

export interface CreateBranchForm {
  new_branch_name: string;
  old_branch_name?: string;
  old_ref_name?: string;
}

/**
 * POST /repos/{owner}/{repo}/branches (repoCreateBranch): from `old_ref_name` (branch, tag or
 * commit), else the deprecated `old_branch_name` (404 "The old branch does not exist"), else the
 * default branch. Gitea's conflicts, in its order over the refs: the same branch (409 "The branch
 * already exists."), a branch `a/b` for `a` or `a` for `a/b` (409 "The branch with the same name
 * already exists."), a tag of that name (409 "The branch with the same tag already exists.").
 */
export async function createBranch(ctx: Ctx, objects: ObjectStore, owner: string, name: string, form: CreateBranchForm) {
  const o = await openRepo(ctx, objects, owner, name, { write: true });
  reqCodeWriter(o.a);
  checkBranchName("BranchName", form.new_branch_name, true);
  checkBranchName("OldBranchName", form.old_branch_name ?? "", false);
  checkBranchName("OldRefName", form.old_ref_name ?? "", false);
  checkWritable(o);
  const repo = o.repo;
  let from: string;
  if (form.old_ref_name) {
    const r = await resolveRevision(repo, form.old_ref_name);
    if (!r) throw notFound();
    from = r.oid;
  } else {
    const branch = form.old_branch_name || o.a.facts.repo.defaultBranch;
    const ref = repo.ref(`${HEADS}${branch}`);
    if (!ref) throw notFound("The old branch does not exist");
    from = (await repo.commits.peel(ref.oid)).oid;
  }
  const want = form.new_branch_name;
  for (const r of repo.state.refs) {
    if (r.name.startsWith(HEADS)) {
      const b = r.name.slice(HEADS.length);
      if (b === want) throw conflict("The branch already exists.");
      if (b.startsWith(`${want}/`) || want.startsWith(`${b}/`)) throw conflict("The branch with the same name already exists.");
    } else if (r.name === `refs/tags/${want}`) throw conflict("The branch with the same tag already exists.");
  }
  const ref = `${HEADS}${want}`;
  const commit = await repo.readCommit(from);
  const event = await buildPushEvent(repo.commits, [{ name: ref, old: null, new: from }], repo.branches().map((b) => b.oid), eventLimits(o));
  const { result, users } = await commitWith(ctx, o, { updates: [{ name: ref, old: null, new: from, peeled: null }], sizeDelta: 0, empty: false, event }, usersByEmailReads(ctx, [commit.author.email, commit.committer.email]));
  // A concurrent create of the same name won the compare-and-swap (Gitea's ErrPushOutOfDate).
  if (!result.ok) throw conflict("The branch already exists.");
  return (await branchesJson(o, ctx, [{ name: want, commit }], users))[0]!;
}

/**
 * DELETE /repos/{owner}/{repo}/branches/{branch} (repoDeleteBranch): the default branch is refused
 * (403 "can not delete default branch"), a missing one is 404 with Gitea's error detail.
 */
export async function deleteBranch(ctx: Ctx, objects: ObjectStore, owner: string, name: string, branch: string) {
  const o = await openRepo(ctx, objects, owner, name, { write: true });
  reqCodeWriter(o.a);
  checkWritable(o);
  if (branch === o.a.facts.repo.defaultBranch) throw forbidden("can not delete default branch");
  const ref = o.repo.ref(`${HEADS}${branch}`);
  const missing = () =>
    new ApiError(404, NOT_FOUND_MESSAGE, { body: { message: NOT_FOUND_MESSAGE, url: `${ctx.rootUrl}api/swagger`, errors: [`branch does not exist [name: ${branch}]`] } });
  if (!ref) throw missing();
  const event = await buildPushEvent(o.repo.commits, [{ name: ref.name, old: ref.oid, new: null }], [], eventLimits(o));
  const { result } = await commitWith(ctx, o, { updates: [{ name: ref.name, old: ref.oid, new: null }], sizeDelta: 0, empty: false, event, protectHead: true });
  if (!result.ok) {
    // Made the default branch meanwhile: refused as if it had been already. Deleted (or moved)
    // meanwhile: gone is gone; moved is a conflict to retry.
    if (result.rejected.some((r) => r.head)) throw forbidden("can not delete default branch");
    if (result.rejected.some((r) => r.actual === null)) throw missing();
    throw conflict(`branch ${branch} was updated by someone else; try again`);
  }
}

/** A branch that is not there: Gitea's 404 with the error detail. */
const branchMissing = (ctx: Ctx, branch: string) =>
  new ApiError(404, NOT_FOUND_MESSAGE, { body: { message: NOT_FOUND_MESSAGE, url: `${ctx.rootUrl}api/swagger`, errors: [`branch does not exist [name: ${branch}]`] } });

export interface UpdateBranchForm {
  new_commit_id: string;
  old_commit_id?: string;
  force?: boolean;
}

/**
 * PUT /repos/{owner}/{repo}/branches/{branch} (repoUpdateBranch, Gitea 1.26) → 204: the branch
 * moves to `new_commit_id` (a commit id or any ref, peeled to its commit) as a push would —
 * `old_commit_id`, when given, must be the tip (a lease: 409 otherwise), and a move that is not a
 * fast-forward needs `force` (409 otherwise). Gitea's reqRepoWriter(code), archived 423, empty
 * 404, mirror 403; a missing branch 404, an unknown commit 404, no `new_commit_id` 422.
 */
export async function updateBranch(ctx: Ctx, objects: ObjectStore, owner: string, name: string, branch: string, form: UpdateBranchForm) {
  // Without a lease the move is judged against the branch as it is, as git's push is: a write that
  // lost its compare-and-swap to another reads again (four more times at most) instead of answering 409
  for (let attempt = 0; ; attempt++) {
    const o = await openRepo(ctx, objects, owner, name, { write: true });
    reqCodeWriter(o.a);
    if (!form.new_commit_id) throw unprocessable("[NewCommitID]: Required");
    checkWritable(o);
    const ref = o.repo.ref(`${HEADS}${branch}`);
    if (!ref) throw branchMissing(ctx, branch);
    const target = await resolveRevision(o.repo, form.new_commit_id);
    if (!target) throw notFound(`object does not exist [id: ${form.new_commit_id}, rel_path: ]`);
    if (form.old_commit_id && form.old_commit_id.toLowerCase() !== ref.oid) throw conflict(`the branch is at ${ref.oid}, not at old_commit_id ${form.old_commit_id}`);
    if (target.oid === ref.oid) return;
    const fastForward = await isAncestor(o.repo.commits, ref.oid, target.oid);
    if (!fastForward && !form.force) throw conflict(`the update of ${branch} to ${target.oid} is not a fast-forward; set force to move it anyway`);
    const event = await buildPushEvent(o.repo.commits, [{ name: ref.name, old: ref.oid, new: target.oid }], o.repo.branches().map((b) => b.oid), eventLimits(o));
    const { result } = await commitWith(ctx, o, { updates: [{ name: ref.name, old: ref.oid, new: target.oid, peeled: null }], sizeDelta: 0, empty: false, event, orphans: !fastForward });
    if (result.ok) return;
    if (result.rejected.some((r) => r.actual === null)) throw branchMissing(ctx, branch);
    if (form.old_commit_id || attempt === 4) throw conflict(`branch ${branch} was updated by someone else; try again`);
  }
}

/** Gitea's answer to renaming onto the same or an existing name. */
export const RENAME_TARGET_EXISTS = "Cannot rename a branch using the same name or rename to a branch that already exists.";

/**
 * PATCH /repos/{owner}/{repo}/branches/{branch} (repoRenameBranch) → 204: Gitea's RenameBranch.
 * The new name is checked as a branch name (422 `[Name]: …`); empty repository 404, mirror 403;
 * the same name or one that exists (or is in the way: `a` beside `a/b`) 422 "Cannot rename a
 * branch using the same name or rename to a branch that already exists."; a missing branch 404
 * "Branch doesn't exist."; the default branch only by repository admins (403), and it stays the
 * default under its new name (HEAD follows). One write batch: the old ref gone, the new one at
 * the same commit, `delete_branch` and the new branch's rows, as the two pushes would.
 */
export async function renameBranch(ctx: Ctx, objects: ObjectStore, owner: string, name: string, from: string, to: string) {
  const o = await openRepo(ctx, objects, owner, name, { write: true });
  reqCodeWriter(o.a);
  checkBranchName("Name", to, true);
  checkWritable(o);
  const repo = o.repo;
  const inWay = repo.branches().some((r) => {
    const b = r.name.slice(HEADS.length);
    return b !== from && (b === to || b.startsWith(`${to}/`) || to.startsWith(`${b}/`));
  });
  if (from === to || inWay) throw unprocessable(RENAME_TARGET_EXISTS);
  const ref = repo.ref(`${HEADS}${from}`);
  if (!ref) throw notFound("Branch doesn't exist.");
  const isDefault = from === o.a.facts.repo.defaultBranch;
  if (isDefault) reqRepoAdmin(o.a.caller, o.a.perm);
  const updates = [
    { name: ref.name, old: ref.oid, new: null },
    { name: `${HEADS}${to}`, old: null, new: ref.oid, peeled: null },
  ];
  const event = await buildPushEvent(repo.commits, updates, repo.branches().map((b) => b.oid), eventLimits(o));
  const { result } = await commitWith(ctx, o, { updates, ...(isDefault ? { head: `${HEADS}${to}` } : {}), sizeDelta: 0, empty: false, event, protectHead: true });
  if (!result.ok) {
    // made the default branch meanwhile: renaming it needs the admin check above, so once more
    if (result.rejected.some((r) => r.head)) throw conflict(`branch ${from} was made the default branch meanwhile; try again`);
    if (result.rejected.some((r) => r.name === ref.name)) throw notFound("Branch doesn't exist.");
    throw unprocessable(RENAME_TARGET_EXISTS);
  }
}
