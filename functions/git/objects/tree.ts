/**
 * Tree objects: `<mode> <name>\0<20-byte id>` entries sorted by name, directories compared as if
 * their name ended in `/` (git's `base_name_compare`).
 */
import { asBuffer, concat, fromHex, utf8 } from "../bytes.ts";
import { check } from "../errors.ts";
import type { ObjectType } from "./object.ts";

/** Git's file modes as stored in trees: the canonical forms (what git writes and `ls-tree` shows). */
export const MODE = { file: "100644", executable: "100755", symlink: "120000", tree: "40000", gitlink: "160000" } as const;

/** One of git's canonical tree modes. */
export type TreeMode = (typeof MODE)[keyof typeof MODE];

/**
 * One tree entry. `mode` is canonical (git's canon_mode: `040000` reads as `40000`, `0100664` as
 * `100644`); the stored bytes keep whatever the tree holds — a tree is never re-serialised under
 * its own id. `name` is UTF-8 decoded; `nameBytes` keeps the exact stored bytes.
 */
export interface TreeEntry {
  mode: string;
  name: string;
  oid: string;
  nameBytes?: Uint8Array;
}

const S_IFMT = 0o170000;

/**
 * git's canon_mode of a mode number: a regular file is 100644 or 100755 (by the owner's execute
 * bit), a link 120000, a directory 40000, anything else a submodule (160000).
 */
export function canonicalMode(mode: number): TreeMode {
  switch ((mode & S_IFMT) >>> 0) {
    case 0o100000:
      return mode & 0o100 ? MODE.executable : MODE.file;
    case 0o120000:
      return MODE.symlink;
    case 0o040000:
      return MODE.tree;
    default:
      return MODE.gitlink;
  }
}

/**
 * A mode as git's get_mode reads it (tree-walk.c): one or more octal digits, an unsigned 32-bit
 * number (a longer one wraps as git's does). Anything else is git's "malformed mode in tree entry":
 * a `corrupt` GitError.
 */
export function modeOf(buf: Uint8Array, start: number, end: number): number {
  check(end > start, "malformed mode in tree entry");
  let mode = 0;
  for (let i = start; i < end; i++) {
    const d = buf[i]! - 0x30;
    check(d >= 0 && d <= 7, "malformed mode in tree entry");
    mode = ((mode << 3) + d) >>> 0;
  }
  return mode;
}

/**
 * The object type an entry's mode points to, decided by its numeric value as git's object_type of
 * the canonical mode: a directory a tree, a submodule (`160000`, or any mode that is no file, link
 * or directory) a commit, else a blob. `040000` is a tree.
 */
export function typeOfMode(mode: string): ObjectType {
  const m = mode === MODE.file || mode === MODE.executable || mode === MODE.symlink || mode === MODE.tree || mode === MODE.gitlink ? mode : canonicalMode(modeOf(utf8(mode), 0, mode.length));
  return m === MODE.tree ? "tree" : m === MODE.gitlink ? "commit" : "blob";
}

/** Parses a tree object; throws `corrupt` on a malformed entry (mode, empty name, truncation). */
export function parseTree(data: Uint8Array): TreeEntry[] {
  const buf = asBuffer(data);
  const out: TreeEntry[] = [];
  forEachTreeEntry(data, (mode, oid, nameStart, nameEnd) => {
    out.push({ mode, name: buf.toString("utf8", nameStart, nameEnd), oid, nameBytes: data.subarray(nameStart, nameEnd) });
  });
  return out;
}

/**
 * Calls `fn` for each entry without building objects (fast path for object walks), with the
 * entry's canonical mode: a walk that compares it with MODE.tree descends into `040000` too.
 * Throws `corrupt` on what git's tree walk refuses (a malformed mode, an empty name, truncation).
 */
export function forEachTreeEntry(data: Uint8Array, fn: (mode: TreeMode, oid: string, nameStart: number, nameEnd: number) => void): void {
  const buf = asBuffer(data);
  let p = 0;
  while (p < buf.length) {
    const sp = buf.indexOf(0x20, p);
    check(sp >= 0, "tree entry without a mode");
    const mode = canonicalMode(modeOf(buf, p, sp));
    const nul = buf.indexOf(0, sp + 1);
    check(nul >= 0 && nul + 21 <= buf.length, "truncated tree entry");
    check(nul > sp + 1, "empty filename in tree entry");
    fn(mode, buf.toString("hex", nul + 1, nul + 21), sp + 1, nul);
    p = nul + 21;
  }
}

const nameOf = (e: TreeEntry) => e.nameBytes ?? utf8(e.name);

/** Git's tree order: byte order of names, a directory sorting as `name/`. */
export function compareEntries(a: TreeEntry, b: TreeEntry): number {
  const an = nameOf(a);
  const bn = nameOf(b);
  const n = Math.min(an.length, bn.length);
  for (let i = 0; i < n; i++) if (an[i] !== bn[i]) return an[i]! - bn[i]!;
  const ac = an.length > n ? an[n]! : a.mode === MODE.tree ? 0x2f : 0;
  const bc = bn.length > n ? bn[n]! : b.mode === MODE.tree ? 0x2f : 0;
  return ac - bc;
}

/**
 * Serialises entries (sorted here, so callers may pass them in any order) with their canonical
 * modes, as git's write-tree writes a tree it builds (a zero-padded mode read from an old tree is
 * written `40000`; the old tree itself, and its id, stay as they are).
 */
export function serializeTree(entries: readonly TreeEntry[]): Uint8Array {
  const sorted = [...entries].sort(compareEntries);
  const parts: Uint8Array[] = [];
  for (const e of sorted) {
    parts.push(utf8(`${e.mode} `), nameOf(e), new Uint8Array([0]), fromHex(e.oid));
  }
  return concat(parts.length ? parts : [new Uint8Array(0)]);
}

const NAME_INDEX = new WeakMap<readonly TreeEntry[], Map<string, TreeEntry>>();

/**
 * The entry `name` of a parsed tree: a scan of a small tree, a name index (built once per parsed
 * tree, dropped with it) of a large one — looking up each of a 20,000-entry directory's files by
 * scanning was quadratic. Of two entries with one name (a malformed tree), the first.
 */
export function entryNamed(entries: readonly TreeEntry[], name: string): TreeEntry | undefined {
  if (entries.length < 32) return entries.find((x) => x.name === name);
  let index = NAME_INDEX.get(entries);
  if (!index) {
    index = new Map();
    for (const e of entries) if (!index.has(e.name)) index.set(e.name, e);
    NAME_INDEX.set(entries, index);
  }
  return index.get(name);
}
