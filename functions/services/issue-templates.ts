/**
 * Issue templates and issue config of a repository (Gitea routers/api/v1/repo/issue.go:
 * GetIssueTemplates, GetIssueConfig, ValidateIssueConfig; services/issue/template.go), read from
 * the default branch's commit. Only the candidate directories and config paths are read (never the
 * whole tree); the repository row and its git state come in the caller's one round trip, the
 * objects from storage. The parsing lives in lib/issue-templates.ts as plain functions over files.
 */
import { GitError } from "../git/errors.ts";
import { MODE } from "../git/objects/tree.ts";
import type { Repository } from "../git/repo/repository.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import type { Ctx } from "../lib/context.ts";
import { reqRepoReader } from "../lib/guards.ts";
import { CONFIG_PATHS, loadIssueConfig, loadIssueTemplates, TEMPLATE_DIRS, templateType, templateWarning, validateIssueConfig, type RepoFile } from "../lib/issue-templates.ts";
import { UNIT } from "../lib/permissions.ts";
import { gitState, openRepository, repoStateFrom } from "./git-state.ts";
import { assignRepo } from "./repos.ts";

const decoder = new TextDecoder();
/** Entries whose content is a file's bytes (a symlink's is its target, as Gitea reads it). */
const isBlob = (mode: string) => mode === MODE.file || mode === MODE.executable || mode === MODE.symlink;

/** What of the default branch a route needs: the template directories or the config candidates. */
type Wanted = "templates" | "config";

/**
 * The candidate files of the default branch's commit: each template directory's direct files
 * named like templates (.md, .yaml, .yml; Gitea's template.CouldBe), or the config candidates
 * that exist. A repository whose default branch does not resolve has none (Gitea: no templates).
 */
async function candidateFiles(repo: Repository, wanted: Wanted): Promise<RepoFile[]> {
  const head = await repo.resolve("HEAD");
  if (!head) return [];
  const files: RepoFile[] = [];
  const read = async (path: string, oid: string) => files.push({ path, content: decoder.decode(await repo.readBlob(oid)) });
  if (wanted === "templates") {
    for (const dir of TEMPLATE_DIRS) {
      const entries = await repo.listDir(head.oid, dir);
      for (const e of entries ?? []) if (isBlob(e.mode) && templateType(e.name) !== "") await read(e.path, e.oid);
    }
  } else {
    for (const path of CONFIG_PATHS) {
      const e = await repo.entryAt(head.oid, path);
      // The first candidate that exists is the config (Gitea's GetTemplateConfigFromDefaultBranch).
      if (e && isBlob(e.mode)) {
        await read(path, e.oid);
        break;
      }
    }
  }
  return files;
}

/** reqRepoReader(code): templates live in the code (GHSA-3fwp-p5rj-2pxf); then the files, in one round trip. */
async function codeReader(ctx: Ctx, objects: ObjectStore, owner: string, name: string, wanted: Wanted): Promise<RepoFile[]> {
  const a = await assignRepo(ctx, owner, name, gitState(ctx, owner, name));
  reqRepoReader(a.caller, a.perm, UNIT.code);
  const row = a.view.repo;
  if (row.isEmpty) return [];
  const repo = await openRepository(objects, row.id, repoStateFrom(row, a.named.refs, a.named.packs));
  try {
    return await candidateFiles(repo, wanted);
  } catch (e) {
    // A missing object (storage lagging behind the catalog) reads as no file, as Gitea logs and skips.
    if (e instanceof GitError && e.code === "not-found") return [];
    throw e;
  }
}

/** GET …/issue_templates: the templates (null when none) and the parse-error count for X-Service-Warning. */
export async function getIssueTemplates(ctx: Ctx, objects: ObjectStore, owner: string, name: string) {
  const files = await codeReader(ctx, objects, owner, name, "templates");
  const { templates, errors } = loadIssueTemplates(files);
  return { templates, warning: errors.length ? templateWarning(errors.length) : null };
}

/** GET …/issue_config: the first config candidate, or the defaults (also when it is invalid). */
export async function getIssueConfig(ctx: Ctx, objects: ObjectStore, owner: string, name: string) {
  return loadIssueConfig(await codeReader(ctx, objects, owner, name, "config"));
}

/** GET …/issue_config/validate: always 200, Gitea's message when the config is invalid. */
export async function getIssueConfigValidation(ctx: Ctx, objects: ObjectStore, owner: string, name: string) {
  return validateIssueConfig(await codeReader(ctx, objects, owner, name, "config"));
}
