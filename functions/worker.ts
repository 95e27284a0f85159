/**
 * Cloudflare Worker entry point: the same app, with settings from wrangler `[vars]` and the
 * database over Hrana's HTTP pipeline (`db/hrana.ts`) to sqld or Turso (DATABASE_URL,
 * DATABASE_AUTH_TOKEN). A driver is made per request; the open streams it reuses are plain
 * batons kept per isolate, so no I/O object is shared between requests.
 * Migrations are applied by `npm run db:migrate`, never by the Worker.
 */
import { hranaDriver } from "./db/hrana.ts";
import type { ExecutionContext } from "hono";
import { createApp } from "./app.ts";
import { loadSettings } from "./lib/settings.ts";
import { R2ObjectStore, type R2BucketLike } from "./git/storage/r2-store.ts";

type Env = Record<string, unknown> & {
  DATABASE_URL?: string;
  DATABASE_AUTH_TOKEN?: string;
  ASSETS?: { fetch(req: Request): Promise<Response> };
  /** Git pack and index files (wrangler.toml `[[r2_buckets]]`). */
  GIT_OBJECTS?: R2BucketLike;
};

let app: ReturnType<typeof createApp> | null = null;

function appFor(env: Env) {
  if (!app) {
    const settings = loadSettings(env);
    app = createApp({
      settings,
      driver: (e) => {
        const url = (e as Env).DATABASE_URL;
        if (!url) throw new Error("DATABASE_URL is not set for the Worker");
        return hranaDriver(url, (e as Env).DATABASE_AUTH_TOKEN || undefined);
      },
      objects: (e) => {
        const bucket = (e as Env).GIT_OBJECTS;
        if (!bucket) throw new Error("the GIT_OBJECTS R2 binding is not configured for the Worker");
        return new R2ObjectStore(bucket);
      },
      assets: async (name, e) => {
        const res = await (e as Env).ASSETS?.fetch(new Request(`https://assets.invalid/${name}`));
        return res?.ok ? res.text() : null;
      },
    });
  }
  return app;
}

export default {
  fetch(req: Request, env: Env, ctx: ExecutionContext) {
    return appFor(env).fetch(req, env, ctx);
  },
};
