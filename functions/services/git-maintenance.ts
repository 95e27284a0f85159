/**
 * Git maintenance off the request path (git's `git gc --auto` after a push, which Gitea's
 * repositories run; here git's geometric repack): every push, API commit and annotated tag adds a
 * pack, and every read searches each pack's index — on the Worker a cold isolate fetches each
 * index from R2. When a write leaves a repository with `AUTO_PACK_LIMIT` or more packs of its own
 * and a geometric roll-up to make, the request's outbox names the repository and the runtime
 * compacts it after the answer (Node in the server's process, the Worker through its queue). The
 * write's own batch read the catalog back, so deciding costs no round trip; a compaction that never
 * ran (a stopped process, a lost message) is decided again by the next write.
 *
 * The replaced files stay for `PACK_GRACE_S` (requests that read the old catalog may still be
 * reading them) and until no catalog lists them (a fork reads its base's packs): the compaction's
 * commit records them in `git_pack_garbage`, and `collectPackGarbage` (Node's periodic sweep, the
 * Worker's cron) deletes the files, then the rows. A repository's delete records its whole storage
 * namespace there too (db/queries/cascade.ts), so files its own removal left are swept as well.
 */
import type { Driver } from "../db/driver.ts";
import { LibsqlRefStore, type OwnPack, type PackAdded } from "../db/queries/git-refs.ts";
import { duePackGarbage, forgetPackGarbage, WHOLE_NAMESPACE } from "../db/queries/storage.ts";
import { batchItems, rowsOf } from "../db/sql.ts";
import { type Compaction, compactPacks, geometricRollup } from "../git/repo/compact.ts";
import { type ObjectStore, packFileNames } from "../git/storage/object-store.ts";
import type { Outbox } from "../lib/context.ts";
import { ApiError } from "../lib/errors.ts";
import type { Settings } from "../lib/settings.ts";
import { nowUnix } from "./common.ts";

/** A repository with fewer packs of its own is left as it is. */
export const AUTO_PACK_LIMIT = 8;
/** How long replaced pack files stay readable after a compaction, in seconds. */
export const PACK_GRACE_S = 3600;
/** Garbage entries one sweep deletes at most (the next sweep takes the rest). */
export const GARBAGE_SWEEP_MAX = 200;

export interface MaintenanceDeps {
  driver: Driver;
  objects: ObjectStore;
  settings: Settings;
}

/** Whether a repository that owns `own` packs is due for a compaction. */
export const compactionDue = (own: readonly OwnPack[]): boolean => own.length >= AUTO_PACK_LIMIT && geometricRollup(own).length >= 2;

/** The RefStore hook of a request's writes: a commit that added a pack names the repository in the outbox when a compaction is due. */
export const packAddedTo =
  (outbox: Outbox): PackAdded =>
  (repoId, own) => {
    if (compactionDue(own)) outbox.compact.add(repoId);
  };

/**
 * Compacts a repository's packs if it is still due (geometric roll-up, at most `[git]
 * MAX_PUSH_SIZE` of pack data merged at once, so a compaction never does more than the largest
 * push would). Null when nothing was to be done, the repository is gone or another compaction won.
 */
export async function compactRepository(deps: MaintenanceDeps, repoId: number): Promise<Compaction | null> {
  return compactPacks(
    { repoId: String(repoId), objects: deps.objects, refs: new LibsqlRefStore(deps.driver) },
    { plan: "geometric", minOwn: AUTO_PACK_LIMIT, maxBytes: deps.settings.git.maxPushBytes },
  ).catch((e: unknown) => {
    // deleted meanwhile: its files went with it
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  });
}

/**
 * Deletes the files of packs compactions replaced at least `graceS` seconds before `now` that no
 * catalog lists, and what is left of deleted repositories' namespaces, then their rows; returns how many were deleted. A file whose deletion fails keeps
 * its row (the next sweep tries again).
 */
export async function collectPackGarbage(deps: Omit<MaintenanceDeps, "settings">, now = nowUnix(), graceS = PACK_GRACE_S): Promise<number> {
  const read = duePackGarbage.bind({ before: now - graceS, limit: GARBAGE_SWEEP_MAX });
  const [due] = await deps.driver.batch(batchItems([read]), "read");
  const gone: [number, string][] = [];
  for (const g of rowsOf(read, due ?? [])) {
    try {
      if (g.packId === WHOLE_NAMESPACE) await deps.objects.deleteRepository(String(g.repoId));
      else await deps.objects.delete(String(g.repoId), packFileNames(g.packId));
      gone.push([g.repoId, g.packId]);
    } catch {
      // kept for the next sweep
    }
  }
  if (gone.length) await deps.driver.batch(batchItems([forgetPackGarbage.bind({ items: JSON.stringify(gone) })]), "write");
  return gone.length;
}

/**
 * Node's maintainer: compacts the repositories writes named, one at a time in the server's
 * process, and sweeps garbage every `intervalMs` (and once at start).
 */
export class GitMaintainer {
  private readonly deps: MaintenanceDeps;
  private readonly pending = new Set<number>();
  private running: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private sweep = true;

  constructor(deps: MaintenanceDeps, intervalMs = 600_000) {
    this.deps = deps;
    this.timer = setInterval(() => {
      this.sweep = true;
      this.kick([]);
    }, intervalMs);
    this.timer.unref?.();
  }

  /** Queues repositories for compaction (and runs a garbage sweep if one is due). */
  kick(repoIds: Iterable<number>): void {
    for (const id of repoIds) this.pending.add(id);
    if (this.running) return;
    this.running = (async () => {
      while (this.pending.size > 0 || this.sweep) {
        const next = this.pending.values().next();
        if (!next.done) {
          this.pending.delete(next.value);
          await compactRepository(this.deps, next.value).catch((e: unknown) => console.error(`compaction of repository ${next.value} failed:`, e));
        } else {
          this.sweep = false;
          await collectPackGarbage(this.deps).catch((e: unknown) => console.error("pack garbage sweep failed:", e));
        }
      }
    })().finally(() => {
      this.running = null;
      // named while the loop was ending
      if (this.pending.size > 0) this.kick([]);
    });
  }

  /** Resolves when the queued work is done. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
