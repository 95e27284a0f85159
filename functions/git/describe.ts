/**
 * What names a commit beyond its own bytes, as git computes it for a user format in a bare
 * repository: abbreviated ids (object-name.c: at least 7 hex digits, more from the object count of
 * the packs, more while another object shares the prefix), decorations (log-tree.c: every ref and
 * HEAD pointing at the commit, annotated tags peeled), `git describe` (builtin/describe.c: tags by
 * priority and tagger date, the date-ordered walk with 10 candidates, depth counting, `--tags`,
 * `--abbrev`, `--match`, `--exclude`) and the mailmap (`HEAD:.mailmap`, git's mailmap.blob default
 * for a bare repository). Each reads only when asked.
 */
import { parseTag } from "./objects/commit.ts";
import type { Repository } from "./repo/repository.ts";
import { type Decoration, type Mailmap, type PrettySource, parseMailmap } from "./pretty.ts";
import { visibleObjectCount } from "./reachable.ts";
import { DateQueue } from "./walk.ts";
import { wildmatch } from "./wildmatch.ts";

const HEXSZ = 40;
const enc = new TextEncoder();

/**
 * find_unique_abbrev: `len` hex digits of `oid` (-1: git's default — 7, or ⌈(msb(objects)+1)/2⌉
 * for a repository of 16384 objects or more, counting the objects of every pack as git's
 * approximate count does), longer while another stored object starts the same; 0 or 40: all 40.
 */
export async function abbreviate(repo: Repository, oid: string, len = -1): Promise<string> {
  if (len < 0) {
    // git counts its packed objects; here what the refs reach once some were left behind (reachable.ts)
    const count = await visibleObjectCount(repo.state, repo.reader, repo.commits);
    const msb = count > 0 ? Math.floor(Math.log2(count)) : 0;
    len = Math.max(7, Math.ceil((msb + 1) / 2));
  }
  if (len === 0 || len >= HEXSZ) return oid;
  // what the refs left behind does not lengthen an id (it would tell that it is still stored)
  const shares = async (prefix: string) => {
    for (const o of repo.reader.findPrefix(prefix, 64)) if (o !== oid && (await repo.reaches(o))) return true;
    return false;
  };
  while (len < HEXSZ && (await shares(oid.slice(0, len)))) len++;
  return oid.slice(0, len);
}

/** The ref namespaces git decorates with (refs.c ref_namespace), in its order. */
function decorationType(name: string): Decoration["type"] {
  if (name === "HEAD") return "head";
  if (name.startsWith("refs/heads/")) return "branch";
  if (name.startsWith("refs/tags/")) return "tag";
  if (name.startsWith("refs/remotes/")) return "remote";
  if (name === "refs/stash") return "stash";
  return "none";
}

/**
 * The decorations of `oid` as load_ref_decorations makes them (every ref, then HEAD; each new one
 * put first), and HEAD's symbolic target.
 */
export function decorationsOf(repo: Repository, oid: string): { list: Decoration[]; head: string | null } {
  const added: Decoration[] = [];
  for (const r of repo.state.refs) {
    if (r.name.startsWith("refs/replace/")) {
      if (r.name.slice(13, 53).toLowerCase() === oid) added.push({ type: "grafted", name: "replaced" });
      continue;
    }
    if (r.oid === oid) added.push({ type: decorationType(r.name), name: r.name });
    else if (r.peeled === oid) added.push({ type: "tag", name: r.name });
  }
  const head = repo.state.head ? repo.ref(repo.state.head) : null;
  if (head && (head.oid === oid || head.peeled === oid)) added.push({ type: head.oid === oid ? "head" : "tag", name: "HEAD" });
  return { list: added.reverse(), head: repo.state.head };
}

interface Name {
  prio: number;
  /** The ref's object (the tag object for an annotated tag). */
  oid: string;
  path: string;
  tag?: { tag: string; object: string; date: number } | null;
}

interface Candidate {
  name: Name;
  depth: number;
  foundOrder: number;
  flag: number;
}

const SEEN = 1;
const MAX_CANDIDATES = 10;

/** OPT__ABBREV: strtol, then int, then 0 or 4…40. */
function abbrevOption(v: string): number | null {
  const m = /^[ \t\n\v\f\r]*([-+]?)(\d+)$/.exec(v);
  if (!m) return null;
  let n = BigInt(m[1] === "-" ? `-${m[2]}` : m[2]!);
  const max = 2n ** 63n - 1n;
  if (n > max) n = max;
  if (n < -max - 1n) n = -max - 1n;
  const i = Number(BigInt.asIntN(32, n));
  return i && i < 4 ? 4 : i > HEXSZ ? HEXSZ : i;
}

/**
 * `git describe [--tags] [--abbrev=<n>] [--match=<p>…] [--exclude=<p>…] <oid>` in the repository:
 * its output, or "" where git fails (no names, nothing describes the commit).
 */
export async function describe(repo: Repository, oid: string, args: readonly string[]): Promise<string> {
  let tags = false;
  let abbrev = -1;
  const match: Uint8Array[] = [];
  const exclude: Uint8Array[] = [];
  for (const a of args) {
    if (a === "--tags") tags = true;
    else if (a === "--no-tags") tags = false;
    else if (a.startsWith("--abbrev=")) {
      const v = abbrevOption(a.slice(9));
      if (v === null) return "";
      abbrev = v;
    } else if (a.startsWith("--match=")) match.push(enc.encode(a.slice(8)));
    else if (a.startsWith("--exclude=")) exclude.push(enc.encode(a.slice(10)));
  }
  const readTagOf = async (n: Name) => {
    if (n.tag === undefined) {
      const o = await repo.reader.read(n.oid);
      if (o?.type === "tag") {
        const t = parseTag(o.data);
        n.tag = { tag: t.tag, object: t.object, date: t.tagger?.timestamp ?? 0 };
      } else n.tag = null;
    }
    return n.tag;
  };
  // get_name over the tags, in ref order
  const names = new Map<string, Name>();
  for (const r of repo.tags()) {
    const path = r.name.slice(10);
    const p = enc.encode(path);
    if (exclude.some((x) => wildmatch(x, p))) continue;
    if (match.length && !match.some((x) => wildmatch(x, p))) continue;
    const peeled = r.peeled ?? r.oid;
    const prio = peeled !== r.oid ? 2 : 1;
    const e = names.get(peeled);
    let replace = !e || e.prio < prio;
    const candidate: Name = { prio, oid: r.oid, path };
    if (e && e.prio === 2 && prio === 2) {
      // two annotated tags on one commit: the newer tagger date wins
      const old = await readTagOf(e);
      const neu = await readTagOf(candidate);
      replace = !old || (neu !== null && old.date < neu.date);
    }
    if (replace) names.set(peeled, candidate);
  }
  if (names.size === 0) return ""; // No names found, cannot describe anything.
  const suffix = async (depth: number, of: string) => `-${depth}-g${abbrev === 0 ? of : await abbreviate(repo, of, abbrev)}`;
  const nameOf = async (n: Name): Promise<{ text: string; misnamed: boolean }> => {
    if (n.prio !== 2) return { text: n.path, misnamed: false };
    const t = await readTagOf(n);
    if (!t) throw new Error("annotated tag not available");
    return { text: t.tag, misnamed: t.tag !== n.path };
  };
  try {
    const exact = names.get(oid);
    if (exact && (tags || exact.prio === 2)) {
      const { text, misnamed } = await nameOf(exact);
      return misnamed ? text + (await suffix(0, exact.tag?.object ?? oid)) : text;
    }
    const flags = new Map<string, number>([[oid, SEEN]]);
    const list = new DateQueue();
    list.push(oid, (await repo.commits.get(oid)).time);
    const matches: Candidate[] = [];
    let annotated = 0;
    let seen = 0;
    let gaveUpOn: string | null = null;
    const pushParents = async (c: string) => {
      for (const p of (await repo.commits.get(c)).parents) {
        const f = flags.get(p) ?? 0;
        if (!(f & SEEN)) list.push(p, (await repo.commits.get(p)).time);
        flags.set(p, f | (flags.get(c) ?? 0));
      }
    };
    for (let c = list.pop()?.oid; c !== undefined; c = list.pop()?.oid) {
      seen++;
      const n = names.get(c);
      if (n) {
        if (!tags && n.prio < 2) {
          // an unannotated tag: not a candidate
        } else if (matches.length < MAX_CANDIDATES) {
          const t: Candidate = { name: n, depth: seen - 1, foundOrder: matches.length + 1, flag: 1 << (matches.length + 1) };
          matches.push(t);
          flags.set(c, (flags.get(c) ?? 0) | t.flag);
          if (n.prio === 2) annotated++;
        } else {
          gaveUpOn = c;
          break;
        }
      }
      const cf = flags.get(c) ?? 0;
      for (const t of matches) if (!(cf & t.flag)) t.depth++;
      if (annotated && list.length === 0) {
        let bestDepth = Number.MAX_SAFE_INTEGER;
        let bestWithin = 0;
        for (const t of matches) {
          if (t.depth < bestDepth) {
            bestDepth = t.depth;
            bestWithin = t.flag;
          } else if (t.depth === bestDepth) bestWithin |= t.flag;
        }
        if ((cf & bestWithin) === bestWithin) break;
      }
      await pushParents(c);
    }
    if (matches.length === 0) return ""; // No (annotated) tags can describe the commit.
    matches.sort((a, b) => a.depth - b.depth || a.foundOrder - b.foundOrder);
    const best = matches[0]!;
    if (gaveUpOn) list.push(gaveUpOn, (await repo.commits.get(gaveUpOn)).time);
    // finish_depth_computation
    for (let c = list.pop()?.oid; c !== undefined; c = list.pop()?.oid) {
      if ((flags.get(c) ?? 0) & best.flag) {
        if (list.every((o) => ((flags.get(o) ?? 0) & best.flag) !== 0)) break;
      } else best.depth++;
      await pushParents(c);
    }
    const { text, misnamed } = await nameOf(best.name);
    return misnamed || abbrev !== 0 ? text + (await suffix(best.depth, oid)) : text;
  } catch {
    return ""; // git describe died: the expansion is empty
  }
}

/** The mailmap a bare repository reads: `HEAD:.mailmap` (none when HEAD or the file is missing). */
export async function mailmapOf(repo: Repository): Promise<Mailmap | null> {
  const head = await repo.resolve("HEAD");
  if (!head) return null;
  const entry = await repo.entryAt(head.oid, ".mailmap");
  if (entry?.type !== "blob") return null;
  return parseMailmap(await repo.readBlob(entry.oid));
}

/** The PrettySource of a commit in a repository; each lookup made once. */
export async function prettySource(repo: Repository, oid: string): Promise<PrettySource> {
  const raw = await repo.reader.read(oid);
  if (raw?.type !== "commit") throw new Error(`commit ${oid} not found`);
  let mailmap: Promise<Mailmap | null> | null = null;
  const described = new Map<string, Promise<string>>();
  return {
    oid,
    raw: raw.data,
    abbrev: (o, len) => abbreviate(repo, o, len),
    decorations: async () => decorationsOf(repo, oid),
    describe: (args) => {
      const key = JSON.stringify(args);
      const d = described.get(key) ?? describe(repo, oid, args);
      described.set(key, d);
      return d;
    },
    mailmap: () => (mailmap ??= mailmapOf(repo).catch(() => null)),
  };
}
