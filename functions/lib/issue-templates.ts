/**
 * Issue templates and the issue config as plain functions over the files of a repository's
 * default branch (Gitea modules/issue/template/{unmarshal,template}.go, services/issue/template.go,
 * modules/structs/issue.go). No I/O and no Node-only APIs: the caller feeds `{ path, content }`
 * files. YAML is read with `yaml` and decoded the way Go's yaml.v3 decodes into Gitea's structs
 * (plain-scalar resolution, typed fields, "cannot unmarshal" errors with line numbers).
 */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments } from "yaml";
import type { Document, Node as YamlNode } from "yaml";
import { parseGoInt } from "./query.ts";
import { goTrimSpace } from "./template-expansion.ts";

export interface RepoFile {
  path: string;
  content: string;
}

/** One value of a form field's attributes/validations, as Go's encoding/json writes it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Gitea's IssueFormField JSON (`visible` is omitted when empty). */
export interface IssueFormField {
  type: string;
  id: string;
  attributes: Record<string, JsonValue> | null;
  validations: Record<string, JsonValue> | null;
  visible?: string[];
}

/** Gitea's IssueTemplate JSON, keys in Gitea's order; a nil slice is `null` as in Go. */
export interface IssueTemplateJson {
  name: string;
  title: string;
  about: string;
  labels: string[] | null;
  assignees: string[] | null;
  ref: string;
  content: string;
  body: IssueFormField[] | null;
  file_name: string;
}
/** Alias of IssueTemplateJson. */
export type IssueTemplate = IssueTemplateJson;

export interface IssueConfigContactLink {
  name: string;
  url: string;
  about: string;
}

/** Gitea's IssueConfig JSON (`contact_links` is `null` when the file says `contact_links: ~`). */
export interface IssueConfig {
  blank_issues_enabled: boolean;
  contact_links: IssueConfigContactLink[] | null;
}

/** Gitea's IssueConfigValidation JSON. */
export interface IssueConfigValidation {
  valid: boolean;
  message: string;
}

/** Template directories in Gitea's order (services/issue/template.go templateDirCandidates). */
export const TEMPLATE_DIRS = [
  "ISSUE_TEMPLATE",
  "issue_template",
  ".gitea/ISSUE_TEMPLATE",
  ".gitea/issue_template",
  ".github/ISSUE_TEMPLATE",
  ".github/issue_template",
  ".gitlab/ISSUE_TEMPLATE",
  ".gitlab/issue_template",
] as const;

/** Config file candidates in Gitea's order: each directory's `config.yaml`, then `config.yml`. */
export const CONFIG_PATHS = [".gitea/ISSUE_TEMPLATE", ".gitea/issue_template", ".github/ISSUE_TEMPLATE", ".github/issue_template"].flatMap((d) => [
  `${d}/config.yaml`,
  `${d}/config.yml`,
]);

/** setting.UI.MaxDisplayFileSize default: larger template files fail with "too large". */
export const MAX_TEMPLATE_FILE_SIZE = 8 * 1024 * 1024;
/** GetTemplateConfig reads at most 1 MiB of the config file (util.ReadWithLimit). */
export const MAX_CONFIG_FILE_SIZE = 1024 * 1024;
/** Decoding budget; an alias bomb fails like yaml.v3's "excessive aliasing" instead of hanging. */
const MAX_DECODED_NODES = 200_000;

// ---------------------------------------------------------------------------------------------
// UTF-8 helpers (Go measures and slices strings in bytes)

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const utf8Len = (s: string) => encoder.encode(s).length;
const cpBytes = (cp: number) => (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);

/** Go's path.Base for '/'-separated git paths. */
const baseName = (p: string) => {
  const t = p.replace(/\/+$/, "");
  return t === "" ? (p === "" ? "." : "/") : t.slice(t.lastIndexOf("/") + 1);
};
/** Go's path.Ext. */
const extName = (p: string) => {
  for (let i = p.length - 1; i >= 0 && p[i] !== "/"; i--) if (p[i] === ".") return p.slice(i);
  return "";
};

/** api.IssueTemplate.Type(): "md", "yaml" or "" (config.yaml/yml and other names are not templates). */
export function templateType(fileName: string): "md" | "yaml" | "" {
  const base = baseName(fileName);
  if (base === "config.yaml" || base === "config.yml") return "";
  const ext = extName(fileName);
  if (ext === ".md") return "md";
  if (ext === ".yaml" || ext === ".yml") return "yaml";
  return "";
}

/** util.EllipsisDisplayString: ≤ limit "ASCII widths" (non-ASCII counts 2), "…" appended when cut. */
export function ellipsisDisplayString(str: string, limit: number): string {
  const total = utf8Len(str);
  if (total <= limit) return str;
  const runes = Array.from(str);
  let used = 0;
  let kept = 0; // runes before the cut
  let pos = 0; // rune index where the loop stopped
  let posByte = 0;
  let invalid = false;
  for (let i = 0, b = 0; i < runes.length; i++) {
    const cp = runes[i]!.codePointAt(0)!; // !: i < runes.length, and a rune has a code point
    invalid ||= cp === 0xfffd || (cp >= 0xd800 && cp <= 0xdfff);
    pos = i;
    posByte = b;
    const width = cp >= 128 ? 2 : 1;
    if (used + width + 3 > limit) break;
    used += width;
    kept = i + 1;
    b += cpBytes(cp);
  }
  // fewer than 4 runes left that still fit: no ellipsis
  if (total - posByte <= 12) {
    const next = runes.slice(pos, pos + 4);
    const nextWidth = next.reduce((w, r) => w + (r.codePointAt(0)! >= 128 ? 2 : 1), 0);
    if (next.length <= 3 && used + nextWidth <= limit) return str;
  }
  const left = runes.slice(0, kept).join("");
  if (limit < 3) return left;
  return left + (invalid ? "..." : "…");
}

// ---------------------------------------------------------------------------------------------
// A small yaml.v3-style decoder over `yaml` documents

/** A Go float in a decoded `any` (only ints pass Gitea's `.(int)` checks). */
class GoFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}
/** A Go map[interface{}]interface{} (a mapping with a non-string key): not a "dictionary". */
class GoGeneralMap {
  readonly entries: [string, GoValue][];
  constructor(entries: [string, GoValue][]) {
    this.entries = entries;
  }
}
type GoValue = string | number | boolean | null | GoFloat | GoGeneralMap | GoValue[] | { [key: string]: GoValue };
type GoMap = { [key: string]: GoValue };

const isGoMap = (v: GoValue | undefined): v is GoMap =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof GoFloat) && !(v instanceof GoGeneralMap);

/** A non-TypeError failure (yaml.v3 `fail`): decoding stops. */
class YamlFatal extends Error {}

type Tag = "!!null" | "!!bool" | "!!int" | "!!float" | "!!str" | "!!seq" | "!!map" | "!!binary" | "!!timestamp" | string;

const FLOAT_RE = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

interface Resolved {
  tag: Tag;
  value: GoValue;
}

/** yaml.v3 resolve(): the implicit tag and Go value of a scalar. */
function resolveScalar(n: YamlNode): Resolved {
  const s = n as unknown as { value: unknown; source?: string; type?: string; tag?: string };
  const text = typeof s.value === "string" ? s.value : String(s.source ?? s.value ?? "");
  const explicit = s.tag ? shortTag(s.tag) : "";
  if (explicit === "!!str" || explicit === "!!binary") return { tag: explicit, value: text };
  const plain = s.type === "PLAIN" || s.type === undefined;
  if (!plain && !explicit) return { tag: "!!str", value: text };
  if (explicit && !["!!null", "!!bool", "!!int", "!!float"].includes(explicit)) return { tag: explicit, value: text };
  if (text === "" || text === "~" || text === "null" || text === "Null" || text === "NULL") return { tag: "!!null", value: null };
  if (["true", "True", "TRUE"].includes(text)) return { tag: "!!bool", value: true };
  if (["false", "False", "FALSE"].includes(text)) return { tag: "!!bool", value: false };
  if ([".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"].includes(text)) return { tag: "!!float", value: new GoFloat(Infinity) };
  if (["-.inf", "-.Inf", "-.INF"].includes(text)) return { tag: "!!float", value: new GoFloat(-Infinity) };
  if ([".nan", ".NaN", ".NAN"].includes(text)) return { tag: "!!float", value: new GoFloat(NaN) };
  const i = parseGoInt(text);
  if (i !== null) return { tag: "!!int", value: typeof i === "bigint" ? Number(i) : i };
  if (FLOAT_RE.test(text.replace(/_/g, ""))) return { tag: "!!float", value: new GoFloat(Number(text.replace(/_/g, ""))) };
  return { tag: explicit || "!!str", value: text };
}

function shortTag(tag: string): Tag {
  return tag.startsWith("tag:yaml.org,2002:") ? `!!${tag.slice("tag:yaml.org,2002:".length)}` : tag;
}

/** Decodes one YAML document into Go-typed values, collecting yaml.v3's type errors. */
class GoDecoder {
  terrors: string[] = [];
  private budget = MAX_DECODED_NODES;
  private readonly anchors = new Map<object, unknown>();
  private readonly doc: Document.Parsed;
  private readonly lines: LineCounter;
  constructor(doc: Document.Parsed, lines: LineCounter) {
    this.doc = doc;
    this.lines = lines;
  }

  line(n: YamlNode): number {
    const r = (n as { range?: [number, number, number] }).range;
    return r ? this.lines.linePos(r[0]).line : 1;
  }

  /** Follows aliases; counts nodes so an alias bomb fails instead of hanging. */
  node(n: YamlNode | null | undefined): YamlNode | null {
    if (--this.budget < 0) throw new YamlFatal("yaml: document contains excessive aliasing");
    let cur: unknown = n;
    for (let hops = 0; isAlias(cur); hops++) {
      if (hops > 100) throw new YamlFatal("yaml: document contains excessive aliasing");
      const alias = cur;
      if (!this.anchors.has(alias)) this.anchors.set(alias, alias.resolve(this.doc));
      cur = this.anchors.get(alias);
    }
    return (cur as YamlNode | undefined) ?? null;
  }

  tag(n: YamlNode): Tag {
    if (isMap(n)) return "!!map";
    if (isSeq(n)) return "!!seq";
    return resolveScalar(n).tag;
  }

  /** yaml.v3 d.terror: "line N: cannot unmarshal !!tag `value` into <Go type>". */
  terror(n: YamlNode, into: string) {
    const tag = this.tag(n);
    let value = "";
    if (tag !== "!!seq" && tag !== "!!map") {
      const s = n as unknown as { value: unknown; source?: string };
      const text = typeof s.value === "string" ? s.value : String(s.source ?? s.value ?? "");
      const bytes = encoder.encode(text);
      value = bytes.length > 10 ? ` \`${decoder.decode(bytes.slice(0, 7))}...\`` : ` \`${text}\``;
    }
    this.terrors.push(`line ${this.line(n)}: cannot unmarshal ${tag}${value} into ${into}`);
  }

  /** A Go string field: any scalar's text; null leaves the field unchanged (undefined). */
  string(raw: YamlNode | null, into = "string"): string | undefined {
    const n = this.node(raw);
    if (!n) return undefined;
    if (isScalar(n)) {
      const r = resolveScalar(n);
      if (r.tag === "!!null") return undefined;
      const s = n as unknown as { value: unknown; source?: string };
      return typeof s.value === "string" ? s.value : String(s.source ?? s.value);
    }
    this.terror(n, into);
    return undefined;
  }

  /** A Go bool field, with yaml.v3's YAML 1.1 compatibility (yes/no/on/off/y/n). */
  bool(raw: YamlNode | null): boolean | undefined {
    const n = this.node(raw);
    if (!n) return undefined;
    if (isScalar(n)) {
      const r = resolveScalar(n);
      if (r.tag === "!!null") return undefined;
      if (typeof r.value === "boolean") return r.value;
      if (r.tag === "!!str" && typeof r.value === "string") {
        if (["y", "Y", "yes", "Yes", "YES", "on", "On", "ON"].includes(r.value)) return true;
        if (["n", "N", "no", "No", "NO", "off", "Off", "OFF"].includes(r.value)) return false;
      }
    }
    this.terror(n, "bool");
    return undefined;
  }

  /** A Go []string: null → nil (undefined), [] → empty slice. */
  strings(raw: YamlNode | null, into: string): string[] | null | undefined {
    const n = this.node(raw);
    if (!n) return undefined;
    if (isScalar(n) && resolveScalar(n).tag === "!!null") return null;
    if (!isSeq(n)) {
      this.terror(n, into);
      return undefined;
    }
    const out: string[] = [];
    for (const item of n.items as YamlNode[]) {
      const v = this.string(item);
      out.push(v ?? "");
    }
    return out;
  }

  /** A Go interface{} value. */
  any(raw: YamlNode | null): GoValue {
    const n = this.node(raw);
    if (!n) return null;
    if (isSeq(n)) return (n.items as YamlNode[]).map((i) => this.any(i));
    if (isMap(n)) {
      const pairs = this.pairs(n);
      const stringKeys = pairs.every(([k]) => !k || (isScalar(k) && this.tag(k) === "!!str"));
      const entries: [string, GoValue][] = pairs.map(([k, v]) => [this.keyText(k), this.any(v)]);
      if (!stringKeys) return new GoGeneralMap(entries);
      const m: GoMap = {};
      for (const [k, v] of entries) m[k] = v;
      return m;
    }
    return resolveScalar(n).value;
  }

  /** A Go map[string]interface{}: null → nil. */
  stringMap(raw: YamlNode | null): GoMap | null | undefined {
    const n = this.node(raw);
    if (!n) return undefined;
    if (isScalar(n) && resolveScalar(n).tag === "!!null") return null;
    if (!isMap(n)) {
      this.terror(n, "map[string]interface {}");
      return undefined;
    }
    const m: GoMap = {};
    for (const [k, v] of this.pairs(n)) m[this.keyText(k)] = this.any(v);
    return m;
  }

  keyText(k: YamlNode | null): string {
    if (!k) return "";
    const s = k as unknown as { value: unknown; source?: string };
    if (isScalar(k)) return typeof s.value === "string" ? s.value : String(s.source ?? s.value ?? "");
    return "";
  }

  /** The pairs of a mapping, reporting yaml.v3's duplicate-key errors. */
  pairs(map: YamlNode): [YamlNode | null, YamlNode | null][] {
    const items = (map as unknown as { items: unknown[] }).items;
    const pairs: [YamlNode | null, YamlNode | null][] = items.filter(isPair).map((p) => [this.node(p.key as YamlNode), (p.value as YamlNode) ?? null]);
    const seen = new Map<string, YamlNode>();
    for (const [k] of pairs) {
      if (!k || !isScalar(k)) continue;
      const text = this.keyText(k);
      const first = seen.get(text);
      if (first) this.terrors.push(`line ${this.line(k)}: mapping key ${JSON.stringify(text)} already defined at line ${this.line(first)}`);
      else seen.set(text, k);
    }
    return pairs;
  }

  /** Decodes a mapping into a struct: `fields[key](valueNode)` in document order; null/empty is a no-op. */
  struct(raw: YamlNode | null, into: string, fields: Record<string, (v: YamlNode | null) => void>): boolean {
    const n = this.node(raw);
    if (!n) return false;
    if (isScalar(n) && resolveScalar(n).tag === "!!null") return false;
    if (!isMap(n)) {
      this.terror(n, into);
      return false;
    }
    for (const [k, v] of this.pairs(n)) {
      const f = Object.hasOwn(fields, this.keyText(k)) ? fields[this.keyText(k)] : undefined;
      if (f) f(v);
    }
    return true;
  }

  /** "yaml: unmarshal errors:\n  line N: …" when any type error was collected. */
  typeError(): string | null {
    return this.terrors.length ? `yaml: unmarshal errors:\n  ${this.terrors.join("\n  ")}` : null;
  }
}

/** Parses the first YAML document; a syntax error becomes "yaml: line N: <problem>". */
function parseFirstDocument(src: string): { doc: Document.Parsed | null; lines: LineCounter; error: string | null } {
  const lines = new LineCounter();
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(src, { lineCounter: lines, uniqueKeys: false, prettyErrors: false, schema: "failsafe", strict: false }) as Document.Parsed[];
  } catch (e) {
    return { doc: null, lines, error: `yaml: ${(e as Error).message}` };
  }
  if (!Array.isArray(docs)) return { doc: null, lines, error: null }; // EmptyStream
  const doc = docs[0] ?? null;
  const err = doc?.errors[0];
  if (err) {
    const line = err.linePos?.[0]?.line ?? lines.linePos(err.pos[0]).line;
    const problem = err.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, ""); // !: split returns at least one part
    return { doc: null, lines, error: `yaml: line ${line}: ${problem}` };
  }
  return { doc, lines, error: null };
}

/** The Go→JSON conversion: encoding/json sorts map keys; NaN/±Inf have no JSON form (null). */
function toJson(v: GoValue): JsonValue {
  if (v instanceof GoFloat) return Number.isFinite(v.value) ? v.value : null;
  if (v instanceof GoGeneralMap) return sortedObject(v.entries);
  if (Array.isArray(v)) return v.map(toJson);
  if (isGoMap(v)) return sortedObject(Object.entries(v));
  return v;
}
function sortedObject(entries: [string, GoValue][]): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  const sorted = [...entries].sort(([a], [b]) => compareBytes(a, b));
  for (const [k, val] of sorted) out[k] = toJson(val);
  return out;
}

/** Byte-wise comparison of UTF-8 strings (Go string order, git tree order for file names). */
function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!; // !: i < n, the shorter length
  return x.length - y.length;
}

// ---------------------------------------------------------------------------------------------
// Template decoding (modules/issue/template/unmarshal.go)

interface RawField {
  type: string;
  id: string;
  attributes: GoMap | null;
  validations: GoMap | null;
  visible: string[] | null;
}

interface RawTemplate {
  name: string;
  title: string;
  about: string;
  labels: string[] | null;
  assignees: string[] | null;
  ref: string;
  content: string;
  fields: (RawField | null)[] | null;
  fileName: string;
}

/** IssueTemplateStringSlice.UnmarshalYAML: a scalar is split on commas; a list is a []string. */
function stringSlice(d: GoDecoder, raw: YamlNode | null): string[] | null | undefined {
  const n = d.node(raw);
  if (!n) return undefined;
  if (isScalar(n)) {
    if (resolveScalar(n).tag === "!!null") return undefined; // yaml.v3 never calls the unmarshaler for null
    const text = d.string(n) ?? "";
    const out = text
      .split(",")
      .map((s) => goTrimSpace(s))
      .filter((s) => s !== "");
    return out.length ? out : null;
  }
  if (isSeq(n)) return d.strings(n, "[]string") ?? null;
  throw new YamlFatal(`line ${d.line(n)}: cannot unmarshal !!map into IssueTemplateStringSlice`);
}

/** Decodes the IssueTemplate struct fields (yaml tags name/title/about/labels/assignees/ref/body). */
function decodeTemplate(d: GoDecoder, root: YamlNode | null, it: RawTemplate) {
  d.struct(root, "structs.IssueTemplate", {
    name: (v) => (it.name = d.string(v) ?? it.name),
    title: (v) => (it.title = d.string(v) ?? it.title),
    about: (v) => (it.about = d.string(v) ?? it.about),
    labels: (v) => {
      const s = stringSlice(d, v);
      if (s !== undefined) it.labels = s;
    },
    assignees: (v) => {
      const s = stringSlice(d, v);
      if (s !== undefined) it.assignees = s;
    },
    ref: (v) => (it.ref = d.string(v) ?? it.ref),
    body: (v) => {
      const n = d.node(v);
      if (!n) return;
      if (isScalar(n) && resolveScalar(n).tag === "!!null") {
        it.fields = null;
        return;
      }
      if (!isSeq(n)) return d.terror(n, "[]*structs.IssueFormField");
      it.fields = (n.items as YamlNode[]).map((item) => {
        const inode = d.node(item);
        if (!inode || (isScalar(inode) && resolveScalar(inode).tag === "!!null")) return null;
        const f: RawField = { type: "", id: "", attributes: null, validations: null, visible: null };
        d.struct(inode, "structs.IssueFormField", {
          type: (x) => (f.type = d.string(x, "structs.IssueFormFieldType") ?? f.type),
          id: (x) => (f.id = d.string(x) ?? f.id),
          attributes: (x) => {
            const m = d.stringMap(x);
            if (m !== undefined) f.attributes = m;
          },
          validations: (x) => {
            const m = d.stringMap(x);
            if (m !== undefined) f.validations = m;
          },
          visible: (x) => {
            const s = d.strings(x, "[]structs.IssueFormFieldVisible");
            if (s !== undefined) f.visible = s;
          },
        });
        return f;
      });
    },
  });
}

/** The compatibility pass: `description` stands in for an empty `about` when it decodes cleanly. */
function compatibleDescription(src: string): string {
  const { doc, lines, error } = parseFirstDocument(src);
  if (error || !doc) return "";
  const d = new GoDecoder(doc, lines);
  let about = "";
  try {
    d.struct(doc.contents as YamlNode | null, "struct { About string \"yaml:\\\"description\\\"\" }", {
      description: (v) => (about = d.string(v) ?? about),
    });
  } catch {
    return "";
  }
  return d.terrors.length ? "" : about;
}

/** Decodes YAML into `it`; returns the error text yaml.v3 would return, or null. */
function unmarshalInto(src: string, it: RawTemplate): string | null {
  const { doc, lines, error } = parseFirstDocument(src);
  if (error) return error;
  if (!doc) return null;
  const d = new GoDecoder(doc, lines);
  try {
    decodeTemplate(d, doc.contents as YamlNode | null, it);
  } catch (e) {
    if (e instanceof YamlFatal) return e.message;
    throw e;
  }
  return d.typeError();
}

const UNICODE_SPACE = /^[\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;

/** markdown.isYAMLSeparator, byte for byte (including its skip of the byte after a multi-byte space). */
function isYamlSeparator(line: string): boolean {
  const b = encoder.encode(line);
  const runeAt = (i: number): [string, number] => {
    const lead = b[i]!; // !: called with i < b.length
    const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    return [decoder.decode(b.slice(i, i + size)), size];
  };
  let idx = 0;
  for (; idx < b.length; idx++) {
    if (b[idx]! >= 0x80) { // !: idx < b.length
      const [r, sz] = runeAt(idx);
      if (!UNICODE_SPACE.test(r)) return false;
      idx += sz;
      continue;
    }
    if (b[idx] !== 0x20) break;
  }
  let dashes = 0;
  for (; idx < b.length && b[idx] === 0x2d; idx++) dashes++;
  if (dashes < 3) return false;
  for (; idx < b.length; idx++) {
    if (b[idx]! >= 0x80) { // !: idx < b.length
      const [r, sz] = runeAt(idx);
      if (!UNICODE_SPACE.test(r)) return false;
      idx += sz;
      continue;
    }
    if (b[idx] !== 0x20) return false;
  }
  return true;
}

/** markdown.ExtractMetadata: `---` line, front matter, `---` line, body (only "\n" ends a line). */
export function extractFrontMatter(contents: string): { front: string; body: string } {
  let nl = contents.indexOf("\n");
  const first = nl >= 0 ? contents.slice(0, nl) : contents;
  if (!isYamlSeparator(first)) throw new Error("frontmatter must start with a separator line");
  const frontStart = nl >= 0 ? nl + 1 : contents.length + 1;
  let front = "";
  let body = "";
  for (let start = frontStart; start < contents.length; start = nl + 1) {
    const idx = contents.indexOf("\n", start);
    nl = idx >= 0 ? idx : contents.length;
    if (isYamlSeparator(contents.slice(start, nl))) {
      front = contents.slice(frontStart, start);
      if (nl + 1 < contents.length) body = contents.slice(nl + 1);
      break;
    }
  }
  if (front === "") throw new Error("could not determine metadata");
  return { front, body };
}

const emptyTemplate = (fileName: string): RawTemplate => ({
  name: "",
  title: "",
  about: "",
  labels: null,
  assignees: null,
  ref: "",
  content: "",
  fields: null,
  fileName,
});

/** template.unmarshal: decode a markdown or YAML template without validating it. */
function unmarshalTemplate(fileName: string, content: string): RawTemplate {
  const it = emptyTemplate(fileName);
  const typ = templateType(fileName);
  if (typ === "md") {
    let body: string | null = null;
    try {
      const fm = extractFrontMatter(content);
      if (unmarshalInto(fm.front, it) === null) body = fm.body;
    } catch {
      // no front matter: handled below like a YAML error
    }
    if (body === null) {
      // Gitea can't tell bad metadata from two horizontal rules: the whole file is the template.
      it.content = content;
      it.name = baseName(fileName);
      it.about = ellipsisDisplayString(content, 80);
    } else {
      it.content = body;
      if (it.about === "") {
        const fm = extractFrontMatter(content);
        const about = compatibleDescription(fm.front);
        if (about !== "") it.about = about;
      }
    }
  } else if (typ === "yaml") {
    const err = unmarshalInto(content, it);
    if (err !== null) throw new Error(`yaml unmarshal: ${err}`);
    if (it.about === "") {
      const about = compatibleDescription(content);
      if (about !== "") it.about = about;
    }
    it.fields?.forEach((f, i) => {
      if (!f) return;
      if (f.id === "") f.id = String(i);
      if (f.visible === null) f.visible = f.type === "markdown" ? ["form"] : ["form", "content"];
    });
  }
  return it;
}

// ---------------------------------------------------------------------------------------------
// Validation (modules/issue/template/template.go), first error wins, Gitea's messages

const at = (idx: number, type: string, opt?: number) => `body[${idx}](${type})${opt === undefined ? "" : `, option[${opt}]`}`;
const has = (m: GoMap | null, k: string) => !!m && Object.hasOwn(m, k);

/** validateStringItem: note Gitea stops at the first absent optional key. */
function stringItem(pos: string, m: GoMap | null, required: boolean, ...names: string[]) {
  for (const name of names) {
    if (!has(m, name)) {
      if (required) throw new Error(`${pos}: '${name}' is required`);
      return;
    }
    const v = m![name];
    if (typeof v !== "string") throw new Error(`${pos}: '${name}' should be a string`);
    if (required && goTrimSpace(v) === "") throw new Error(`${pos}: '${name}' is required`);
  }
}

/** validateBoolItem: also stops at the first absent key. */
function boolItem(pos: string, m: GoMap | null, ...names: string[]) {
  for (const name of names) {
    if (!has(m, name)) return;
    if (typeof m![name] !== "boolean") throw new Error(`${pos}: '${name}' should be a bool`);
  }
}

const visibleOnForm = (f: RawField) => !f.visible || f.visible.length === 0 || f.visible.includes("form");

function validateOptions(f: RawField, idx: number) {
  const options = f.attributes?.options;
  if (!Array.isArray(options) || options.length === 0) throw new Error(`${at(idx, f.type)}: 'options' is required and should be a array`);
  options.forEach((option, j) => {
    const pos = at(idx, f.type, j);
    if (f.type === "dropdown") {
      if (typeof option !== "string") throw new Error(`${pos}: should be a string`);
      return;
    }
    if (!isGoMap(option)) throw new Error(`${pos}: should be a dictionary`);
    if (typeof option.label !== "string" || option.label === "") throw new Error(`${pos}: 'label' is required and should be a string`);
    if (Object.hasOwn(option, "visible")) {
      const vis = option.visible;
      if (!Array.isArray(vis)) throw new Error(`${pos}: 'visible' should be list`);
      for (const v of vis) if (v !== "form" && v !== "content") throw new Error(`${pos}: 'visible' list can only contain strings of 'form' and 'content'`);
    }
    if (Object.hasOwn(option, "required")) {
      if (typeof option.required !== "boolean") throw new Error(`${pos}: 'required' should be a bool`);
      if (Object.hasOwn(option, "visible") && !(option.visible as GoValue[]).includes("form")) throw new Error(`${pos}: can not require a hidden checkbox`);
    }
  });
}

function validateDropdownDefault(pos: string, attrs: GoMap | null) {
  if (!has(attrs, "default")) return;
  const v = attrs!.default;
  if (typeof v !== "number" || !Number.isInteger(v)) throw new Error(`${pos}: 'default' should be an int`);
  const options = attrs!.options as GoValue[];
  if (v < 0 || v >= options.length) throw new Error(`${pos}: the value of 'default' is out of range`);
}

function validateField(f: RawField, idx: number, ids: Set<string>) {
  const pos = at(idx, f.type);
  if (f.type !== "markdown") {
    if (f.id === "") throw new Error(`${pos}: 'id' is required`);
    if (/[^0-9A-Za-z_-]/.test(f.id)) throw new Error(`${pos}: 'id' should contain only alphanumeric, '-' and '_'`);
    if (ids.has(f.id)) throw new Error(`${pos}: 'id' should be unique`);
    ids.add(f.id);
    stringItem(pos, f.attributes, true, "label");
  }
  switch (f.type) {
    case "markdown":
      stringItem(pos, f.attributes, true, "value");
      break;
    case "textarea":
      stringItem(pos, f.attributes, false, "description", "placeholder", "value", "render");
      break;
    case "input":
      stringItem(pos, f.attributes, false, "description", "placeholder", "value");
      boolItem(pos, f.validations, "is_number");
      stringItem(pos, f.validations, false, "regex");
      break;
    case "dropdown":
      stringItem(pos, f.attributes, false, "description");
      boolItem(pos, f.attributes, "multiple");
      validateOptions(f, idx);
      validateDropdownDefault(pos, f.attributes);
      break;
    case "checkboxes":
      stringItem(pos, f.attributes, false, "description");
      validateOptions(f, idx);
      break;
    default:
      throw new Error(`${pos}: unknown type`);
  }
  if (f.type !== "markdown" && f.type !== "checkboxes") {
    boolItem(pos, f.validations, "required");
    if (f.validations?.required === true && !visibleOnForm(f)) throw new Error(`${pos}: can not require a hidden field`);
  }
}

/** template.Validate: metadata, then (YAML only) the form fields. */
function validateTemplate(it: RawTemplate) {
  if (goTrimSpace(it.name) === "") throw new Error("'name' is required");
  if (goTrimSpace(it.about) === "") throw new Error("'about' is required");
  if (templateType(it.fileName) !== "yaml") return;
  if (!it.fields || it.fields.length === 0) throw new Error("'body' is required");
  const ids = new Set<string>();
  it.fields.forEach((f, idx) => {
    // Gitea dereferences a null list item and fails (500); here it is this file's error.
    if (!f) throw new Error(`body[${idx}]: field is null`);
    validateField(f, idx, ids);
  });
}

function toTemplateJson(it: RawTemplate): IssueTemplateJson {
  return {
    name: it.name,
    title: it.title,
    about: it.about,
    labels: it.labels,
    assignees: it.assignees,
    ref: it.ref,
    content: it.content,
    body:
      it.fields?.map((f) => {
        const field = f!;
        const out: IssueFormField = {
          type: field.type,
          id: field.id,
          attributes: field.attributes ? (toJson(field.attributes) as Record<string, JsonValue>) : null,
          validations: field.validations ? (toJson(field.validations) as Record<string, JsonValue>) : null,
        };
        if (field.visible && field.visible.length) out.visible = field.visible; // omitempty
        return out;
      }) ?? null,
    file_name: it.fileName,
  };
}

/**
 * Parses and validates one template file (template.Unmarshal); `path` becomes `file_name`.
 * Throws an Error carrying Gitea's message when the file is not a valid template.
 * @example parseIssueTemplate(".gitea/ISSUE_TEMPLATE/bug.md", "---\nname: Bug\nabout: A bug\n---\nBody")
 */
export function parseIssueTemplate(path: string, content: string): IssueTemplateJson {
  const size = utf8Len(content);
  if (size > MAX_TEMPLATE_FILE_SIZE) throw new Error(`too large: ${size} > MaxDisplayFileSize`);
  if (templateType(path) === "") throw new Error(`${path} is not an issue template file`);
  let it: RawTemplate;
  try {
    it = unmarshalTemplate(path, content);
  } catch (e) {
    if (e instanceof YamlFatal) throw new Error(`yaml unmarshal: ${e.message}`);
    throw e;
  }
  validateTemplate(it);
  return toTemplateJson(it);
}

/**
 * ParseTemplatesFromDefaultBranch: every template directory in Gitea's order, its direct files in
 * git tree (byte) order; `ref` gets `refs/heads/` unless it starts with `refs/`. `templates` is
 * null when none parsed (Gitea answers JSON null); `errors` holds one "path: message" per bad file.
 */
export function loadIssueTemplates(files: RepoFile[]): { templates: IssueTemplateJson[] | null; errors: string[] } {
  const templates: IssueTemplateJson[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const dir of TEMPLATE_DIRS) {
    const entries = files
      .filter((f) => {
        if (!f.path.startsWith(`${dir}/`)) return false;
        const name = f.path.slice(dir.length + 1);
        return name !== "" && !name.includes("/") && templateType(name) !== "";
      })
      .filter((f) => (seen.has(f.path) ? false : (seen.add(f.path), true)))
      .sort((a, b) => compareBytes(a.path, b.path));
    for (const f of entries) {
      try {
        const t = parseIssueTemplate(f.path, f.content);
        if (!t.ref.startsWith("refs/")) t.ref = `refs/heads/${t.ref}`;
        templates.push(t);
      } catch (e) {
        errors.push(`${f.path}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
  return { templates: templates.length ? templates : null, errors };
}

/** The X-Service-Warning value when templates failed to parse (Gitea's X-Gitea-Warning text). */
export const templateWarning = (count: number) => `error occurs when parsing issue template: count=${count}`;

// ---------------------------------------------------------------------------------------------
// Issue config (services/issue/template.go GetTemplateConfig)

/** GetDefaultTemplateConfig: blank issues enabled, no contact links. */
export const defaultIssueConfig = (): IssueConfig => ({ blank_issues_enabled: true, contact_links: [] });

const CTL = /[\u0000-\u001f\u007f]/;
const HEX = /^[0-9a-fA-F]$/;

/** net/url unescape's error cases for a host or path component. */
function badEscapes(s: string, host: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charAt(i);
    if (c === "%") {
      if (i + 2 >= s.length || !HEX.test(s.charAt(i + 1)) || !HEX.test(s.charAt(i + 2))) return true;
      if (host && parseInt(s.charAt(i + 1), 16) < 8 && s.slice(i, i + 3) !== "%25") return true;
      i += 2;
      continue;
    }
    if (host && c.charCodeAt(0) < 0x80 && !/[0-9A-Za-z!$&'()*+,;=:\[\]<>"\-_.~]/.test(c)) return true;
  }
  return false;
}

const validOptionalPort = (p: string) => p === "" || (p[0] === ":" && /^[0-9]*$/.test(p.slice(1)));

/** Go's url.ParseRequestURI acceptance: an absolute URI or an absolute path. */
export function isRequestUri(raw: string): boolean {
  if (CTL.test(raw)) return false;
  if (raw === "") return false;
  if (raw === "*") return true;
  // getScheme
  let scheme = "";
  let rest = raw;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charAt(i);
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) break;
      continue;
    }
    if (c === ":") {
      if (i === 0) return false; // missing protocol scheme
      scheme = raw.slice(0, i);
      rest = raw.slice(i + 1);
    }
    break;
  }
  if (rest.endsWith("?") && rest.split("?").length === 2) rest = rest.slice(0, -1);
  else if (rest.includes("?")) rest = rest.slice(0, rest.indexOf("?"));
  if (!rest.startsWith("/")) return scheme !== ""; // opaque with a scheme; otherwise "invalid URI for request"
  if (scheme !== "" && rest.startsWith("//")) {
    let authority = rest.slice(2);
    const slash = authority.indexOf("/");
    rest = slash >= 0 ? authority.slice(slash) : "";
    if (slash >= 0) authority = authority.slice(0, slash);
    const atSign = authority.lastIndexOf("@");
    const host = atSign < 0 ? authority : authority.slice(atSign + 1);
    if (host.startsWith("[")) {
      const close = host.lastIndexOf("]");
      if (close < 0 || !validOptionalPort(host.slice(close + 1))) return false;
    } else {
      const colon = host.lastIndexOf(":");
      if (colon !== -1 && !validOptionalPort(host.slice(colon))) return false;
    }
    if (badEscapes(host, true)) return false;
    if (atSign >= 0) {
      const userinfo = authority.slice(0, atSign);
      if (!/^[0-9A-Za-z\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) return false;
      if (badEscapes(userinfo, false)) return false;
    }
  }
  return !badEscapes(rest, false);
}

const configFile = (files: RepoFile[]) => {
  for (const p of CONFIG_PATHS) {
    const f = files.find((x) => x.path === p);
    if (f) return f;
  }
  return null;
};

/** Reads a config file's content; throws Gitea's message when it is invalid. */
export function parseIssueConfig(content: string): IssueConfig {
  const bytes = encoder.encode(content);
  const src = bytes.length > MAX_CONFIG_FILE_SIZE ? decoder.decode(bytes.slice(0, MAX_CONFIG_FILE_SIZE)) : content;
  const cfg = defaultIssueConfig();
  const { doc, lines, error } = parseFirstDocument(src);
  if (error) throw new Error(error);
  if (doc) {
    const d = new GoDecoder(doc, lines);
    d.struct(doc.contents as YamlNode | null, "structs.IssueConfig", {
      blank_issues_enabled: (v) => {
        cfg.blank_issues_enabled = d.bool(v) ?? cfg.blank_issues_enabled;
      },
      contact_links: (v) => {
        const n = d.node(v);
        if (!n) return;
        if (isScalar(n) && resolveScalar(n).tag === "!!null") {
          cfg.contact_links = null;
          return;
        }
        if (!isSeq(n)) return d.terror(n, "[]structs.IssueConfigContactLink");
        cfg.contact_links = (n.items as YamlNode[]).map((item) => {
          const link: IssueConfigContactLink = { name: "", url: "", about: "" };
          d.struct(item, "structs.IssueConfigContactLink", {
            name: (x) => (link.name = d.string(x) ?? link.name),
            url: (x) => (link.url = d.string(x) ?? link.url),
            about: (x) => (link.about = d.string(x) ?? link.about),
          });
          return link;
        });
      },
    });
    const terr = d.typeError();
    if (terr) throw new Error(terr);
  }
  (cfg.contact_links ?? []).forEach((link, i) => {
    const pos = i + 1;
    if (link.name === "") throw new Error(`contact_link at position ${pos} is missing name key`);
    if (link.url === "") throw new Error(`contact_link at position ${pos} is missing url key`);
    if (link.about === "") throw new Error(`contact_link at position ${pos} is missing about key`);
    if (!isRequestUri(link.url)) throw new Error(`${link.url} is not a valid URL`);
  });
  return cfg;
}

function readConfig(files: RepoFile[]): { config: IssueConfig; error: string | null } {
  const f = configFile(files);
  if (!f) return { config: defaultIssueConfig(), error: null };
  try {
    return { config: parseIssueConfig(f.content), error: null };
  } catch (e) {
    return { config: defaultIssueConfig(), error: e instanceof Error ? e.message : String(e) };
  }
}

/** GET issue_config: the first candidate file, or the defaults (also when that file is invalid). */
export function loadIssueConfig(files: RepoFile[]): IssueConfig {
  return readConfig(files).config;
}

/** GET issue_config/validate: `{ valid, message }`, message "" when valid (always HTTP 200). */
export function validateIssueConfig(files: RepoFile[]): IssueConfigValidation {
  const { error } = readConfig(files);
  return error === null ? { valid: true, message: "" } : { valid: false, message: error };
}
