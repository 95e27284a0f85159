/**
 * The object-level read API the REST routes use (Gitea's branches, git/refs, git/commits,
 * commits, contents and raw endpoints): resolve a ref or sha, read a commit, a tree at a path,
 * a blob, and walk history with a path filter and paging. One RefStore read opens a repository.
 */
import { GitError } from "../errors.ts";
import { type Commit, parseCommit } from "../objects/commit.ts";
import { entryNamed, MODE, parseTree, type TreeEntry, typeOfMode } from "../objects/tree.ts";
import type { ObjectType } from "../objects/object.ts";
import { LruCache, ObjectReader, type ObjectSource, type ReaderOptions } from "../pack/reader.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { Ref, RefStore, RepoState } from "../storage/ref-store.ts";
import { Pacer, UNPACED } from "../pace.ts";
import { firstUnreached } from "../reachable.ts";
import { Commits, DateQueue } from "../walk.ts";

/** Commit counts by starting commit and path (`countCommits`), 1 MiB of keys at most per process or isolate. */
const COUNTS = new LruCache<number>(1024 * 1024);
/** A commit with its id. */
export interface CommitInfo extends Commit {
  oid: string;
}

/** What a revision resolved to. */
export interface Resolved {
  /** The commit (annotated tags are peeled). */
  oid: string;
  /** The full ref name when the revision named a ref. */
  ref: string | null;
  kind: "branch" | "tag" | "commit" | "ref";
}

/** A path inside a tree. `path` is normalised ("" for the root tree). */
export interface PathEntry {
  path: string;
  name: string;
  mode: string;
  type: ObjectType;
  oid: string;
}

/** Checks a repository path the way the contents API needs it; returns its components. */
export function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+|\/+$/g, "");
  if (trimmed === "") return [];
  const parts = trimmed.split("/");
  for (const p of parts) {
    if (p === "" || p === "." || p === ".." || p.includes("\0")) throw new GitError("invalid", `invalid path: ${JSON.stringify(path)}`);
  }
  return parts;
}

/** How many objects sharing an abbreviated id are looked at once some were left behind (more: ambiguous). */
const PREFIX_CANDIDATES = 64;

/** A read view of one repository at one RefStore snapshot. */
export class Repository {
  readonly repoId: string;
  readonly state: RepoState;
  readonly reader: ObjectReader;
  readonly commits: Commits;
  /** The request's pacing of long work (yields, and a stop when its client is gone). */
  readonly pace: Pacer;
  private readonly trees = new LruCache<TreeEntry[]>(8 * 1024 * 1024);

  private constructor(repoId: string, state: RepoState, reader: ObjectReader, pace: Pacer) {
    this.repoId = repoId;
    this.state = state;
    this.reader = reader;
    this.commits = new Commits(reader);
    this.pace = pace;
  }

  /**
   * Opens a repository: one RefStore read unless the caller already has `state` (e.g. read in
   * its own batch), then the pack indexes from the ObjectStore.
   */
  static async open(opts: { repoId: string; objects: ObjectStore; refs?: RefStore; state?: RepoState; reader?: ReaderOptions; signal?: AbortSignal; pace?: Pacer }): Promise<Repository> {
    const state = opts.state ?? (await opts.refs!.read(opts.repoId));
    return new Repository(opts.repoId, state, await ObjectReader.open(opts.objects, state.packs, opts.reader), opts.pace ?? (opts.signal ? new Pacer(opts.signal) : UNPACED));
  }

  /** True when the repository has no branch. */
  get isEmpty(): boolean {
    return !this.state.refs.some((r) => r.name.startsWith("refs/heads/"));
  }

  /** Branch refs (`refs/heads/*`), sorted by name. */
  branches(): Ref[] {
    return this.state.refs.filter((r) => r.name.startsWith("refs/heads/"));
  }

  /** Tag refs (`refs/tags/*`), sorted by name. */
  tags(): Ref[] {
    return this.state.refs.filter((r) => r.name.startsWith("refs/tags/"));
  }

  /** The ref with this full name. */
  ref(name: string): Ref | null {
    return this.state.refs.find((r) => r.name === name) ?? null;
  }

  /**
   * Resolves what Gitea's `ref`/`sha` parameters accept, in Gitea's order: `HEAD`, a full ref,
   * a branch, a tag, a full commit id, an abbreviated one (≥ 4 hex digits, unique). Annotated tags
   * are peeled; the result is always a commit. Null when nothing matches.
   * `order: "rev-parse"` reads a name as `git rev-parse` does (where Gitea hands the value to git:
   * the commits API's `sha` and `not`): a full commit id first, then `<rev>`, `refs/<rev>`,
   * `refs/tags/<rev>`, `refs/heads/<rev>` — a tag before a branch of the same name — then an
   * abbreviated id.
   */
  async resolve(rev: string, order: "gitea" | "rev-parse" = "gitea"): Promise<Resolved | null> {
    if (order === "rev-parse") return this.revParse(rev);
    const fromRef = async (r: Ref, kind: Resolved["kind"]): Promise<Resolved | null> => {
      const p = await this.commits.peel(r.oid);
      return p.type === "commit" ? { oid: p.oid, ref: r.name, kind } : null;
    };
    if (rev === "HEAD") {
      const h = this.state.head ? this.ref(this.state.head) : null;
      return h ? fromRef(h, "branch") : null;
    }
    if (rev.startsWith("refs/")) {
      const r = this.ref(rev);
      if (r) return fromRef(r, rev.startsWith("refs/heads/") ? "branch" : rev.startsWith("refs/tags/") ? "tag" : "ref");
    }
    const branch = this.ref(`refs/heads/${rev}`);
    if (branch) return fromRef(branch, "branch");
    const tag = this.ref(`refs/tags/${rev}`);
    if (tag) return fromRef(tag, "tag");
    return /^[0-9a-f]{4,40}$/i.test(rev) ? this.resolveId(rev) : null;
  }

  /** A full or abbreviated id (objectById), peeled to its commit. */
  private async resolveId(hex: string): Promise<Resolved | null> {
    const id = await this.objectById(hex);
    if (!id) return null;
    const p = await this.commits.peel(id).catch(() => null);
    return p?.type === "commit" ? { oid: p.oid, ref: null, kind: "commit" } : null;
  }

  /**
   * The object a full id, or an abbreviated one (≥ 4 hex digits), names among those a ref reaches
   * (Repository.reaches): what the refs left behind neither matches nor makes a prefix ambiguous,
   * so an answer never tells it is still stored. Null when none or several match.
   */
  async objectById(hex: string): Promise<string | null> {
    const h = hex.toLowerCase();
    if (h.length === 40) return this.reader.has(h) && (await this.reaches(h)) ? h : null;
    // while nothing was ever left behind, every stored object counts: two candidates decide
    const limit = this.state.unreachable ? PREFIX_CANDIDATES : 2;
    const found = this.reader.findPrefix(h, limit);
    if (found.length >= limit && limit > 2) return null; // too many to sort out: ambiguous
    let one: string | null = null;
    for (const id of found) {
      if (!(await this.reaches(id))) continue;
      if (one) return null;
      one = id;
    }
    return one;
  }

  private async revParse(rev: string): Promise<Resolved | null> {
    // 40 hex digits are an object id, never a ref name (git's get_oid_basic)
    if (/^[0-9a-f]{40}$/i.test(rev)) return this.resolveId(rev);
    if (rev === "HEAD") return this.resolve(rev);
    for (const name of [rev, `refs/${rev}`, `refs/tags/${rev}`, `refs/heads/${rev}`]) {
      if (name.startsWith("refs/") && this.ref(name)) return this.resolve(name);
    }
    return /^[0-9a-f]{4,39}$/i.test(rev) ? this.resolve(rev) : null;
  }

  /**
   * True when a ref reaches the object (reachable.ts): what a force-push or a deleted ref left
   * behind answers as missing wherever an id names it, as on the wire.
   */
  async reaches(oid: string): Promise<boolean> {
    return (await firstUnreached([oid], this.state, this.reader, this.commits)) === null;
  }

  /** A parsed commit; throws `not-found` when absent or not a commit. */
  async readCommit(oid: string): Promise<CommitInfo> {
    const o = await this.reader.read(oid);
    if (o?.type !== "commit") throw new GitError("not-found", `commit ${oid} not found`);
    return { oid, ...parseCommit(o.data) };
  }

  /** A tree's entries (git's order); throws `not-found` when absent or not a tree. */
  async readTree(oid: string): Promise<TreeEntry[]> {
    const hit = this.trees.get(oid);
    if (hit) return hit;
    const o = await this.reader.read(oid);
    if (o?.type !== "tree") throw new GitError("not-found", `tree ${oid} not found`);
    const entries = parseTree(o.data);
    this.trees.set(oid, entries, o.data.length * 2);
    return entries;
  }

  /** A blob's bytes; throws `not-found` when absent or not a blob. */
  async readBlob(oid: string): Promise<Uint8Array> {
    const o = await this.reader.read(oid);
    if (o?.type !== "blob") throw new GitError("not-found", `blob ${oid} not found`);
    return o.data;
  }

  /** A blob to send (streamed when large and stored whole); throws `not-found` when absent or not a blob. */
  async blobSource(oid: string): Promise<ObjectSource> {
    const o = await this.reader.source(oid);
    if (o?.type !== "blob") throw new GitError("not-found", `blob ${oid} not found`);
    return o;
  }

  /** The entry at `path` in the tree of commit `commitOid` ("" = the root tree), or null. */
  async entryAt(commitOid: string, path: string): Promise<PathEntry | null> {
    const c = await this.commits.get(commitOid);
    return this.entryInTree(c.tree, path);
  }

  /** The entry at `path` below tree `treeOid`, or null. */
  async entryInTree(treeOid: string, path: string): Promise<PathEntry | null> {
    const parts = splitPath(path);
    let cur: PathEntry = { path: "", name: "", mode: MODE.tree, type: "tree", oid: treeOid };
    for (const name of parts) {
      if (cur.type !== "tree") return null;
      const e = entryNamed(await this.readTree(cur.oid), name);
      if (!e) return null;
      cur = { path: cur.path ? `${cur.path}/${name}` : name, name, mode: e.mode, type: typeOfMode(e.mode), oid: e.oid };
    }
    return cur;
  }

  /** The entries of the directory at `path` (null when it is not a directory). */
  async listDir(commitOid: string, path: string): Promise<PathEntry[] | null> {
    const dir = await this.entryAt(commitOid, path);
    if (dir?.type !== "tree") return null;
    return (await this.readTree(dir.oid)).map((e) => ({ path: dir.path ? `${dir.path}/${e.name}` : e.name, name: e.name, mode: e.mode, type: typeOfMode(e.mode), oid: e.oid }));
  }

  /** Every file below tree `treeOid` (depth first, git's order), with its path. */
  async *files(treeOid: string, prefix = ""): AsyncGenerator<PathEntry> {
    for (const e of await this.readTree(treeOid)) {
      const path = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.mode === MODE.tree) yield* this.files(e.oid, path);
      else yield { path, name: e.name, mode: e.mode, type: typeOfMode(e.mode), oid: e.oid };
    }
  }

  /** The id (and mode) at `path` in a commit's tree, as a string for TREESAME checks. */
  private async pathKey(commitOid: string, parts: string[]): Promise<string | null> {
    let oid = (await this.commits.get(commitOid)).tree;
    let mode: string = MODE.tree;
    for (const name of parts) {
      if (mode !== MODE.tree) return null;
      const e = entryNamed(await this.readTree(oid), name);
      if (!e) return null;
      oid = e.oid;
      mode = e.mode;
    }
    return `${mode} ${oid}`;
  }

  /**
   * History from `from` newest first (git log order), optionally only commits that change
   * `path` (git's default history simplification: a merge that matches one parent at `path`
   * follows only that parent). `keep` drops commits from the listing (not from the walk), e.g.
   * those reachable from an excluded revision. `skip`/`limit` page the result; `hasMore` says a
   * next page exists.
   */
  async log(opts: { from: string; path?: string; skip?: number; limit?: number; keep?: (oid: string) => boolean | Promise<boolean> }): Promise<{ commits: CommitInfo[]; hasMore: boolean }> {
    const parts = opts.path ? splitPath(opts.path) : [];
    const skip = opts.skip ?? 0;
    const limit = opts.limit ?? 30;
    const out: string[] = [];
    let matched = 0;
    for await (const oid of this.walk(opts.from, parts)) {
      if (opts.keep && !(await opts.keep(oid))) continue;
      if (matched++ < skip) continue;
      out.push(oid);
      if (out.length > limit) break;
    }
    const hasMore = out.length > limit;
    const page = out.slice(0, limit);
    return { commits: await Promise.all(page.map((o) => this.readCommit(o))), hasMore };
  }

  /**
   * Number of commits `log` would list (counting stops at `max`). A full count without `keep` is
   * kept per commit and path (a commit's history never changes, whatever repository holds it): a
   * client paging `/commits` of a 50,000-commit history walked it whole on every page.
   */
  async countCommits(opts: { from: string; path?: string; max?: number; keep?: (oid: string) => boolean | Promise<boolean> }): Promise<number> {
    const parts = opts.path ? splitPath(opts.path) : [];
    const max = opts.max ?? Number.MAX_SAFE_INTEGER;
    const key = !opts.keep && opts.max === undefined ? `${opts.from}\0${parts.join("/")}` : null;
    const known = key ? COUNTS.get(key) : undefined;
    if (known !== undefined) return known;
    let n = 0;
    for await (const oid of this.walk(opts.from, parts)) {
      if (opts.keep && !(await opts.keep(oid))) continue;
      if (++n >= max) break;
    }
    if (key) COUNTS.set(key, n, key.length * 2 + 16);
    return n;
  }

  /** Every commit reachable from `from` (git rev-list's set, for `^rev` exclusions). */
  async ancestors(from: string): Promise<Set<string>> {
    const seen = new Set<string>([from]);
    const stack = [from];
    while (stack.length > 0) {
      for (const p of (await this.commits.get(stack.pop()!)).parents) {
        if (!seen.has(p)) {
          seen.add(p);
          stack.push(p);
        }
      }
    }
    return seen;
  }

  /** Commit ids in date order, filtered and simplified by path. */
  private async *walk(from: string, parts: string[]): AsyncGenerator<string> {
    const seen = new Set<string>([from]);
    const queue = new DateQueue();
    queue.push(from, (await this.commits.get(from)).time);
    while (queue.length > 0) {
      const y = this.pace.step(parts.length > 0 ? 4 : 1);
      if (y) await y;
      const { oid } = queue.pop()!;
      const c = await this.commits.get(oid);
      let follow = c.parents;
      let show = true;
      if (parts.length > 0) {
        const mine = await this.pathKey(oid, parts);
        if (c.parents.length === 0) show = mine !== null;
        else {
          const same: string[] = [];
          for (const p of c.parents) if ((await this.pathKey(p, parts)) === mine) same.push(p);
          if (same.length > 0) {
            show = false;
            follow = [same[0]!]; // TREESAME to a parent: follow it alone
          }
        }
      }
      if (show) yield oid;
      for (const p of follow) {
        if (seen.has(p)) continue;
        seen.add(p);
        queue.push(p, (await this.commits.get(p)).time);
      }
    }
  }
}
