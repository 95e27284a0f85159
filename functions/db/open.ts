/** Opens the database named by DATABASE_URL (default: an embedded file under DATA_DIR) on Node. */
import { createClient, type Client } from "@libsql/client";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import Database from "libsql";
import { clientDriver, type Driver } from "./driver.ts";
import { nativeDriver } from "./native.ts";

export function databaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const dir = resolve(env.DATA_DIR ?? "./data");
  return `file:${dir}/gitea.db`;
}

export function openDatabase(env: NodeJS.ProcessEnv = process.env): Client {
  const url = databaseUrl(env);
  if (url.startsWith("file:") && !url.startsWith("file::memory:")) {
    const path = url.slice("file:".length);
    mkdirSync(resolve(path, ".."), { recursive: true });
  } else if (!/^(https?|libsql|wss?):\/\//.test(url) && !url.startsWith("file::memory:")) {
    throw new Error(`DATABASE_URL must be a file:, http(s)://, libsql:// or ws(s):// URL, got "${url}"`);
  }
  return createClient({ url, authToken: env.DATABASE_AUTH_TOKEN || undefined });
}

/**
 * The driver the Node server uses: an embedded `file:` database through `libsql` directly (each
 * statement prepared once per connection), anything else through `@libsql/client`.
 */
export function openDriver(env: NodeJS.ProcessEnv = process.env): Driver {
  const url = databaseUrl(env);
  if (url.startsWith("file:") && !url.startsWith("file::memory:")) {
    const path = url.slice("file:".length).split("?")[0];
    mkdirSync(resolve(path, ".."), { recursive: true });
    return nativeDriver(new Database(path));
  }
  return clientDriver(openDatabase(env));
}
