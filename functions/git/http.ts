/**
 * The smart HTTP entry point: routes `info/refs`, `git-upload-pack` and `git-receive-pack`
 * requests (the part of the URL after `/{owner}/{repo}.git/`) to their handlers. No auth and no
 * repository lookup here: the caller resolves the repository, applies Gitea's rules, then calls in.
 */
import { GitError } from "./errors.ts";
import { handleInfoRefs } from "./protocol/advertise.ts";
import type { GitContext } from "./protocol/common.ts";
import { handleReceivePack, type PushResult } from "./protocol/receive-pack.ts";
import { handleUploadPack } from "./protocol/upload-pack.ts";

/** Which service a smart HTTP request asks for, from its sub-path and query (null: not git's). */
export function gitService(subPath: string, search: URLSearchParams, method: string): { kind: "info-refs" | "upload-pack" | "receive-pack"; service: "git-upload-pack" | "git-receive-pack" } | null {
  const p = subPath.replace(/^\/+/, "");
  if (p === "info/refs" && (method === "GET" || method === "HEAD")) {
    const s = search.get("service");
    if (s === "git-upload-pack" || s === "git-receive-pack") return { kind: "info-refs", service: s };
    return null; // the dumb protocol is not served
  }
  if (p === "git-upload-pack" && method === "POST") return { kind: "upload-pack", service: "git-upload-pack" };
  if (p === "git-receive-pack" && method === "POST") return { kind: "receive-pack", service: "git-receive-pack" };
  return null;
}

/**
 * Serves one smart HTTP request for the repository of `ctx`; `subPath` is what follows the
 * repository in the URL. `onPush` gets the outcome of a push (after the refs were committed).
 * Answers 404 for anything that is not a smart HTTP request, 400 for malformed input.
 */
export async function serveGit(ctx: GitContext, req: Request, subPath: string, onPush?: (r: PushResult) => void | Promise<void>): Promise<Response> {
  const url = new URL(req.url);
  const svc = gitService(subPath, url.searchParams, req.method);
  if (!svc) return new Response("Not found\n", { status: 404 });
  try {
    if (svc.kind === "info-refs") return await handleInfoRefs(ctx, svc.service, req);
    if (svc.kind === "upload-pack") return await handleUploadPack(ctx, req);
    const { response, result } = await handleReceivePack(ctx, req);
    // git's probe before a large push carries no command: not a push
    if (result.commands.length > 0) await onPush?.(result);
    return response;
  } catch (e) {
    if (e instanceof GitError && (e.code === "bad-request" || e.code === "invalid")) return new Response(`${e.message}\n`, { status: 400 });
    throw e;
  }
}
