/**
 * Call admission and device exclusivity: a bound on calls waiting for a device (beyond it the
 * call fails fast with RESOURCE_EXHAUSTED), and a FIFO lock whose waiters leave the queue as soon
 * as their call is cancelled or times out.
 */
import { Code, ConnectError } from "@connectrpc/connect";

/** At most `max` calls at once (running or waiting for a device). */
export class Admission {
  readonly max: number;
  private n = 0;
  constructor(max: number) {
    this.max = max;
  }
  get inUse(): number {
    return this.n;
  }
  /** Takes a slot or throws RESOURCE_EXHAUSTED; the returned function gives it back (once). */
  enter(): () => void {
    if (this.n >= this.max) throw new ConnectError(`${this.n} calls are already waiting for the device (limit ${this.max}); retry later`, Code.ResourceExhausted);
    this.n++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.n--;
    };
  }
}

/** A first-come, first-served mutex; a waiter whose signal aborts is dropped from the queue. */
export class FifoLock {
  private held = false;
  private readonly waiters: { grant: () => void }[] = [];

  /** Runs `fn` alone; rejects with the signal's reason if it aborts before the lock is granted. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    // An aborted signal always carries a reason (an AbortError DOMException unless one was given).
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const w = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(w);
    });
  }

  private release(): void {
    const next = this.waiters.shift();
    if (next) next.grant();
    else this.held = false;
  }
}
