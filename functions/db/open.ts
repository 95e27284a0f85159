/**
 * Opens the database named by DATABASE_URL (default: an embedded file under DATA_DIR) on Node: the
 * server, the admin CLI and the migrator all open it here. An embedded `file:` database is
 * configured for a server (issue 9 B.3) on every connection the client opens: WAL, so readers never
 * wait for a writer; `synchronous=NORMAL`; and a busy timeout, so a second writer waits for the
 * first instead of failing with SQLITE_BUSY. See docs/configuration.md for the durability trade-off.
 */
import { createClient, type Client } from "@libsql/client";
import { ConnectionPool, Sqlite3Client } from "@libsql/client/sqlite3";
import Database from "libsql";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { loadSettings, type SqliteSettings } from "../lib/settings.ts";
import { clientDriver, type Driver } from "./driver.ts";
import { nativeDriver } from "./native.ts";

export function databaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const dir = resolve(env.DATA_DIR ?? "./data");
  return `file:${dir}/gitea.db`;
}

/** The statements that configure one connection to an embedded file, in the order they must run. */
export function sqlitePragmas(sqlite: SqliteSettings, opts: { readOnly?: boolean } = {}): string[] {
  // The busy timeout first: switching the journal mode takes a lock another process may hold.
  const pragmas = [`PRAGMA busy_timeout = ${sqlite.busyTimeoutMs}`];
  // A read-only connection (the local copy of an embedded replica) leaves the file's mode alone.
  if (opts.readOnly) pragmas.push("PRAGMA query_only = 1");
  else pragmas.push(`PRAGMA journal_mode = ${sqlite.journalMode.toUpperCase()}`, `PRAGMA synchronous = ${sqlite.synchronous.toUpperCase()}`);
  return pragmas;
}

type Connection = ReturnType<ConnectionPool["acquireSync"]>;

/**
 * @libsql/client's connection pool, configuring each connection once when it is opened. The
 * client opens a second connection for every interactive transaction that is still open, and
 * `synchronous` and `busy_timeout` are per connection, so configuring "the client" once would miss
 * those.
 */
class ConfiguredPool extends ConnectionPool {
  #pragmas: string[];
  #configured = new WeakSet<Connection>();

  constructor(path: string, pragmas: string[]) {
    // @libsql/client's default limit for a local file (`concurrency`).
    super(path, {}, 20);
    this.#pragmas = pragmas;
  }

  override acquireSync(forTransaction?: boolean): Connection {
    const db = super.acquireSync(forTransaction);
    if (!this.#configured.has(db)) {
      try {
        for (const pragma of this.#pragmas) db.exec(pragma);
      } catch (e) {
        this.release(db);
        throw e;
      }
      this.#configured.add(db);
    }
    return db;
  }
}

/** The file path of a `file:` URL, as @libsql/client reads it (`file:rel`, `file:/abs`, `file:///abs`). */
export function filePath(url: string): string {
  const rest = url.slice("file:".length).split("?")[0]!; // !: split returns at least one part
  const path = rest.startsWith("//") ? rest.replace(/^\/\/(localhost)?(?=\/)/i, "") : rest;
  if (path.startsWith("//")) throw new Error(`DATABASE_URL: a file: URL names no host, got "${url}"`);
  return decodeURIComponent(path);
}

/** A client of an embedded file whose every connection runs `sqlitePragmas(sqlite)`. */
export function openFile(path: string, sqlite: SqliteSettings, opts: { readOnly?: boolean } = {}): Client {
  mkdirSync(resolve(path, ".."), { recursive: true });
  const pool = new ConfiguredPool(path, sqlitePragmas(sqlite, opts));
  // Fail at start, not at the first request, when the file cannot be opened or configured.
  pool.release(pool.acquireSync());
  return new Sqlite3Client(pool, "number");
}

/**
 * The database of DATABASE_URL: an embedded file configured for a server, an in-memory database,
 * or a remote one (sqld over http(s)://, Turso over libsql://) with DATABASE_AUTH_TOKEN.
 * `sqlite` defaults to the `[database] SQLITE_*` settings of `env`.
 */
export function openDatabase(env: NodeJS.ProcessEnv = process.env, sqlite?: SqliteSettings): Client {
  const url = databaseUrl(env);
  if (url.startsWith("file::memory:")) return createClient({ url });
  if (url.startsWith("file:")) return openFile(filePath(url), sqlite ?? loadSettings(env).database.sqlite);
  if (!/^(https?|libsql|wss?):\/\//.test(url)) {
    throw new Error(`DATABASE_URL must be a file:, http(s)://, libsql:// or ws(s):// URL, got "${url}"`);
  }
  return createClient({ url, authToken: env.DATABASE_AUTH_TOKEN || undefined });
}

/**
 * The driver the Node server uses: an embedded `file:` database through `libsql` directly (each
 * statement prepared once on the server's one connection, configured by `sqlitePragmas`), anything
 * else — an in-memory database, sqld, Turso — through `@libsql/client`.
 */
export function openDriver(env: NodeJS.ProcessEnv = process.env, sqlite?: SqliteSettings): Driver {
  const url = databaseUrl(env);
  if (!url.startsWith("file:") || url.startsWith("file::memory:")) return clientDriver(openDatabase(env, sqlite));
  const path = filePath(url);
  mkdirSync(resolve(path, ".."), { recursive: true });
  const db = new Database(path);
  try {
    for (const pragma of sqlitePragmas(sqlite ?? loadSettings(env).database.sqlite)) db.exec(pragma);
  } catch (e) {
    db.close();
    throw e;
  }
  return nativeDriver(db);
}
