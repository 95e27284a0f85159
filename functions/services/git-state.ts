/**
 * A repository's git state (refs, pack catalog, HEAD) read in the route's own read batch, so that
 * opening the repository with the git engine costs no database round trip of its own: the refs
 * and the catalog ride with the caller and the repository row; HEAD is the row's default branch.
 */
import { Repository } from "../git/repo/repository.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import type { RefStore, RepoState } from "../git/storage/ref-store.ts";
import { packsByPath, refsByPath, type PackRow, type RefRow } from "../db/queries/git-state.ts";
import { repoPath } from "../db/queries/repos.ts";
import type { RepositoryRow } from "../db/schema.ts";
import type { Ctx } from "../lib/context.ts";

/**
 * The refs and the pack catalog of the repository at {owner}/{name}: two named reads (built once)
 * for the route's batch, empty unless the caller may access the repository (so a hidden one costs
 * the batch no more than a missing one).
 */
export function gitState(ctx: Ctx, owner: string, name: string) {
  const key = { ...repoPath(owner, name), ...ctx.vv };
  return { refs: refsByPath.bind(key), packs: packsByPath.bind(key) };
}

/** The engine's RepoState from the rows of `gitState` and the repository's row (HEAD is its default branch). */
export function repoStateFrom(repo: Pick<RepositoryRow, "defaultBranch" | "gitUnreachable">, refs: readonly RefRow[], packs: readonly PackRow[]): RepoState {
  return {
    head: repo.defaultBranch ? `refs/heads/${repo.defaultBranch}` : null,
    unreachable: repo.gitUnreachable,
    refs: refs.map((r) => ({ name: r.name, oid: r.oid, peeled: r.peeled })),
    packs: packs.map((p) => ({ ...p, repoId: String(p.repoId) })),
  };
}

/** Opens a repository from a state already read (no database work; the pack indexes come from storage). */
export const openRepository = (objects: ObjectStore, repoId: number, state: RepoState, signal?: AbortSignal) => Repository.open({ repoId: String(repoId), objects, state, signal });

/** A RefStore whose first read of `repoId` is answered from a state already read (no extra round trip). */
export function prefetched(store: RefStore, repoId: string, state: RepoState): RefStore {
  let first: RepoState | null = state;
  return {
    read: async (id) => {
      if (id === repoId && first) {
        const s = first;
        first = null;
        return s;
      }
      return store.read(id);
    },
    commit: (id, tx) => store.commit(id, tx),
  };
}
