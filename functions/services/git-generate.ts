/**
 * Generate with `git_content` (Gitea services/repository/generate.go GenerateGitContent): the
 * template's default-branch tree becomes ONE commit "Initial commit" on the new repository's
 * default branch, the new repository's owner as author and committer. `.gitea/template` (a
 * regular file) is read and left out: files its `[expand]` globs match get Gitea's variables
 * substituted in their content and path (the path then sanitized), paths its `[exclude]` globs
 * match are left out (a directory with everything below it). Every other entry is copied by id
 * (executable bits, symlinks and submodule links kept). Like auto-init, the commit is built in
 * memory before the repository row exists; its rows ride in the create batch.
 */
import { GitError } from "../git/errors.ts";
import type { Signature } from "../git/objects/commit.ts";
import { MODE } from "../git/objects/tree.ts";
import type { FileChange } from "../git/repo/commit.ts";
import type { Repository } from "../git/repo/repository.ts";
import { unprocessable } from "../lib/errors.ts";
import { expandBytes, expandText, filePathSanitize, matchesAny, parseTemplateRules, type RepoVars, type TemplateRules } from "../lib/template-expansion.ts";
import { type PreparedInit, stageCommit } from "./git-init.ts";

/** Gitea reads `.gitea/template` and each file it expands up to 1 MiB (util.ReadRegularPathFile). */
export const MAX_EXPANDED_FILE = 1024 * 1024;
const TEMPLATE_FILE = ".gitea/template";

const decoder = new TextDecoder();
const isRegular = (mode: string) => mode === MODE.file || mode === MODE.executable;
/** Byte order of names (Go's WalkDir reads each directory sorted by name). */
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The file changes that make the generated tree from the template's tree `treeOid`. */
export async function generatedChanges(template: Repository, treeOid: string, vars: Map<string, string>): Promise<FileChange[]> {
  const spec = await template.entryInTree(treeOid, TEMPLATE_FILE);
  // A symlinked .gitea/template is not a template file: nothing is expanded and it stays (Gitea).
  const rules: TemplateRules | null =
    spec && isRegular(spec.mode) ? parseTemplateRules(decoder.decode((await template.readBlob(spec.oid)).subarray(0, MAX_EXPANDED_FILE))) : null;
  const changes = new Map<string, FileChange>();
  const walk = async (tree: string, prefix: string): Promise<void> => {
    for (const e of [...(await template.readTree(tree))].sort(byName)) {
      const path = prefix ? `${prefix}/${e.name}` : e.name;
      if (rules && path === TEMPLATE_FILE) continue;
      if (rules && matchesAny(rules.exclude, path)) continue;
      if (e.mode === MODE.tree) {
        await walk(e.oid, path);
        continue;
      }
      if (rules && isRegular(e.mode) && matchesAny(rules.expand, path)) {
        const bytes = await template.readBlob(e.oid);
        // Deviation: a larger file is copied unchanged (Gitea fails or cuts it at 1 MiB).
        if (bytes.length <= MAX_EXPANDED_FILE) {
          const to = filePathSanitize(expandText(path, vars));
          // An expanded file replaces whatever was at its new path; a path that expands to nothing is dropped.
          if (to !== ".") changes.set(to, { op: "put", path: to, content: expandBytes(bytes, vars), mode: e.mode as "100644" | "100755" });
          continue;
        }
      }
      if (!changes.has(path)) changes.set(path, { op: "copy", path, from: template, oid: e.oid, mode: e.mode });
    }
  };
  await walk(treeOid, "");
  return [...changes.values()];
}

/**
 * The generated repository's first commit, staged; null when the template's default branch does
 * not resolve (an empty template: the new repository stays empty, as Gitea's `IsEmpty`).
 */
export async function prepareGeneratedContent(template: Repository, templateBranch: string, branch: string, vars: Map<string, string>, sig: Signature): Promise<PreparedInit | null> {
  const head = template.ref(`refs/heads/${templateBranch}`) ? await template.resolve(`refs/heads/${templateBranch}`) : null;
  if (!head) return null;
  const commit = await template.readCommit(head.oid);
  return stageCommit(branch, sig, await generatedChanges(template, commit.tree, vars));
}

/** The variables' view of a repository (Gitea's Link(), CloneLinkGeneral's HTTPS and SSH URLs). */
export function repoVars(rootUrl: string, owner: string, name: string, description: string): RepoVars {
  const u = new URL(rootUrl);
  return {
    name,
    description,
    owner,
    link: `${u.pathname.replace(/\/$/, "")}/${owner}/${name}`,
    httpsUrl: `${rootUrl}${owner}/${name}.git`,
    sshUrl: `git@${u.host}:${owner}/${name}.git`,
  };
}

/** Engine failures of a generate as the API answers them: a bad branch name or path → 422. */
export function generateError(e: unknown): unknown {
  if (e instanceof GitError && (e.code === "invalid" || e.code === "conflict")) return unprocessable(e.message);
  return e;
}
