/**
 * `POST git-upload-pack`: fetch and clone.
 * - Protocol v2 (gitprotocol-v2): `ls-refs` (ref-prefix, symrefs, peel, unborn) and `fetch` (want,
 *   have, done, ofs-delta, no-progress, include-tag, shallow, deepen, deepen-since, deepen-not,
 *   deepen-relative), answered with acknowledgments / shallow-info / packfile sections, the pack
 *   always on side-band-64k.
 * - Protocol v0/v1 over stateless HTTP (gitprotocol-pack, git's upload-pack.c): want/shallow/deepen
 *   (also -since, -not), have rounds with multi_ack_detailed (or multi_ack, or plain), no-done,
 *   side-band(-64k).
 * Pack choice: a clone (no haves, no shallow) gets the stored pack unchanged when there is one,
 * otherwise every stored object copied raw; anything else walks history and copies what is needed.
 */
import { ByteReader, concat, concatStreams, isOid, utf8 } from "../bytes.ts";
import { clientReason, GitError } from "../errors.ts";
import { ObjectReader } from "../pack/reader.ts";
import { parseTag } from "../objects/commit.ts";
import { firstUnreached } from "../reachable.ts";
import { storedPackStream, writeAllPacks, writePack } from "../pack/writer.ts";
import { DELIM, FLUSH, fitsPkt, pkt, PktReader } from "../pkt-line.ts";
import { advertisable } from "./advertise.ts";
import { parseFilter } from "./filter.ts";
import type { RepoState } from "../storage/ref-store.ts";
import { allWantsReachCommon, Commits, type ObjectFilter, objectsToSend, rangeWalk, shallowBoundary, shallowByRevList } from "../walk.ts";
import { asBody, type GitContext, gitHeaders, limitsOf, peeledOf, protocolVersion, RequestBodyError, requestBody, sideband, sidebandStream } from "./common.ts";

const RESULT_TYPE = "application/x-git-upload-pack-result";

/** What a fetch asked for, whatever the protocol version. */
interface FetchRequest {
  wants: string[];
  haves: string[];
  done: boolean;
  clientShallow: Set<string>;
  depth: number;
  /** `deepen-since`: committer time (seconds) below which commits are not sent; 0 = none. */
  deepenSince: number | null;
  /** `deepen-not`: refs (as the client named them) whose history is not sent. */
  deepenNot: string[];
  deepenRelative: boolean;
  ofsDelta: boolean;
  includeTag: boolean;
  noProgress: boolean;
  sideband: 0 | 1 | 2; // none, side-band, side-band-64k
  /** `filter <spec>`: what a partial clone leaves out. */
  filter: ObjectFilter | null;
}

/** Answers `POST git-upload-pack` (v2 when the client sent `Git-Protocol: version=2`). */
export async function handleUploadPack(ctx: GitContext, req: Request): Promise<Response> {
  const headers = gitHeaders(RESULT_TYPE);
  const reader = new ByteReader(requestBody(req));
  try {
    const body = protocolVersion(req) === 2 ? await uploadPackV2(ctx, reader) : await uploadPackV0(ctx, reader);
    return new Response(asBody(body), { headers });
  } catch (e) {
    if (e instanceof RequestBodyError) throw e; // not a protocol request at all: serveGit answers 400
    if (e instanceof GitError && (e.code === "bad-request" || e.code === "invalid" || e.code === "not-found")) {
      // git shows an ERR packet to the user as "remote error: …"
      return new Response(asBody(pkt(`ERR ${e.message}\n`)), { headers });
    }
    throw e;
  } finally {
    await reader.cancel();
  }
}

/** Reads pkt-lines until a flush, enforcing the request size limit. */
async function readSection(pkts: PktReader, ctx: GitContext, stopAtDelim = false): Promise<{ lines: string[]; end: "flush" | "delim" | "eof" }> {
  const max = limitsOf(ctx).maxRequestBytes;
  const lines: string[] = [];
  for (;;) {
    if (pkts.bytes.consumed > max) throw new GitError("bad-request", `request exceeds ${max} bytes`);
    const l = await pkts.line();
    if (l === null) return { lines, end: "eof" };
    if (l === "flush") return { lines, end: "flush" };
    if (l === "delim" && stopAtDelim) return { lines, end: "delim" };
    if (l === "delim" || l === "end") continue;
    lines.push(l);
  }
}

const oidArg = (line: string, prefix: string): string => {
  const oid = line.slice(prefix.length, prefix.length + 40).toLowerCase(); // git reads either case
  if (!isOid(oid)) throw new GitError("bad-request", `protocol error: expected an object id, got '${line}'`);
  return oid;
};

// ---------------------------------------------------------------- protocol v2

async function uploadPackV2(ctx: GitContext, reader: ByteReader): Promise<ReadableStream<Uint8Array> | Uint8Array> {
  const pkts = new PktReader(reader);
  const head = await readSection(pkts, ctx, true);
  // a lone flush: the client is done (git answers nothing); a delimiter without a command is refused
  if (head.lines.length === 0 && head.end !== "delim") return new Uint8Array(0);
  const command = requestedCommand(head.lines);
  const args = head.end === "delim" ? (await readSection(pkts, ctx)).lines : [];
  if (command === "ls-refs") return lsRefs(ctx, args);
  return fetchV2(ctx, args);
}

/** The v2 capabilities a client may send back (those advertised that are not commands). */
const CLIENT_CAPABILITIES = new Set(["agent", "server-option", "object-format"]);

/**
 * The command of a v2 request's first section, refused as git's serve.c refuses it, line by line:
 * a second `command=`, one the server does not serve, a capability it did not advertise, an
 * `object-format` without a value or of no known name; then no command at all, then an object
 * format other than the repository's (sha1; git names a known other format a mismatch).
 */
function requestedCommand(lines: readonly string[]): "ls-refs" | "fetch" {
  let command: string | null = null;
  let format = "sha1";
  for (const line of lines) {
    if (line.startsWith("command=")) {
      const name = line.slice(8);
      if (command !== null) throw new GitError("bad-request", `command '${name}' requested after already requesting command '${command}'`);
      if (name !== "ls-refs" && name !== "fetch") throw new GitError("bad-request", `invalid command '${name}'`);
      command = name;
      continue;
    }
    const eq = line.indexOf("=");
    const name = eq < 0 ? line : line.slice(0, eq);
    if (!CLIENT_CAPABILITIES.has(name)) throw new GitError("bad-request", `unknown capability '${line}'`);
    if (name === "object-format") {
      if (eq < 0) throw new GitError("bad-request", "object-format capability requires an argument");
      format = line.slice(eq + 1);
      if (format !== "sha1" && format !== "sha256") throw new GitError("bad-request", `unknown object format '${format}'`);
    }
  }
  if (command === null) throw new GitError("bad-request", "no command requested");
  if (format !== "sha1") throw new GitError("bad-request", `mismatched object format: server sha1; client ${format}`);
  return command as "ls-refs" | "fetch";
}

/**
 * Whether a name starts with one of `prefixes` (all names when there are none), in O(log n) per
 * name: the prefixes sorted, those another one covers dropped; then the only one that can match a
 * name is the greatest not after it (any string between a prefix and a name it starts starts with
 * it too). 20,000 prefixes over 5,000 refs cost 3 s of string compares before.
 */
function prefixMatcher(prefixes: readonly string[]): (name: string) => boolean {
  if (prefixes.length === 0) return () => true;
  const sorted = [...new Set(prefixes)].sort();
  const kept: string[] = [];
  for (const p of sorted) if (kept.length === 0 || !p.startsWith(kept[kept.length - 1]!)) kept.push(p);
  return (name) => {
    let lo = 0;
    let hi = kept.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (kept[mid]! <= name) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at >= 0 && name.startsWith(kept[at]!);
  };
}

/** git's ls-refs limit on ref-prefix arguments (ls-refs.c). */
const TOO_MANY_PREFIXES = 65_536;

async function lsRefs(ctx: GitContext, args: string[]): Promise<Uint8Array> {
  const state = await ctx.refs.read(ctx.repoId);
  const given = args.filter((a) => a.startsWith("ref-prefix ")).map((a) => a.slice(11));
  // git's ls-refs: from TOO_MANY_PREFIXES on they are all ignored (every ref is listed; the client filters)
  const prefixes = given.length >= TOO_MANY_PREFIXES ? [] : given;
  const symrefs = args.includes("symrefs");
  const peel = args.includes("peel");
  const unborn = args.includes("unborn");
  const wanted = prefixMatcher(prefixes);
  const out: Uint8Array[] = [];
  const headRef = state.head ? state.refs.find((r) => r.name === state.head) : undefined;
  // a ref whose line would not fit a pkt-line (stored before names were limited) is left out, as in
  // the v0 advertisement: over git's limit it would make the client fail on the whole listing
  const push = (line: string) => {
    if (fitsPkt(line)) out.push(pkt(line));
  };
  if (wanted("HEAD")) {
    if (headRef) push(`${headRef.oid} HEAD${symrefs ? ` symref-target:${headRef.name}` : ""}\n`);
    else if (unborn && state.head) push(`unborn HEAD symref-target:${state.head}\n`);
  }
  const commits = peel ? new Commits(await ObjectReader.open(ctx.objects, state.packs)) : null;
  for (const r of state.refs) {
    if (!wanted(r.name) || !advertisable(r.name)) continue;
    let line = `${r.oid} ${r.name}`;
    if (commits) {
      const p = await peeledOf(r, commits);
      if (p) line += ` peeled:${p}`;
    }
    push(`${line}\n`);
  }
  out.push(FLUSH);
  return concat(out);
}

function parseFetchArgs(args: string[]): FetchRequest {
  const r: FetchRequest = { wants: [], haves: [], done: false, clientShallow: new Set(), depth: 0, deepenSince: null, deepenNot: [], deepenRelative: false, ofsDelta: false, includeTag: false, noProgress: false, sideband: 2, filter: null };
  for (const a of args) {
    if (a.startsWith("want ")) r.wants.push(oidArg(a, "want "));
    else if (a.startsWith("have ")) r.haves.push(oidArg(a, "have "));
    else if (a === "done") r.done = true;
    else if (a === "ofs-delta") r.ofsDelta = true;
    else if (a === "include-tag") r.includeTag = true;
    else if (a === "no-progress") r.noProgress = true;
    else if (a === "thin-pack") {
      // not advertised; a thin pack is never required, so a full one answers it
    } else if (a.startsWith("shallow ")) r.clientShallow.add(oidArg(a, "shallow "));
    else if (a.startsWith("deepen ")) r.depth = parseDepth(a.slice(7));
    else if (a.startsWith("deepen-since ")) r.deepenSince = parseSince(a);
    else if (a.startsWith("deepen-not ")) r.deepenNot.push(a.slice(11));
    else if (a === "deepen-relative") r.deepenRelative = true;
    else if (a.startsWith("filter ")) r.filter = filterOnce(r.filter, a.slice(7));
    else throw new GitError("bad-request", `unexpected line: '${a}'`);
  }
  return r;
}

/** A fetch's one filter (git: "multiple filter-specs cannot be combined"; a client sends `combine:`). */
function filterOnce(prev: ObjectFilter | null, spec: string): ObjectFilter {
  if (prev) throw new GitError("bad-request", "multiple filter-specs cannot be combined");
  return parseFilter(spec);
}

/** `deepen-since <seconds>` (git's process_deepen_since: a timestamp; 0 is the whole history). */
function parseSince(line: string): number {
  const s = line.slice(13);
  const n = Number(s);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(n)) throw new GitError("bad-request", `git upload-pack: invalid deepen-since: ${line}`);
  return n;
}

/** True when the fetch deepens by a rev-list (`deepen-since`, `deepen-not`) rather than by a depth. */
const deepensByRevList = (f: FetchRequest): boolean => f.deepenSince !== null || f.deepenNot.length > 0;

function parseDepth(s: string): number {
  const n = Number(s);
  // git reads it into an int: beyond INT_MAX it is invalid too
  if (!/^\d+$/.test(s) || n <= 0 || n > 0x7fffffff) throw new GitError("bad-request", `Invalid deepen: ${s}`);
  return n;
}

async function fetchV2(ctx: GitContext, args: string[]): Promise<ReadableStream<Uint8Array> | Uint8Array> {
  const f = parseFetchArgs(args);
  if (f.wants.length === 0) return FLUSH;
  const state = await ctx.refs.read(ctx.repoId);
  const reader = await ObjectReader.open(ctx.objects, state.packs);
  const commits = new Commits(reader);
  await checkWants(f.wants, state, reader, commits);
  const common: string[] = [];
  for (const h of f.haves) if (await reachedHave(h, state, reader, commits)) common.push(h);
  const sections: (Uint8Array | (() => Promise<ReadableStream<Uint8Array> | Uint8Array>))[] = [];
  if (!f.done) {
    const lines = ["acknowledgments", ...(common.length === 0 ? ["NAK"] : common.map((c) => `ACK ${c}`))];
    const ready = await allWantsReachCommon(commits, await wantCommits(f.wants, commits), new Set(common));
    if (!ready) return concat([...lines.map((l) => pkt(`${l}\n`)), FLUSH]);
    sections.push(concat([...lines.map((l) => pkt(`${l}\n`)), pkt("ready\n"), DELIM]));
  }
  const shallow = await shallowInfo(f, state, reader, commits);
  if (shallow) sections.push(concat([pkt("shallow-info\n"), ...shallow.lines.map((l) => pkt(`${l}\n`)), DELIM]));
  sections.push(pkt("packfile\n"));
  sections.push(() => packFor(state, reader, commits, f, common, shallow));
  sections.push(FLUSH);
  return concatStreams(sections);
}

// ---------------------------------------------------------------- protocol v0/v1 (stateless)

async function uploadPackV0(ctx: GitContext, reader: ByteReader): Promise<ReadableStream<Uint8Array> | Uint8Array> {
  const pkts = new PktReader(reader);
  const first = await readSection(pkts, ctx);
  if (first.lines.length === 0) return new Uint8Array(0);
  const f: FetchRequest = { wants: [], haves: [], done: false, clientShallow: new Set(), depth: 0, deepenSince: null, deepenNot: [], deepenRelative: false, ofsDelta: false, includeTag: false, noProgress: false, sideband: 0, filter: null };
  let caps: string[] = [];
  for (const l of first.lines) {
    if (l.startsWith("want ")) {
      f.wants.push(oidArg(l, "want "));
      if (f.wants.length === 1) caps = l.slice(46).split(" ").filter(Boolean);
    } else if (l.startsWith("shallow ")) f.clientShallow.add(oidArg(l, "shallow "));
    else if (l.startsWith("deepen ")) f.depth = parseDepth(l.slice(7));
    else if (l.startsWith("deepen-since ")) f.deepenSince = parseSince(l);
    else if (l.startsWith("deepen-not ")) f.deepenNot.push(l.slice(11));
    else if (l === "deepen-relative") f.deepenRelative = true;
    else if (l.startsWith("filter ")) {
      if (!caps.includes("filter")) throw new GitError("bad-request", "git upload-pack: filtering capability not negotiated");
      f.filter = filterOnce(f.filter, l.slice(7));
    } else throw new GitError("bad-request", `git upload-pack: protocol error, expected to get object ID, not '${l}'`);
  }
  f.ofsDelta = caps.includes("ofs-delta");
  f.includeTag = caps.includes("include-tag");
  f.noProgress = caps.includes("no-progress");
  f.deepenRelative ||= caps.includes("deepen-relative");
  f.sideband = caps.includes("side-band-64k") ? 2 : caps.includes("side-band") ? 1 : 0;
  const multiAck = caps.includes("multi_ack_detailed") ? 2 : caps.includes("multi_ack") ? 1 : 0;
  const noDone = caps.includes("no-done");

  const state = await ctx.refs.read(ctx.repoId);
  const reader2 = await ObjectReader.open(ctx.objects, state.packs);
  const commits = new Commits(reader2);
  await checkWants(f.wants, state, reader2, commits);
  const out: (Uint8Array | (() => Promise<ReadableStream<Uint8Array> | Uint8Array>))[] = [];
  const shallow = await shallowInfo(f, state, reader2, commits);
  if (shallow && (f.depth > 0 || deepensByRevList(f))) out.push(concat([...shallow.lines.map((l) => pkt(`${l}\n`)), FLUSH]));
  // a stateless client first sends only its wants (to learn the shallow boundary): stop here
  if (first.end === "eof" || (await reader.atEnd())) return concat(out as Uint8Array[]);

  // get_common_commits (upload-pack.c), one stateless round
  const common: string[] = [];
  let lastHex = "";
  let gotCommon = false;
  let gotOther = false;
  let sentReady = false;
  const wantCs = await wantCommits(f.wants, commits);
  // asked after every unknown have: the answer only changes when a common commit was added
  let verdict: { commons: number; ok: boolean } | null = null;
  const okToGiveUp = async () => {
    if (verdict?.commons !== common.length) verdict = { commons: common.length, ok: await allWantsReachCommon(commits, wantCs, new Set(common)) };
    return verdict.ok;
  };
  const max = limitsOf(ctx).maxRequestBytes;
  for (;;) {
    if (reader.consumed > max) throw new GitError("bad-request", `request exceeds ${max} bytes`);
    const l = await pkts.line();
    if (l === null || l === "flush") {
      if (multiAck === 2 && gotCommon && !gotOther && (await okToGiveUp())) {
        sentReady = true;
        out.push(pkt(`ACK ${lastHex} ready\n`));
      }
      if (common.length === 0 || multiAck) out.push(pkt("NAK\n"));
      if (noDone && sentReady) {
        out.push(pkt(`ACK ${lastHex}\n`));
        break;
      }
      return concat(out as Uint8Array[]);
    }
    if (l === "done") {
      if (common.length > 0) {
        if (multiAck) out.push(pkt(`ACK ${lastHex}\n`));
      } else out.push(pkt("NAK\n"));
      break;
    }
    if (typeof l === "string" && l.startsWith("have ")) {
      const oid = oidArg(l, "have ");
      f.haves.push(oid);
      if (await reachedHave(oid, state, reader2, commits)) {
        gotCommon = true;
        lastHex = oid;
        common.push(oid);
        if (multiAck === 2) out.push(pkt(`ACK ${oid} common\n`));
        else if (multiAck === 1) out.push(pkt(`ACK ${oid} continue\n`));
        else if (common.length === 1) out.push(pkt(`ACK ${oid}\n`));
      } else {
        gotOther = true;
        if (multiAck && (await okToGiveUp())) {
          if (multiAck === 2) {
            sentReady = true;
            out.push(pkt(`ACK ${oid} ready\n`));
          } else out.push(pkt(`ACK ${oid} continue\n`));
        }
      }
      continue;
    }
    throw new GitError("bad-request", `git upload-pack: expected SHA1 list, got '${l}'`);
  }
  out.push(() => packFor(state, reader2, commits, f, common, shallow));
  if (f.sideband) out.push(FLUSH);
  return concatStreams(out);
}

// ---------------------------------------------------------------- shared

/**
 * A have is common only when a ref reaches it: one the refs left behind is acknowledged as an id
 * never stored is (NAK), so negotiation tells no one what is still kept (git ACKs any stored object).
 */
const reachedHave = (oid: string, state: RepoState, reader: ObjectReader, commits: Commits): Promise<boolean> => {
  // answered once per id and request: a have sent 20,000 times is one check, not 20,000
  let known = haveChecks.get(commits);
  if (!known) {
    known = new Map();
    haveChecks.set(commits, known);
  }
  let answer = known.get(oid);
  if (!answer) {
    answer = (async () => reader.has(oid) && (await firstUnreached([oid], state, reader, commits)) === null)();
    known.set(oid, answer);
  }
  return answer;
};
/** reachedHave's answers of a request (its Commits), by id. */
const haveChecks = new WeakMap<Commits, Map<string, Promise<boolean>>>();

/**
 * Wants must exist and be reachable from a ref (reachable.ts): a tip, a commit a tip reaches
 * (git's allowReachableSHA1InWant), or a tree, blob or tag a ref reaches (what a partial clone
 * fetches when it needs what it left out). Gitea allows any object (allowAnySHA1InWant); here only
 * what a ref reaches, so what a force-push or deletion left behind is never served.
 */
async function checkWants(wants: string[], state: RepoState, reader: ObjectReader, commits: Commits): Promise<void> {
  const missing = await firstUnreached(wants, state, reader, commits);
  if (missing) throw new GitError("not-found", `upload-pack: not our ref ${missing}`);
}

/** The commits the wants name (tags peeled; trees and blobs have no history). */
async function wantCommits(wants: string[], commits: Commits): Promise<string[]> {
  const out: string[] = [];
  for (const w of wants) {
    const p = await commits.peel(w);
    if (p.type === "commit") out.push(p.oid);
  }
  return out;
}

interface ShallowInfo {
  lines: string[];
  /** Commits whose parents are not sent. */
  parentless: Set<string>;
  /** Client-shallow commits whose parents are now sent. */
  unshallow: string[];
}

/**
 * shallow-info: the new boundary for `deepen` or `deepen-since`/`deepen-not`, or just the client's
 * boundary when it is shallow.
 */
async function shallowInfo(f: FetchRequest, state: RepoState, reader: ObjectReader, commits: Commits): Promise<ShallowInfo | null> {
  if (deepensByRevList(f)) {
    if (f.depth > 0) throw new GitError("bad-request", "git upload-pack: deepen and deepen-since (or deepen-not) cannot be used together");
    const not = new Set<string>();
    const byName = refsByName(state);
    // each name looked up once, in one map of the refs (a line repeated 20,000 times rebuilt the map each time)
    for (const name of new Set(f.deepenNot)) {
      const oid = deepenNotRef(byName, name);
      const p = await commits.peel(oid).catch(() => null);
      if (p?.type === "commit") not.add(p.oid);
    }
    const b = await shallowByRevList(commits, await wantCommits(f.wants, commits), { since: f.deepenSince ?? undefined, not: [...not] }, f.clientShallow);
    const parentless = new Set<string>([...b.boundary, ...f.clientShallow]);
    return { lines: [...b.shallow.map((o) => `shallow ${o}`), ...b.unshallow.map((o) => `unshallow ${o}`)], parentless, unshallow: b.unshallow };
  }
  if (f.depth === 0) {
    if (f.clientShallow.size === 0) return null;
    // no deepening: the client's shallow commits stay the boundary of what it has
    return { lines: [], parentless: new Set(f.clientShallow), unshallow: [] };
  }
  let b: Awaited<ReturnType<typeof shallowBoundary>>;
  if (f.deepenRelative && f.clientShallow.size > 0) {
    // git's deepen() with deepen-relative: every client shallow commit a ref reaches — whichever
    // refs the fetch wants — is deepened by `depth` (get_shallow_commits(shallows, depth + 1))
    const reached: string[] = [];
    for (const s of f.clientShallow) if (await reachedHave(s, state, reader, commits)) reached.push(s);
    if (reached.length === 0) return { lines: [], parentless: new Set(f.clientShallow), unshallow: [] };
    b = await shallowBoundary(commits, reached, f.depth + 1, f.clientShallow);
  } else b = await shallowBoundary(commits, await wantCommits(f.wants, commits), f.depth, f.clientShallow);
  // the client's shallow commits stay parentless on its side of the walk (git re-registers them),
  // unshallowed ones get their parents as extra wants instead
  const parentless = new Set<string>([...b.boundary, ...f.clientShallow]);
  return { lines: [...b.shallow.map((o) => `shallow ${o}`), ...b.unshallow.map((o) => `unshallow ${o}`)], parentless, unshallow: b.unshallow };
}

/**
 * The ref a `deepen-not` names, as git's expand_ref finds it: exactly one of `<name>`, `refs/<name>`,
 * `refs/tags/<name>`, `refs/heads/<name>`, `refs/remotes/<name>`, `refs/remotes/<name>/HEAD` must exist.
 */
function deepenNotRef(byName: ReadonlyMap<string, string>, name: string): string {
  const found = [name, `refs/${name}`, `refs/tags/${name}`, `refs/heads/${name}`, `refs/remotes/${name}`, `refs/remotes/${name}/HEAD`].filter((n) => byName.has(n));
  if (found.length !== 1) throw new GitError("bad-request", `git upload-pack: ambiguous deepen-not: deepen-not ${name}`);
  return byName.get(found[0]!)!;
}

/** The refs by name, with HEAD as the ref it names. */
function refsByName(state: RepoState): Map<string, string> {
  const byName = new Map(state.refs.map((r) => [r.name, r.oid]));
  if (state.head && byName.has(state.head)) byName.set("HEAD", byName.get(state.head)!);
  return byName;
}

/** The pack for a fetch, framed on side-band when asked. */
async function packFor(
  state: RepoState,
  reader: ObjectReader,
  commits: Commits,
  f: FetchRequest,
  common: string[],
  shallow: ShallowInfo | null,
): Promise<ReadableStream<Uint8Array>> {
  let pack: ReadableStream<Uint8Array>;
  try {
    if (f.haves.length === 0 && !shallow && !f.filter && reader.packs.length > 0 && !state.unreachable && wantsEveryTip(state, f.wants)) {
      // a clone of every branch and tag, and no ref was ever deleted or moved back: everything
      // stored is reachable from what is wanted, so the stored packs are the answer
      pack = reader.packs.length === 1 && f.ofsDelta ? await storedPackStream(reader, reader.packs[0]!) : await writeAllPacks(reader, { ofsDelta: f.ofsDelta });
    } else {
      const oids = await selectObjects(state, reader, commits, f, common, shallow);
      pack = await writePack(reader, oids, { ofsDelta: f.ofsDelta });
    }
  } catch (e) {
    // the response has begun: tell the client why on the error band rather than cutting it off
    if (f.sideband === 0) throw e;
    const msg = sideband(3, utf8(`${clientReason(e)}\n`));
    return new ReadableStream({
      start(c) {
        c.enqueue(msg);
        c.close();
      },
    });
  }
  if (f.sideband === 0) return pack;
  // side-band-64k: 65515 data bytes per packet (LARGE_PACKET_MAX - 5); side-band: 995
  return sidebandStream(pack, f.sideband === 2 ? 65515 : 995);
}

/**
 * Every branch and tag tip is wanted (a full clone): the stored packs then hold nothing the client
 * would not get by walking (other refs' objects aside, which it may fetch too). A clone of one
 * branch walks, so it gets that branch's objects only.
 */
function wantsEveryTip(state: RepoState, wants: readonly string[]): boolean {
  const wanted = new Set(wants);
  return state.refs.every((r) => !(r.name.startsWith("refs/heads/") || r.name.startsWith("refs/tags/")) || wanted.has(r.oid));
}

/** Objects reachable from the wants, minus what the client has, within the shallow boundary. */
async function selectObjects(state: RepoState, reader: ObjectReader, commits: Commits, f: FetchRequest, common: string[], shallow: ShallowInfo | null): Promise<string[]> {
  const extra: string[] = [];
  const include: string[] = [];
  const given = new Set<string>(); // commits the fetch names itself (an object:type filter keeps them)
  const looseTrees: string[] = [];
  const taggedTrees: string[] = [];
  for (const w of f.wants) {
    let cur = w;
    for (let i = 0; i < 100; i++) {
      const o = await reader.mustRead(cur);
      if (o.type === "tag") {
        extra.push(cur);
        cur = parseTag(o.data).object;
        continue;
      }
      if (o.type === "commit") {
        include.push(cur);
        given.add(cur);
      } else if (o.type === "tree") (cur === w ? looseTrees : taggedTrees).push(cur);
      else extra.push(cur);
      break;
    }
  }
  for (const u of shallow?.unshallow ?? []) include.push(...(await commits.get(u)).parents);
  const exclude = common.filter((c) => reader.has(c));
  const excludeCommits: string[] = [];
  for (const c of exclude) {
    const p = await commits.peel(c).catch(() => null);
    if (p?.type === "commit") excludeCommits.push(p.oid);
  }
  const range = await rangeWalk(commits, { include, exclude: excludeCommits, parentless: shallow?.parentless });
  const edges = [...range.edges, ...(shallow?.unshallow ?? [])];
  const objects = await objectsToSend(reader, commits, range.commits, edges, { filter: f.filter, trees: looseTrees, taggedTrees, given });
  const sent = new Set(objects);
  for (const e of extra) {
    if (sent.has(e)) continue;
    objects.push(e);
    sent.add(e);
  }
  if (f.includeTag && (!f.filter?.types || f.filter.types.has("tag"))) {
    for (const r of state.refs) {
      if (!r.name.startsWith("refs/tags/") || sent.has(r.oid)) continue;
      const peeled = await peeledOf(r, commits);
      if (peeled && sent.has(peeled)) {
        // the whole tag chain (tags of tags) down to the sent object
        let cur = r.oid;
        while (cur !== peeled && !sent.has(cur)) {
          objects.push(cur);
          sent.add(cur);
          const o = await reader.mustRead(cur);
          cur = parseTag(o.data).object;
        }
      }
    }
  }
  return objects;
}
