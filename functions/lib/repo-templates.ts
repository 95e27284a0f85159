/**
 * The files of an auto-initialised repository (Gitea services/repository/create.go
 * prepareRepoCommit, modules/repository/license.go), all bundled — nothing is downloaded:
 * - readme templates (Gitea's `Default`, expanded with `{Name}`, `{Description}`, `{CloneURL.SSH}`,
 *   `{CloneURL.HTTPS}`, `{OwnerName}`);
 * - `.gitignore` templates: Gitea's set, i.e. github/gitignore flattened by base name
 *   (`functions/templates/gitignore.json`, made by `scripts/gen-gitignores.ts`), each appended
 *   under `# ---> <Name>`;
 * - licenses: the SPDX texts of the `spdx-license-list` package, with Gitea's placeholder rules.
 *   The names come from the package's small index; the 5 MB of texts load on first use (start-up
 *   then neither parses nor evaluates them; the Node bundle leaves them in node_modules).
 */

/**
 * The gitignore templates (188 kB) and the SPDX license list (120 kB), loaded on first use: as
 * object literals evaluated at start-up they cost a cold start several milliseconds (issue 9 B.4).
 */
let gitignores: Promise<Record<string, string>> | null = null;
const GITIGNORES = () => (gitignores ??= import("../templates/gitignore.json", { with: { type: "json" } }).then((m) => (m.default as { templates: Record<string, string> }).templates));
let spdxList: Promise<Record<string, unknown>> | null = null;
const SPDX = () => (spdxList ??= import("spdx-license-list").then((m) => m.default as Record<string, unknown>));

/** Readme templates by name (Gitea's options/readme). */
const READMES: Record<string, string> = { Default: "# {Name}\n\n{Description}\n" };

/** Names of the readme templates (Gitea's repo_module.Readmes). */
export const README_TEMPLATE_NAMES = Object.keys(READMES);

/** Gitea's [repository] PREFERRED_LICENSES default: listed first. */
const PREFERRED_LICENSES = ["Apache-2.0", "MIT"];

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Names of the gitignore templates, in Gitea's (byte) order. */
export const gitignoreNames = async (): Promise<string[]> => Object.keys(await GITIGNORES()).sort(byteOrder);

/** One gitignore template's text, or null (names are case-sensitive file names, as in Gitea). */
export async function gitignoreTemplate(name: string): Promise<string | null> {
  const all = await GITIGNORES();
  return Object.hasOwn(all, name) ? all[name]! : null;
}

/** License names: the preferred ones first, then the rest in byte order (Gitea's LoadRepoConfig). */
export async function licenseNames(): Promise<string[]> {
  const all = Object.keys(await SPDX()).sort(byteOrder);
  return [...PREFERRED_LICENSES.filter((n) => all.includes(n)), ...all.filter((n) => !PREFERRED_LICENSES.includes(n))];
}

/** Whether a license of that name exists (case-sensitive SPDX identifiers, as Gitea's file names). */
export const hasLicense = async (name: string): Promise<boolean> => Object.hasOwn(await SPDX(), name);

let texts: Promise<Record<string, { licenseText: string }>> | null = null;

/** A license's SPDX text, or null. */
export async function licenseTemplate(name: string): Promise<string | null> {
  if (!(await hasLicense(name))) return null;
  texts ??= import("spdx-license-list/full.js").then((m) => m.default as Record<string, { licenseText: string }>);
  return (await texts)[name]?.licenseText ?? null;
}

/** The values Gitea puts into a license's placeholders. */
export interface LicenseValues {
  owner: string;
  email: string;
  repo: string;
  year: string;
}

interface Placeholders {
  owner: string[];
  email: string[];
  repo: string[];
  year: string[];
  matchLine?: RegExp;
}

/** Gitea's getLicensePlaceholder: universal spellings, 0BSD special-cased. */
function placeholdersOf(name: string): Placeholders {
  if (name === "0BSD") {
    // there is another AUTHOR in the file, but it is not a placeholder
    return { owner: ["AUTHOR"], email: ["EMAIL"], repo: [], year: ["YEAR"], matchLine: /Copyright \(C\) YEAR by AUTHOR EMAIL/ };
  }
  return {
    owner: [
      "<name of author>",
      "<owner>",
      "[NAME]",
      "[name of copyright owner]",
      "[name of copyright holder]",
      "<COPYRIGHT HOLDERS>",
      "<copyright holders>",
      "<AUTHOR>",
      "<author's name or designee>",
      "[one or more legally recognised persons or entities offering the Work under the terms and conditions of this Licence]",
    ],
    email: ["[EMAIL]"],
    repo: ["<program>", "<one line to give the program's name and a brief idea of what it does.>"],
    year: ["<year>", "[YEAR]", "{YEAR}", "[yyyy]", "[Year]", "[year]"],
  };
}

/** Gitea's fillLicensePlaceholder: line by line (each ends with `\n`), on matching lines only for 0BSD. */
export function fillLicense(name: string, text: string, v: LicenseValues): string {
  const p = placeholdersOf(name);
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let out = "";
  for (let line of lines) {
    line = line.replace(/\r$/, "");
    if (!p.matchLine || p.matchLine.test(line)) {
      for (const s of p.owner) line = line.replaceAll(s, v.owner);
      for (const s of p.email) line = line.replaceAll(s, v.email);
      for (const s of p.repo) line = line.replaceAll(s, v.repo);
      for (const s of p.year) line = line.replaceAll(s, v.year);
    }
    out += `${line}\n`;
  }
  return out;
}

/** The readme variables (Gitea's prepareRepoCommit `match`). */
export interface ReadmeValues {
  Name: string;
  Description: string;
  "CloneURL.SSH": string;
  "CloneURL.HTTPS": string;
  OwnerName: string;
}

/** A readme template expanded (`{Key}` → value; unknown keys stay as written), or null when unknown. */
export function readme(name: string, v: ReadmeValues): string | null {
  const tpl = Object.hasOwn(READMES, name) ? READMES[name]! : null;
  if (tpl === null) return null;
  return tpl.replace(/\{([^{}]+)\}/g, (all, key: string) => (Object.hasOwn(v, key) ? v[key as keyof ReadmeValues] : all));
}

/** The `.gitignore` of comma-separated template names (each under `# ---> Name`), or the first unknown name. */
export async function gitignoreFile(names: string): Promise<{ text: string } | { unknown: string }> {
  let text = "";
  for (const name of names.split(",")) {
    const t = await gitignoreTemplate(name);
    if (t === null) return { unknown: name };
    text += `# ---> ${name}\n${t}\n`;
  }
  return { text };
}
