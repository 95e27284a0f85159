/**
 * Opening a repository's git data for a REST route: the caller, the repository, its permission and
 * its git state (refs, pack catalog) in ONE read round trip, then Gitea's reqRepoReader(code) and
 * the engine's Repository over the object store (no database). Also the one lookup of the users a
 * set of commit e-mails names (Gitea's GetUserByEmail), bounded by what the viewer may see.
 */
import type { UserRow } from "../db/schema.ts";
import { usersByEmails, usersByNoReply, type EmailUser } from "../db/queries/git-state.ts";
import { batchItems, rowsOf, type Bound } from "../db/sql.ts";
import { repoUrls, type RepoUrls, type Signed, type UsersByEmail } from "../convert/git.ts";
import { parseTag } from "../git/objects/commit.ts";
import { Repository } from "../git/repo/repository.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import type { Ctx } from "../lib/context.ts";
import { UNIT } from "../lib/permissions.ts";
import { reqRepoReader } from "../lib/guards.ts";
import { assignRepo, type Assigned } from "./repos.ts";
import { identitiesByPath, type Identity } from "../db/queries/identities.ts";
import { repoPath } from "../db/queries/repos.ts";
import { gitState, openRepository, repoStateFrom } from "./git-state.ts";
import { activeHooksRead } from "./common.ts";

/** A repository opened for reading its git data. */
export interface OpenedRepo {
  a: Assigned;
  repo: Repository;
  urls: RepoUrls;
  /** The recorded commit e-mails and their accounts, when opened `withAuthors`. */
  identities: readonly Identity[];
  /** Opened `write`: the count of the owner's active webhooks (`activeHooksRead`). */
  activeHooks?: readonly number[];
}


/**
 * ONE round trip: caller, repository, permission and git state — and, `withAuthors`, the accounts
 * the repository's recorded commit e-mails name; then reqRepoReader(code) (403 with Gitea's
 * message for a caller who sees the repository but not its code). A repository the caller may not
 * see answers 404 exactly as a missing one (assignRepo).
 */
export async function openRepo(ctx: Ctx, objects: ObjectStore, owner: string, name: string, opts: { withAuthors?: boolean; write?: boolean } = {}): Promise<OpenedRepo> {
  const identities = opts.withAuthors ? identitiesByPath.bind({ ...ctx.vv, ...repoPath(owner, name), noReply: noReplySuffix(ctx) }) : null;
  const a = await assignRepo(ctx, owner, name, { ...gitState(ctx, owner, name), ...(identities ? { identities } : {}), ...(opts.write ? activeHooksRead(owner) : {}) });
  reqRepoReader(a.caller, a.perm, UNIT.code);
  const r = a.facts.repo;
  const repo = await openRepository(objects, r.id, repoStateFrom(r, a.named.refs, a.named.packs), ctx.signal);
  return { a, repo, urls: repoUrls(ctx.rootUrl, a.facts.owner.name, r.name), identities: a.named.identities ?? [], activeHooks: a.named.activeHooks };
}

/** `@<NO_REPLY_ADDRESS>`, lower-cased: the domain of Gitea's placeholder commit e-mails. */
const noReplySuffix = (ctx: Ctx) => `@${(ctx.settings.service.noReplyAddress ?? `noreply.${new URL(ctx.rootUrl).hostname}`).toLowerCase()}`;

/**
 * The statements finding the accounts that commit e-mails name (Gitea's GetUserByEmail: an
 * activated address of the account, or its `<login>@<NO_REPLY_ADDRESS>` placeholder), only
 * accounts the viewer may see — a hidden account stays an anonymous name and e-mail.
 */
export function usersByEmailReads(ctx: Ctx, emails: readonly string[]): Bound<EmailUser>[] {
  const lower = [...new Set(emails.filter(Boolean).map((e) => e.toLowerCase()))];
  if (lower.length === 0) return [];
  const noReply = noReplySuffix(ctx);
  const placeholders = lower.filter((e) => e.endsWith(noReply)).map((e) => e.slice(0, -noReply.length));
  const out = [usersByEmails.bind({ ...ctx.vv, emails: JSON.stringify(lower) })];
  if (placeholders.length) out.push(usersByNoReply.bind({ ...ctx.vv, names: JSON.stringify(placeholders), noReply }));
  return out;
}

/** The map of found accounts from the rows of `usersByEmailReads` (an address found first wins). */
export function usersByEmailOf(rows: readonly (readonly EmailUser[])[]): UsersByEmail {
  const m = new Map<string, UserRow>();
  for (const list of rows) for (const r of list) if (!m.has(r.email)) m.set(r.email, r.u);
  return m;
}

/**
 * The visible accounts the e-mails name: from `known` (the identities read with the repository)
 * where recorded there, the rest in ONE more read round trip (none when every e-mail is recorded —
 * the usual case; commits stored before the e-mails were recorded, or beyond IDENTITY_LIMIT).
 */
export async function usersByEmail(ctx: Ctx, emails: readonly string[], known: readonly Identity[] = []): Promise<UsersByEmail> {
  const m = new Map<string, UserRow>();
  const recorded = new Set<string>();
  for (const i of known) {
    recorded.add(i.email);
    if (i.user) m.set(i.email, i.user);
  }
  const reads = usersByEmailReads(ctx, emails.filter((e) => !recorded.has(e.toLowerCase())));
  if (reads.length === 0) return m;
  const rows = await ctx.driver.batch(batchItems(reads), "read");
  for (const [email, u] of usersByEmailOf(rows.map((rs, i) => rowsOf(reads[i]!, rs)))) m.set(email, u);
  return m;
}

const SIGNATURE_HEADERS = new Set(["gpgsig", "gpgsig-sha256"]);

/**
 * A commit's signature and the payload it signs (the object without its signature header), or
 * null for an unsigned commit.
 */
export async function signedOf(repo: Repository, oid: string, extraHeaders: readonly [string, string][]): Promise<Signed | null> {
  const sig = extraHeaders.find(([k]) => SIGNATURE_HEADERS.has(k));
  if (!sig) return null;
  const o = await repo.reader.read(oid);
  if (!o) return null;
  const text = Buffer.from(o.data.buffer, o.data.byteOffset, o.data.byteLength).toString("utf8");
  const split = text.indexOf("\n\n");
  const head = text.slice(0, split < 0 ? text.length : split).split("\n");
  const kept: string[] = [];
  let skipping = false;
  for (const line of head) {
    if (line.startsWith(" ") && skipping) continue;
    skipping = SIGNATURE_HEADERS.has(line.slice(0, line.indexOf(" ")));
    if (!skipping) kept.push(line);
  }
  return { signature: sig[1], payload: `${kept.join("\n")}${split < 0 ? "" : text.slice(split)}` };
}

/**
 * A revision as git's rev-parse reads the forms Gitea's `sha`/`not` values take: what
 * `Repository.resolve` accepts, optionally followed by `~N` / `^N` / `^` steps to ancestors.
 * Null when any step does not exist.
 */
export async function resolveRevision(repo: Repository, rev: string, order: "gitea" | "rev-parse" = "gitea"): Promise<{ oid: string } | null> {
  const direct = await repo.resolve(rev, order);
  if (direct) return direct;
  const m = /^(.+?)((?:[~^]\d*)+)$/.exec(rev);
  if (!m) return null;
  const base = await repo.resolve(m[1]!, order);
  if (!base) return null;
  let oid = base.oid;
  for (const [, op, num] of m[2]!.matchAll(/([~^])(\d*)/g)) {
    const n = num === "" ? 1 : Number(num);
    if (op === "~") {
      for (let i = 0; i < n; i++) {
        const p = (await repo.commits.get(oid)).parents[0];
        if (!p) return null;
        oid = p;
      }
    } else if (n > 0) {
      const p = (await repo.commits.get(oid)).parents[n - 1];
      if (!p) return null;
      oid = p;
    }
  }
  return { oid };
}

/**
 * The object a name means to `git cat-file --batch-check` (Gitea's GetRefCommitID, where the
 * git/trees route sends a name that is not a full id), unpeeled: a full id, `HEAD`, a ref name in
 * rev-parse's order (an annotated tag's name is its tag object), an abbreviated id; then
 * `~N`/`^N` steps to ancestors, `^{}`/`^{type}` peeling, and `:path` into the tree. Only what a
 * ref reaches (Repository.reaches). Null when nothing matches.
 */
export async function resolveObject(repo: Repository, expr: string): Promise<string | null> {
  const colon = expr.indexOf(":");
  const [rev, path] = colon < 0 ? [expr, null] : [expr.slice(0, colon), expr.slice(colon + 1)];
  const m = /^(.*?)((?:~\d*|\^\d*|\^\{[a-z]*\})*)$/.exec(rev);
  if (!m || m[1] === "") return null;
  let oid = await baseObject(repo, m[1]!);
  if (!oid) return null;
  for (const [, tilde, tildeN, caret, caretN, peel] of m[2]!.matchAll(/(~)(\d*)|(\^)(\d*)(?!\{)|\^\{([a-z]*)\}/g)) {
    if (peel !== undefined) {
      oid = await peelTo(repo, oid, peel);
    } else {
      const commit = await peelTo(repo, oid, "commit");
      if (!commit) return null;
      const n = Number((tilde ? tildeN : caretN) || (tilde || caret ? "1" : "0"));
      oid = commit;
      if (tilde) {
        for (let i = 0; i < n && oid; i++) oid = (await repo.commits.get(oid)).parents[0] ?? null;
      } else if (n > 0) oid = (await repo.commits.get(oid)).parents[n - 1] ?? null;
    }
    if (!oid) return null;
  }
  if (path === null) return oid;
  const tree = await peelTo(repo, oid, "tree");
  if (!tree) return null;
  if (path === "") return tree;
  const e = await repo.entryInTree(tree, path).catch(() => null);
  return e?.oid ?? null;
}

/**
 * A name's object before any step: 40 hex digits are an id (never a ref name, as git reads them),
 * then HEAD, a ref (rev-parse's order), a unique abbreviated id — ids only among what the refs
 * reach (Repository.objectById).
 */
async function baseObject(repo: Repository, name: string): Promise<string | null> {
  if (/^[0-9a-f]{40}$/i.test(name)) return repo.objectById(name);
  if (name === "HEAD") return repo.state.head ? (repo.ref(repo.state.head)?.oid ?? null) : null;
  for (const full of [name, `refs/${name}`, `refs/tags/${name}`, `refs/heads/${name}`]) {
    const r = full.startsWith("refs/") ? repo.ref(full) : null;
    if (r) return r.oid;
  }
  return /^[0-9a-f]{4,39}$/i.test(name) ? repo.objectById(name) : null;
}

/**
 * `<oid>^{type}`: tags peeled until an object of `type` (a commit peels on to its tree for
 * `tree`); `^{}` peels tags to whatever they name. Null when the chain ends elsewhere.
 */
async function peelTo(repo: Repository, oid: string, type: string): Promise<string | null> {
  let cur = oid;
  for (let i = 0; i < 100; i++) {
    const t = await repo.reader.typeOf(cur);
    if (!t) return null;
    if (t === type || (type === "" && t !== "tag")) return cur;
    if (t === "tag") {
      const o = await repo.reader.read(cur);
      cur = parseTag(o!.data).object;
    } else if (t === "commit" && type === "tree") return (await repo.commits.get(cur)).tree;
    else return null;
  }
  return null;
}
