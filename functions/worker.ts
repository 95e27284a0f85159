/**
 * Cloudflare Worker entry point: the same app, with settings from wrangler `[vars]` and the
 * database over Hrana's HTTP pipeline (`db/hrana.ts`) to sqld or Turso (DATABASE_URL,
 * DATABASE_AUTH_TOKEN). A driver is made per request; the open streams it reuses are plain
 * batons kept per isolate, so no I/O object is shared between requests.
 * Migrations are applied by `npm run db:migrate`, never by the Worker.
 */
import { metered, newMeter } from "./db/driver.ts";
import { hranaDriver } from "./db/hrana.ts";
import type { ExecutionContext } from "hono";
import { createApp } from "./app.ts";
import { loadSettings } from "./lib/settings.ts";
import { R2ObjectStore, type R2BucketLike } from "./git/storage/r2-store.ts";
import { withStagedPacks } from "./git/storage/object-store.ts";
import { fetchHop } from "./lib/outbound.ts";
import { cleanupDeliveries, deliverPending, SWEEP_MAX } from "./services/hook-delivery.ts";
import { collectPackGarbage, compactRepository } from "./services/git-maintenance.ts";

type Env = Record<string, unknown> & {
  DATABASE_URL?: string;
  DATABASE_AUTH_TOKEN?: string;
  ASSETS?: { fetch(req: Request): Promise<Response> };
  /** Git pack and index files (wrangler.toml `[[r2_buckets]]`). */
  GIT_OBJECTS?: R2BucketLike;
  /**
   * The background queue (wrangler.toml `[[queues.producers]]`, named for its first use): a message
   * `{ deliver: true }` asks the consumer to deliver the pending webhooks, `{ compact: [ids] }` to
   * compact those repositories' packs.
   */
  HOOK_DELIVERIES?: { send(body: unknown): Promise<void> };
};

/** A message of the background queue. */
type Job = { deliver?: boolean; compact?: number[] };

const driverOf = (e: Env) => {
  const url = e.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set for the Worker");
  return hranaDriver(url, e.DATABASE_AUTH_TOKEN || undefined);
};

/**
 * The driver of the background work (queue consumer, cron): its round trips bounded by
 * QUERY_TIMEOUT as a request's are, a batch the database refused for now sent again.
 */
const backgroundDriverOf = (e: Env) => metered(driverOf(e), newMeter(), loadSettings(e).database.queryTimeoutMs);

/** Delivers every pending webhook task (the queue consumer and the scheduled sweep). */
const deliver = (env: Env) => deliverPending({ driver: backgroundDriverOf(env), settings: loadSettings(env), hop: fetchHop });

const objectsOf = (e: Env) => {
  const bucket = e.GIT_OBJECTS;
  if (!bucket) throw new Error("the GIT_OBJECTS R2 binding is not configured for the Worker");
  return withStagedPacks(new R2ObjectStore(bucket));
};

/** Compacts the repositories' packs, one after another (a failure is logged; the next write decides again). */
async function compact(env: Env, ids: readonly number[]): Promise<void> {
  const deps = { driver: backgroundDriverOf(env), objects: objectsOf(env), settings: loadSettings(env) };
  for (const id of ids) await compactRepository(deps, id).catch((e: unknown) => console.error(`compaction of repository ${id} failed:`, e));
}

let app: ReturnType<typeof createApp> | null = null;

function appFor(env: Env) {
  if (!app) {
    const settings = loadSettings(env);
    app = createApp({
      settings,
      driver: (e) => driverOf(e as Env),
      // After a write that recorded deliveries: a queue message when the binding exists (the
      // consumer delivers), else a delivery after the answer in this invocation.
      deliverHooks: (e, waitUntil) => {
        const queue = (e as Env).HOOK_DELIVERIES;
        waitUntil(queue ? queue.send({ deliver: true }) : deliver(e as Env));
      },
      // After a write that left repositories due for compaction: a queue message, else the work
      // after the answer in this invocation.
      compactGit: (ids, e, waitUntil) => {
        const queue = (e as Env).HOOK_DELIVERIES;
        waitUntil(queue ? queue.send({ compact: ids } satisfies Job) : compact(e as Env, ids));
      },
      objects: (e) => objectsOf(e as Env),
      assets: async (name, e) => {
        const res = await (e as Env).ASSETS?.fetch(new Request(`https://assets.invalid/${name}`));
        return res?.ok ? res.text() : null;
      },
    });
  }
  return app;
}

/**
 * The request line and headers allowed, as Node's HTTP parser allows them (`maxHeaderSize`, 16 KiB;
 * node.ts answers its 431). workerd lets far more through: the same requests get the same 431 here.
 */
const MAX_HEADER_BYTES = 16 * 1024;

/** About the bytes of the request line and header section as an HTTP/1.1 client sent them (the URL here is absolute: a little more). */
function headerBytes(req: Request): number {
  let n = req.method.length + req.url.length + 12;
  req.headers.forEach((value, name) => {
    n += name.length + value.length + 4;
  });
  return n;
}

export default {
  fetch(req: Request, env: Env, ctx: ExecutionContext) {
    if (headerBytes(req) > MAX_HEADER_BYTES) {
      const rootUrl = loadSettings(env).server.rootUrl ?? `${new URL(req.url).origin}/`;
      return Response.json({ message: "request header fields too large", url: `${rootUrl}api/swagger` }, { status: 431, headers: { "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" } });
    }
    return appFor(env).fetch(req, env, ctx);
  },
  /** The background queue's consumer: compactions named by the batch's messages, and webhook deliveries for the rest. */
  async queue(batch: { messages: readonly { body: unknown }[]; ackAll(): void }, env: Env) {
    const jobs = batch.messages.map((m) => (m.body ?? {}) as Job);
    const ids = [...new Set(jobs.flatMap((j) => (Array.isArray(j.compact) ? j.compact.filter((n) => Number.isSafeInteger(n)) : [])))];
    if (ids.length) await compact(env, ids);
    // A sweep that stopped at its bound leaves the rest to the next message.
    if (jobs.some((j) => !j.compact) && (await deliver(env)) >= SWEEP_MAX) await env.HOOK_DELIVERIES?.send({ deliver: true } satisfies Job);
    batch.ackAll();
  },
  /**
   * The cron sweep (wrangler.toml `[triggers]`): deliveries whose queue message or claim was lost;
   * delivery records older than a week; pack files compactions replaced, past their grace period.
   */
  async scheduled(_event: unknown, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(Promise.all([deliver(env), cleanupDeliveries(backgroundDriverOf(env)), collectPackGarbage({ driver: backgroundDriverOf(env), objects: objectsOf(env) })]));
  },
};
