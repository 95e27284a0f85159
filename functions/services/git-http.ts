/**
 * Smart HTTP access to a repository (Gitea routers/web/repo/githttp.go httpBase): anonymous fetch
 * of public repositories of public owners; otherwise 401 with `WWW-Authenticate: Basic
 * realm="Gitea"`, the same answer whether the repository is private or missing; basic auth with a
 * password or a token (token scopes: `read:repository` to fetch, `write:repository` to push);
 * code-unit read to fetch, write to push; archived and mirror repositories refuse pushes, a
 * deactivated individual's repositories refuse every git request. A
 * repository the caller may not see answers as a missing one: 401 to anonymous callers, 404
 * "Repository not found" to signed-in ones. Then the git engine serves the request with the
 * libSQL RefStore (the repository's state is read in the authentication's own round trip).
 */
import { activeHooksRead, hookSourceOf } from "./common.ts";
import { LibsqlRefStore } from "../db/queries/git-refs.ts";
import { pushEventRows } from "../events/push.ts";
import { gitService, serveGit } from "../git/http.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import { hasCredentials, hasScopes } from "../lib/auth.ts";
import type { Ctx } from "../lib/context.ts";
import { ApiError, Redirect } from "../lib/errors.ts";
import { canRead, canWrite, UNIT } from "../lib/permissions.ts";
import { gitState, prefetched, repoStateFrom } from "./git-state.ts";
import { packAddedTo } from "./git-maintenance.ts";
import { deleteStorage } from "./repo-storage.ts";
import { assignRepo } from "./repos.ts";

/** Gitea's answer to a caller who must sign in (the realm Git Credential Manager knows). */
export const AUTH_CHALLENGE = 'Basic realm="Gitea"';

const plain = (status: number, text: string, headers: Record<string, string> = {}) =>
  new Response(`${text}\n`, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff", ...headers } });

/** Gitea's answer for a repository whose owner (an individual) is deactivated. */
export const INACTIVE_OWNER = "Repository cannot be accessed. You cannot push or open issues/pull-requests.";

const challenge = () => plain(401, "Unauthorized", { "WWW-Authenticate": AUTH_CHALLENGE });


/**
 * Serves `/{owner}/{repo}(.git)/{subPath}`: Gitea's checks, then the engine. Round trips: one for
 * authentication, permission and the repository's state; a push adds one (the ref commit, with
 * the repository row and the activity rows in the same batch).
 */
export async function serveRepoGit(ctx: Ctx, objects: ObjectStore, owner: string, name: string, req: Request, subPath: string): Promise<Response> {
  const svc = gitService(subPath, new URL(req.url).searchParams, req.method);
  if (!svc) return plain(404, "Not found");
  const push = svc.service === "git-receive-pack";
  // The pack itself (not the advertisement): its ref changes may reach the owner's webhooks.
  const receive = push && svc.kind !== "info-refs";
  if (svc.kind !== "info-refs" && req.headers.get("content-type") !== `application/x-${svc.service}-request`) return plain(400, "Bad Request");
  const signed = hasCredentials(ctx.creds);
  // askAuth: everything but a pull (of a public repository of a public owner) needs a signed-in caller.
  if (!signed && (push || ctx.settings.service.requireSignInView)) return challenge();
  let a: Awaited<ReturnType<typeof assignRepo<ReturnType<typeof gitState>>>>;
  try {
    a = await assignRepo(ctx, owner, name, { ...gitState(ctx, owner, name), ...(receive ? activeHooksRead(owner) : {}) });
  } catch (e) {
    if (e instanceof Redirect) throw e;
    if (e instanceof ApiError && e.status === 404) return signed ? plain(404, "Repository not found") : challenge();
    if (e instanceof ApiError && e.status === 401) return plain(401, "Unauthorized", { "WWW-Authenticate": AUTH_CHALLENGE });
    if (e instanceof ApiError && e.status === 403) return plain(403, e.message);
    throw e;
  }
  const { caller, perm, facts } = a;
  const repo = facts.repo;
  // Hidden ≡ missing: no code-unit read (disabled unit, no access) answers as a missing repository.
  if (!canRead(perm, UNIT.code)) return caller ? plain(404, "Repository not found") : challenge();
  // A deactivated individual's repositories serve no git at all (Gitea's httpBase) — said only to
  // callers who may see the repository, so a hidden one still answers as missing.
  if (a.facts.owner.type !== 1 && !a.facts.owner.isActive) return plain(403, INACTIVE_OWNER);
  if (caller?.viaToken) {
    // CheckRepoScopedToken: the token's repository scope at the level of the operation.
    if (!hasScopes(caller.scope, [push ? "write:repository" : "read:repository"])) return plain(403, "Forbidden");
  }
  if (push) {
    if (repo.isArchived) return plain(403, "This repo is archived. You can view files and clone it, but cannot push or open issues/pull-requests.");
    if (repo.isMirror) return plain(403, "mirror repository is read-only");
    if (!canWrite(perm, UNIT.code)) return plain(403, "User permission denied for writing.");
  }
  const repoId = String(repo.id);
  const state = repoStateFrom(repo, a.named.refs, a.named.packs);
  const hooks = receive && caller ? hookSourceOf(ctx, a, caller.row, (a.named as { activeHooks?: number[] }).activeHooks) : undefined;
  const events = caller
    ? pushEventRows({ actUserId: caller.id, ownerId: repo.ownerId, ownerName: a.facts.owner.name, repoName: repo.name, isPrivate: repo.isPrivate, hooks })
    : undefined;
  const refs = prefetched(new LibsqlRefStore(ctx.driver, events, packAddedTo(ctx.outbox)), repoId, state);
  let res: Response;
  try {
    res = await serveGit(
      { repoId, objects, refs, limits: { maxPackBytes: ctx.settings.git.maxPushBytes, commitFiles: !!hooks }, protectHead: true, denyNonFastForwards: false },
      req,
      subPath,
    );
  } catch (e) {
    // The repository was deleted while the push ran (its ref commit found no repository row).
    if (e instanceof ApiError && e.status === 404) return plain(404, "Repository not found");
    // …or before it committed: the push failed reading its own files, which went with the
    // repository (fuzz audit: 500). Asked on this failure only: one more round trip.
    if (receive && !(await new LibsqlRefStore(ctx.driver).exists(String(repoId)).catch(() => true))) {
      // what the push wrote after the deletion removed the directory goes too (ids are never reused)
      await deleteStorage(objects, [Number(repoId)]);
      return plain(404, "Repository not found");
    }
    throw e;
  }
  res.headers.set("Cache-Control", "no-cache, max-age=0, must-revalidate");
  return res;
}
