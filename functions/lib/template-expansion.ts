/**
 * Generating a repository from a template: the `.gitea/template` file of globs and the variable
 * expansion of the matched files and their paths, as plain functions (Gitea
 * services/repository/generate.go, modules/glob, huandu/xstrings, Go's os.Expand). No I/O.
 */
import { compileGlob, type Glob } from "./glob.ts";

export { compileGlob };

// Globs: `lib/glob.ts` (modules/glob; also what decides Gitea's GlobPattern binding, a webhook's branch_filter).

/** The rules of a `.gitea/template` file: globs of files to expand and of paths to leave out. */
export interface TemplateRules {
  expand: Glob[];
  exclude: Glob[];
}

/**
 * Parses `.gitea/template`: one glob per line, blank lines and `#` comments skipped, `[expand]`
 * (the default) and `[exclude]` sections; other bracketed lines and invalid globs are ignored.
 */
export function parseTemplateRules(content: string): TemplateRules {
  const rules: TemplateRules = { expand: [], exclude: [] };
  let cur = rules.expand;
  for (const raw of content.split("\n")) {
    const line = goTrimSpace(raw);
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("[") && line.endsWith("]")) {
      if (line === "[expand]") cur = rules.expand;
      else if (line === "[exclude]") cur = rules.exclude;
      continue;
    }
    const g = compileGlob(line);
    if (g) cur.push(g);
  }
  return rules;
}

export const matchesAny = (globs: readonly Glob[], path: string) => globs.some((g) => g.test(path));

// ---------------------------------------------------------------------------------------------
// Go's unicode predicates and case mapping (one rune at a time, never a longer string)

const isUpper = (r: string) => /\p{Lu}/u.test(r);
const isLetter = (r: string) => /\p{L}/u.test(r);
const isNumber = (r: string) => /\p{N}/u.test(r);
const isPunct = (r: string) => /\p{P}/u.test(r);
/** unicode.IsSpace: ASCII white space, U+0085, U+00A0 and the Z categories. */
const isSpace = (r: string) => /[\t\n\v\f\r \u0085\u00a0]|\p{Z}/u.test(r);
const oneRune = (orig: string, mapped: string) => (Array.from(mapped).length === 1 ? mapped : orig);
const toUpperRune = (r: string) => oneRune(r, r.toUpperCase());
const toLowerRune = (r: string) => oneRune(r, r.toLowerCase());

/** Go's strings.TrimSpace. */
export function goTrimSpace(s: string): string {
  const runes = Array.from(s);
  let a = 0;
  let b = runes.length;
  while (a < b && isSpace(runes[a]!)) a++;
  while (b > a && isSpace(runes[b - 1]!)) b--;
  return runes.slice(a, b).join("");
}

/** xstrings' isAlphabet: a letter that is not a CJK ideograph. */
function isAlphabet(r: string): boolean {
  if (!isLetter(r)) return false;
  const cp = r.codePointAt(0)!;
  if (cp < 0x3400) return true;
  if (cp >= 0x4e00 && cp <= 0x9fcc) return false;
  if (cp >= 0x3400 && cp <= 0x4d85) return false;
  if (cp >= 0x20000 && cp <= 0x2b81d) return false;
  return true;
}
const isConnector = (r: string) => r === "-" || r === "_" || isSpace(r);

// ---------------------------------------------------------------------------------------------
// huandu/xstrings v1.5: ToSnakeCase, ToKebabCase, ToCamelCase, ToPascalCase

type WordType = "number" | "upper" | "alphabet" | "connector" | "punct" | "other";

/** xstrings' nextWord over runes: the type and length of the next word. */
function nextWord(r: readonly string[], i: number): { wt: WordType; end: number } {
  const c = r[i]!;
  let j = i + 1;
  const run = (pred: (x: string) => boolean) => {
    while (j < r.length && pred(r[j]!)) j++;
  };
  if (isConnector(c)) {
    run(isConnector);
    return { wt: "connector", end: j };
  }
  if (isPunct(c)) {
    run(isPunct);
    return { wt: "punct", end: j };
  }
  if (isUpper(c)) {
    if (j < r.length && isUpper(r[j]!)) {
      run(isUpper);
      // "HTTPStatus" splits into "HTTP" and "Status": the last upper starts the next word.
      if (j < r.length && isAlphabet(r[j]!)) j--;
    } else if (j < r.length && isAlphabet(r[j]!)) {
      run((x) => isAlphabet(x) && !isUpper(x));
    }
    return { wt: "upper", end: j };
  }
  if (isAlphabet(c)) {
    run((x) => isAlphabet(x) && !isUpper(x));
    return { wt: "alphabet", end: j };
  }
  if (isNumber(c)) {
    run(isNumber);
    return { wt: "number", end: j };
  }
  run((x) => !(isConnector(x) || isAlphabet(x) || isNumber(x) || isPunct(x)));
  return { wt: "other", end: j };
}

/** xstrings' camelCaseToLowerCase: words lower-cased and joined by `connector`. */
function camelCaseToLowerCase(str: string, connector: string): string {
  const r = Array.from(str);
  if (r.length === 0) return "";
  let out = "";
  const lower = (wt: WordType, s: number, e: number) => {
    const w = r.slice(s, e);
    if (wt !== "upper" && wt !== "connector") out += w.join("");
    else for (const x of w) out += isConnector(x) ? connector : isUpper(x) ? toLowerRune(x) : x;
  };
  let i = 0;
  let cur = nextWord(r, i);
  let start = i;
  i = cur.end;
  // read through a function: `advance` moves `cur` behind the compiler's narrowing
  const wt = (): WordType => cur.wt;
  const advance = () => {
    start = i;
    cur = nextWord(r, i);
    i = cur.end;
  };
  while (i < r.length) {
    if (wt() !== "connector") lower(wt(), start, i);
    const prev = wt();
    const lastStart = start;
    const lastEnd = i;
    advance();
    if (prev === "number") {
      while (wt() === "alphabet" || wt() === "number") {
        lower(wt(), start, i);
        if (i >= r.length) return out;
        advance();
      }
      if (wt() !== "punct" && wt() !== "connector") out += connector;
    } else if (prev === "connector") {
      lower(prev, lastStart, lastEnd);
    } else if (prev === "punct") {
      // nothing
    } else if (wt() !== "number") {
      if (wt() !== "connector" && wt() !== "punct") out += connector;
    } else if (i < r.length) {
      const numStart = start;
      const numEnd = i;
      advance();
      if (wt() !== "alphabet") {
        // a number is part of the previous word ("Bld4Floor" → "bld4_floor")
        lower("number", numStart, numEnd);
        if (wt() !== "connector" && wt() !== "punct") out += connector;
      } else {
        // lower-case letters after a number: a connector before the number ("HTTP2xx" → "http_2xx")
        out += connector;
        lower("number", numStart, numEnd);
        while (wt() === "alphabet" || wt() === "number") {
          lower(wt(), start, i);
          if (i >= r.length) return out;
          advance();
        }
        if (wt() !== "connector" && wt() !== "punct") out += connector;
      }
    }
  }
  lower(wt(), start, i);
  return out;
}

export const toSnakeCase = (s: string) => camelCaseToLowerCase(s, "_");
export const toKebabCase = (s: string) => camelCaseToLowerCase(s, "-");

/** xstrings' toCamelCase: connectors dropped (a run of them keeps all but one), words capitalised. */
function camel(str: string, pascal: boolean): string {
  const r = Array.from(str);
  let out = "";
  let i = 0;
  while (i < r.length && isConnector(r[i]!)) out += r[i++]!;
  if (i >= r.length) return out;
  let firstUpper = isUpper(r[i]!);
  let r0 = pascal ? toUpperRune(r[i]!) : toLowerRune(r[i]!);
  for (i++; i < r.length; i++) {
    const r1 = r0;
    r0 = r[i]!;
    if (isConnector(r0) && isConnector(r1)) {
      out += r1;
      continue;
    }
    if (isConnector(r1)) {
      firstUpper = isUpper(r0);
      r0 = toUpperRune(r0);
    } else {
      // an upper-case word ("GOLANG") keeps only its first letter upper
      if (firstUpper) {
        if (isUpper(r0)) r0 = toLowerRune(r0);
        else firstUpper = false;
      }
      out += r1;
    }
  }
  return out + r0;
}

export const toCamelCase = (s: string) => camel(s, false);
export const toPascalCase = (s: string) => camel(s, true);

/** Go's strings.ToUpper / ToLower (rune by rune). */
export const goToUpper = (s: string) => Array.from(s, toUpperRune).join("");
export const goToLower = (s: string) => Array.from(s, toLowerRune).join("");

/**
 * golang.org/x/text cases.Title(language.English): each word's first letter upper, the rest lower.
 * Words are runs of letters, marks, digits and `_`, with `'`, `.`, `:` inside a word when letters
 * surround them (Unicode word boundaries, simplified).
 */
export function toTitleCase(s: string): string {
  const r = Array.from(s);
  const wordRune = (x: string | undefined) => x !== undefined && (/[\p{L}\p{M}\p{N}_]/u.test(x));
  let out = "";
  let inWord = false;
  let seenLetter = false;
  for (let i = 0; i < r.length; i++) {
    const c = r[i]!;
    const mid = (c === "'" || c === "\u2019" || c === "." || c === ":") && inWord && wordRune(r[i + 1]) && /[\p{L}\p{N}]/u.test(r[i - 1]!);
    if (wordRune(c) || mid) {
      if (!inWord) seenLetter = false;
      inWord = true;
      if (!seenLetter && isLetter(c)) {
        out += toUpperRune(c);
        seenLetter = true;
      } else out += isLetter(c) ? toLowerRune(c) : c;
    } else {
      inWord = false;
      out += c;
    }
  }
  return out;
}

const TRANSFORMERS: [string, (s: string) => string][] = [
  ["SNAKE", toSnakeCase],
  ["KEBAB", toKebabCase],
  ["CAMEL", toCamelCase],
  ["PASCAL", toPascalCase],
  ["LOWER", goToLower],
  ["UPPER", goToUpper],
  ["TITLE", toTitleCase],
];

// ---------------------------------------------------------------------------------------------
// Variables and expansion

/** One side of a generation: the template or the new repository. */
export interface RepoVars {
  name: string;
  description: string;
  owner: string;
  /** Gitea's Link(): the sub-URL path `/owner/name`. */
  link: string;
  httpsUrl: string;
  sshUrl: string;
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/**
 * Gitea's expansion map: YEAR, MONTH, MONTH_ENGLISH, DAY, REPO_/TEMPLATE_ NAME, DESCRIPTION,
 * OWNER, LINK, HTTPS_URL, SSH_URL; MONTH_ENGLISH, the names and the owners also in their
 * _SNAKE, _KEBAB, _CAMEL, _PASCAL, _LOWER, _UPPER and _TITLE forms.
 */
export function expansionVars(template: RepoVars, generated: RepoVars, now = new Date()): Map<string, string> {
  const m = now.getUTCMonth();
  const entries: [string, string, boolean][] = [
    ["YEAR", String(now.getUTCFullYear()), false],
    ["MONTH", String(m + 1).padStart(2, "0"), false],
    ["MONTH_ENGLISH", MONTHS[m]!, true],
    ["DAY", String(now.getUTCDate()).padStart(2, "0"), false],
    ["REPO_NAME", generated.name, true],
    ["TEMPLATE_NAME", template.name, true],
    ["REPO_DESCRIPTION", generated.description, false],
    ["TEMPLATE_DESCRIPTION", template.description, false],
    ["REPO_OWNER", generated.owner, true],
    ["TEMPLATE_OWNER", template.owner, true],
    ["REPO_LINK", generated.link, false],
    ["TEMPLATE_LINK", template.link, false],
    ["REPO_HTTPS_URL", generated.httpsUrl, false],
    ["TEMPLATE_HTTPS_URL", template.httpsUrl, false],
    ["REPO_SSH_URL", generated.sshUrl, false],
    ["TEMPLATE_SSH_URL", template.sshUrl, false],
  ];
  const vars = new Map<string, string>();
  for (const [name, value, transform] of entries) {
    vars.set(name, value);
    if (transform) for (const [t, fn] of TRANSFORMERS) vars.set(`${name}_${t}`, fn(value));
  }
  return vars;
}

const SHELL_SPECIAL = new Set([..."*#$@!?-0123456789"]);
const isAlphaNum = (c: string) => /^[A-Za-z0-9_]$/.test(c);

/** Go's os.getShellName: the variable name after a `$` and how many characters it takes. */
function shellName(s: string): [string, number] {
  if (s[0] === "{") {
    if (s.length > 2 && SHELL_SPECIAL.has(s[1]!) && s[2] === "}") return [s[1]!, 3];
    for (let i = 1; i < s.length; i++) {
      if (s[i] === "}") return i === 1 ? ["", 2] : [s.slice(1, i), i + 1];
    }
    return ["", 1];
  }
  if (SHELL_SPECIAL.has(s[0]!)) return [s[0]!, 1];
  let i = 0;
  while (i < s.length && isAlphaNum(s[i]!)) i++;
  return [s.slice(0, i), i];
}

/**
 * Go's os.Expand with Gitea's mapping: `$NAME` and `${NAME}` become the variable's value; an
 * unknown name becomes the name itself (the `$` is dropped, as in Gitea); bad syntax is eaten.
 * Works on any string whose syntax characters are ASCII (also a byte string read as latin1).
 */
export function goExpand(src: string, lookup: (name: string) => string): string {
  let out = "";
  let i = 0;
  let touched = false;
  for (let j = 0; j < src.length; j++) {
    if (src[j] === "$" && j + 1 < src.length) {
      touched = true;
      out += src.slice(i, j);
      const [name, w] = shellName(src.slice(j + 1));
      if (name === "" && w > 0) {
        // invalid syntax: eaten
      } else if (name === "") out += "$";
      else out += lookup(name);
      j += w;
      i = j + 1;
    }
  }
  return touched ? out + src.slice(i) : src;
}

/** Expands the variables of a text (a path, or UTF-8 text). */
export const expandText = (src: string, vars: Map<string, string>) => goExpand(src, (k) => vars.get(k) ?? k);

const utf8 = new TextEncoder();
const toLatin1 = (s: string) => String.fromCharCode(...utf8.encode(s));

/** Expands the variables of a file's bytes, byte for byte (invalid UTF-8 passes unchanged, as in Go). */
export function expandBytes(src: Uint8Array, vars: Map<string, string>): Uint8Array {
  // Every byte one code unit (TextDecoder's "latin1" is windows-1252, which is not byte for byte).
  let s = "";
  for (let i = 0; i < src.length; i += 8192) s += String.fromCharCode(...src.subarray(i, i + 8192));
  const out = goExpand(s, (k) => toLatin1(vars.get(k) ?? k));
  const bytes = new Uint8Array(out.length);
  for (let i = 0; i < out.length; i++) bytes[i] = out.charCodeAt(i);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// filePathSanitize

const RESERVED = /[<>:"/\\|?*\u0000-\u001f]|^(con|prn|aux|nul|com\d|lpt\d)$/giu;

/** Go's path.Clean for a relative `/`-separated path. */
function cleanPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && out.length && out.at(-1) !== "..") out.pop();
    else out.push(part);
  }
  return out.length ? out.join("/") : ".";
}

/**
 * Gitea's filePathSanitize for an expanded path: per component, characters Windows forbids (and
 * the reserved device names) become `_`, spaces are trimmed, a leading `..` becomes `__`, `.git`
 * becomes `_git`; then the path is cleaned. "." means nothing is left.
 * @example filePathSanitize("./../a/.git/ b: ") // "__/a/_git/b_"
 */
export function filePathSanitize(s: string): string {
  const fields = s.split("/");
  const clean = fields.map((f) => {
    let field = goTrimSpace(f.replace(RESERVED, "_"));
    if (field.startsWith("..")) field = `__${field.slice(2)}`;
    if (field.toLowerCase() === ".git") field = `_${field.slice(1)}`;
    return field;
  });
  return cleanPath(clean.join("/").replace(/^\/+|\/+$/g, ""));
}
