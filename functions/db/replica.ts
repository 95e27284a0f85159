/**
 * Read replicas on Node (issue 9 B.7): the server keeps an embedded replica of a sqld/Turso
 * primary (`DATABASE_URL`) in a local file (`DATABASE_REPLICA_PATH`) and serves reads from it;
 * writes go to the primary over HTTP, one round trip per write batch as on the Worker.
 *
 * Read-your-writes: a write is followed at once by a catch-up sync in the background (off the
 * request path), and until a sync that *started after the write finished* has completed, reads go
 * to the primary instead of the local copy. A caller's next read therefore sees its write — from
 * the primary for the few milliseconds the catch-up takes, locally afterwards — and no request
 * waits for a sync or makes more database round trips than on the Worker.
 *
 * A request that writes reads from the primary too (`writingRequest`): its guards — the caller, its
 * permissions — and the state it builds on are the primary's, never a copy behind another server's
 * revocation.
 *
 * Accounting: `Server-Timing: db;desc=N` counts database calls as everywhere (a read is 1, a write
 * 2). A replica server adds `primary;dur=…;desc=K`: how many of them went over the network to the
 * primary (a read 0, or 1 while reads are pinned; a write 2, its reads and its write batch). Syncs are not a
 * request's: each is two HTTP requests to the primary (`ReplicationLog/Hello`, `BatchLogEntries`),
 * made by a worker thread every `DATABASE_REPLICA_SYNC_INTERVAL` and once after writes (writes
 * that finish while a sync runs share the next one).
 *
 * A primary that cannot be reached: reads keep coming from the local copy (also reads that would
 * have been pinned: a pinned read that gets no answer within half of `[database] QUERY_TIMEOUT`
 * falls back to it); writes answer 503 in Gitea's shape (`DatabaseUnavailable`).
 */
import { createClient, type Client, type InArgs, type InStatement, type Replicated, type ResultSet, type Transaction, type TransactionMode } from "@libsql/client";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { parseGoDuration, SettingsError, type SqliteSettings } from "../lib/settings.ts";
import { DatabaseUnavailable, unreachable } from "./client.ts";
import { openFile } from "./open.ts";
import type { SyncerData, SyncerReply } from "./replica-syncer.ts";

export const DEFAULT_SYNC_INTERVAL = "1s";
/** The worker thread's module: beside this file in the sources, `db/` beside the bundle (scripts/build.ts). */
const SYNCER = import.meta.url.endsWith(".ts") ? new URL("./replica-syncer.ts", import.meta.url) : new URL("./db/replica-syncer.js", import.meta.url);
/** How soon a failed catch-up sync is retried while the replica is behind its own writes. */
const RETRY_MS = 1000;

export interface ReplicaConfig {
  /** The primary: sqld (`http(s)://`) or Turso (`libsql://`). */
  primaryUrl: string;
  authToken?: string;
  /** The local file of the embedded replica. */
  path: string;
  /** Periodic sync (0 = only after writes). */
  syncIntervalMs: number;
}

/** The replica settings of `env` (DATABASE_REPLICA_PATH, DATABASE_REPLICA_SYNC_INTERVAL), or null without a replica. */
export function replicaConfig(env: NodeJS.ProcessEnv = process.env): ReplicaConfig | null {
  const path = env.DATABASE_REPLICA_PATH?.trim();
  if (!path) return null;
  const primaryUrl = env.DATABASE_URL ?? "";
  if (!/^(https?|libsql):\/\//.test(primaryUrl)) {
    throw new SettingsError(`invalid setting DATABASE_REPLICA_PATH: an embedded replica needs DATABASE_URL to name its primary (http(s):// for sqld, libsql:// for Turso), got "${primaryUrl}"`);
  }
  const raw = env.DATABASE_REPLICA_SYNC_INTERVAL ?? DEFAULT_SYNC_INTERVAL;
  const syncIntervalMs = parseGoDuration(raw);
  if (syncIntervalMs === null) throw new SettingsError(`invalid setting DATABASE_REPLICA_SYNC_INTERVAL: expected a duration such as 1s, 500ms or 0 (off), got "${raw}"`);
  return { primaryUrl, authToken: env.DATABASE_AUTH_TOKEN || undefined, path: resolve(path), syncIntervalMs };
}

/** Network use of the primary by one request, for `Server-Timing: primary`; and whether its reads go there. */
interface PrimaryUse {
  calls: number;
  ms: number;
  /** A request that writes: what it reads first (the caller, its permissions, the state it builds on) comes from the primary. */
  writing: boolean;
}

/**
 * Whether a request writes: any method but GET, HEAD and OPTIONS — except a fetch's upload-pack
 * POST, which only reads — and the advertisement a push starts with.
 */
export function writingRequest(req: Request): boolean {
  const url = new URL(req.url);
  if (req.method === "GET" || req.method === "HEAD") return url.pathname.endsWith("/info/refs") && url.searchParams.get("service") === "git-receive-pack";
  return req.method !== "OPTIONS" && !url.pathname.endsWith("/git-upload-pack");
}
const requestUse = new AsyncLocalStorage<PrimaryUse>();

/** Whether a statement only reads (anything in doubt goes to the primary). */
export function readsOnly(sql: string): boolean {
  if (/^\s*(select|explain|values)\b/i.test(sql)) return true;
  if (/^\s*with\b/i.test(sql)) return !/\b(insert|update|delete|replace)\b/i.test(sql);
  if (/^\s*pragma\b/i.test(sql)) return !sql.includes("=");
  return false;
}
const sqlOf = (s: InStatement | [string, InArgs?]) => (Array.isArray(s) ? s[0] : typeof s === "string" ? s : s.sql);

/**
 * The replica's sync handle in a worker thread, and the bookkeeping of read-your-writes: `writeSeq`
 * counts writes this server finished; `syncedSeq` is the largest `writeSeq` seen when a sync that
 * has completed started. The local copy holds every write of this server when they are equal.
 */
class Syncer {
  writeSeq = 0;
  syncedSeq = 0;
  lastError: string | null = null;
  frameNo: number | null = null;
  onSynced: () => void = () => {};
  #worker: Worker;
  #pending = new Map<number, (reply: SyncerReply & { ok: boolean }) => void>();
  #nextId = 1;
  #inflight: Promise<void> | null = null;
  #queued: Promise<void> | null = null;
  #retry: ReturnType<typeof setTimeout> | null = null;
  #every: ReturnType<typeof setInterval> | null = null;
  #closed = false;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on("message", (reply: SyncerReply) => {
      if ("id" in reply) {
        this.#pending.get(reply.id)?.(reply);
        this.#pending.delete(reply.id);
        // An idle sync thread never keeps the process alive; one with an answer to give does.
        if (this.#pending.size === 0) worker.unref();
      }
    });
    const lost = (why: string) => {
      if (!this.#closed) console.error(`embedded replica: the sync thread stopped (${why}); reads after writes go to the primary`);
      for (const [id, done] of this.#pending) done({ id, ok: false, message: why });
      this.#pending.clear();
    };
    worker.on("error", (e) => lost(String(e)));
    worker.on("exit", (code) => lost(`exit ${code}`));
    worker.unref();
  }

  /** Starts the sync thread and opens the replica in it. */
  static async start(data: SyncerData): Promise<Syncer> {
    const worker = new Worker(SYNCER, { workerData: data });
    await new Promise<void>((ok, fail) => {
      worker.once("message", (reply: SyncerReply) => ("type" in reply && reply.type === "failed" ? fail(new Error(reply.message)) : ok()));
      worker.once("error", fail);
    });
    return new Syncer(worker);
  }

  get caughtUp() {
    return this.syncedSeq >= this.writeSeq;
  }

  /** A write of this server finished (or may have): pin reads to the primary until a sync covers it. */
  noteWrite() {
    this.writeSeq += 1;
    void this.request();
  }

  /** Resolves when a sync that started after this call has ended (successfully or not); never rejects. */
  request(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#queued) return this.#queued;
    if (this.#inflight) {
      this.#queued = this.#inflight.then(() => {
        this.#queued = null;
        return this.#run();
      });
      return this.#queued;
    }
    return this.#run();
  }

  /** Syncs every `ms` milliseconds (0: never, only after writes). */
  every(ms: number) {
    if (ms > 0) this.#every = setInterval(() => void this.request(), ms).unref();
  }

  close() {
    this.#closed = true;
    if (this.#every) clearInterval(this.#every);
    if (this.#retry) clearTimeout(this.#retry);
    // The thread closes the replica and ends; a sync stuck on a stalled primary does not hold the process (unref).
    this.#worker.postMessage({ type: "close" });
  }

  #run(): Promise<void> {
    const seq = this.writeSeq;
    const run: Promise<void> = this.#call()
      .then((reply) => {
        if (reply.ok) {
          this.syncedSeq = Math.max(this.syncedSeq, seq);
          this.frameNo = "frameNo" in reply ? reply.frameNo : this.frameNo;
          this.lastError = null;
          this.onSynced();
        } else {
          if (this.lastError === null) console.error(`embedded replica: sync failed: ${"message" in reply ? reply.message : "unknown"}`);
          this.lastError = "message" in reply ? reply.message : "unknown";
        }
        if (!this.caughtUp) this.#retryLater();
      })
      .finally(() => {
        if (this.#inflight === run) this.#inflight = null;
      });
    this.#inflight = run;
    return run;
  }

  #retryLater() {
    if (this.#retry || this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      if (!this.caughtUp) void this.request();
    }, RETRY_MS).unref();
  }

  #call(): Promise<SyncerReply & { ok: boolean }> {
    return new Promise((done) => {
      const id = this.#nextId++;
      this.#pending.set(id, done);
      this.#worker.ref();
      this.#worker.postMessage({ type: "sync", id });
    });
  }
}

/**
 * A libSQL client that reads from the local replica and writes to the primary (see the module
 * comment). Reads are batches in `read` mode and statements that only read; everything else —
 * write batches, migrations, interactive transactions — goes to the primary.
 */
class ReplicaClient implements Client {
  closed = false;
  protocol = "file";
  #local: Client;
  #primary: Client;
  #syncer: Syncer;
  #readTimeoutMs: number;
  #primaryDown = false;

  constructor(local: Client, primary: Client, syncer: Syncer, readTimeoutMs: number) {
    this.#local = local;
    this.#primary = primary;
    this.#syncer = syncer;
    this.#readTimeoutMs = readTimeoutMs;
    syncer.onSynced = () => {
      this.#primaryDown = false;
    };
  }

  execute(stmt: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  execute(stmt: InStatement | string, args?: InArgs): Promise<ResultSet> {
    const run = (c: Client) => (args === undefined ? c.execute(stmt as InStatement) : c.execute(stmt as string, args));
    return readsOnly(sqlOf(stmt)) ? this.#read(run) : this.#write(() => run(this.#primary));
  }

  batch(stmts: Array<InStatement | [string, InArgs?]>, mode?: TransactionMode): Promise<ResultSet[]> {
    const reads = mode === "read" || (mode === undefined && stmts.every((s) => readsOnly(sqlOf(s))));
    return reads ? this.#read((c) => c.batch(stmts, "read")) : this.#write(() => this.#primary.batch(stmts, mode));
  }

  migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.#write(() => this.#primary.migrate(stmts));
  }

  executeMultiple(sql: string): Promise<void> {
    return this.#write(() => this.#primary.executeMultiple(sql));
  }

  async transaction(mode?: TransactionMode): Promise<Transaction> {
    const tx = await this.#onPrimary(() => this.#primary.transaction(mode), 0);
    // Reads stay pinned from the transaction's end until a sync covers what it wrote.
    const ended = <T>(p: Promise<T>) => p.finally(() => this.#syncer.noteWrite());
    return new Proxy(tx, {
      get: (target, prop, receiver) => {
        if (prop === "commit" || prop === "rollback") return () => ended(target[prop]());
        if (prop === "close")
          return () => {
            target.close();
            this.#syncer.noteWrite();
          };
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** Brings the local copy up to date with the primary now. */
  async sync(): Promise<Replicated> {
    await this.#syncer.request();
    if (this.#syncer.lastError) throw new DatabaseUnavailable(`the replica cannot sync: ${this.#syncer.lastError}`);
    return this.#syncer.frameNo === null ? undefined : { frame_no: this.#syncer.frameNo, frames_synced: 0 };
  }

  reconnect() {
    void this.#primary.reconnect();
  }

  close() {
    this.closed = true;
    this.#syncer.close();
    this.#local.close();
    this.#primary.close();
  }

  async #read<T>(run: (c: Client) => Promise<T>): Promise<T> {
    // a writing request reads from the primary: a write never rests on a permission or a state the
    // local copy has not caught up with (another server revoked it, changed it)
    if (requestUse.getStore()?.writing) return this.#onPrimary(() => run(this.#primary), 0);
    if (this.#syncer.caughtUp || this.#primaryDown) return run(this.#local);
    try {
      const result = await this.#onPrimary(() => run(this.#primary), this.#readTimeoutMs);
      this.#primaryDown = false;
      return result;
    } catch (e) {
      if (!(e instanceof DatabaseUnavailable) && !unreachable(e)) throw e;
      // Availability over read-your-writes while the primary is away: the local copy answers.
      if (!this.#primaryDown) console.error(`embedded replica: the primary does not answer (${(e as Error).message}); reads come from the local copy`);
      this.#primaryDown = true;
      return run(this.#local);
    }
  }

  async #write<T>(fn: () => Promise<T>): Promise<T> {
    try {
      const result = await this.#onPrimary(fn, 0);
      this.#primaryDown = false;
      return result;
    } catch (e) {
      if (unreachable(e)) this.#primaryDown = true;
      throw e;
    } finally {
      // Also after a failure: a write whose answer was lost may still have happened.
      this.#syncer.noteWrite();
    }
  }

  /** One network round trip to the primary, counted for `Server-Timing: primary` and bounded by `timeoutMs` (0 = none). */
  async #onPrimary<T>(fn: () => Promise<T>, timeoutMs: number): Promise<T> {
    const use = requestUse.getStore();
    const start = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      if (use) use.calls += 1;
      const work = fn();
      if (timeoutMs <= 0) return await work;
      work.catch(() => {});
      return await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new DatabaseUnavailable(`the primary did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      if (use) use.ms += performance.now() - start;
    }
  }
}

export interface Replica {
  /** The client the app uses: local reads, primary writes. */
  client: Client;
  /** Wraps a fetch handler so that each answer reports its primary round trips in `Server-Timing: primary`. */
  track<A extends unknown[]>(fetch: (req: Request, ...rest: A) => Response | Promise<Response>, serverTiming: boolean, duration?: boolean): (req: Request, ...rest: A) => Promise<Response>;
}

/**
 * Opens the embedded replica of `primary` (already migrated) at `config.path`: the sync thread
 * pulls the primary's current state before this resolves (it throws if it cannot), then the local
 * copy is opened read-only (`query_only`) with the server's SQLite settings.
 */
export async function openReplica(config: ReplicaConfig, primary: Client, sqlite: SqliteSettings, opts: { readTimeoutMs: number }): Promise<Replica> {
  // Its directory is made as DATA_DIR is (libSQL only says "No such file or directory" otherwise).
  mkdirSync(dirname(config.path), { recursive: true });
  const syncer = await Syncer.start({ path: config.path, syncUrl: config.primaryUrl, authToken: config.authToken });
  await syncer.request();
  if (syncer.lastError) {
    syncer.close();
    throw new DatabaseUnavailable(`the embedded replica could not sync from its primary: ${syncer.lastError}`);
  }
  const local = openFile(config.path, sqlite, { readOnly: true });
  syncer.every(config.syncIntervalMs);
  const client = new ReplicaClient(local, primary, syncer, opts.readTimeoutMs);
  return {
    client,
    track: (fetch, serverTiming, duration = false) => (req, ...rest) =>
      requestUse.run({ calls: 0, ms: 0, writing: writingRequest(req) }, async () => {
        const res = await fetch(req, ...rest);
        const use = requestUse.getStore()!;
        if (serverTiming) res.headers.append("Server-Timing", `primary;${duration ? `dur=${use.ms.toFixed(1)};` : ""}desc="${use.calls}"`);
        return res;
      }),
  };
}
