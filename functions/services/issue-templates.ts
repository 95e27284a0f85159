/**
 * Issue templates and issue config of a repository (Gitea routers/api/v1/repo/issue.go:
 * GetIssueTemplates, GetIssueConfig, ValidateIssueConfig). The parsing lives in
 * lib/issue-templates.ts as plain functions over files; repositories have no git content yet,
 * so the default branch holds no files and the answers are Gitea's for a repository without
 * templates (`null`, the default config, valid).
 */
import type { Ctx } from "../lib/context.ts";
import { forbidden } from "../lib/errors.ts";
import { loadIssueConfig, loadIssueTemplates, templateWarning, validateIssueConfig } from "../lib/issue-templates.ts";
import { canRead, isRepoAdmin, UNIT } from "../lib/permissions.ts";
import { assignRepo } from "./repos.ts";

/** The files of the default branch that the template parser reads (none until git content exists). */
type RepoFile = { path: string; content: string };
const defaultBranchFiles = async (): Promise<RepoFile[]> => [];

/** reqRepoReader(code): templates live in the code (GHSA-3fwp-p5rj-2pxf). */
async function codeReader(ctx: Ctx, owner: string, name: string) {
  const a = await assignRepo(ctx, owner, name);
  if (!canRead(a.perm, UNIT.code) && !isRepoAdmin(a.perm) && !a.caller?.isAdmin) {
    throw forbidden("user should have specific read permission or be a repo admin or a site admin");
  }
  return a.view.repo.isEmpty ? [] : defaultBranchFiles();
}

/** GET …/issue_templates: the templates (null when none) and the parse-error count for X-Service-Warning. */
export async function getIssueTemplates(ctx: Ctx, owner: string, name: string) {
  const files = await codeReader(ctx, owner, name);
  const { templates, errors } = loadIssueTemplates(files);
  return { templates, warning: errors.length ? templateWarning(errors.length) : null };
}

/** GET …/issue_config. */
export async function getIssueConfig(ctx: Ctx, owner: string, name: string) {
  return loadIssueConfig(await codeReader(ctx, owner, name));
}

/** GET …/issue_config/validate: always 200. */
export async function getIssueConfigValidation(ctx: Ctx, owner: string, name: string) {
  return validateIssueConfig(await codeReader(ctx, owner, name));
}
