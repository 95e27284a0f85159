/**
 * Forks share their base's packs instead of copying them: a fork's catalog starts as the base's
 * catalog (same PackRecords, whose `repoId` still names the base's storage), and the fork's own
 * pushes add packs under the fork's id. Objects are copied only when they must outlive the base:
 * before a base repository's files are deleted, each fork that still references them calls
 * `copyPacks` and points its catalog rows at the copies.
 */
import { type ObjectStore, packFileNames, revFileName } from "./object-store.ts";
import type { PackRecord, RepoState } from "./ref-store.ts";

/** The pack catalog a new fork starts with: the base's packs, shared, not copied. */
export const forkCatalog = (base: RepoState): PackRecord[] => base.packs.map((p) => ({ ...p }));

/** Catalog entries of `packs` that live in another repository's storage than `repoId`. */
export const sharedPacks = (repoId: string, packs: readonly PackRecord[]): PackRecord[] => packs.filter((p) => p.repoId !== repoId);

/**
 * Copies packs (and their indexes) stored under other repositories into `toRepoId`'s storage,
 * streamed; returns the records to store in place of the old ones (same id, new `repoId`).
 */
export async function copyPacks(objects: ObjectStore, packs: readonly PackRecord[], toRepoId: string): Promise<PackRecord[]> {
  const out: PackRecord[] = [];
  for (const p of packs) {
    if (p.repoId === toRepoId) {
      out.push(p);
      continue;
    }
    for (const name of packFileNames(p.id)) {
      const s = await objects.stream(p.repoId, name);
      if (!s) {
        if (name === revFileName(p.id)) continue; // optional: rebuilt from the index when absent
        throw new Error(`pack file ${name} of repository ${p.repoId} is missing`);
      }
      await objects.put(toRepoId, name, s);
    }
    out.push({ ...p, repoId: toRepoId });
  }
  return out;
}
