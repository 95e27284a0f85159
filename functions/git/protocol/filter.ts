/**
 * Partial-clone object filters (`git clone --filter=<spec>`; git's list-objects-filter-options.c):
 * `blob:none`, `blob:limit=<n>[kmg]`, `tree:<depth>`, `object:type=<type>` and `combine:<a>+<b>…`
 * (sub-specs percent-encoded). `sparse:oid` is refused as a filter this server does not allow
 * (git's `uploadpackfilter.<filter>.allow`), `sparse:path` as git dropped it.
 */
import { GitError } from "../errors.ts";
import type { ObjectType } from "../objects/object.ts";
import type { ObjectFilter } from "../walk.ts";

const TYPES: readonly ObjectType[] = ["blob", "tree", "commit", "tag"];
/** Characters a `combine:` sub-spec must percent-encode (git's RESERVED_NON_WS, and whitespace). */
const RESERVED = /[~`!@#$^&*()[\]{}\\;'",<>?\s]/;

const bad = (message: string) => new GitError("bad-request", message);

/** git_parse_ulong: a decimal count with an optional k/m/g unit. */
function parseCount(s: string): number | null {
  const m = /^(\d+)([kmg]?)$/i.exec(s);
  if (!m) return null;
  const n = Number(m[1]) * { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  return Number.isSafeInteger(n) ? n : null;
}

/** Parses one filter spec; combined specs become one filter that keeps what all of them keep. */
export function parseFilter(spec: string): ObjectFilter {
  if (spec === "blob:none") return { blobLimit: 0 };
  if (spec.startsWith("blob:limit=")) {
    const n = parseCount(spec.slice(11));
    if (n === null) throw bad(`invalid filter-spec '${spec}'`);
    return { blobLimit: n };
  }
  if (spec.startsWith("tree:")) {
    const n = parseCount(spec.slice(5));
    if (n === null) throw bad("expected 'tree:<depth>'");
    return { treeDepth: n };
  }
  if (spec.startsWith("object:type=")) {
    const t = spec.slice(12);
    if (!(TYPES as readonly string[]).includes(t)) throw bad(`'${t}' for 'object:type=<type>' is not a valid object type`);
    return { types: new Set([t as ObjectType]) };
  }
  if (spec.startsWith("sparse:oid=")) throw bad("filter 'sparse:oid' not supported");
  if (spec.startsWith("sparse:path=")) throw bad("sparse:path filters support has been dropped");
  if (spec.startsWith("combine:")) return combine(spec.slice(8));
  throw bad(`invalid filter-spec '${spec}'`);
}

function combine(rest: string): ObjectFilter {
  if (rest === "") throw bad("expected something after combine:");
  const out: ObjectFilter = {};
  for (const sub of rest.split("+")) {
    const reserved = RESERVED.exec(sub);
    if (reserved) throw bad(`must escape char in sub-filter-spec: '${reserved[0]}'`);
    let decoded: string;
    try {
      decoded = decodeURIComponent(sub);
    } catch {
      throw bad(`invalid filter-spec '${sub}'`);
    }
    // a decoded control character would travel in the error line: named encoded instead
    if (/[\0-\x1f\x7f]/.test(decoded)) throw bad(`invalid filter-spec '${sub}'`);
    const f = parseFilter(decoded);
    if (f.blobLimit !== undefined) out.blobLimit = Math.min(out.blobLimit ?? Infinity, f.blobLimit);
    if (f.treeDepth !== undefined) out.treeDepth = Math.min(out.treeDepth ?? Infinity, f.treeDepth);
    if (f.types) out.types = out.types ? new Set([...out.types].filter((t) => f.types!.has(t))) : f.types;
  }
  return out;
}
