/**
 * Node entry point (`npm start`): settings from the environment, the database from DATABASE_URL
 * (default: an embedded libSQL file in DATA_DIR), migrations applied, then the API on HOST:PORT.
 */
import { serve } from "@hono/node-server";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { STATUS_CODES, type IncomingMessage, type ServerOptions } from "node:http";
import type { Duplex } from "node:stream";
import { dirname, join, resolve } from "node:path";
import { createApp } from "./app.ts";
import { nodeHop } from "./lib/outbound-node.ts";
import { HookDeliverer } from "./services/hook-delivery.ts";
import { GitMaintainer } from "./services/git-maintenance.ts";
import { DirectoryObjectStore } from "./git/storage/fs-store.ts";
import { withStagedPacks } from "./git/storage/object-store.ts";
import { migrateDb } from "./db/migrate.ts";
import { clientDriver, metered, newMeter } from "./db/driver.ts";
import { databaseUrl, openDatabase, openDriver } from "./db/open.ts";
import { openReplica, replicaConfig, type Replica } from "./db/replica.ts";
import { loadSettings, SettingsError, type Settings } from "./lib/settings.ts";
import type { SwaggerAsset } from "./lib/swagger-ui.ts";

const swaggerDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** Reads a Swagger UI file from the installed swagger-ui-dist package. */
export const nodeAssets = (name: SwaggerAsset) => readFile(join(swaggerDir, name), "utf8");

/** The instance's secret key from DATA_DIR/secret.key, created (mode 0600) on first start. */
export function secretKeyFile(dataDir: string): string {
  const file = join(dataDir, "secret.key");
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    // Written whole under another name, then linked into place: a server starting at the same
    // moment on a shared DATA_DIR reads either no file or the whole key, never a half-written one.
    const tmp = join(dataDir, `.secret.key.${process.pid}.${randomBytes(4).toString("hex")}`);
    const key = randomBytes(32).toString("hex");
    writeFileSync(tmp, key, { mode: 0o600, flag: "wx" });
    try {
      linkSync(tmp, file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // a filesystem without hard links (some SMB and FUSE mounts): an exclusive create instead
      if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS") {
        try {
          writeFileSync(file, key, { mode: 0o600, flag: "wx" });
        } catch (e2) {
          if ((e2 as NodeJS.ErrnoException).code !== "EEXIST") throw e2;
        }
      } else if (code !== "EEXIST") throw e;
    } finally {
      unlinkSync(tmp);
    }
  }
  return readFileSync(file, "utf8").trim();
}

/**
 * Requests Node's HTTP parser refuses before the app sees them (headers too large, malformed
 * requests, header timeouts) are answered in Gitea's JSON error shape too (issue 8 B.7), instead
 * of Node's bare status line.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, rootUrl: string) {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const message = status === 431 ? "request header fields too large" : status === 408 ? "request timeout" : "bad request";
  const body = JSON.stringify({ message, url: `${rootUrl}api/swagger` });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json;charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * A CONNECT request is no tunnel here: it gets what any method no route serves gets (405 with
 * `Allow`, or 404 for a path nothing serves), as Gitea's router answers it. Node hands such a
 * request to a `connect` listener, and without one drops the connection unanswered; the answer is
 * the app's own for the same request with a method no route takes (WHATWG `Request` refuses CONNECT).
 */
export async function answerConnect(fetch: (req: Request) => Response | Promise<Response>, req: IncomingMessage, socket: Duplex & { setTimeout?(ms: number, cb: () => void): unknown }, origin: string) {
  socket.on("error", () => socket.destroy());
  // The connection is ours now, outside the server's idle timeout: bounded, and closed both ways once answered.
  socket.setTimeout?.(IDLE_SOCKET_MS, () => socket.destroy());
  try {
    const headers = new Headers();
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const [name, value] = [req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string];
      if (!/^(?:content-length|transfer-encoding|connection|upgrade|expect)$/i.test(name)) headers.append(name, value);
    }
    // The authority form (`CONNECT host:443`) names no path of ours; a path is appended, never
    // resolved (`//other.host/x` stays a path here).
    const target = req.url?.startsWith("/") ? req.url : "/";
    const res = await fetch(new Request(`${origin}${target}`, { method: "PROPFIND", headers }));
    const body = Buffer.from(await res.arrayBuffer());
    const head = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ""}`];
    res.headers.forEach((value, name) => {
      if (name !== "content-length" && name !== "connection" && name !== "transfer-encoding") head.push(`${name}: ${value}`);
    });
    head.push(`Date: ${new Date().toUTCString()}`, `Content-Length: ${body.length}`, "Connection: close", "", "");
    socket.end(Buffer.concat([Buffer.from(head.join("\r\n"), "latin1"), body]), () => socket.destroy());
  } catch {
    socket.destroy();
  }
}

/**
 * Node's HTTP server options: no limit on how long a request may take to arrive (Node's default
 * cuts every request at 300 s — a 100 MiB push needed 2.8 Mbit/s; Gitea's server sets no read
 * timeout). Headers must still arrive within Node's 60 s, and a connection that goes silent for
 * IDLE_SOCKET_MS is closed (`server.setTimeout`), so a client that stops sending holds nothing long.
 */
export const HTTP_OPTIONS = { requestTimeout: 0, headersTimeout: 60_000 } as const satisfies ServerOptions;
/** The innermost reason of an error (`cause` chain), with its code. */
function rootCause(e: unknown): string {
  let cur = e as { cause?: unknown; code?: unknown; message?: unknown } | undefined;
  while (cur && typeof cur === "object" && cur.cause && typeof cur.cause === "object") cur = cur.cause as typeof cur;
  // credentials in a URL the message quotes stay out of the log
  const message = (typeof cur?.message === "string" ? cur.message : String(cur)).replace(/\/\/[^/@\s]+@/g, "//");
  return typeof cur?.code === "string" && !message.includes(cur.code) ? `${cur.code}: ${message}` : message;
}

/** A database URL without credentials, for messages. */
const redactedUrl = (url: string | undefined) => {
  if (!url) return null;
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    return u.href;
  } catch {
    return "(unparsable DATABASE_URL)";
  }
};

/** How long a connection may stay silent — no byte either way — before it is closed. */
export const IDLE_SOCKET_MS = 120_000;

export async function startServer(env: NodeJS.ProcessEnv = process.env) {
  let settings: Settings;
  let replicaOf: ReturnType<typeof replicaConfig>;
  try {
    settings = loadSettings(env);
    replicaOf = replicaConfig(env);
    if (env.PORT !== undefined && (!/^\d{1,5}$/.test(env.PORT.trim()) || Number(env.PORT) > 65535)) {
      throw new SettingsError(`invalid setting PORT: expected a TCP port (0–65535), got "${env.PORT}"`);
    }
  } catch (e) {
    if (e instanceof SettingsError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
  // Secrets at rest need [security] SECRET_KEY; without one, a key is made once and kept in DATA_DIR.
  settings.security.secretKey ??= secretKeyFile(resolve(env.DATA_DIR ?? "./data"));
  // With DATABASE_REPLICA_PATH, DATABASE_URL is the primary: it is migrated, then replicated locally (issue 9 B.7).
  const primary = openDatabase(env, settings.database.sqlite);
  await migrateDb(primary).catch((e: unknown) => {
    // The driver's own error wraps the reason (ECONNREFUSED, a bad token, a read-only file) in the
    // failed statement's text: say what could not be reached, and why.
    console.error(`cannot start: the database ${redactedUrl(env.DATABASE_URL) ?? "file"} could not be migrated: ${rootCause(e)}`);
    process.exit(1);
  });
  let replica: Replica | null = null;
  if (replicaOf) {
    const { queryTimeoutMs } = settings.database;
    replica = await openReplica(replicaOf, primary, settings.database.sqlite, { readTimeoutMs: queryTimeoutMs > 0 ? Math.ceil(queryTimeoutMs / 2) : 0 });
  } else {
    // The server's own connection (prepared statements) replaces the migrator's.
    primary.close();
  }
  const driver = replica ? clientDriver(replica.client) : openDriver(env, settings.database.sqlite);
  // Git objects under DATA_DIR/git/<repository id>/ (keyed by id: renames and transfers move nothing).
  const objects = withStagedPacks(new DirectoryObjectStore(resolve(env.DATA_DIR ?? "./data")));
  // The background work's round trips are bounded by QUERY_TIMEOUT as a request's are (a stalled
  // database would otherwise hold a sweep for as long as the client's own timeout, minutes), and a
  // batch the database refused for now is sent again.
  const background = metered(driver, newMeter(), settings.database.queryTimeoutMs);
  // Webhook deliveries run in this process, off the request path (services/hook-delivery.ts).
  const deliverer = new HookDeliverer({ driver: background, settings, hop: nodeHop });
  // Pack compaction and the deletion of replaced pack files, also off the request path (services/git-maintenance.ts).
  const maintainer = new GitMaintainer({ driver: background, objects, settings });
  const app = createApp({
    settings,
    driver: () => driver,
    assets: nodeAssets,
    objects: () => objects,
    deliverHooks: () => deliverer.kick(),
    compactGit: (ids) => maintainer.kick(ids),
  });
  const port = Number(env.PORT ?? 3000);
  const hostname = env.HOST ?? "127.0.0.1";
  const fetch = replica ? replica.track(app.fetch, settings.server.enableServerTiming, settings.server.serverTimingDuration) : app.fetch;
  const server = serve({ fetch, port, hostname, serverOptions: HTTP_OPTIONS });
  server.setTimeout(IDLE_SOCKET_MS);
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket, settings.server.rootUrl ?? `http://${hostname}:${port}/`));
  server.on("connect", (req: IncomingMessage, socket: Duplex) => void answerConnect(fetch, req, socket, `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`));
  await new Promise<void>((ok) => {
    const failed = (e: NodeJS.ErrnoException) => {
      console.error(`cannot start: cannot listen on ${hostname}:${port}: ${e.code ?? e.message}`);
      process.exit(1);
    };
    server.once("error", failed);
    server.once("listening", () => {
      server.off("error", failed);
      ok();
    });
  });
  // What a stopped server left undelivered, and replaced pack files past their grace period.
  deliverer.kick();
  maintainer.kick([]);
  const shutdown = () => {
    deliverer.stop();
    maintainer.stop();
    server.close(() => {
      driver.close();
      process.exit(0);
    });
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
  const url = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  const where = databaseUrl(env).replace(/\/\/[^@/]*@/, "//");
  const replicaNote = replicaOf ? `, embedded replica ${replicaOf.path}, sync ${replicaOf.syncIntervalMs > 0 ? `every ${replicaOf.syncIntervalMs} ms` : "after writes only"}` : "";
  console.log(`API listening on ${url}/api/v1 (database ${where}${replicaNote})`);
  return { server, driver, url, deliverer, maintainer };
}

if (import.meta.url === `file://${process.argv[1]}`) await startServer();
