/**
 * Webhook tasks, the rows of the event outbox that reach outside (Gitea services/webhook/notifier.go
 * and PrepareWebhooks): an event of a repository owned by an organization becomes one `hook_task`
 * per active hook of that organization that chose the event, with Gitea's payload, inserted in the
 * write's own batch. The payload is rendered when the event happens (as Gitea stores it), from the
 * state the write saw; the deliverer (services/hook-delivery.ts) sends it.
 *
 * Payloads render repositories with the owner's permission and accounts as an anonymous viewer
 * sees them (Gitea's `convert.ToUser(ctx, u, nil)`: no e-mail address but the placeholder).
 */
import { getTableColumns } from "drizzle-orm";
import type { BatchItem } from "../db/driver.ts";
import { PUSH_HOOK_TASKS_TEXT, insertHookTasks, insertHookTasksOfNewRepo } from "../db/queries/hook-tasks.ts";
import type { Guard } from "../db/queries/git-refs.ts";
import { repository, type RepositoryRow, type UserRow } from "../db/schema.ts";
import type { Bound } from "../db/sql.ts";
import { toRepository, type RepoView } from "../convert/repository.ts";
import { toUser, type Site } from "../convert/user.ts";
import type { RefChange, CommitSummary } from "../git/events.ts";
import { ACCESS } from "../lib/permissions.ts";
import { goTime } from "../convert/time.ts";

const ZERO = "0".repeat(40);

/** The repository an event happened to, as the hooks' payloads show it. */
export interface HookRepo {
  repo: RepositoryRow;
  owner: UserRow;
  units: RepoView["units"];
}

/** Who did it and where the site is: what every payload carries besides its event. */
export interface HookSource {
  repo: HookRepo;
  doer: UserRow;
  site: Site;
}

/** Gitea's ToRepo with the owner's permission (every unit at owner level). */
function hookRepository(r: HookRepo, site: Site, mode: number = ACCESS.owner, parent: HookRepo | null = null): Record<string, unknown> {
  const perm = { mode, units: new Map(r.units.map((u) => [u.type, mode])) };
  return toRepository({ repo: r.repo, owner: r.owner, units: r.units, perm, parent, mirror: null }, null, site);
}

const sender = (s: HookSource) => toUser(s.doer, null, s.site);

/** Whether an event of this repository can reach any hook: only organizations have them here. */
export const hooksPossible = (r: HookRepo) => r.owner.type === 1;

/** Gitea's JSONPayload: two-space indentation (the repository event's payload: one space). */
const render = (payload: unknown, indent = 2) => JSON.stringify(payload, null, indent);

/** `repository` (created / deleted) for the organization's hooks. */
function repositoryPayload(s: HookSource, action: "created" | "deleted", repository = hookRepository(s.repo, s.site)): string {
  return render({ action, repository, organization: toUser(s.repo.owner, null, s.site), sender: sender(s) }, 1);
}

/** `fork` for the base's organization hooks: `forkee` is the base, `repository` the new fork (Gitea's naming), both as the doer may see them. */
function forkPayload(s: HookSource, base: HookRepo, baseMode: number, fork: Record<string, unknown>): string {
  return render({ forkee: hookRepository(base, s.site, baseMode), repository: fork, sender: sender(s) });
}

/** The task statement of an event of a repository that exists before the write. */
function hookTasks(s: HookSource, event: string, payload: string, now: number): Bound<number>[] {
  if (!hooksPossible(s.repo)) return [];
  return [insertHookTasks.bind({ event, ref: "", payload, now, owner: s.repo.owner.id })];
}

/** Where the inserted row's own values go in a payload rendered before the insert (see hookTasksOfNewRepo). */
interface NewRepoFields {
  id: unknown;
  empty: unknown;
  size: unknown;
}

/**
 * The task statement of an event of a repository the same write inserts: `payload(fields)` renders
 * with placeholders for the row's id, `empty` and `size` (in that order in the text), and the
 * statement writes the inserted row's values in their place — after the batch's initial commit, if
 * any. The placeholders are fresh random tokens, so no text of the payload can collide.
 */
function hookTasksOfNewRepo(s: HookSource, event: string, created: RepositoryRow, payload: (fields: NewRepoFields) => string, now: number): Bound<number>[] {
  if (!hooksPossible(s.repo)) return [];
  const nonce = crypto.randomUUID();
  const fields = { id: `${nonce}:id`, empty: `${nonce}:empty`, size: `${nonce}:size` };
  const text = payload(fields);
  const parts: string[] = [];
  let rest = text;
  for (const token of [fields.id, fields.empty, fields.size]) {
    const at = rest.indexOf(JSON.stringify(token));
    if (at < 0) throw new Error(`hookTasksOfNewRepo: the payload of ${event} has no ${token.slice(nonce.length + 1)} placeholder in order`);
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + JSON.stringify(token).length);
  }
  const [p0 = "", p1 = "", p2 = ""] = parts;
  return [insertHookTasksOfNewRepo.bind({ event, ref: "", p0, p1, p2, p3: rest, now, owner: s.repo.owner.id, repoOwner: created.ownerId, lowerName: created.lowerName })];
}

/** Column defaults of a repository row (what an insert leaves to the schema). */
const REPO_DEFAULTS: Record<string, unknown> = Object.fromEntries(
  Object.entries(getTableColumns(repository)).map(([k, c]) => [k, c.default !== undefined && typeof c.default !== "object" ? c.default : c.columnType === "SQLiteBoolean" ? false : c.dataType === "number" ? 0 : ""]),
);

/** The row a repository insert of this batch will store, for its event's payload (`id` is filled in by the statement). */
export const pendingRepoRow = (values: Partial<RepositoryRow>): RepositoryRow => ({ ...REPO_DEFAULTS, ...values }) as RepositoryRow;

// ---- pushes (services/repository/push.go: CreateRef, PushCommits, DeleteRef) ----

/** Commits a push payload lists (`[ui] FEED_MAX_COMMIT_NUM`); `total_commits` counts them all. */
const PAYLOAD_COMMITS = 5;

const shortName = (ref: string) => ref.replace(/^refs\/(heads|tags)\//, "");
const refType = (ref: string) => (ref.startsWith("refs/tags/") ? "tag" : "branch");

/**
 * Stands for the account an e-mail names in a rendered payload: a fresh random token per render,
 * replaced by the task statement (`PUSH_HOOK_TASKS_TEXT`) with the account's name.
 */
class Usernames {
  private readonly nonce = crypto.randomUUID();
  readonly emails: string[] = [];
  of(email: string): string {
    this.emails.push(email);
    return `${this.nonce}:${this.emails.length - 1}`;
  }
  /** The payload as the statement's pieces: text, e-mail, text, …, text. */
  pieces(payload: string): string {
    const out: string[] = [];
    const re = new RegExp(`"${this.nonce}:(\\d+)"`, "g");
    let at = 0;
    for (let m = re.exec(payload); m; m = re.exec(payload)) {
      out.push(payload.slice(at, m.index), this.emails[Number(m[1])]!); // !: the index is one this render made
      at = m.index + m[0].length;
    }
    out.push(payload.slice(at));
    return JSON.stringify(out);
  }
}

/** Gitea's PayloadCommit (its `timestamp` is the author's time; `username` the account the e-mail names). */
function payloadCommit(htmlUrl: string, c: CommitSummary, names: Usernames) {
  return {
    id: c.oid,
    message: c.message,
    url: `${htmlUrl}/commit/${c.oid}`,
    author: { name: c.author.name, email: c.author.email, username: names.of(c.author.email) },
    committer: { name: c.committer.name, email: c.committer.email, username: names.of(c.committer.email) },
    verification: null,
    timestamp: goTime(c.author),
    added: c.files?.added ?? [],
    removed: c.files?.removed ?? [],
    modified: c.files?.modified ?? [],
  };
}

/**
 * The webhook events of one ref change, in Gitea's order: `[event, pieces, ref]` — the payload as
 * `Usernames.pieces` — and the full ref a hook's branch filter is matched against (Gitea's
 * getPayloadRef: a branch by its name or full ref, a tag by its full ref).
 */
function pushHookEvents(s: HookSource, r: RefChange): [string, string, string][] {
  const names = new Usernames();
  const whole = (payload: string) => JSON.stringify([payload]);
  const tag = r.name.startsWith("refs/tags/");
  if (!tag && !r.name.startsWith("refs/heads/")) return [];
  const branch = tag ? "" : shortName(r.name);
  const ref = r.name; // what branch filters match (services/hook-delivery.ts branchAdmitted)
  const pusher = sender(s);
  const repository = hookRepository(s.repo, s.site);
  const htmlUrl = String(repository.html_url);
  const path = `${encodeURIComponent(s.repo.owner.name)}/${encodeURIComponent(s.repo.repo.name)}`;
  const compareUrl = (before: string | null, after: string) => (before === null ? s.site.rootUrl : `${s.site.rootUrl}${path}/compare/${before}...${after}`);
  // CreateRef renders the repository without permissions (AccessModeNone).
  const create = () => whole(render({ sha: r.new, ref: shortName(r.name), ref_type: refType(r.name), repository: hookRepository(s.repo, s.site, ACCESS.none), sender: pusher }));
  const del = () => whole(render({ ref: shortName(r.name), ref_type: refType(r.name), pusher_type: "user", repository, sender: pusher }));
  const push = (before: string, after: string, compare: string, listed: CommitSummary[], total: number, head: CommitSummary | null) =>
    names.pieces(render({
      ref: r.name,
      before,
      after,
      compare_url: compare,
      commits: listed.slice(0, PAYLOAD_COMMITS).map((c) => payloadCommit(htmlUrl, c, names)),
      total_commits: total,
      head_commit: head ? payloadCommit(htmlUrl, head, names) : null,
      repository,
      pusher,
      sender: pusher,
    }));
  if (tag) {
    // A tag push lists no commits; a new tag names its commit as the head.
    if (r.kind === "delete") return [["push", push(r.old ?? ZERO, ZERO, compareUrl(null, ""), [], 0, null), ref], ["delete", del(), ref]];
    const after = r.new ?? ZERO;
    return [["push", push(ZERO, after, compareUrl(ZERO, after), [], 0, r.head ?? null), ref], ["create", create(), ref]];
  }
  if (r.kind === "delete") return [["delete", del(), ref]];
  const after = r.new ?? ZERO;
  if (r.kind === "update") return [["push", push(r.old ?? ZERO, after, compareUrl(r.old, after), r.commits, r.totalCommits, r.head ?? r.commits[0] ?? null), ref]];
  // A new branch: its head and history (at most 10), compared from the parent of the oldest listed
  // commit, else from the default branch, else no comparison (Gitea's push.go).
  const history = r.history ?? r.commits;
  const oldest = history[history.length - 1];
  const base = oldest?.parents[0] ?? (branch !== s.repo.repo.defaultBranch ? s.repo.repo.defaultBranch : null);
  return [
    ["create", create(), ref],
    ["push", push(ZERO, after, compareUrl(base, after), history, history.length, history[0] ?? null), ref],
  ];
}

/** A push's task rows, guarded like its activity rows (they apply only when the ref compare-and-swap held). */
export function pushHookRows(s: HookSource, r: RefChange, guard: Guard, now: number): BatchItem[] {
  if (!hooksPossible(s.repo)) return [];
  const noReply = `@${s.site.noReplyAddress.toLowerCase()}`;
  return pushHookEvents(s, r).map(([event, pieces, ref]) => ({
    text: PUSH_HOOK_TASKS_TEXT(guard.sql),
    args: [event, ref, pieces, noReply, now, s.repo.owner.id, event, ...guard.args],
  }));
}

// ---- repositories created and deleted (the notifier's CreateRepository, ForkRepository, DeleteRepository) ----

/**
 * The tasks of a repository the write inserts (`created`, rendered from the values it inserts):
 * for a fork, `fork` to the base's organization first (`base`, with the doer's access mode on it),
 * then `repository` created to the new owner's; a fork shows its base as `parent`.
 */
export function repositoryCreatedTasks(src: HookSource, created: RepositoryRow, base: { repo: HookRepo; mode: number } | null, now: number): Bound<number>[] {
  const json = (parent: HookRepo | null) => (f: NewRepoFields) => ({ ...hookRepository(src.repo, src.site, ACCESS.owner, parent), ...f });
  // The new owner's hooks see the base as anyone would: embedded when it is its own or public to
  // all, left out otherwise (Gitea embeds it whatever the receiver may see: a private base's
  // name and description reached an organization that may not read it).
  const baseOpenTo = (ownerId: number) => base && (base.repo.owner.id === ownerId || (!base.repo.repo.isPrivate && base.repo.owner.visibility === 0)) ? base.repo : null;
  const out: Bound<number>[] = [];
  // The base's hooks hear of a fork anyone may see; a private fork, or one in a limited or private
  // namespace, is not theirs to know of (Gitea tells them regardless).
  const forkOpen = !created.isPrivate && src.repo.owner.visibility === 0;
  if (base && forkOpen) out.push(...hookTasksOfNewRepo({ ...src, repo: base.repo }, "fork", created, (f) => forkPayload(src, base.repo, base.mode, json(base.repo)(f)), now));
  out.push(...hookTasksOfNewRepo(src, "repository", created, (f) => repositoryPayload(src, "created", json(baseOpenTo(src.repo.owner.id))(f)), now));
  return out;
}

/** The task of a repository the write deletes: `repository` deleted, rendered before the rows go (Gitea notifies first). */
export function repositoryDeletedTasks(src: HookSource, now: number): Bound<number>[] {
  return hooksPossible(src.repo) ? hookTasks(src, "repository", repositoryPayload(src, "deleted"), now) : [];
}
