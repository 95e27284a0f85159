/**
 * Issue templates and the issue config as plain functions over the files of a repository's
 * default branch (Gitea modules/issue/template, services/issue/template.go). No I/O: the caller
 * feeds `{ path, content }` files; the git-content work only has to supply them.
 */
import { parse as parseYaml } from "yaml";

export interface RepoFile {
  path: string;
  content: string;
}

export interface IssueFormField {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  validations: Record<string, unknown>;
  visible?: string[];
}

/** Gitea's IssueTemplate JSON, keys in Gitea's order. */
export interface IssueTemplate {
  name: string;
  title: string;
  about: string;
  labels: string[];
  assignees: string[];
  ref: string;
  content: string;
  body: IssueFormField[] | null;
  file_name: string;
}

export interface IssueConfig {
  blank_issues_enabled: boolean;
  contact_links: { name: string; url: string; about: string }[];
}

/** Template directories in Gitea's order. */
export const TEMPLATE_DIRS = [
  "ISSUE_TEMPLATE",
  "issue_template",
  ".gitea/ISSUE_TEMPLATE",
  ".gitea/issue_template",
  ".github/ISSUE_TEMPLATE",
  ".github/issue_template",
  ".gitlab/ISSUE_TEMPLATE",
  ".gitlab/issue_template",
];

/** Config file candidates in Gitea's order. */
export const CONFIG_PATHS = [".gitea/ISSUE_TEMPLATE", ".gitea/issue_template", ".github/ISSUE_TEMPLATE", ".github/issue_template"].flatMap((d) => [`${d}/config.yaml`, `${d}/config.yml`]);

const FIELD_TYPES = ["markdown", "textarea", "input", "dropdown", "checkboxes"];
const ID_RE = /^[a-zA-Z0-9_-]+$/;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Gitea's IssueTemplateStringSlice: a YAML list or a comma-separated string. */
function stringSlice(v: unknown, key: string): string[] {
  if (v === undefined || v === null) return [];
  if (typeof v === "string") return v.split(",").map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(v)) return v.map((x) => String(x).trim()).filter(Boolean);
  throw new Error(`line 1: cannot unmarshal ${typeof v} into ${key}`);
}

const str = (v: unknown) => (v === undefined || v === null ? "" : typeof v === "string" ? v : String(v));

/** Splits `---\nfront matter\n---\nbody` (Gitea's markdown.ExtractMetadata). */
function frontMatter(content: string): { meta: string; body: string } {
  const lines = content.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") throw new Error("frontmatter must start with a separator line");
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (end < 0) throw new Error("could not determine metadata");
  return { meta: lines.slice(1, end).join("\n"), body: lines.slice(end + 1).join("\n") };
}

function validateField(f: IssueFormField, idx: number, ids: Set<string>) {
  const where = `body[${idx}](${f.type})`;
  if (!FIELD_TYPES.includes(f.type)) throw new Error(`body[${idx}]: unknown type`);
  if (f.type !== "markdown") {
    if (!f.id) throw new Error(`${where}: 'id' is required`);
  }
  if (f.id) {
    if (!ID_RE.test(f.id)) throw new Error(`${where}: 'id' should contain only alphanumeric, '-' and '_'`);
    if (ids.has(f.id)) throw new Error(`${where}: 'id' should be unique`);
    ids.add(f.id);
  }
  const a = f.attributes;
  if (f.type === "markdown") {
    if (typeof a.value !== "string" || !a.value) throw new Error(`${where}: 'value' is required`);
  } else if (typeof a.label !== "string" || !a.label) {
    throw new Error(`${where}: 'label' is required`);
  }
  if (f.type === "dropdown" || f.type === "checkboxes") {
    if (!Array.isArray(a.options) || a.options.length === 0) throw new Error(`${where}: 'options' is required and should be a array`);
    a.options.forEach((o, i) => {
      if (f.type === "dropdown" && typeof o !== "string") throw new Error(`${where}: 'options[${i}]' should be a string`);
      if (f.type === "checkboxes") {
        if (!isObject(o) || typeof o.label !== "string" || !o.label) throw new Error(`${where}: 'label' is required in 'options[${i}]'`);
        if (o.required !== undefined && typeof o.required !== "boolean") throw new Error(`${where}: 'required' should be a bool in 'options[${i}]'`);
      }
    });
  }
  if (f.validations.required !== undefined && typeof f.validations.required !== "boolean") throw new Error(`${where}: 'required' should be a bool`);
  if (f.type === "input" && f.validations.regex !== undefined) {
    try {
      new RegExp(String(f.validations.regex));
    } catch {
      throw new Error(`${where}: 'regex' should be a valid regular expression`);
    }
  }
  for (const v of f.visible ?? []) if (v !== "form" && v !== "content") throw new Error(`${where}: 'visible' value "${v}" is not in [form content]`);
}

/** Parses and validates one template file; throws an Error with Gitea's message when invalid. */
export function parseIssueTemplate(path: string, content: string): IssueTemplate {
  const fileName = path.split("/").pop() ?? path;
  const ext = fileName.slice(fileName.lastIndexOf(".")).toLowerCase();
  let raw: Record<string, unknown>;
  let markdown = "";
  if (ext === ".md") {
    const fm = frontMatter(content);
    raw = (parseYaml(fm.meta) as Record<string, unknown>) ?? {};
    markdown = fm.body;
  } else if (ext === ".yaml" || ext === ".yml") {
    raw = (parseYaml(content) as Record<string, unknown>) ?? {};
  } else {
    throw new Error(`file extension ${ext} is not supported`);
  }
  if (!isObject(raw)) throw new Error("yaml: unmarshal errors: template is not a mapping");
  let ref = str(raw.ref);
  if (ref && !ref.startsWith("refs/")) ref = `refs/heads/${ref}`;
  const t: IssueTemplate = {
    name: str(raw.name),
    title: str(raw.title),
    about: str(raw.about) || str(raw.description),
    labels: stringSlice(raw.labels, "labels"),
    assignees: stringSlice(raw.assignees, "assignees"),
    ref,
    content: markdown,
    body: null,
    file_name: fileName,
  };
  if (!t.name.trim()) throw new Error("'name' is required");
  if (!t.about.trim()) throw new Error("'about' is required");
  if (ext !== ".md") {
    if (!Array.isArray(raw.body) || raw.body.length === 0) throw new Error("'body' is required");
    const ids = new Set<string>();
    t.body = raw.body.map((item, idx) => {
      if (!isObject(item)) throw new Error(`body[${idx}]: 'type' is required`);
      const field: IssueFormField = {
        type: str(item.type),
        id: str(item.id),
        attributes: isObject(item.attributes) ? item.attributes : {},
        validations: isObject(item.validations) ? item.validations : {},
      };
      if (item.visible !== undefined) {
        if (!Array.isArray(item.visible)) throw new Error(`body[${idx}](${field.type}): 'visible' should be a list`);
        field.visible = item.visible.map(String);
      }
      if (!field.type) throw new Error(`body[${idx}]: 'type' is required`);
      validateField(field, idx, ids);
      return field;
    });
  }
  return t;
}

const isTemplateFile = (path: string) => /\.(md|ya?ml)$/i.test(path) && !/(^|\/)config\.ya?ml$/i.test(path);

/**
 * The templates of a repository from its default-branch files: `templates` is `null` when there
 * are none (Gitea answers JSON null); `errors` lists the files that failed, for X-Service-Warning.
 */
export function loadIssueTemplates(files: RepoFile[]): { templates: IssueTemplate[] | null; errors: string[] } {
  const templates: IssueTemplate[] = [];
  const errors: string[] = [];
  for (const dir of TEMPLATE_DIRS) {
    const inDir = files
      .filter((f) => f.path.startsWith(`${dir}/`) && !f.path.slice(dir.length + 1).includes("/") && isTemplateFile(f.path))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const f of inDir) {
      try {
        templates.push(parseIssueTemplate(f.path, f.content));
      } catch (e) {
        errors.push(`${f.path}: ${(e as Error).message}`);
      }
    }
  }
  return { templates: templates.length ? templates : null, errors };
}

/** The X-Service-Warning value for parse errors (Gitea: X-Gitea-Warning). */
export const templateWarning = (count: number) => `error occurs when parsing issue template: count=${count}`;

export const defaultIssueConfig = (): IssueConfig => ({ blank_issues_enabled: true, contact_links: [] });

function validRequestUri(u: string) {
  // Go's url.ParseRequestURI: an absolute URL or an absolute path, no fragment-only or relative refs.
  if (u.startsWith("/")) return true;
  try {
    return !!new URL(u).protocol;
  } catch {
    return false;
  }
}

/** Parses the config file content; throws Gitea's messages. A missing key keeps Go's zero value. */
export function parseIssueConfig(content: string): IssueConfig {
  const raw = parseYaml(content) as unknown;
  if (raw !== null && raw !== undefined && !isObject(raw)) throw new Error("yaml: unmarshal errors: config is not a mapping");
  const r = (raw ?? {}) as Record<string, unknown>;
  if (r.blank_issues_enabled !== undefined && typeof r.blank_issues_enabled !== "boolean") throw new Error("yaml: unmarshal errors: blank_issues_enabled is not a bool");
  const linksRaw = r.contact_links ?? [];
  if (!Array.isArray(linksRaw)) throw new Error("yaml: unmarshal errors: contact_links is not a list");
  const links = linksRaw.map((l, i) => {
    const o = isObject(l) ? l : {};
    const link = { name: str(o.name), url: str(o.url), about: str(o.about) };
    const pos = i + 1;
    if (!link.name) throw new Error(`contact_link at position ${pos} is missing name key`);
    if (!link.url) throw new Error(`contact_link at position ${pos} is missing url key`);
    if (!link.about) throw new Error(`contact_link at position ${pos} is missing about key`);
    if (!validRequestUri(link.url)) throw new Error(`${link.url} is not a valid URL`);
    return link;
  });
  return { blank_issues_enabled: r.blank_issues_enabled === true, contact_links: links };
}

const configFile = (files: RepoFile[]) => {
  for (const p of CONFIG_PATHS) {
    const f = files.find((x) => x.path === p);
    if (f) return f;
  }
  return null;
};

/** GET issue_config: the first config file found, or the defaults (also when it is invalid, as Gitea). */
export function loadIssueConfig(files: RepoFile[]): IssueConfig {
  const f = configFile(files);
  if (!f) return defaultIssueConfig();
  try {
    return parseIssueConfig(f.content);
  } catch {
    return defaultIssueConfig();
  }
}

/** GET issue_config/validate: `{ valid, message }`, message "" when valid. */
export function validateIssueConfig(files: RepoFile[]): { valid: boolean; message: string } {
  const f = configFile(files);
  if (!f) return { valid: true, message: "" };
  try {
    parseIssueConfig(f.content);
    return { valid: true, message: "" };
  } catch (e) {
    return { valid: false, message: (e as Error).message };
  }
}
