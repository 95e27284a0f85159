/**
 * Writing through the API: one new commit from file changes (Gitea's contents create/update/delete,
 * auto-init's initial commit, generating a repository from a template). New blobs, the changed
 * trees and the commit go into one small pack; the branch moves with a compare-and-swap in the
 * RefStore's atomic commit (so two concurrent API writes never lose one another).
 */
import { GitError } from "../errors.ts";
import { buildPushEvent, type PushEvent } from "../events.ts";
import { cleanSignature, type Signature, serializeCommit } from "../objects/commit.ts";
import { hashObject } from "../objects/object.ts";
import { MODE, serializeTree, type TreeEntry } from "../objects/tree.ts";
import { PackBuilder } from "../pack/builder.ts";
import { type ObjectStore, packFileNames } from "../storage/object-store.ts";
import { commitMayHaveLanded, type PackRecord, type RefStore, type RepoState } from "../storage/ref-store.ts";
import { DEFAULT_LIMITS } from "../protocol/common.ts";
import { refNameProblem } from "../refname.ts";
import { Repository, splitPath } from "./repository.ts";

/** `expect` of a change: the file must be absent, present, or be exactly this blob id. */
export type Expect = "absent" | "present" | string;

/** One file change of an API commit. */
export type FileChange =
  | { op: "put"; path: string; content: Uint8Array | string; mode?: "100644" | "100755" | "120000"; expect?: Expect }
  /** A blob of another repository (template generation) copied in unchanged; a gitlink (mode 160000) keeps its commit id. */
  | { op: "copy"; path: string; from: Repository; oid: string; mode?: string; expect?: Expect }
  | { op: "delete"; path: string; expect?: Exclude<Expect, "absent"> };

/** What to commit. */
export interface CommitRequest {
  /** Branch to commit to (short name or `refs/heads/…`). */
  branch: string;
  /** Create `branch` from this revision first (Gitea's `new_branch`); `branch` must not exist. */
  startFrom?: string;
  /** Stored as given, as `git commit-tree` stores its input (a caller ends it with `\n` where git would). */
  message: string;
  author: Signature;
  /** Defaults to the author. */
  committer?: Signature;
  changes: FileChange[];
}

/** The new commit and what the RefStore recorded. */
export interface CommitOutcome {
  commit: string;
  tree: string;
  parent: string | null;
  /** Full branch ref name. */
  ref: string;
  pack: PackRecord;
  event: PushEvent;
  /** Blob ids by changed path (deleted paths are absent). */
  blobs: Map<string, string>;
}

interface Node {
  children: Map<string, Node>;
  change?: FileChange;
}

const encoder = new TextEncoder();

/**
 * Creates one commit from `req.changes` on top of the branch tip (or as a root commit in an empty
 * repository) and moves the branch atomically. RefStore round trips: one read (none when `state`
 * is passed) and one commit. Throws `conflict` (stale expectation or a concurrent move of the
 * branch), `not-found` (missing file or start revision), `invalid` (bad path or branch name, an
 * author or committer git cannot write: see formatSignature).
 */
export async function createCommit(
  ctx: { repoId: string; objects: ObjectStore; refs: RefStore; state?: RepoState; commitFiles?: boolean },
  req: CommitRequest,
): Promise<CommitOutcome> {
  const ref = req.branch.startsWith("refs/heads/") ? req.branch : `refs/heads/${req.branch}`;
  const problem = refNameProblem(ref);
  if (problem) throw new GitError("invalid", `invalid branch name ${JSON.stringify(req.branch)}: ${problem}`);
  const repo = await Repository.open({ repoId: ctx.repoId, objects: ctx.objects, refs: ctx.refs, state: ctx.state });
  const current = repo.ref(ref)?.oid ?? null;
  let parent: string | null = current;
  if (req.startFrom !== undefined) {
    if (current) throw new GitError("conflict", `branch ${ref.slice(11)} already exists`);
    const r = await repo.resolve(req.startFrom);
    if (!r) throw new GitError("not-found", `revision ${req.startFrom} not found`);
    parent = r.oid;
  }

  // a trie of the changed paths, so each directory is rewritten once
  const root: Node = { children: new Map() };
  for (const ch of req.changes) {
    const parts = splitPath(ch.path);
    if (parts.length === 0) throw new GitError("invalid", "a file change needs a path");
    if (parts.some((p) => p.toLowerCase() === ".git")) throw new GitError("invalid", `path ${JSON.stringify(ch.path)} is not allowed`);
    let n = root;
    for (const p of parts) {
      if (n.change) throw new GitError("invalid", `conflicting changes at ${JSON.stringify(ch.path)}`);
      let next = n.children.get(p);
      if (!next) {
        next = { children: new Map() };
        n.children.set(p, next);
      }
      n = next;
    }
    if (n.change || n.children.size > 0) throw new GitError("invalid", `conflicting changes at ${JSON.stringify(ch.path)}`);
    n.change = ch;
  }

  const builder = new PackBuilder();
  const blobs = new Map<string, string>();
  // objects the repository already has (same content elsewhere) are not stored again
  const add = (type: "blob" | "tree" | "commit", data: Uint8Array): string => {
    const oid = hashObject(type, data);
    return repo.reader.has(oid) ? oid : builder.add({ type, data });
  };
  const edit = async (treeOid: string | null, node: Node, prefix: string): Promise<string | null> => {
    const entries = new Map<string, TreeEntry>();
    if (treeOid) for (const e of await repo.readTree(treeOid)) entries.set(e.name, e);
    for (const [name, child] of node.children) {
      const path = prefix ? `${prefix}/${name}` : name;
      const existing = entries.get(name);
      const ch = child.change;
      if (!ch) {
        if (existing && existing.mode !== MODE.tree) throw new GitError("invalid", `${existing.name} is a file, not a directory, at ${JSON.stringify(path)}`);
        const sub = await edit(existing ? existing.oid : null, child, path);
        if (sub === null) entries.delete(name);
        else entries.set(name, { mode: MODE.tree, name, oid: sub, nameBytes: existing?.nameBytes });
        continue;
      }
      if (existing?.mode === MODE.tree) throw new GitError("invalid", `${JSON.stringify(path)} is a directory`);
      checkExpect(ch, path, existing?.oid ?? null);
      if (ch.op === "delete") {
        entries.delete(name);
        continue;
      }
      let oid: string;
      if (ch.op === "put") {
        const data = typeof ch.content === "string" ? encoder.encode(ch.content) : ch.content;
        oid = add("blob", data);
      } else if (ch.mode === MODE.gitlink) {
        oid = ch.oid; // a submodule's commit: not an object of either repository
      } else {
        oid = add("blob", await ch.from.readBlob(ch.oid));
      }
      const mode = ch.mode ?? (existing && existing.mode !== MODE.gitlink ? existing.mode : MODE.file);
      entries.set(name, { mode, name, oid, nameBytes: existing?.nameBytes });
      blobs.set(path, oid);
    }
    if (entries.size === 0) return null;
    const data = serializeTree([...entries.values()]);
    return add("tree", data);
  };
  const baseTree = parent ? (await repo.commits.get(parent)).tree : null;
  const tree = (await edit(baseTree, root, "")) ?? add("tree", new Uint8Array(0));

  const message = req.message;
  // The names and e-mails as the object stores them (git's ident rules); serializeCommit refuses,
  // before anything is stored, what git could not write.
  const author = cleanSignature(req.author);
  const committer = cleanSignature(req.committer ?? req.author);
  const commitData = serializeCommit({ tree, parents: parent ? [parent] : [], author, committer, message });
  const commit = builder.add({ type: "commit", data: commitData });

  const stored = await builder.store(ctx.objects, ctx.repoId);
  repo.reader.addPack(stored.record, stored.idx);
  const branchTips = repo.branches().map((b) => b.oid);
  const event = await buildPushEvent(repo.commits, [{ name: ref, old: current, new: commit }], branchTips, { ...DEFAULT_LIMITS, commitFiles: ctx.commitFiles });
  const head = !repo.state.head || (!repo.ref(repo.state.head) && repo.state.head !== ref) ? ref : undefined;
  const drop = () => ctx.objects.delete(ctx.repoId, packFileNames(stored.record.id)).catch(() => {});
  const result = await ctx.refs.commit(ctx.repoId, {
    updates: [{ name: ref, old: current, new: commit, peeled: null }],
    pack: stored.record,
    head,
    sizeDelta: stored.record.size + stored.record.idxSize,
    empty: false,
    event,
    identities: [...new Set([author.email, committer.email].map((e) => e.toLowerCase()))],
  }).catch(async (e: unknown) => {
    // A store that refuses the commit whole (the repository was deleted meanwhile) keeps no pack
    // behind; one whose answer never came may have committed it.
    if (!commitMayHaveLanded(e)) await drop();
    throw e;
  });
  if (!result.ok) {
    await drop();
    throw new GitError("conflict", `branch ${ref.slice(11)} was updated by someone else; try again`);
  }
  return { commit, tree, parent, ref, pack: stored.record, event, blobs };
}

function checkExpect(ch: FileChange, path: string, actual: string | null): void {
  const expect = ch.expect ?? (ch.op === "delete" ? "present" : undefined);
  if (expect === undefined) return;
  if (expect === "absent" && actual !== null) throw new GitError("conflict", `file ${JSON.stringify(path)} already exists`);
  if (expect === "present" && actual === null) throw new GitError("not-found", `file ${JSON.stringify(path)} does not exist`);
  if (expect !== "absent" && expect !== "present") {
    if (actual === null) throw new GitError("not-found", `file ${JSON.stringify(path)} does not exist`);
    if (actual !== expect) throw new GitError("conflict", `sha does not match: ${JSON.stringify(path)} is at ${actual}, not ${expect}`);
  }
}
