/**
 * Tree objects: `<mode> <name>\0<20-byte id>` entries sorted by name, directories compared as if
 * their name ended in `/` (git's `base_name_compare`).
 */
import { asBuffer, concat, fromHex, utf8 } from "../bytes.ts";
import { check } from "../errors.ts";
import type { ObjectType } from "./object.ts";

/** Git's file modes as stored in trees. */
export const MODE = { file: "100644", executable: "100755", symlink: "120000", tree: "40000", gitlink: "160000" } as const;

/** One tree entry. `name` is UTF-8 decoded; `nameBytes` keeps the exact stored bytes. */
export interface TreeEntry {
  mode: string;
  name: string;
  oid: string;
  nameBytes?: Uint8Array;
}

/** The object type an entry's mode points to (`160000` is a submodule commit). */
export const typeOfMode = (mode: string): ObjectType => (mode === MODE.tree ? "tree" : mode === MODE.gitlink ? "commit" : "blob");

/** Parses a tree object; throws `corrupt` on a malformed entry. */
export function parseTree(data: Uint8Array): TreeEntry[] {
  const buf = asBuffer(data);
  const out: TreeEntry[] = [];
  forEachTreeEntry(data, (mode, oid, nameStart, nameEnd) => {
    check(/^[0-7]{5,6}$/.test(mode), "tree entry with an invalid mode");
    out.push({ mode, name: buf.toString("utf8", nameStart, nameEnd), oid, nameBytes: data.subarray(nameStart, nameEnd) });
  });
  return out;
}

/** Calls `fn` for each entry without building objects (fast path for object walks). */
export function forEachTreeEntry(data: Uint8Array, fn: (mode: string, oid: string, nameStart: number, nameEnd: number) => void): void {
  const buf = asBuffer(data);
  let p = 0;
  while (p < buf.length) {
    const sp = buf.indexOf(0x20, p);
    check(sp > p, "tree entry without a mode");
    const nul = buf.indexOf(0, sp + 1);
    check(nul > sp + 1 && nul + 21 <= buf.length, "truncated tree entry");
    fn(buf.toString("latin1", p, sp), buf.toString("hex", nul + 1, nul + 21), sp + 1, nul);
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

/** Serialises entries (sorted here, so callers may pass them in any order). */
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
