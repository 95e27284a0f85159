/**
 * A deleted repository's git files (Gitea's DeleteRepository removes the repository directory):
 * forks still reading its packs get their own copies first, the catalog rows are re-pointed in the
 * delete batch, and the files go after the rows. Used by repository delete and user purge.
 */
import { repointPacks, type SharedPack } from "../db/queries/storage.ts";
import type { Bound } from "../db/sql.ts";
import { copyPacks } from "../git/storage/fork.ts";
import type { ObjectStore } from "../git/storage/object-store.ts";
import type { Ctx } from "../lib/context.ts";

export type { SharedPack };

/**
 * Copies the shared packs into each fork's own storage (before the delete batch); returns the
 * statements re-pointing the forks' catalog rows at their copies, for that batch.
 */
export async function releaseSharedPacks(_ctx: Ctx, objects: ObjectStore | undefined, shared: readonly SharedPack[]): Promise<Bound<number>[]> {
  if (!objects) return [];
  const byFork = new Map<number, SharedPack[]>();
  for (const p of shared) byFork.set(p.catalogRepoId, [...(byFork.get(p.catalogRepoId) ?? []), p]);
  const out: Bound<number>[] = [];
  for (const [forkId, packs] of byFork) {
    await copyPacks(objects, packs.map((p) => ({ ...p, repoId: String(p.repoId) })), String(forkId));
    out.push(repointPacks.bind({ forkId, ids: JSON.stringify(packs.map((p) => p.id)) }));
  }
  return out;
}

/**
 * Deletes the repositories' files, keyed by id (never by name), after their rows are gone. The
 * deletion is done then, whatever the files do: one that fails (a push writing into the directory
 * while it went, on storage that refuses) is logged and leaves files no row names, never a 500 for
 * a delete that happened.
 */
export async function deleteStorage(objects: ObjectStore | undefined, repoIds: readonly number[]) {
  if (!objects) return;
  for (const id of repoIds) {
    await objects.deleteRepository(String(id)).catch((e: unknown) => console.error(`repository ${id} is deleted; its files were not all removed:`, e));
  }
}
