/**
 * Source archives: `GET /api/v1/repos/{owner}/{repo}/archive/{ref}.{zip|tar.gz|bundle}` and the
 * web path Gitea's tags link to, `/{owner}/{repo}/archive/…` (signed in as git HTTP is: a token or
 * basic authentication). The archive streams; its tag is the commit's, so a client that polls gets
 * a 304 without the archive being built.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { apiRoute, createRouter, ctxOf, type AppEnv } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { noneMatch } from "../lib/etag.ts";
import { objectsOf } from "../lib/git-storage.ts";
import { pathParam, withSlashes } from "../lib/openapi.ts";
import { getArchive } from "../services/archives.ts";
import { contentDisposition } from "./contents.ts";

export const archives = createRouter();

/** Builds the archive answer: Gitea's download headers, or 304 when the client has this archive. */
export async function serveArchive(c: Context<AppEnv>, owner: string, repo: string, archive: string): Promise<Response> {
  const a = await getArchive(ctxOf(c), objectsOf(c), owner, repo, archive, c.req.queries("path") ?? []);
  const headers: Record<string, string> = {
    "Content-Type": a.contentType,
    "Content-Disposition": contentDisposition(a.filename, "attachment"),
    "Access-Control-Expose-Headers": "Content-Disposition",
    ...(a.immutable ? { Link: `<${a.immutable}>; rel="immutable"` } : {}),
    ETag: a.etag,
    "Cache-Control": "private, no-cache",
  };
  if (noneMatch(c.req.header("If-None-Match"), a.etag)) {
    await a.body.cancel();
    return c.body(null, 304, headers);
  }
  return c.body(a.body, 200, headers);
}

const repoGetArchive = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/archive/{archive}",
  operationId: "repoGetArchive",
  tags: ["repository"],
  summary: "Get an archive of a repository",
  auth: { scopes: ["repository"] },
  request: {
    params: z.object({
      owner: pathParam("owner", "owner of the repo"),
      repo: pathParam("repo", "name of the repo"),
      archive: pathParam("archive", "the git reference for download with attached archive format (e.g. master.zip)"),
    }),
    query: z.object({
      // one `path` arrives as a string, several as a list (the handler reads them all)
      path: z
        .union([z.array(z.string()), z.string()])
        .optional()
        .openapi({ param: { name: "path", in: "query", required: false }, description: "subpath of the repository to download" }),
    }),
  },
  responses: {
    200: { description: "success", content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } },
    304: { description: "the client's copy (If-None-Match) is current" },
    ...errorResponses(400, 404),
  },
});
withSlashes(repoGetArchive, "archive", (r) =>
  archives.openapi(r, (async (c: Context<AppEnv>) => {
    const p = c.req.param() as { owner: string; repo: string; archive: string };
    return serveArchive(c, p.owner, p.repo, p.archive);
  }) as never),
);
