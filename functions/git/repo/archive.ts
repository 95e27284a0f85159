/**
 * Source archives of a commit, as `git archive --prefix=<prefix> <commit>` writes them (Gitea serves
 * git's): a tar byte for byte (archive-tar.c: ustar headers as git fills them, the pax global header
 * naming the commit, pax headers for long paths and link targets, 10 KiB records) and a zip; and
 * the git bundle Gitea makes of a commit's history. All stream: one entry is read at a time.
 * The archived tree's `.gitattributes` apply as git archive (without --worktree-attributes) applies
 * them (attributes.ts): `export-ignore` leaves out a file, a submodule or a directory with all it
 * holds; `export-subst` expands `$Format:…$` (pretty.ts, describe.ts); `ident` and CRLF conversion
 * (convert.ts) change regular files first.
 */
import { createHash } from "node:crypto";
import { Zip, type ZipInputFile } from "fflate";
import { crc32, deflateRawSync } from "node:zlib";
import { type AttrFrame, type AttrRule, type Attributes, attributesOf, BUILTIN_FRAME, noPatterns, parseAttributes } from "../attributes.ts";
import { concat, utf8 } from "../bytes.ts";
import { converts, toWorkingTree } from "../convert.ts";
import { prettySource } from "../describe.ts";
import { GitError } from "../errors.ts";
import { MODE, type TreeEntry } from "../objects/tree.ts";
import { yielder } from "../pack/inflate.ts";
import { LruCache, type ObjectSource } from "../pack/reader.ts";
import { writePack } from "../pack/writer.ts";
import { formatSubst, type PrettySource } from "../pretty.ts";
import { objectsToSend, rangeWalk } from "../walk.ts";
import type { Repository } from "./repository.ts";

/** One archive member, in git's order (a directory before what it holds, trees in tree order). */
interface Member {
  path: Uint8Array;
  mode: number;
  oid: string;
  /**
   * The bytes of a file (converted, substituted) or a link target (null for directories); a large
   * regular file stored whole that needs no conversion comes as its source, streamed as it inflates.
   */
  data: () => Promise<Uint8Array | ObjectSource | null>;
  /** The file is export-subst: its bytes depend on refs, not only on the commit. */
  subst?: boolean;
}

/** Commits (with their paths) whose archive holds no export-subst file, 1 MiB of keys at most. */
const PLAIN = new LruCache<true>(1024 * 1024);

/** Root trees whose every path git archive takes (checkPaths), 256 KiB of keys at most. */
const VALID_PATHS = new LruCache<true>(256 * 1024);

/**
 * What one archive of a commit shares between its walks: the parsed `.gitattributes` (read once
 * per blob) and what export-subst expansions need (the commit, refs, abbreviations), read once
 * and only when a file has the attribute. `substitutions()` walks once to learn whether any file
 * is export-subst and digests what they expand to; the archive then walks again with the same
 * answers.
 */
export class ArchiveContext {
  private readonly attrs = new Map<string, Promise<AttrRule[]>>();
  private source: Promise<PrettySource> | null = null;
  private checked: Promise<void> | null = null;
  readonly repo: Repository;
  readonly commit: string;
  readonly paths: readonly string[];
  constructor(repo: Repository, commit: string, paths: readonly string[] = []) {
    this.repo = repo;
    this.commit = commit;
    this.paths = paths;
  }

  /** The rules of a `.gitattributes` blob (macros only at the top). */
  rules(oid: string, top: boolean): Promise<AttrRule[]> {
    const key = `${oid}:${top}`;
    let r = this.attrs.get(key);
    if (!r) {
      r = this.repo.reader.read(oid).then((o) => (o?.type === "blob" ? parseAttributes(o.data, top) : []));
      this.attrs.set(key, r);
    }
    return r;
  }

  /** The commit's pretty-format source (refs, abbreviations, describe: each computed once). */
  pretty(): Promise<PrettySource> {
    this.source ??= prettySource(this.repo, this.commit);
    return this.source;
  }

  /**
   * Refuses, before any byte of the archive, a tree git archive refuses: its unpack_trees into a
   * scratch index fails on the first path verify_path rejects (`..`, `.git` in any case, an empty
   * or absolute component — see checkPaths), whatever the paths asked for or export-ignore leave
   * out. Throws a `corrupt` GitError `invalid path '<path>'`; checked once per commit here, once
   * per root tree while the process keeps it in VALID_PATHS.
   */
  checkPaths(): Promise<void> {
    this.checked ??= checkPaths(this.repo, this.commit);
    return this.checked;
  }

  /**
   * A digest of every export-subst file's expanded bytes (with its path), or null when the archive
   * has none: what an ETag must add to the commit for the archive's bytes to be named by it. The
   * tree's paths are checked first (checkPaths): an archive git refuses has no tag either.
   */
  async substitutions(): Promise<string | null> {
    await this.checkPaths();
    // a commit's trees never change: once its archive is known to hold no export-subst file, an
    // ETag (a 304 too) costs no walk again
    const key = `${this.commit}\0${this.paths.join("\0")}`;
    if (PLAIN.get(key)) return null;
    // hashed as they come: never more than one expanded file held
    const hash = createHash("sha1");
    let any = false;
    for await (const m of members(this, new Uint8Array(0))) {
      if (!m.subst) continue;
      any = true;
      // an export-subst file is always built (its bytes are expanded), never a source
      const data = ((await m.data()) as Uint8Array | null) ?? new Uint8Array(0);
      hash.update(utf8(`${m.path.length} ${data.length}\n`)).update(m.path).update(data);
    }
    if (!any) PLAIN.set(key, true, key.length + 64);
    return any ? hash.digest("hex") : null;
  }
}

const enc = (e: TreeEntry) => e.nameBytes ?? utf8(e.name);
const SLASH = utf8("/");

// ---------------------------------------------------------------- paths git archive refuses

const lower = (c: number) => (c >= 0x41 && c <= 0x5a ? c | 0x20 : c);
/** `s` from `at` starts with `word` (ASCII, any case), as strncasecmp. */
const startsWithCase = (s: Uint8Array, at: number, word: string) => {
  if (at + word.length > s.length) return false;
  for (let i = 0; i < word.length; i++) if (lower(s[at + i]!) !== word.charCodeAt(i)) return false;
  return true;
};

/**
 * git's is_ntfs_dotgit on the component `s` from `at`: `.git` or `git~1` (any case) followed by
 * nothing but spaces and periods up to the component's end, a backslash or a colon.
 */
function ntfsDotGit(s: Uint8Array, at: number): boolean {
  let i: number;
  if (s[at] === 0x2e && startsWithCase(s, at + 1, "git")) i = at + 4;
  else if (startsWithCase(s, at, "git~1")) i = at + 5;
  else return false;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c === 0x5c || c === 0x3a) return true;
    if (c !== 0x2e && c !== 0x20) return false;
  }
  return true;
}

/**
 * git's is_ntfs_dotgitmodules on the component `s` from `at` (`last`: nothing follows it; git scans
 * on past a `/`, which never matches): `.gitmodules`, `gitmod~1`…`~4` or an 8.3 name `gi7eba~N`,
 * then only spaces and periods up to the end or a colon.
 */
function ntfsDotGitmodules(s: Uint8Array, at: number, last: boolean): boolean {
  const rest = (i: number) => {
    for (; i < s.length; i++) {
      const c = s[i]!;
      if (c === 0x3a) return true;
      if (c !== 0x20 && c !== 0x2e) return false;
    }
    return last;
  };
  if (s[at] === 0x2e && startsWithCase(s, at + 1, "gitmodules")) return rest(at + 11);
  if (startsWithCase(s, at, "gitmod") && s[at + 6] === 0x7e && s[at + 7]! >= 0x31 && s[at + 7]! <= 0x34) return rest(at + 8);
  const prefix = "gi7eba";
  let sawTilde = false;
  for (let i = 0; i < 8; i++) {
    const c = s[at + i];
    if (c === undefined) return false;
    if (sawTilde) {
      if (c < 0x30 || c > 0x39) return false;
    } else if (c === 0x7e) {
      const d = s[at + ++i];
      if (d === undefined || d < 0x31 || d > 0x39) return false;
      sawTilde = true;
    } else if (i >= 6 || c & 0x80 || lower(c) !== prefix.charCodeAt(i)) return false;
  }
  return rest(at + 8);
}

/**
 * Whether one path component passes git's verify_path (read-cache.c, as on Linux: core.protectNTFS
 * on, core.protectHFS off) for an entry that is a link or not and whose last component it is or not.
 */
function componentOk(s: Uint8Array, link: boolean, last: boolean): boolean {
  if (s.length === 0) return false; // `//`, a leading `/`, a trailing `/`
  if (ntfsDotGit(s, 0) || (link && ntfsDotGitmodules(s, 0, last))) return false;
  if (s[0] === 0x2e) {
    // verify_dotfile: `.`, `..`, `.git` (any case), and a link named `.gitmodules`
    if (s.length === 1 || (s.length === 2 && s[1] === 0x2e)) return false;
    if (startsWithCase(s, 1, "git")) {
      if (s.length === 4) return false;
      if (link && s.length === 11 && startsWithCase(s, 4, "modules")) return false;
    }
  }
  // after a backslash past the first byte, NTFS reads a new name
  for (let i = 1; i < s.length; i++) {
    if (s[i] !== 0x5c) continue;
    if (ntfsDotGit(s, i + 1) || (link && ntfsDotGitmodules(s, i + 1, last))) return false;
  }
  return true;
}

/** Whether every `/`-separated component of `name` passes (a name in a tree may hold a `/`). */
function nameOk(name: Uint8Array, link: boolean, last: boolean): boolean {
  let start = 0;
  for (let i = 0; i <= name.length; i++) {
    if (i < name.length && name[i] !== 0x2f) continue;
    if (!componentOk(name.subarray(start, i), link, last && i === name.length)) return false;
    start = i + 1;
  }
  return true;
}

/**
 * The check behind ArchiveContext.checkPaths: every file, link and submodule of the commit's tree,
 * in git's order (depth first, tree order), its path checked as git's verify_path checks it — a
 * directory's name counts for what it holds; an empty directory git archive writes nothing of, so
 * nothing of it is checked. One tree read at a time; the first bad path throws.
 */
async function checkPaths(repo: Repository, commit: string): Promise<void> {
  const root = (await repo.readCommit(commit)).tree;
  if (VALID_PATHS.get(root)) return;
  const walk = async (tree: string, base: Uint8Array, plain: boolean, links: boolean): Promise<void> => {
    for (const e of await repo.readTree(tree)) {
      const name = enc(e);
      if (e.mode === MODE.tree) {
        // a directory's name is one or more inner components, for files and links below it
        await walk(e.oid, concat([base, name, SLASH]), plain && nameOk(name, false, false), links && nameOk(name, true, false));
        continue;
      }
      const link = e.mode === MODE.symlink;
      if (!(link ? links : plain) || !nameOk(name, link, true)) {
        throw new GitError("corrupt", `invalid path '${new TextDecoder().decode(concat([base, name]))}'`);
      }
    }
  };
  await walk(root, new Uint8Array(0), true, true);
  VALID_PATHS.set(root, true, root.length + 64);
}

/** git streams blobs above core.bigFileThreshold (512 MiB) unconverted. */
const BIG_FILE = 512 * 1024 * 1024;

/**
 * The prefix directory, then the entries of the commit's tree, depth first, read lazily. `paths`
 * (tree paths, cleaned): only what they name, as git's pathspecs after `--` — a directory is
 * written just before the first entry under it (queue_or_write_archive_entry), so its ancestors
 * come along and directories holding nothing named stay out. Attributes are looked up as git
 * archive does: a directory with its trailing `/` (export-ignore drops it and all it holds), a
 * file or submodule after the directories before it are written (so a directory whose files are
 * all export-ignore'd is still there, empty).
 */
async function* members(ctx: ArchiveContext, prefix: Uint8Array): AsyncGenerator<Member> {
  const { repo, paths } = ctx;
  const commit = await repo.readCommit(ctx.commit);
  if (prefix.length > 0 && prefix[prefix.length - 1] === 0x2f) yield { path: prefix, mode: 0o40777, oid: commit.tree, data: async () => null };
  const named = (rel: string) => paths.length === 0 || paths.some((p) => rel === p || rel.startsWith(`${p}/`));
  const leading = (rel: string) => paths.some((p) => p.startsWith(`${rel}/`));
  const queued: Member[] = [];
  // git archive allows one %(describe) per archive: one state per walk
  const state = { describeLeft: 1 };
  async function* walk(tree: string, base: Uint8Array, rel: string, relBytes: Uint8Array, outer: readonly AttrFrame[]): AsyncGenerator<Member> {
    const entries = await repo.readTree(tree);
    const file = entries.find((e) => e.name === ".gitattributes" && e.mode !== MODE.tree && e.mode !== MODE.gitlink);
    const frames = file ? [...outer, { origin: relBytes, rules: await ctx.rules(file.oid, rel === "") }] : outer;
    const plain = noPatterns(frames);
    const attrsOf = (p: Uint8Array): Attributes => (plain ? new Map() : attributesOf(frames, p));
    for (const e of entries) {
      const name = enc(e);
      const path = concat([base, name]);
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      const relPathBytes = relBytes.length ? concat([relBytes, SLASH, name]) : name;
      if (e.mode === MODE.tree) {
        if (!named(relPath) && !leading(relPath)) continue;
        if (attrsOf(concat([relPathBytes, SLASH])).get("export-ignore") === true) continue;
        const dir = concat([path, SLASH]);
        queued.push({ path: dir, mode: 0o40000, oid: e.oid, data: async () => null });
        yield* walk(e.oid, dir, relPath, relPathBytes, frames);
        if (queued.at(-1)?.path === dir) queued.pop(); // nothing under it was named
        continue;
      }
      if (!named(relPath)) continue;
      yield* queued.splice(0);
      if (e.mode === MODE.gitlink) {
        if (attrsOf(concat([relPathBytes, SLASH])).get("export-ignore") === true) continue;
        yield { path: concat([path, SLASH]), mode: 0o160000, oid: e.oid, data: async () => null };
        continue;
      }
      const attrs = attrsOf(relPathBytes);
      if (attrs.get("export-ignore") === true) continue;
      const mode = Number.parseInt(e.mode, 8);
      const regular = (mode & 0o170000) === 0o100000;
      const subst = regular && attrs.get("export-subst") === true;
      const convert = regular && converts(attrs);
      const data = async (): Promise<Uint8Array | ObjectSource> => {
        const src = regular && !subst ? await repo.blobSource(e.oid) : null;
        // large and stored whole: sent as it inflates (git streams unconverted what is over BIG_FILE)
        if (src && src.data === null && (!convert || src.size > BIG_FILE)) return src;
        let bytes = src?.data ?? (await repo.readBlob(e.oid));
        if (convert && (subst || bytes.length <= BIG_FILE)) bytes = toWorkingTree(bytes, attrs, e.oid);
        if (subst) bytes = await formatSubst(bytes, await ctx.pretty(), state);
        return bytes;
      };
      yield { path, mode, oid: e.oid, data, subst };
    }
  }
  yield* walk(commit.tree, prefix, "", new Uint8Array(0), [BUILTIN_FRAME]);
}

// ---------------------------------------------------------------- tar

const BLOCK = 512;
const RECORD = 10240; // git writes in records of 20 blocks
const USTAR_MAX = 0o77777777777;
const S_IFMT = 0o170000;
const isDir = (m: number) => (m & S_IFMT) === 0o40000 || (m & S_IFMT) === 0o160000;
const isLink = (m: number) => (m & S_IFMT) === 0o120000;
const isReg = (m: number) => (m & S_IFMT) === 0o100000;

/** A pax record, `"<len> <key>=<value>\n"` where len counts itself (strbuf_append_ext_header). */
function paxRecord(key: string, value: Uint8Array): Uint8Array {
  let len = 1 + 1 + key.length + 1 + value.length + 1;
  for (let tmp = 1; Math.floor(len / 10) >= tmp; tmp *= 10) len++;
  return concat([utf8(`${len} ${key}=`), value, utf8("\n")]);
}

const octal = (n: number, width: number) => `${n.toString(8).padStart(width, "0")}\0`;

/** A ustar header as git's prepare_header fills it. */
function header(f: { name: Uint8Array; prefix?: Uint8Array; linkname?: Uint8Array; typeflag: string; mode: number; size: number; mtime: number }): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (at: number, s: string | Uint8Array) => h.set(typeof s === "string" ? utf8(s) : s, at);
  put(0, f.name);
  put(100, octal(f.mode & 0o7777, 7));
  put(108, octal(0, 7));
  put(116, octal(0, 7));
  put(124, octal(isReg(f.mode) ? f.size : 0, 11));
  put(136, octal(f.mtime, 11));
  put(156, f.typeflag);
  if (f.linkname) put(157, f.linkname);
  put(257, "ustar\0");
  put(263, "00");
  put(265, "root");
  put(297, "root");
  put(329, octal(0, 7));
  put(337, octal(0, 7));
  if (f.prefix) put(345, f.prefix);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  put(148, octal(sum, 7));
  return h;
}

/** `data` padded with zeros to whole blocks (write_blocked). */
function blocked(data: Uint8Array): Uint8Array[] {
  const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
  return pad ? [data, new Uint8Array(pad)] : [data];
}

/** get_path_prefix: where to split a long path into ustar's prefix and name. */
function pathPrefix(path: Uint8Array, max: number): number {
  let i = path.length;
  if (i > 1 && path[i - 1] === 0x2f) i--;
  if (i > max) i = max;
  do i--;
  while (i > 0 && path[i] !== 0x2f);
  return i;
}

/** A part of a tar: bytes, or a file's bytes as they inflate. */
type TarPart = Uint8Array | ReadableStream<Uint8Array>;

/** One member's tar blocks (its pax header first when it needs one), as write_tar_entry writes them. */
async function tarMember(m: Member, mtime: number): Promise<TarPart[]> {
  let mode = m.mode;
  let typeflag: string;
  if (isDir(mode)) {
    typeflag = "5";
    mode = (mode | 0o777) & ~0o002; // git's default tar.umask
  } else if (isLink(mode)) {
    typeflag = "2";
    mode |= 0o777;
  } else if (isReg(mode)) {
    typeflag = "0";
    mode = (mode | (mode & 0o100 ? 0o777 : 0o666)) & ~0o002;
  } else throw new GitError("corrupt", `unsupported file mode: 0${m.mode.toString(8)} (SHA1: ${m.oid})`);
  const got = await m.data();
  const source = got && !(got instanceof Uint8Array) ? got : null;
  const data = got instanceof Uint8Array ? got : null;
  const size = source ? source.size : (data?.length ?? 0);
  const ext: Uint8Array[] = [];
  let name = m.path;
  let prefix: Uint8Array | undefined;
  if (m.path.length > 100) {
    const plen = pathPrefix(m.path, 155);
    const rest = m.path.length - plen - 1;
    if (plen > 0 && rest <= 100) {
      prefix = m.path.subarray(0, plen);
      name = m.path.subarray(plen + 1);
    } else {
      name = utf8(`${m.oid}.data`);
      ext.push(paxRecord("path", m.path));
    }
  }
  let linkname: Uint8Array | undefined;
  if (isLink(mode) && data) {
    if (data.length > 100) {
      linkname = utf8(`see ${m.oid}.paxheader`);
      ext.push(paxRecord("linkpath", data));
    } else linkname = data;
  }
  let sizeInHeader = size;
  if (isReg(mode) && size > USTAR_MAX) {
    sizeInHeader = 0;
    ext.push(paxRecord("size", utf8(String(size))));
  }
  const out: TarPart[] = [];
  if (ext.length) {
    const e = concat(ext);
    out.push(header({ name: utf8(`${m.oid}.paxheader`), typeflag: "x", mode: 0o100666, size: e.length, mtime }), ...blocked(e));
  }
  out.push(header({ name, prefix, linkname, typeflag, mode, size: sizeInHeader, mtime }));
  if (isReg(mode) && source) {
    out.push(source.range(0, size));
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad) out.push(new Uint8Array(pad));
  } else if (isReg(mode) && data && data.length > 0) out.push(...blocked(data));
  return out;
}

/**
 * The tar `git archive --format=tar --prefix=<prefix> <commit>` writes, streamed about 64 KiB at a
 * time (a large file stored whole in the chunks it inflates to).
 */
export function tarArchive(repo: Repository, commit: string, prefix: string, paths: readonly string[] = [], ctx = new ArchiveContext(repo, commit, paths)): ReadableStream<Uint8Array> {
  let entries: AsyncGenerator<Member> | null = null;
  let mtime = 0;
  let written = 0;
  let ended = false;
  const queue: TarPart[] = [];
  let current: ReadableStreamDefaultReader<Uint8Array> | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (!entries) {
        // nothing is written of a tree git archive refuses (checked already when the caller
        // asked for substitutions first)
        await ctx.checkPaths();
        const c = await repo.readCommit(commit);
        // git reads the time as an unsigned 64-bit number (strtoumax: a negative one wraps, a
        // larger one saturates); what ustar's 11 octal digits cannot hold goes in a pax record
        const t = BigInt.asUintN(64, BigInt(Math.trunc(Math.max(-(2 ** 63), Math.min(c.committer.timestamp, 2 ** 64)))));
        const time = c.committer.timestamp >= 2 ** 64 ? 2n ** 64n - 1n : t;
        const global = [paxRecord("comment", utf8(commit))];
        mtime = Number(time);
        if (time > BigInt(USTAR_MAX)) {
          global.push(paxRecord("mtime", utf8(String(time))));
          mtime = USTAR_MAX;
        }
        const ext = concat(global);
        queue.push(header({ name: utf8("pax_global_header"), typeflag: "g", mode: 0o100666, size: ext.length, mtime }), ...blocked(ext));
        entries = members(ctx, utf8(prefix));
      }
      const out: Uint8Array[] = [];
      let batch = 0;
      const flush = () => {
        if (out.length) ctl.enqueue(concat(out));
      };
      for (;;) {
        if (current) {
          const { done, value } = await current.read();
          if (!done) {
            written += value.length;
            ctl.enqueue(value);
            return;
          }
          current = null;
        }
        const part = queue.shift();
        if (part instanceof Uint8Array) {
          out.push(part);
          written += part.length;
          batch += part.length;
          if (batch >= 64 * 1024) return flush();
          continue;
        }
        if (part) {
          // a file as it inflates: what came before it goes first
          current = part.getReader();
          if (out.length) return flush();
          continue;
        }
        if (ended) {
          flush();
          ctl.close();
          return;
        }
        const next = await entries.next();
        if (next.done) {
          // the rest of the record in zeros, and one more record when that leaves less than two
          // blocks of them (write_trailer)
          const tail = RECORD - (written % RECORD);
          queue.push(new Uint8Array(tail));
          if (tail < 2 * BLOCK) queue.push(new Uint8Array(RECORD));
          ended = true;
          continue;
        }
        queue.push(...(await tarMember(next.value, mtime)));
      }
    },
    async cancel(reason) {
      await current?.cancel(reason);
    },
  });
}

/** `tarArchive` gzip-compressed (`git archive --format=tar.gz`; the gzip bytes are not git's). */
export const tarGzArchive = (repo: Repository, commit: string, prefix: string, paths: readonly string[] = [], ctx?: ArchiveContext): ReadableStream<Uint8Array> =>
  tarArchive(repo, commit, prefix, paths, ctx).pipeThrough(new CompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>);

// ---------------------------------------------------------------- zip

/**
 * A zip member whose data is deflated in one native call (zlib, as the pack writer's), or stored
 * when that does not make it smaller (directories, links, empty files). fflate's own ZipDeflate
 * sets up a JavaScript deflater with fresh tables for every member — ~170 µs each — so a zip of
 * tens of thousands of small files held the event loop for a minute and more.
 */
function zipMember(filename: string, data: Uint8Array, deflate: boolean, attrs: Pick<ZipInputFile, "mtime" | "os" | "attrs">): { file: ZipInputFile; body: Uint8Array } {
  const packed = deflate && data.length > 0 ? deflateRawSync(data, { level: 6 }) : null;
  const stored = packed === null || packed.length >= data.length;
  const file: ZipInputFile = { filename, size: data.length, crc: crc32(data) >>> 0, compression: stored ? 0 : 8, ...attrs };
  return { file, body: stored ? data : packed };
}

/** Zip members written between two turns of the event loop (a few milliseconds of work). */
export const ZIP_MEMBERS_PER_TURN = 128;

/**
 * The zip of what `git archive --format=zip --prefix=<prefix> <commit>` holds: the same members in
 * the same order (directories included), executables and links as such, the commit's time, files
 * deflated (stored when deflate would not shrink them). Written with fflate's Zip, so its bytes
 * are not git's.
 */
export function zipArchive(repo: Repository, commit: string, prefix: string, paths: readonly string[] = [], ctx = new ArchiveContext(repo, commit, paths)): ReadableStream<Uint8Array> {
  let entries: AsyncGenerator<Member> | null = null;
  let mtime = new Date(0);
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let finished = false;
  /** A large file being deflated as it inflates, member of the zip until its stream ends. */
  let current: { file: ZipInputFile; reader: ReadableStreamDefaultReader<Uint8Array>; sum: { crc: number; size: number } } | null = null;
  const pause = yielder(ZIP_MEMBERS_PER_TURN);
  const zip = new Zip((err, chunk, final) => {
    if (err) throw err;
    // git's zip ends with the commit id as the archive's comment (`unzip -z`, `zipinfo` show it):
    // the end-of-central-directory record is the last 22 bytes, its comment length the last 2
    const data = final ? withZipComment(chunk, utf8(commit)) : chunk;
    pending.push(data);
    pendingBytes += data.length;
    if (final) finished = true;
  });
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (!entries) {
        await ctx.checkPaths(); // nothing is written of a tree git archive refuses
        const c = await repo.readCommit(commit);
        // a zip holds 1980–2099 (fflate refuses other years): a commit time outside is clamped
        mtime = new Date(Math.min(Math.max(c.committer.timestamp, 315532800), 4102444798) * 1000);
        entries = members(ctx, utf8(prefix));
      }
      while (!finished && pendingBytes < 64 * 1024) {
        if (current) {
          const { done, value } = await current.reader.read();
          if (!done) {
            current.file.ondata!(null, value, false);
            continue;
          }
          // the data descriptor after the data names the CRC and size (fflate reads them now)
          current.file.crc = current.sum.crc >>> 0;
          current.file.size = current.sum.size;
          current.file.ondata!(null, new Uint8Array(0), true);
          current = null;
          continue;
        }
        // small members deflate to almost nothing: without a turn for the event loop every so
        // many, a zip of thousands of them held every other request for seconds
        const turn = pause();
        if (turn) await turn;
        const next = await entries.next();
        if (next.done) {
          zip.end();
          break;
        }
        const m = next.value;
        // fflate takes names as strings: a name that is not UTF-8 is stored in its U+FFFD form
        const name = new TextDecoder().decode(m.path);
        // Unix entries with the modes unzip gives git's zip under the usual umask (git marks plain
        // files and directories MS-DOS, made by version 0; fflate writes 2.0, and unzip then reads
        // such a name as an MS-DOS code page rather than UTF-8)
        const unix = isDir(m.mode) ? 0o40755 : isLink(m.mode) ? 0o120777 : m.mode & 0o111 ? 0o100755 : 0o100644;
        const data = (await m.data()) ?? new Uint8Array(0);
        const attrs = { mtime, os: 3, attrs: (unix * 0x10000) >>> 0 };
        if (!(data instanceof Uint8Array)) {
          current = deflatingMember(name, data, attrs);
          zip.add(current.file);
          continue;
        }
        const { file, body } = zipMember(name, data, !isDir(m.mode) && !isLink(m.mode), attrs);
        zip.add(file);
        file.ondata!(null, body, true);
      }
      const out = concat(pending);
      pending = [];
      pendingBytes = 0;
      if (out.length) ctl.enqueue(out);
      if (finished) ctl.close();
    },
    async cancel(reason) {
      zip.terminate();
      await current?.reader.cancel(reason);
    },
  });
}

/**
 * A large file's zip member, deflated (natively) as its bytes inflate from storage: its CRC and
 * size are summed on the way and written in the data descriptor fflate puts after every member.
 */
function deflatingMember(filename: string, src: ObjectSource, attrs: Pick<ZipInputFile, "mtime" | "os" | "attrs">) {
  const sum = { crc: 0, size: 0 };
  const summed = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, ctl) {
      sum.crc = crc32(chunk, sum.crc);
      sum.size += chunk.length;
      ctl.enqueue(chunk);
    },
  });
  const deflated = src.range(0, src.size).pipeThrough(summed).pipeThrough(new CompressionStream("deflate-raw") as unknown as TransformStream<Uint8Array, Uint8Array>);
  const file: ZipInputFile = { filename, size: src.size, crc: 0, compression: 8, ...attrs };
  return { file, reader: deflated.getReader(), sum };
}

/** The zip's last chunk (ending with an end-of-central-directory record without comment) with `comment` added. */
function withZipComment(last: Uint8Array, comment: Uint8Array): Uint8Array {
  const out = new Uint8Array(last.length + comment.length);
  out.set(last);
  out.set(comment, last.length);
  new DataView(out.buffer).setUint16(last.length - 2, comment.length, true);
  return out;
}

// ---------------------------------------------------------------- bundle

/**
 * The bundle Gitea's CreateBundle makes (`git bundle create <file> bundle HEAD` in a repository
 * whose branch `bundle` is the commit): a v2 header naming the commit as `refs/heads/bundle` and
 * `HEAD`, then a pack of everything the commit reaches. `git clone <file>` reads it.
 */
export function bundleArchive(repo: Repository, commit: string): ReadableStream<Uint8Array> {
  let pack: ReadableStreamDefaultReader<Uint8Array> | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (!pack) {
        // the history is walked on the first read: an answer that never sends the body walks nothing
        const history = await rangeWalk(repo.commits, { include: [commit], exclude: [] });
        const objects = await objectsToSend(repo.reader, repo.commits, history.commits, []);
        pack = (await writePack(repo.reader, objects, { ofsDelta: true })).getReader();
        ctl.enqueue(utf8(`# v2 git bundle\n${commit} refs/heads/bundle\n${commit} HEAD\n\n`));
        return;
      }
      const { done, value } = await pack.read();
      if (done) ctl.close();
      else ctl.enqueue(value);
    },
    cancel: (why) => pack?.cancel(why),
  });
}
