/**
 * Source archives (Gitea routers/api/v1/repo/file.go GetArchive, services/repository/archiver): the
 * repository opened in ONE read round trip with the code unit's read rule, `<ref>.<zip|tar.gz|bundle>`
 * resolved as git rev-parse reads it, the archive streamed from the git data (Gitea builds it once
 * and keeps it; here it is built on every request — docs/git.md), the tree's .gitattributes applied.
 */
import { ArchiveContext, bundleArchive, tarGzArchive, zipArchive } from "../git/repo/archive.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import type { Ctx } from "../lib/context.ts";
import { ApiError, badRequest } from "../lib/errors.ts";
import { openRepo } from "./git-repo.ts";
import { cleanTreePath } from "./contents.ts";
import { createHash } from "node:crypto";

const sha1Hex = (s: string) => createHash("sha1").update(s).digest("hex");

const FORMATS = [{ ext: ".tar.gz" }, { ext: ".zip" }, { ext: ".bundle" }] as const;

/**
 * Every archive's Content-Type, as newest Gitea's ServeRepoArchive answers: it sets no type, so
 * httplib.ServeSetHeaders writes its default `application/octet-stream` (streamed or stored).
 */
const ARCHIVE_CONTENT_TYPE = "application/octet-stream";

export interface Archive {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  /** `<repo>-<ref with / as ->.<ext>` (Gitea's download name). */
  filename: string;
  commit: string;
  /**
   * The archive's URL by commit id, for the `Link: …; rel="immutable"` header; null when export-subst
   * files show more than the commit (refs in %d/%D/%(describe), the abbreviation length, the clock).
   */
  immutable: string | null;
  /**
   * A weak tag: the commit, the format, the top directory and the paths fix the files (not the
   * compressed bytes); with export-subst files, a digest of what they expand to as well.
   */
  etag: string;
}

/**
 * GET /repos/{owner}/{repo}/archive/{archive} (repoGetArchive). `paths`: parts of the tree to put in
 * it (Gitea's `path`, given to git archive as pathspecs), cleaned as the contents paths are; one that
 * names nothing in the commit is a 404 (git archive fails on it).
 */
export async function getArchive(ctx: Ctx, objects: ObjectStore, owner: string, name: string, archive: string, rawPaths: readonly string[] = []): Promise<Archive> {
  const o = await openRepo(ctx, objects, owner, name);
  const format = FORMATS.find((f) => archive.endsWith(f.ext) && archive.length > f.ext.length);
  if (!format) throw badRequest(`unknown format: ${archive}`);
  const ref = archive.slice(0, -format.ext.length);
  const resolved = await o.repo.resolve(ref, "rev-parse");
  if (!resolved) throw new ApiError(404, `unrecognized repository reference: ${ref}`);
  const paths = rawPaths.map(cleanTreePath);
  // the whole tree named (`.`, `/`) is no restriction
  if (paths.includes("")) paths.length = 0;
  for (const p of paths) if (!(await o.repo.entryAt(resolved.oid, p))) throw new ApiError(404, `path not found: ${p}`);
  const repoName = o.a.facts.repo.name;
  // Gitea's archiver names the top directory after the repository's directory: its lower-cased name
  const prefix = `${repoName.toLowerCase()}/`;
  // export-subst expansions depend on refs too: the tag names what they expand to (a walk of the
  // trees and .gitattributes; refs and the files themselves are read only when one is export-subst)
  const plan = new ArchiveContext(o.repo, resolved.oid, paths);
  const subst = format.ext === ".bundle" ? null : await plan.substitutions();
  const body =
    format.ext === ".zip"
      ? zipArchive(o.repo, resolved.oid, prefix, paths, plan)
      : format.ext === ".tar.gz"
        ? tarGzArchive(o.repo, resolved.oid, prefix, paths, plan)
        : bundleArchive(o.repo, resolved.oid);
  return {
    body,
    contentType: ARCHIVE_CONTENT_TYPE,
    filename: `${repoName}-${ref.replaceAll("/", "-")}${format.ext}`,
    commit: resolved.oid,
    etag: `W/"${resolved.oid}${format.ext}:${prefix.slice(0, -1)}${paths.length ? `:${sha1Hex(JSON.stringify(paths))}` : ""}${subst ? `:s${subst}` : ""}"`,
    immutable: subst ? null : `${ctx.rootUrl}api/v1/repos/${encodeURIComponent(o.a.facts.owner.name)}/${encodeURIComponent(repoName)}/archive/${resolved.oid}${format.ext}?rev=${resolved.oid}`,
  };
}
