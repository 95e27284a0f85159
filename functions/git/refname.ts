/**
 * Ref name rules exactly as `git check-ref-format` applies them (refs.c `check_refname_component`),
 * plus what receive-pack adds: pushed names must be full names under `refs/`, no longer than git's
 * ref storage allows, and never in a directory/file conflict with another ref.
 */

/** Why `name` is not a valid full ref name, or null if it is (check-ref-format without options). */
export function refNameProblem(name: string): string | null {
  if (name.length === 0) return "empty ref name";
  if (name === "@") return "'@' is not a valid ref name";
  if (name.endsWith("/")) return "ends with '/'";
  if (name.endsWith(".")) return "ends with '.'";
  const parts = name.split("/");
  // check-ref-format (without --allow-onelevel) requires at least two components
  if (parts.length < 2) return "must contain at least one '/'";
  for (const part of parts) {
    if (part.length === 0) return "contains an empty component ('//' or a leading '/')";
    if (part.startsWith(".")) return "a component begins with '.'";
    if (part.endsWith(".lock")) return "a component ends with '.lock'";
  }
  if (name.includes("..")) return "contains '..'";
  if (name.includes("@{")) return "contains '@{'";
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return "contains a control character";
    if (" ~^:?*[\\".includes(name[i]!)) return `contains '${name[i]}'`;
  }
  return null;
}

/**
 * Gitea's GitRefName binding for a short branch or tag name: what check-ref-format accepts below
 * `refs/heads/`, and not `@` alone.
 */
export const isGitRefName = (name: string): boolean => name !== "@" && refNameProblem(`refs/heads/${name}`) === null;

/**
 * True when `name` lives under `refs/` and what follows passes check-ref-format (receive-pack's
 * rule: `refs/x` is one level below `refs/`, a funny refname; `refs/heads/x` is fine).
 */
export const isPushableRef = (name: string): boolean => name.startsWith("refs/") && refNameProblem(name.slice(5)) === null;

/** True for a full branch name (`refs/heads/…`). */
export const isBranchRef = (name: string): boolean => name.startsWith("refs/heads/");

/** True for a full tag name (`refs/tags/…`). */
export const isTagRef = (name: string): boolean => name.startsWith("refs/tags/");

/** Longest ref name component real git can store (a file name: NAME_MAX). */
export const MAX_REF_COMPONENT_BYTES = 255;
/** Longest ref name real git can store (a path: PATH_MAX). */
export const MAX_REF_NAME_BYTES = 4096;

const encoder = new TextEncoder();

/**
 * Why `name` is too long to be stored as git stores refs (one file per ref: a component over
 * 255 bytes or a name over 4096 bytes of UTF-8), or null. Also keeps every advertised ref line
 * far below git's 65520-byte pkt-line limit.
 */
export function refNameLengthProblem(name: string): string | null {
  // at most 3 bytes per UTF-16 unit: short names need no encoding
  if (name.length * 3 <= MAX_REF_COMPONENT_BYTES) return null;
  const bytes = encoder.encode(name);
  if (bytes.length > MAX_REF_NAME_BYTES) return `longer than ${MAX_REF_NAME_BYTES} bytes`;
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x2f) continue;
    if (i - start > MAX_REF_COMPONENT_BYTES) return `a component is longer than ${MAX_REF_COMPONENT_BYTES} bytes`;
    start = i + 1;
  }
  return null;
}

/** The directories a ref name needs, shortest first: `refs/heads/a/b` → `refs`, `refs/heads`, `refs/heads/a`. */
export function refDirs(name: string): string[] {
  const out: string[] = [];
  for (let i = name.indexOf("/"); i > 0; i = name.indexOf("/", i + 1)) out.push(name.slice(0, i));
  return out;
}

/**
 * A set of ref names that knows directory/file conflicts: refs are files under `refs/`, so `a` and
 * `a/b` cannot both exist (git: "'a' exists; cannot create 'a/b'").
 */
export class RefNames {
  private readonly names = new Set<string>();
  /** How many names lie under each directory. */
  private readonly dirs = new Map<string, number>();

  constructor(names: Iterable<string> = []) {
    for (const n of names) this.add(n);
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  add(name: string): void {
    if (this.names.has(name)) return;
    this.names.add(name);
    for (const d of refDirs(name)) this.dirs.set(d, (this.dirs.get(d) ?? 0) + 1);
  }

  delete(name: string): void {
    if (!this.names.delete(name)) return;
    for (const d of refDirs(name)) {
      const n = this.dirs.get(d)! - 1;
      if (n === 0) this.dirs.delete(d);
      else this.dirs.set(d, n);
    }
  }

  /**
   * The ref that keeps `name` from being created: the shortest existing ref that is one of its
   * directories, else the first (byte order) existing ref under it; null when there is none.
   */
  conflictOf(name: string): string | null {
    for (const d of refDirs(name)) if (this.names.has(d)) return d;
    if (!this.dirs.has(name)) return null;
    const under = `${name}/`;
    let first: string | null = null;
    for (const n of this.names) if (n.startsWith(under) && (first === null || compareRefNames(n, first) < 0)) first = n;
    return first;
  }
}

/** Byte order of UTF-8 names (git's order), without encoding: code point order. */
export function compareRefNames(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** git's message for a ref that a directory/file conflict keeps from being created. */
export const refConflictMessage = (name: string, existing: string): string => `cannot lock ref '${name}': '${existing}' exists; cannot create '${name}'`;
