/**
 * A timer that fires at a due time to within a few tens of microseconds, on average on time, for
 * the latency proxy (bench/latency-proxy.ts).
 *
 * `setTimeout` counts whole milliseconds of the event loop's cached clock: on the bench machine a
 * 30 ms timer fired 0.17–0.27 ms late (p10–p90), sometimes 0.8 ms early, and a proxy that then
 * re-armed for the fraction left waited a whole extra millisecond; it held a "30 ms" request for
 * 30.5 ms at the median. Here a thread sleeps in `Atomics.wait`, whose timeout takes fractions of
 * a millisecond, and wakes the owner's event loop with a message. That wakeup takes its own time
 * (0.23–0.36 ms measured), so the alarm learns it: every firing measures how late the owner saw
 * it, and the thread is armed that much earlier next time (`lead`). The owner then sees its due
 * times come with a median error near zero (p10–p90 −0.09 to +0.05 ms measured), so about half
 * the time a little early: an owner that must not act early waits out the rest itself.
 *
 * One alarm holds one due time; `at()` replaces it (the proxy's due times come in arrival order,
 * so its earliest is always the head of its queue).
 */
import { Worker } from "node:worker_threads";

/** Milliseconds on a monotonic clock that every thread of the process shares. */
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

const THREAD = `
const { workerData, parentPort } = require("node:worker_threads");
const seq = new Int32Array(workerData, 0, 2);
const due = new Float64Array(workerData, 8, 1);
const now = () => Number(process.hrtime.bigint()) / 1e6;
for (;;) {
  const s = Atomics.load(seq, 0);
  if (Atomics.load(seq, 1)) break;
  const wait = due[0] - now();
  if (wait > 0) {
    Atomics.wait(seq, 0, s, wait);
    continue;
  }
  parentPort.postMessage(0);
  Atomics.wait(seq, 0, s);
}
`;

export interface Alarm {
  /** Calls `onDue` once, when `dueMs` (on `nowMs`) has come, as near as the alarm can tell; replaces an earlier call. */
  at(dueMs: number): void;
  /** How much earlier than the due time the thread is armed: the owner's wakeup as last measured (ms). */
  readonly lead: number;
  stop(): Promise<void>;
}

/** How fast the lead follows the measured lateness (a fraction of each error). */
const GAIN = 0.1;
const MAX_LEAD_MS = 1;

export function startAlarm(onDue: () => void): Alarm {
  const shared = new SharedArrayBuffer(16);
  // [0] changes with every new due time, [1] = 1 stops the thread.
  const seq = new Int32Array(shared, 0, 2);
  const due = new Float64Array(shared, 8, 1);
  due[0] = Number.POSITIVE_INFINITY;
  let target = Number.POSITIVE_INFINITY;
  let lead = 0;
  const thread = new Worker(THREAD, { eval: true, workerData: shared });
  thread.on("message", () => {
    lead = Math.min(MAX_LEAD_MS, Math.max(0, lead + GAIN * (nowMs() - target)));
    onDue();
  });
  thread.unref();
  return {
    at(dueMs) {
      target = dueMs;
      due[0] = dueMs - lead;
      // The thread reads the sequence before the due time, so a change it misses makes its wait return at once.
      Atomics.add(seq, 0, 1);
      Atomics.notify(seq, 0);
    },
    get lead() {
      return lead;
    },
    async stop() {
      Atomics.store(seq, 1, 1);
      Atomics.add(seq, 0, 1);
      Atomics.notify(seq, 0);
      await thread.terminate();
    },
  };
}
