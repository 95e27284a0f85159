/**
 * What git's convert.c does to a blob on its way out of the repository (convert_to_working_tree),
 * as `git archive` applies it to regular files, with git's default configuration (core.autocrlf
 * false, core.eol native = LF on the servers Gitea runs on): `ident` (`$Id$` → `$Id: <blob id> $`),
 * then LF → CRLF where the attributes ask for CRLF (`eol=crlf`, with `text`, `text=auto` or no
 * `text`; the legacy `crlf` attribute standing in for `text`), never for `-text`/`binary`, and for
 * `text=auto` only in a blob git's heuristics call text that holds no CR yet. Not done:
 * `working-tree-encoding` (iconv) and `filter` drivers (none is configured in Gitea's bare
 * repositories, so git runs none either).
 */
import type { Attributes } from "./attributes.ts";

type CrlfAction = "binary" | "text" | "text-input" | "text-crlf" | "auto" | "auto-crlf" | "auto-input" | "undefined";

/** git_path_check_crlf. */
function crlfOf(v: Attributes extends ReadonlyMap<string, infer V> ? V | undefined : never): CrlfAction {
  if (v === true) return "text";
  if (v === false) return "binary";
  if (v === null || v === undefined) return "undefined";
  if (v === "input") return "text-input";
  if (v === "auto") return "auto";
  return "undefined";
}

/** convert_attrs: the end-of-line action for a path's attributes. */
function crlfAction(attrs: Attributes): CrlfAction {
  let action = crlfOf(attrs.get("text"));
  if (action === "undefined") action = crlfOf(attrs.get("crlf"));
  if (action !== "binary") {
    const eol = attrs.get("eol");
    if (action === "auto" && eol === "lf") action = "auto-input";
    else if (action === "auto" && eol === "crlf") action = "auto-crlf";
    else if (eol === "lf") action = "text-input";
    else if (eol === "crlf") action = "text-crlf";
  }
  if (action === "text") action = "text-input"; // text_eol_is_crlf() is false
  if (action === "undefined") action = "binary"; // core.autocrlf false
  return action;
}

interface Stats {
  nul: number;
  lonecr: number;
  lonelf: number;
  crlf: number;
  printable: number;
  nonprintable: number;
}

/** gather_stats. */
function statsOf(buf: Uint8Array): Stats {
  const s: Stats = { nul: 0, lonecr: 0, lonelf: 0, crlf: 0, printable: 0, nonprintable: 0 };
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === 0x0d) {
      if (buf[i + 1] === 0x0a) {
        s.crlf++;
        i++;
      } else s.lonecr++;
      continue;
    }
    if (c === 0x0a) {
      s.lonelf++;
      continue;
    }
    if (c === 127) s.nonprintable++;
    else if (c < 32) {
      if (c === 8 || c === 9 || c === 27 || c === 12) s.printable++;
      else {
        if (c === 0) s.nul++;
        s.nonprintable++;
      }
    } else s.printable++;
  }
  // a file ending in EOF (^Z) does not count it as non-printable
  if (buf.length && buf[buf.length - 1] === 0x1a) s.nonprintable--;
  return s;
}

const isBinary = (s: Stats) => s.lonecr > 0 || s.nul > 0 || s.printable >> 7 < s.nonprintable;

/** crlf_to_worktree. */
function crlfToWorktree(buf: Uint8Array, action: CrlfAction): Uint8Array {
  if (!buf.length || (action !== "text-crlf" && action !== "auto-crlf")) return buf;
  const s = statsOf(buf);
  if (!s.lonelf) return buf;
  if (action === "auto-crlf" && (s.lonecr || s.crlf || isBinary(s))) return buf;
  const out = new Uint8Array(buf.length + s.lonelf);
  let o = 0;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === 0x0a && (i === 0 || buf[i - 1] !== 0x0d)) out[o++] = 0x0d;
    out[o++] = c;
  }
  return out.subarray(0, o);
}

/** count_ident: how many `$Id$` / `$Id: … $` keywords the blob holds. */
function countIdent(buf: Uint8Array): number {
  let cnt = 0;
  for (let i = 0; i < buf.length; ) {
    const ch = buf[i++];
    if (ch !== 0x24) continue;
    if (buf.length - i < 3) break;
    if (buf[i] !== 0x49 || buf[i + 1] !== 0x64) continue;
    const c = buf[i + 2];
    i += 3;
    if (c === 0x24) cnt++;
    if (c !== 0x3a) continue;
    while (i < buf.length) {
      const d = buf[i++];
      if (d === 0x24) {
        cnt++;
        break;
      }
      if (d === 0x0a) break;
    }
  }
  return cnt;
}

/** ident_to_worktree: each `$Id$` (or a git-style `$Id: … $`) becomes `$Id: <oid> $`. */
function identToWorktree(buf: Uint8Array, oid: string): Uint8Array {
  if (!countIdent(buf)) return buf;
  const out: number[] = [];
  const sub = new TextEncoder().encode(`Id: ${oid} $`);
  let i = 0;
  for (;;) {
    const dollar = buf.indexOf(0x24, i);
    if (dollar < 0) break;
    for (let k = i; k <= dollar; k++) out.push(buf[k]!);
    i = dollar + 1;
    const len = buf.length - i;
    if (len < 3 || buf[i] !== 0x49 || buf[i + 1] !== 0x64) continue;
    if (buf[i + 2] === 0x24) i += 3;
    else if (buf[i + 2] === 0x3a) {
      const end = buf.indexOf(0x24, i + 3);
      if (end < 0) break; // an unfinished keyword: stop here
      if (buf.subarray(i + 3, end).indexOf(0x0a) >= 0) continue;
      const spc = buf.subarray(i + 4, end).indexOf(0x20);
      if (spc >= 0 && i + 4 + spc < end - 1) continue; // another system's id
      i = end + 1;
    } else continue;
    for (const b of sub) out.push(b);
  }
  for (let k = i; k < buf.length; k++) out.push(buf[k]!);
  return Uint8Array.from(out);
}

/** True when the attributes change a blob's bytes on the way out (ident, CRLF). */
export function converts(attrs: Attributes): boolean {
  const a = crlfAction(attrs);
  return attrs.get("ident") === true || a === "text-crlf" || a === "auto-crlf";
}

/** convert_to_working_tree for a regular file with these attributes; `oid` is the blob's id. */
export function toWorkingTree(data: Uint8Array, attrs: Attributes, oid: string): Uint8Array {
  const withIds = attrs.get("ident") === true ? identToWorktree(data, oid) : data;
  return crlfToWorktree(withIds, crlfAction(attrs));
}
