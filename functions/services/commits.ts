/**
 * Commits and references (Gitea routers/api/v1/repo/commits.go and git_ref.go). A read costs one
 * round trip: the repository, its git state and — when the answer names commit authors — the
 * accounts its recorded commit e-mails name (those the viewer may see).
 */
import { toCommit, toReference, type CommitDetails } from "../convert/git.ts";
import { changeStats, commitChanges } from "../git/repo/diff.ts";
import type { CommitInfo } from "../git/repo/repository.ts";
import { isGitRefName } from "../git/refname.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import type { Ctx } from "../lib/context.ts";
import { ApiError, conflict, notFound, unprocessable } from "../lib/errors.ts";
import type { Page } from "../lib/pagination.ts";
import { openRepo, resolveRevision, signedOf, usersByEmail, type OpenedRepo } from "./git-repo.ts";
import { cleanTreePath } from "./contents.ts";
import { site, viewerOf } from "./common.ts";
import { EMPTY_REPOSITORY } from "./branches.ts";

/** What of each commit to include (Gitea's ParseCommitOptions: each defaults to true). */
export interface CommitOptions {
  stat: boolean;
  verification: boolean;
  files: boolean;
}

/** Gitea's CommitsRangeSize: the most commits a page holds, and the page size of a path's history. */
export const COMMITS_RANGE_SIZE = 50;

async function detailsOf(o: OpenedRepo, c: CommitInfo, opts: CommitOptions): Promise<CommitDetails> {
  const changes = opts.files || opts.stat ? await commitChanges(o.repo, c.oid) : null;
  return {
    files: opts.files ? changes : null,
    stats: opts.stat ? await changeStats(o.repo, changes!) : null,
    signed: opts.verification ? await signedOf(o.repo, c.oid, c.extraHeaders) : undefined,
  };
}

/** Gitea's Commit JSON of each commit, the authors' accounts from the repository's identities. */
async function commitsJson(ctx: Ctx, o: OpenedRepo, commits: CommitInfo[], opts: CommitOptions) {
  const users = await usersByEmail(ctx, commits.flatMap((c) => [c.author.email, c.committer.email]), o.identities);
  const details = await Promise.all(commits.map((c) => detailsOf(o, c, opts)));
  return commits.map((c, i) => toCommit(o.urls, c, users, viewerOf(o.a.caller), site(ctx), details[i]!));
}

/** Gitea's IsValidRefPattern on a `{sha}` path value (a ref name or an id). */
const validRefPattern = (s: string) => s !== "" && !s.startsWith("-") && isGitRefName(s);

/**
 * GET /repos/{owner}/{repo}/git/commits/{sha} (repoGetSingleCommit): `sha` is a ref name, a full
 * or an abbreviated (≥ 4 hex digits, unique) commit id; an invalid pattern is 422, an unknown
 * revision 404 with the revision as the message (Gitea's APIErrorNotFound(identifier)).
 */
export async function getCommit(ctx: Ctx, objects: ObjectStore, owner: string, name: string, sha: string, opts: CommitOptions) {
  const o = await openRepo(ctx, objects, owner, name, { withAuthors: true });
  if (!validRefPattern(sha)) throw unprocessable(`no valid ref or sha: ${sha}`);
  const r = await resolveRevision(o.repo, sha, "rev-parse");
  if (!r) throw new ApiError(404, sha);
  return (await commitsJson(ctx, o, [await o.repo.readCommit(r.oid)], opts))[0]!;
}

export interface CommitListQuery {
  sha?: string;
  path?: string;
  not?: string;
  since?: number;
  until?: number;
}

/**
 * GET /repos/{owner}/{repo}/commits (repoGetAllCommits): history from `sha` (default: the default
 * branch) in git log order, only commits touching `path` (then the page size is Gitea's
 * CommitsRangeSize and `limit` is ignored, and no commit at all is 404), without those reachable
 * from `not`, committed within `since`/`until`. An empty repository is 409 "Git Repository is empty.".
 */
export async function listCommits(ctx: Ctx, objects: ObjectStore, owner: string, name: string, q: CommitListQuery, page: Page, opts: CommitOptions) {
  const o = await openRepo(ctx, objects, owner, name, { withAuthors: true });
  if (o.repo.isEmpty) throw conflict(EMPTY_REPOSITORY);
  const repo = o.repo;
  // Path rule: the path as git reads a pathspec (the contents routes' one normaliser): `./x`,
  // `a//b`, `a/../x` inside the tree; `.` is the whole tree; leaving the root is 422. A path given
  // keeps Gitea's by-file listing (its page size) even when it names the whole tree.
  const path = q.path ? cleanTreePath(q.path) || undefined : undefined;
  const start = q.sha ? await resolveRevision(repo, q.sha, "rev-parse") : await repo.resolve(q.path ? (o.a.facts.repo.defaultBranch ?? "HEAD") : "HEAD");
  if (!start) throw notFound();
  let hidden: Set<string> | null = null;
  if (q.not) {
    const n = await resolveRevision(repo, q.not, "rev-parse");
    if (!n) throw notFound();
    hidden = await repo.ancestors(n.oid);
  }
  const dated = q.since !== undefined || q.until !== undefined;
  const keep =
    hidden || dated
      ? async (oid: string) => {
          if (hidden?.has(oid)) return false;
          if (!dated) return true;
          const t = (await repo.commits.get(oid)).time;
          return (q.since === undefined || t >= q.since) && (q.until === undefined || t <= q.until);
        }
      : undefined;
  const limit = q.path ? COMMITS_RANGE_SIZE : Math.min(page.limit, COMMITS_RANGE_SIZE);
  const p: Page = { page: page.page, limit, offset: (page.page - 1) * limit };
  const total = await repo.countCommits({ from: start.oid, path, keep });
  if (q.path && total === 0) throw notFound();
  const { commits } = await repo.log({ from: start.oid, path, skip: p.offset, limit, keep });
  return { total, page: p, commits: await commitsJson(ctx, o, commits, opts) };
}

/**
 * GET /repos/{owner}/{repo}/git/refs[/{ref}] (repoListAllGitRefs, repoListGitRefs): every ref whose
 * full name starts with `refs/<ref>` (a plain string prefix, as Gitea's filter), with the type of
 * the object it names; none is 404; a ref whose name is `refs/<ref>` itself is answered alone, as
 * an object instead of a list, even when others share the prefix (newest Gitea).
 */
export async function listRefs(ctx: Ctx, objects: ObjectStore, owner: string, name: string, filter: string) {
  const o = await openRepo(ctx, objects, owner, name);
  const prefix = filter ? `refs/${filter}` : "";
  const refs = o.repo.state.refs.filter((r) => r.name.startsWith(prefix));
  if (refs.length === 0) throw notFound();
  const out = await Promise.all(
    refs.map(async (r) => {
      const obj = await o.repo.reader.read(r.oid);
      return toReference(o.urls, r, obj?.type ?? "commit");
    }),
  );
  // newest Gitea's getGitRefsInternal: only the filter decides the shape — a ref named exactly
  // `refs/<filter>` is the answer, as an object, whatever other refs share the prefix
  return (filter ? out.find((r) => r.ref === prefix) : undefined) ?? out;
}
