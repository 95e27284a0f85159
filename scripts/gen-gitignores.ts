/**
 * `node scripts/gen-gitignores.ts <github/gitignore checkout or git dir>`: writes
 * functions/templates/gitignore.json, the `.gitignore` templates Gitea ships (its
 * build/generate-gitignores.go): every `*.gitignore` file of github/gitignore at any depth, named
 * by its base name without the extension, later files in tree order replacing earlier ones of the
 * same name, symbolic links replaced by their target's text. Run by hand when updating the set;
 * the app never downloads anything.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { basename } from "node:path";

const source = process.argv[2];
if (!source) {
  console.error("usage: node scripts/gen-gitignores.ts <path to a github/gitignore checkout or git dir>");
  process.exit(2);
}
const git = (...args: string[]) => execFileSync("git", [`--git-dir=${source}`, ...args], { maxBuffer: 64 * 1024 * 1024 }).toString("utf8");
const commit = git("rev-parse", "HEAD").trim();
const entries = git("ls-tree", "-r", "HEAD")
  .split("\n")
  .filter(Boolean)
  .map((l) => {
    const [meta, path] = l.split("\t") as [string, string];
    const [mode, , oid] = meta.split(" ") as [string, string, string];
    return { mode, oid, path };
  })
  .filter((e) => e.path.endsWith(".gitignore") && basename(e.path) !== ".gitignore");
const name = (p: string) => basename(p).slice(0, -".gitignore".length);
const texts = new Map<string, string>();
const links = new Map<string, string>();
for (const e of entries) {
  const body = git("cat-file", "blob", e.oid);
  if (e.mode === "120000") links.set(name(e.path), name(body.trim()));
  else texts.set(name(e.path), body);
}
for (const [from, to] of links) {
  const t = texts.get(to);
  if (t !== undefined) texts.set(from, t);
}
const sorted = Object.fromEntries([...texts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
writeFileSync(new URL("../functions/templates/gitignore.json", import.meta.url), `${JSON.stringify({ source: `github/gitignore ${commit}`, templates: sorted }, null, 1)}\n`);
console.log(`${Object.keys(sorted).length} templates from github/gitignore ${commit}`);
