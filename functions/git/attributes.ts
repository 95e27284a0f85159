/**
 * gitattributes as git's attr.c reads and applies them: `.gitattributes` files parsed line by line
 * (comments, C-quoted patterns, `attr`, `-attr`, `!attr`, `attr=value`, `[attr]name …` macros
 * where allowed — the top-level file and the built-in `binary`), patterns matched as dir.c matches
 * them (a pattern without `/` matches the base name at any depth, one with `/` is anchored to the
 * directory of its file, a trailing `/` matches directories only, wildmatch with `**`), and the
 * lookup of a path: deeper files before shallower, later lines before earlier, the last state of a
 * line first, a macro set to true expanding into its states. Negative patterns (`!pattern`) are
 * ignored, as git ignores them with a warning.
 */
import { wildmatch } from "./wildmatch.ts";

/** An attribute's state for a path: set (`true`), unset with `-` (`false`), a value, or `null` (`!attr`, unspecified). */
export type AttrValue = true | false | string | null;

interface AttrState {
  name: string;
  value: AttrValue;
}

const MUSTBEDIR = 1;
const NODIR = 2;
const ENDSWITH = 4;

interface Pattern {
  bytes: Uint8Array;
  /** Length of the leading part without glob characters (nowildcardlen). */
  prefix: number;
  flags: number;
}

/** One line of a `.gitattributes` file: a pattern or a macro definition, and its states in order. */
export interface AttrRule {
  pattern: Pattern | null;
  macro: string | null;
  states: AttrState[];
}

/** The rules of one `.gitattributes` file and the directory it applies to (`""` at the top). */
export interface AttrFrame {
  origin: Uint8Array;
  rules: AttrRule[];
}

/** git refuses lines this long (attr.c ATTR_MAX_LINE_LENGTH) and files this large (ATTR_MAX_FILE_SIZE). */
const MAX_LINE = 2048;
export const MAX_ATTR_FILE = 100 * 1024 * 1024;

const isBlank = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isGlobSpecial = (c: number) => c === 0x2a || c === 0x3f || c === 0x5b || c === 0x5c;
const latin1 = (b: Uint8Array) => String.fromCharCode(...b);

/** attr_name_valid: `[-A-Za-z0-9_.]+`, not starting with `-`. */
function validName(b: Uint8Array): boolean {
  if (b.length === 0 || b[0] === 0x2d) return false;
  for (const c of b) {
    const ok = c === 0x2d || c === 0x2e || c === 0x5f || (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
    if (!ok) return false;
  }
  return true;
}

const spanBlank = (b: Uint8Array, i: number) => {
  while (i < b.length && isBlank(b[i])) i++;
  return i;
};
const spanNonBlank = (b: Uint8Array, i: number) => {
  while (i < b.length && !isBlank(b[i])) i++;
  return i;
};

/** The C escapes unquote_c_style knows besides octal: a b f n r t v, backslash and quote. */
const ESCAPES = new Map([...'abfnrtv\\"'].map((c, i) => [c.charCodeAt(0), [7, 8, 12, 10, 13, 9, 11, 0x5c, 0x22][i]!]));

/** unquote_c_style: the unquoted bytes and where the quoted string ends, or null when malformed. */
function unquote(b: Uint8Array, at: number): { out: Uint8Array; end: number } | null {
  const out: number[] = [];
  let i = at + 1;
  for (;;) {
    if (i >= b.length) return null;
    const c = b[i++]!;
    if (c === 0x22) return { out: Uint8Array.from(out), end: i };
    if (c !== 0x5c) {
      out.push(c);
      continue;
    }
    const e = b[i++];
    const simple = e === undefined ? undefined : ESCAPES.get(e);
    if (simple !== undefined) out.push(simple);
    else if (e !== undefined && e >= 0x30 && e <= 0x33) {
      const d2 = b[i++];
      const d3 = b[i++];
      if (d2 === undefined || d3 === undefined || d2 < 0x30 || d2 > 0x37 || d3 < 0x30 || d3 > 0x37) return null;
      out.push(((e - 0x30) << 6) | ((d2 - 0x30) << 3) | (d3 - 0x30));
    } else return null;
  }
}

/** parse_path_pattern: flags and the no-wildcard length of a pattern (a C string: it ends at a NUL). */
function parsePattern(raw: Uint8Array): { pattern: Pattern; negative: boolean } {
  let p = raw.indexOf(0) >= 0 ? raw.subarray(0, raw.indexOf(0)) : raw;
  let flags = 0;
  const negative = p[0] === 0x21;
  if (negative) p = p.subarray(1);
  let len = p.length;
  if (len && p[len - 1] === 0x2f) {
    len--;
    flags |= MUSTBEDIR;
  }
  if (p.subarray(0, len).indexOf(0x2f) < 0) flags |= NODIR;
  let simple = 0;
  while (simple < p.length && !isGlobSpecial(p[simple]!)) simple++;
  if (p[0] === 0x2a) {
    let rest = 1;
    while (rest < p.length && !isGlobSpecial(p[rest]!)) rest++;
    if (rest === p.length) flags |= ENDSWITH;
  }
  return { pattern: { bytes: p.subarray(0, len), prefix: Math.min(simple, len), flags }, negative };
}

/** parse_attr: one state token from `at`; null when its name is not valid. */
function parseState(line: Uint8Array, at: number): { state: AttrState; next: number } | null {
  const ep = spanNonBlank(line, at);
  let eq = line.indexOf(0x3d, at);
  if (eq >= 0 && ep < eq) eq = -1;
  let name = line.subarray(at, eq >= 0 ? eq : ep);
  let value: AttrValue;
  if (line[at] === 0x2d || line[at] === 0x21) {
    value = line[at] === 0x2d ? false : null;
    name = name.subarray(1);
  } else value = eq >= 0 ? latin1(line.subarray(eq + 1, ep)) : true;
  if (!validName(name)) return null;
  return { state: { name: latin1(name), value }, next: spanBlank(line, ep) };
}

/** parse_attr_line: a rule, or null for blank lines, comments and lines git refuses. */
function parseLine(line: Uint8Array, macros: boolean): AttrRule | null {
  const cp = spanBlank(line, 0);
  if (cp >= line.length || line[cp] === 0x23) return null;
  if (line.length >= MAX_LINE) return null;
  let name: Uint8Array;
  let states: number;
  const quoted = line[cp] === 0x22 ? unquote(line, cp) : null;
  if (quoted) {
    name = quoted.out;
    states = quoted.end;
  } else {
    states = spanNonBlank(line, cp);
    name = line.subarray(cp, states);
  }
  let macro: string | null = null;
  const PREFIX = [0x5b, 0x61, 0x74, 0x74, 0x72, 0x5d]; // "[attr]"
  if (name.length > PREFIX.length && PREFIX.every((c, i) => name[i] === c)) {
    if (!macros) return null; // "[attr]x not allowed" below the top level
    const start = spanBlank(name, PREFIX.length);
    const m = name.subarray(start, spanNonBlank(name, start));
    if (!validName(m)) return null;
    macro = latin1(m);
  }
  const parsed: AttrState[] = [];
  for (let at = spanBlank(line, states); at < line.length; ) {
    const s = parseState(line, at);
    if (!s) return null;
    parsed.push(s.state);
    at = s.next;
  }
  if (macro !== null) return { pattern: null, macro, states: parsed };
  const { pattern, negative } = parsePattern(name);
  if (negative) return null; // "Negative patterns are ignored in git attributes"
  return { pattern, macro: null, states: parsed };
}

/**
 * The rules of a `.gitattributes` blob, read as git reads one from the index: lines split at LF
 * (a CR ends up as blank space), reading stops at a NUL, no BOM handling; `macros` only for the
 * top-level file. A blob of 100 MiB or more is ignored whole.
 */
export function parseAttributes(data: Uint8Array, macros: boolean): AttrRule[] {
  if (data.length >= MAX_ATTR_FILE) return [];
  const nul = data.indexOf(0);
  const buf = nul >= 0 ? data.subarray(0, nul) : data;
  const rules: AttrRule[] = [];
  for (let sp = 0; sp < buf.length; ) {
    let ep = buf.indexOf(0x0a, sp);
    if (ep < 0) ep = buf.length;
    const rule = parseLine(buf.subarray(sp, ep), macros);
    if (rule) rules.push(rule);
    sp = ep + 1;
  }
  return rules;
}

/** The built-in frame (attr.c builtin_attr). */
export const BUILTIN_FRAME: AttrFrame = { origin: new Uint8Array(0), rules: parseAttributes(new TextEncoder().encode("[attr]binary -diff -merge -text"), true) };

const bytesEqual = (a: Uint8Array, ai: number, b: Uint8Array, bi: number, n: number) => {
  for (let i = 0; i < n; i++) if (a[ai + i] !== b[bi + i]) return false;
  return true;
};

/** match_basename. */
function matchBasename(name: Uint8Array, pat: Pattern): boolean {
  const p = pat.bytes;
  if (pat.prefix === p.length) return p.length === name.length && bytesEqual(p, 0, name, 0, p.length);
  if (pat.flags & ENDSWITH) return p.length - 1 <= name.length && bytesEqual(p, 1, name, name.length - (p.length - 1), p.length - 1);
  return wildmatch(p, name);
}

/** match_pathname: the pattern has its file's directory (`base`) implicitly in front of it. */
function matchPathname(path: Uint8Array, base: Uint8Array, pat: Pattern): boolean {
  let p = pat.bytes;
  let prefix = pat.prefix;
  if (p[0] === 0x2f) {
    p = p.subarray(1);
    prefix--;
  }
  const baselen = base.length;
  if (path.length < baselen + 1 || (baselen && path[baselen] !== 0x2f) || !bytesEqual(path, 0, base, 0, baselen)) return false;
  let name = baselen ? path.subarray(baselen + 1) : path;
  if (prefix) {
    if (prefix > name.length) return false;
    if (!bytesEqual(p, 0, name, 0, prefix)) return false;
    p = p.subarray(prefix);
    name = name.subarray(prefix);
    if (!p.length && !name.length) return true;
  }
  return wildmatch(p, name, { pathname: true });
}

/** path_matches: `path` ends in `/` for a directory (or a submodule), as git asks for them. */
function pathMatches(path: Uint8Array, basename: number, pat: Pattern, base: Uint8Array): boolean {
  const isDir = path.length > 0 && path[path.length - 1] === 0x2f;
  if (pat.flags & MUSTBEDIR && !isDir) return false;
  const end = path.length - (isDir ? 1 : 0);
  if (pat.flags & NODIR) return matchBasename(path.subarray(basename, end), pat);
  return matchPathname(path.subarray(0, end), base, pat);
}

/** What the attributes of a path are: name → state, for every attribute some rule gave it. */
export type Attributes = ReadonlyMap<string, AttrValue>;

/**
 * The attributes of `path` (relative to the top of the tree; a directory or submodule with a
 * trailing `/`) under `frames` — the built-in frame, the top-level file, then one frame per
 * directory down to the one holding the path, as git's attribute stack (collect_some_attrs).
 */
export function attributesOf(frames: readonly AttrFrame[], path: Uint8Array): Attributes {
  // determine_macros: the deepest definition of a name wins, the last line of a file first
  const macros = new Map<string, AttrRule>();
  for (let f = frames.length - 1; f >= 0; f--) {
    const rules = frames[f]!.rules;
    for (let i = rules.length - 1; i >= 0; i--) {
      const r = rules[i]!;
      if (r.macro !== null && !macros.has(r.macro)) macros.set(r.macro, r);
    }
  }
  let lastSlash = -1;
  for (let i = 0; i < path.length - 1; i++) if (path[i] === 0x2f) lastSlash = i;
  const basename = lastSlash + 1;
  const values = new Map<string, AttrValue>();
  const fillOne = (states: readonly AttrState[]) => {
    for (let i = states.length - 1; i >= 0; i--) {
      const s = states[i]!;
      if (values.has(s.name)) continue;
      values.set(s.name, s.value);
      const m = macros.get(s.name);
      if (m && s.value === true) fillOne(m.states);
    }
  };
  for (let f = frames.length - 1; f >= 0; f--) {
    const { origin, rules } = frames[f]!;
    for (let i = rules.length - 1; i >= 0; i--) {
      const r = rules[i]!;
      if (r.pattern && pathMatches(path, basename, r.pattern, origin)) fillOne(r.states);
    }
  }
  return values;
}

/** True when no frame holds a pattern rule: every path's attributes are unspecified. */
export const noPatterns = (frames: readonly AttrFrame[]): boolean => frames.every((f) => f.rules.every((r) => r.pattern === null));
