/**
 * `POST git-receive-pack`: push, protocol v0/v1 (gitprotocol-pack "Pushing Data To a Server").
 * Capabilities: report-status, delete-refs, atomic, ofs-delta, side-band-64k, quiet, push-options; thin packs
 * are accepted (completed by the indexer). Ref updates go through the RefStore's one atomic
 * commit with compare-and-swap per ref, so a push costs at most three RefStore round trips
 * whatever it carries: one read, one commit, and one retry of the refs that passed when another
 * ref lost a race (non-atomic pushes only).
 */
import { ByteReader, concat, latin1, text, utf8, ZERO_OID } from "../bytes.ts";
import { clientReason, GitError } from "../errors.ts";
import { type AppliedUpdate, buildPushEvent, type PushEvent } from "../events.ts";
import { indexPack, type IndexedPack } from "../pack/indexer.ts";
import { ObjectReader } from "../pack/reader.ts";
import { FLUSH, pkt, pktFitted, PktReader } from "../pkt-line.ts";
import { isBranchRef, isPushableRef, refConflictMessage, RefNames, refNameLengthProblem } from "../refname.ts";
import { firstUnreached, firstUnreachedOutside } from "../reachable.ts";
import { packFileNames } from "../storage/object-store.ts";
import { commitMayHaveLanded, type PackRecord, type RefTransaction, type RepoState } from "../storage/ref-store.ts";
import { Commits, isAncestor } from "../walk.ts";
import { asBody, type GitContext, gitHeaders, limitsOf, requestBody, sideband, sidebandMessage } from "./common.ts";

const RESULT_TYPE = "application/x-git-receive-pack-result";
/** At most this many push options in one push (git sends one per `-o`). */
const MAX_PUSH_OPTIONS = 100;
/**
 * Push options that set a repository's settings in Gitea (`repo.private`, `repo.template`): not
 * applied here, so a push carrying one is refused. Any other option (`ci.skip`, AGit's `topic`, …)
 * is accepted and has no effect.
 */
const UNAPPLIED_OPTIONS = new Set(["repo.private", "repo.template"]);
/** Ref names must be UTF-8 (they are stored and advertised as text): anything else is refused, not mangled. */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** One command of a push with its outcome. */
export interface PushCommand {
  name: string;
  old: string | null;
  new: string | null;
  /** Why git was told `ng`; undefined when the update was applied. */
  error?: string;
  /** A deletion of a ref that does not exist: `ok` with git's warning, nothing applied, no event. */
  noop?: boolean;
}

/** What a push did: per-command outcome, the stored pack, the event committed with the refs. */
export interface PushResult {
  commands: PushCommand[];
  /** null when the pack unpacked fine, else the `unpack` error git was told. */
  unpackError: string | null;
  pack: PackRecord | null;
  event: PushEvent | null;
  /** RefStore calls this push made (1 read + 1 commit, +1 retry at most). */
  refStoreCalls: number;
}

/** Answers `POST git-receive-pack`; the result says what changed (for activity and webhooks). */
export async function handleReceivePack(ctx: GitContext, req: Request): Promise<{ response: Response; result: PushResult }> {
  const limits = limitsOf(ctx);
  const reader = new ByteReader(requestBody(req));
  const pkts = new PktReader(reader);
  const result: PushResult = { commands: [], unpackError: null, pack: null, event: null, refStoreCalls: 0 };
  const headers = gitHeaders(RESULT_TYPE);

  // ---- commands
  let caps: string[] = [];
  // names that are not UTF-8, by their bytes: the report must name them exactly as the client sent them
  const rawNames = new Map<PushCommand, Uint8Array>();
  let shallowClient = false;
  // the commands and push options are read whole before the pack: bounded as a fetch request is
  // (a gzip body of a few hundred KiB held 300,000 commands, or 270 MB of options read one by one)
  const sectionRead = () => {
    if (reader.consumed > limits.maxRequestBytes) throw new GitError("bad-request", `push commands and options exceed ${limits.maxRequestBytes} bytes`);
  };
  for (;;) {
    sectionRead();
    const p = await pkts.next().catch((e: unknown) => {
      throw e instanceof GitError ? e : new GitError("bad-request", String(e));
    });
    if (p === null || p.kind === "flush") break;
    if (p.kind !== "data") continue;
    const d = p.data.length > 0 && p.data[p.data.length - 1] === 10 ? p.data.subarray(0, p.data.length - 1) : p.data;
    const l = latin1(d); // one char per byte: offsets are byte offsets
    // a shallow client; connectivity still decides, and names the cause as git does when it fails
    if (l.startsWith("shallow ")) {
      shallowClient = true;
      continue;
    }
    if (l.startsWith("push-cert")) throw new GitError("bad-request", "push certificates are not supported");
    const nul = l.indexOf("\0");
    const cmd = nul >= 0 ? l.slice(0, nul) : l;
    if (result.commands.length === 0 && nul >= 0) caps = l.slice(nul + 1).split(" ").filter(Boolean);
    const m = /^([0-9a-f]{40}) ([0-9a-f]{40}) (.+)$/s.exec(cmd);
    if (!m) throw new GitError("bad-request", `protocol error: expected old/new/ref, got '${text(d, 0, cmd.length)}'`);
    const nameBytes = d.subarray(82, cmd.length);
    let name: string;
    let utf8Name = true;
    try {
      name = STRICT_UTF8.decode(nameBytes);
    } catch {
      name = text(nameBytes);
      utf8Name = false;
    }
    const c: PushCommand = { old: m[1] === ZERO_OID ? null : m[1]!, new: m[2] === ZERO_OID ? null : m[2]!, name };
    if (!utf8Name) rawNames.set(c, nameBytes.slice());
    result.commands.push(c);
  }
  // git's probe before a large chunked push is a lone flush: nothing to do
  if (result.commands.length === 0) {
    await reader.cancel();
    return { response: new Response(null, { headers }), result };
  }
  // ---- push options (`git push -o …`): after the commands, before the pack
  const options: string[] = [];
  let tooManyOptions = false;
  if (caps.includes("push-options")) {
    for (;;) {
      sectionRead();
      const p = await pkts.next();
      if (p === null || p.kind === "flush") break;
      if (p.kind !== "data") continue;
      // past the bound options are counted, not kept: the refusal reaches the client in its report
      if (options.length === MAX_PUSH_OPTIONS) tooManyOptions = true;
      else options.push(text(p.data).replace(/\n$/, ""));
    }
  }
  const settingOption = options.map((o) => o.split("=", 1)[0]!).find((k) => UNAPPLIED_OPTIONS.has(k)); // !: split yields one part at least
  const useSideband = caps.includes("side-band-64k");
  const reportStatus = caps.includes("report-status");
  const atomic = caps.includes("atomic");
  const quiet = caps.includes("quiet");

  const state = await ctx.refs.read(ctx.repoId);
  result.refStoreCalls++;
  // what the push builds from the repository (a thin pack's bases) is bounded as what it builds itself
  const reader0 = await ObjectReader.open(ctx.objects, state.packs, { maxObjectBytes: limits.maxBuiltBytes });
  const commits = new Commits(reader0);

  const named = new Set<string>();
  for (const c of result.commands) {
    if (tooManyOptions) {
      c.error = `too many push options (at most ${MAX_PUSH_OPTIONS})`;
      continue;
    }
    // Gitea changes the repository's settings by these; here they are the API's to change: the
    // push is refused rather than leave a repository public that its pusher asked to make private.
    if (settingOption) {
      c.error = `push option ${settingOption} is not supported: change the repository's settings through the API`;
      continue;
    }
    if (rawNames.has(c) || !isPushableRef(c.name)) {
      c.error = "funny refname";
      continue;
    }
    // Gitea's AGit flow: a push to refs/for/<branch> opens a pull request and stores no ref. Pull
    // requests are not served here; stored as a ref, it would show in every clone as a branch-like
    // ref nobody asked for. Deleting one pushed before this rule still works.
    if (c.new !== null && c.name.startsWith("refs/for/")) {
      c.error = "pull requests (AGit refs/for/...) are not supported by this server";
      continue;
    }
    // A second command for one ref (git's own clients never send one): git applies the first and
    // fails the second's compare-and-swap; here the second is refused before anything is applied.
    if (named.has(c.name)) {
      c.error = "failed to update ref";
      continue;
    }
    named.add(c.name);
    // names git could not store as files; deleting one that is stored still works
    const tooLong = c.new !== null ? refNameLengthProblem(c.name) : null;
    if (tooLong) c.error = `funny refname: ${tooLong}`;
  }

  // ---- the pack (sent whenever a command creates or updates)
  let indexed: IndexedPack | null = null;
  if (result.commands.some((c) => c.new !== null)) {
    try {
      indexed = await indexPack(reader, { repoId: ctx.repoId, store: ctx.objects, existing: reader0, limits });
    } catch (e) {
      result.unpackError = e instanceof GitError ? e.message : `unpack failed: ${clientReason(e)}`;
      // read the rest so the client gets our report instead of a broken pipe
      await drain(reader, limits.maxPackBytes * 2).catch(() => {});
    }
  }
  await reader.cancel();
  if (indexed) reader0.addPack(indexed.record, indexed.idx);

  // what the pack builds on must be reached by the refs, as the ref values below: a pack cannot
  // bring back by id what a force-push or deletion hid either (git takes any stored object)
  const hiddenBase = indexed && indexed.missing.length === 0 ? await firstUnreachedOutside(indexed.outside, state, reader0, commits) : null;

  // ---- per-command checks
  const current = new Map(state.refs.map((r) => [r.name, r.oid]));
  for (const c of result.commands) {
    if (c.error) continue;
    if (result.unpackError) {
      c.error = "unpacker error";
      continue;
    }
    if (c.new !== null) {
      if (indexed && (indexed.missing.length > 0 || hiddenBase !== null)) {
        // git's receive-pack (receive.shallowUpdate off): history cut at the client's shallow boundary
        c.error = shallowClient && indexed.missing.length > 0 ? "shallow update not allowed" : "missing necessary objects";
        continue;
      }
      // an object the refs left behind counts as missing unless this push brought it: a ref
      // cannot bring back by id what a force-push or deletion hid (git takes any stored object)
      const type = await reader0.typeOf(c.new);
      if (!type || (!(indexed && indexed.idx.find(c.new) >= 0) && (await firstUnreached([c.new], state, reader0, commits)) !== null)) {
        c.error = "missing necessary objects";
        continue;
      }
      if (isBranchRef(c.name) && type !== "commit") {
        c.error = `trying to write non-commit object ${c.new} to branch '${c.name}'`;
        continue;
      }
    }
    const cur = current.get(c.name) ?? null;
    if (cur !== c.old) {
      c.error = lockError(c.name, cur, c.old);
      continue;
    }
    // git's receive-pack: "deleting a non-existent ref" succeeds without an update, and its
    // post-receive (Gitea's push events) never hears of it
    if (c.old === null && c.new === null) {
      c.noop = true;
      continue;
    }
    if (c.new === null && ctx.protectHead !== false && c.name === state.head) {
      c.error = defaultBranchKept(c.name);
      continue;
    }
    if (ctx.denyNonFastForwards && c.old && c.new && isBranchRef(c.name)) {
      const ff = await isAncestor(commits, c.old, c.new).catch(() => false);
      if (!ff) c.error = "non-fast-forward";
    }
  }
  // directory/file rule: `a` and `a/b` cannot both exist; what this push deletes makes room, of
  // two conflicting refs it creates the later fails (the RefStore checks again at commit time)
  const names = new RefNames(current.keys());
  for (const c of result.commands) if (!c.error && c.new === null) names.delete(c.name);
  for (const c of result.commands) {
    if (c.error || c.old !== null || c.new === null) continue;
    const conflict = names.conflictOf(c.name);
    if (conflict !== null) c.error = refConflictMessage(c.name, conflict);
    else names.add(c.name);
  }
  if (atomic && result.commands.some((c) => c.error)) for (const c of result.commands) c.error ??= "atomic push failure";

  // ---- one atomic commit (plus one retry without the refs that lost a race)
  let committed = false;
  let pending = result.commands.filter((c) => !c.error && !c.noop);
  const dropPack = () => (indexed ? ctx.objects.delete(ctx.repoId, packFileNames(indexed.record.id)).catch(() => {}) : Promise.resolve());
  for (let attempt = 0; attempt < 2 && pending.length > 0; attempt++) {
    let tx: RefTransaction;
    try {
      // HEAD's branch is checked again when the refs commit: a default branch changed since `state` was read still counts
      tx = { ...(await transaction(ctx, state, pending, indexed, commits, pending.length < result.commands.length)), protectHead: ctx.protectHead !== false };
    } catch (e) {
      // an object the indexer let through but the push event cannot read (a malformed tree or
      // commit): the push is refused like a broken one, its pack is not kept
      if (!(e instanceof GitError)) {
        await dropPack();
        throw e;
      }
      for (const c of pending) c.error ??= e.message;
      break;
    }
    // A store that refuses the whole push (e.g. the repository was deleted meanwhile) keeps no
    // pack behind; one whose answer never came may have committed it.
    const r = await ctx.refs.commit(ctx.repoId, tx).catch(async (e: unknown) => {
      if (!commitMayHaveLanded(e)) await dropPack();
      throw e;
    });
    result.refStoreCalls++;
    if (r.ok) {
      committed = true;
      result.event = tx.event ?? null;
      result.pack = tx.pack ?? null;
      break;
    }
    for (const rej of r.rejected) {
      const c = pending.find((p) => p.name === rej.name);
      if (c) c.error = rej.head ? defaultBranchKept(c.name) : rej.conflict !== undefined ? refConflictMessage(c.name, rej.conflict) : lockError(c.name, rej.actual, c.old);
    }
    if (atomic) {
      for (const c of result.commands) c.error ??= "atomic push failure";
      break;
    }
    pending = pending.filter((c) => !c.error);
  }
  if (!committed) {
    await dropPack();
    // the retry lost a race too: what it carried was not applied
    for (const c of pending) c.error ??= "failed to update ref";
  }

  // ---- report (nothing here may throw: the refs are committed; a reason too long for a pkt-line is cut)
  if (!reportStatus) return { response: new Response(useSideband ? asBody(FLUSH) : null, { headers }), result };
  const status = concat([
    pktFitted("unpack ", result.unpackError ?? "ok"),
    ...result.commands.map((c) => {
      const name = rawNames.get(c) ?? utf8(c.name);
      return c.error ? pktFitted(concat([utf8("ng "), name, utf8(" ")]), c.error) : pkt(concat([utf8("ok "), name, utf8("\n")]));
    }),
    FLUSH,
  ]);
  if (!useSideband) return { response: new Response(asBody(status), { headers }), result };
  const parts = [sideband(1, status)];
  if (!quiet && result.commands.some((c) => c.noop && !c.error)) parts.unshift(sidebandMessage(2, "warning: deleting a non-existent ref"));
  if (!quiet && result.unpackError) parts.unshift(sidebandMessage(2, `error: ${result.unpackError}`));
  parts.push(FLUSH);
  return { response: new Response(asBody(concat(parts)), { headers }), result };
}

/** Gitea's pre-receive refusal of a push deleting the default branch. */
const defaultBranchKept = (ref: string) => `branch ${ref.slice("refs/heads/".length)} is the default branch and cannot be deleted`;

/** git's message when a ref is not what the client said it was. */
function lockError(name: string, actual: string | null, expected: string | null): string {
  if (actual === null) return `cannot lock ref '${name}': unable to resolve reference '${name}'`;
  if (expected === null) return `cannot lock ref '${name}': reference already exists`;
  return `cannot lock ref '${name}': is at ${actual} but expected ${expected}`;
}

/** The RefStore transaction for the commands that passed every check. */
async function transaction(ctx: GitContext, state: RepoState, ok: PushCommand[], indexed: IndexedPack | null, commits: Commits, someRefused: boolean): Promise<RefTransaction> {
  const limits = limitsOf(ctx);
  const after = new Map(state.refs.map((r) => [r.name, r.oid]));
  for (const c of ok) {
    if (c.new === null) after.delete(c.name);
    else after.set(c.name, c.new);
  }
  const updates = [];
  for (const c of ok) {
    let peeled: string | null = null;
    if (c.new !== null) {
      const p = await commits.peel(c.new);
      peeled = p.oid !== c.new ? p.oid : null;
    }
    updates.push({ name: c.name, old: c.old, new: c.new, peeled });
  }
  // Gitea: a push into a repository whose default branch does not exist makes the first pushed
  // branch the default (HEAD follows)
  let head: string | undefined;
  if (!state.head || !after.has(state.head)) head = ok.find((c) => c.new !== null && isBranchRef(c.name))?.name;
  const branchTips = state.refs.filter((r) => isBranchRef(r.name)).map((r) => r.oid);
  const applied: AppliedUpdate[] = ok.map((c) => ({ name: c.name, old: c.old, new: c.new }));
  const event = await buildPushEvent(commits, applied, branchTips, limits);
  return {
    updates,
    pack: indexed?.record,
    head,
    sizeDelta: indexed ? indexed.record.size + indexed.record.idxSize : 0,
    empty: ![...after.keys()].some(isBranchRef),
    event,
    identities: indexed?.identities,
    // What the old value reached may be left unreached: a branch moved other than forward, or
    // any other ref moved (an annotated tag's old object); deletions count in the store. A pack
    // stored while some of the push's refs were refused holds objects no ref reaches.
    orphans: (indexed !== null && someRefused) || event.refs.some((r) => r.kind === "update" && (r.forced || !isBranchRef(r.name))),
  };
}

async function drain(reader: ByteReader, max: number): Promise<void> {
  while (reader.consumed < max) if ((await reader.chunk()) === null) return;
}
