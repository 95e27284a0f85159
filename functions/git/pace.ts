/**
 * Cooperative pacing of one request's long CPU work (diffing trees of 100,000 files, line stats,
 * rename search, listing a directory of 500,000 entries): every so many units of work a macrotask
 * yield, so other requests, timers and I/O run in between (one request held the whole server for
 * 130 s before); and once the request's client is gone, the work stops at the next yield instead
 * of running to the end for nobody. Counted, not timed (workerd's clock stands still while code runs).
 */
import { GitError } from "./errors.ts";
import { tick } from "./pack/inflate.ts";

/** Units of work between yields: about a millisecond's worth of the loops that count them. */
export const PACE_UNITS = 2_000;

export class Pacer {
  private n = 0;
  private readonly signal: AbortSignal | undefined;
  private readonly every: number;

  constructor(signal?: AbortSignal, every = PACE_UNITS) {
    this.signal = signal;
    this.every = every;
  }

  /** Counts `units` of work: a promise to await when it is time to yield (it rejects with `aborted` once the client is gone), else null. */
  step(units = 1): Promise<void> | null {
    this.n += units;
    if (this.n < this.every) return null;
    this.n = 0;
    return tick().then(() => {
      if (this.signal?.aborted) throw new GitError("aborted", "the request was cancelled: its client went away");
    });
  }
}

/** A pacer that never yields (work outside a request: tests, maintenance). */
export const UNPACED = new Pacer(undefined, Number.POSITIVE_INFINITY);
