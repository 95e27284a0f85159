/**
 * Issue 9 B.3: the embedded file configured for a server, on every connection the server, the CLI
 * and the migrator open (they all open it through `openDatabase`). In-process, on real files; the
 * two-process behaviour (a reader during another process's long write) is in test/e2e/sqlite.test.ts.
 */
import type { Client } from "@libsql/client";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../functions/app.ts";
import { createDb } from "../../functions/db/client.ts";
import { clientDriver, type Driver } from "../../functions/db/driver.ts";
import { migrateDb } from "../../functions/db/migrate.ts";
import { filePath, openDatabase, openDriver } from "../../functions/db/open.ts";
import { loadSettings } from "../../functions/lib/settings.ts";
import { nodeAssets } from "../../functions/node.ts";
import { ROOT, seedUser, token } from "../fixtures/app.ts";

const dirs: string[] = [];
const clients: Array<Client | Driver> = [];
afterAll(() => {
  for (const c of clients) c.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `openDatabase` as the server calls it, on a fresh data directory (or `dir`). */
function open(env: Record<string, string> = {}, dir?: string) {
  const dataDir = dir ?? mkdtempSync(join(tmpdir(), "gitea-db-"));
  if (!dir) dirs.push(dataDir);
  const client = openDatabase({ DATA_DIR: dataDir, ...env });
  clients.push(client);
  return { client, dir: dataDir };
}

const pragmas = async (c: Pick<Client, "execute">) => ({
  journal: (await c.execute("PRAGMA journal_mode")).rows[0]!.journal_mode,
  synchronous: (await c.execute("PRAGMA synchronous")).rows[0]!.synchronous,
  busyTimeout: (await c.execute("PRAGMA busy_timeout")).rows[0]!.timeout,
});

/** The pragmas as the server's own connection (`openDriver`, prepared statements) reports them. */
async function driverPragmas(d: Driver) {
  const one = async (text: string) => (await d.batch([{ text, args: []}], "read"))[0]![0] as unknown as unknown[];
  return { journal: (await one("PRAGMA journal_mode"))[0], synchronous: (await one("PRAGMA synchronous"))[0], busyTimeout: (await one("PRAGMA busy_timeout"))[0] };
}

/** A server app on the embedded file of a new directory (the driver `npm start` uses), with a signed-in user's token. */
async function served(env: Record<string, string>) {
  const { client, dir } = open(env);
  await migrateDb(client);
  const settings = loadSettings({ GITEA__server__ROOT_URL: ROOT, GITEA__security__PASSWORD_HASH_ITERATIONS: "10000", GITEA__security__SECRET_KEY: "test-secret-key-0123456789", ...env });
  const server = openDriver({ DATA_DIR: dir, ...env });
  clients.push(server);
  const app = createApp({ settings, driver: () => server, assets: nodeAssets });
  const alice = await seedUser(createDb(clientDriver(client)));
  return { app, dir, tok: await alice.token() };
}

describe("the embedded file configured for a server", () => {
  it("B.3 the server's own connection (statements prepared once) is configured the same way, and follows the settings", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gitea-db-"));
    dirs.push(dataDir);
    const d = openDriver({ DATA_DIR: dataDir });
    clients.push(d);
    expect(await driverPragmas(d)).toEqual({ journal: "wal", synchronous: 1, busyTimeout: 5000 });
    const other = mkdtempSync(join(tmpdir(), "gitea-db-"));
    dirs.push(other);
    const e = openDriver({ DATA_DIR: other, GITEA__database__SQLITE_JOURNAL_MODE: "delete", GITEA__database__SQLITE_SYNCHRONOUS: "full", GITEA__database__SQLITE_TIMEOUT: "250" });
    clients.push(e);
    expect(await driverPragmas(e)).toEqual({ journal: "delete", synchronous: 2, busyTimeout: 250 });
  });

  it("B.3 every connection runs in WAL mode with synchronous=NORMAL and a 5 s busy timeout by default", async () => {
    const { client } = open();
    expect(await pragmas(client)).toEqual({ journal: "wal", synchronous: 1, busyTimeout: 5000 });
    // An open interactive transaction holds the first connection: the client opens a second one.
    const tx = await client.transaction("write");
    try {
      expect(await pragmas(tx)).toEqual({ journal: "wal", synchronous: 1, busyTimeout: 5000 });
      expect(await pragmas(client)).toEqual({ journal: "wal", synchronous: 1, busyTimeout: 5000 });
    } finally {
      tx.close();
    }
  });

  it("B.3 SQLITE_JOURNAL_MODE, SQLITE_SYNCHRONOUS and SQLITE_TIMEOUT change it", async () => {
    const { client } = open({ GITEA__database__SQLITE_JOURNAL_MODE: "delete", GITEA__database__SQLITE_SYNCHRONOUS: "full", GITEA__database__SQLITE_TIMEOUT: "250" });
    expect(await pragmas(client)).toEqual({ journal: "delete", synchronous: 2, busyTimeout: 250 });
  });

  it("B.3 an invalid SQLITE_* setting stops the opener with a message naming the key", () => {
    expect(() => open({ GITEA__database__SQLITE_SYNCHRONOUS: "sometimes" })).toThrow("GITEA__database__SQLITE_SYNCHRONOUS");
    expect(() => open({ GITEA__database__SQLITE_TIMEOUT: "-1" })).toThrow("GITEA__database__SQLITE_TIMEOUT");
    expect(() => open({ GITEA__database__SQLITE_JOURNAL_MODE: "wal2" })).toThrow("GITEA__database__SQLITE_JOURNAL_MODE");
  });

  it("B.3 file: URLs name the same file as @libsql/client reads them", () => {
    expect(filePath("file:/srv/gitea/gitea.db")).toBe("/srv/gitea/gitea.db");
    expect(filePath("file:///srv/gitea/gitea.db")).toBe("/srv/gitea/gitea.db");
    expect(filePath("file://localhost/srv/gitea.db")).toBe("/srv/gitea.db");
    expect(filePath("file:data/gitea.db")).toBe("data/gitea.db");
    expect(filePath("file:/srv/my%20data/gitea.db")).toBe("/srv/my data/gitea.db");
    expect(() => filePath("file://elsewhere/gitea.db")).toThrow();
  });

  it("B.3 during another connection's write transaction a reader answers 200, and a writer still locked out after SQLITE_TIMEOUT answers 503 in Gitea's shape (not 500)", async () => {
    const env = { GITEA__database__SQLITE_TIMEOUT: "50" };
    const { app, dir, tok } = await served(env);

    const other = open(env, dir).client;
    const tx = await other.transaction("write");
    try {
      await tx.execute("UPDATE user SET description = 'held' WHERE id = 1");
      const read = await app.request(new URL("/api/v1/user", ROOT).href, { headers: token(tok) });
      expect(read.status).toBe(200);
      const write = await app.request(new URL("/api/v1/user/repos", ROOT).href, {
        method: "POST",
        headers: { ...token(tok), "Content-Type": "application/json" },
        body: JSON.stringify({ name: "locked-out" }),
      });
      expect(write.status).toBe(503);
      expect(await write.json()).toEqual({ message: "the database is unavailable, try again later", url: `${ROOT}api/swagger` });
      expect(write.headers.get("Retry-After")).toBe("5");
    } finally {
      await tx.rollback();
    }
    // Once the lock is gone the server is whole again: the refused BEGIN left nothing behind that
    // would fail every later COMMIT (libsql keeps a statement that failed busy un-reset).
    const after = await app.request(new URL("/api/v1/user/repos", ROOT).href, { headers: token(tok) }); // caller + page + count: a read transaction
    expect(after.status, await after.clone().text()).toBe(200);
    const write = await app.request(new URL("/api/v1/user/repos", ROOT).href, {
      method: "POST",
      headers: { ...token(tok), "Content-Type": "application/json" },
      body: JSON.stringify({ name: "after-the-lock" }),
    });
    expect(write.status, await write.clone().text()).toBe(201);
  });

  it("B.3 while a write waits for another process's write lock, the server answers everything else; the write goes ahead once the lock is released", async () => {
    const env = { GITEA__database__SQLITE_TIMEOUT: "5000" };
    const { app, dir, tok } = await served(env);
    const at = (path: string, init: RequestInit = {}) => Promise.resolve(app.request(new URL(path, ROOT).href, { ...init, headers: { ...token(tok), "Content-Type": "application/json" } }));

    const other = open(env, dir).client;
    const tx = await other.transaction("write");
    await tx.execute("UPDATE user SET description = 'held' WHERE id = 1");
    let settled = false;
    const write = at("/api/v1/user/repos", { method: "POST", body: JSON.stringify({ name: "waited" }) }).finally(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 50)); // the write is waiting now
    const started = Date.now();
    const reads = await Promise.all([at("/api/v1/user"), at("/api/v1/user/repos"), at("/api/v1/version")]);
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(settled).toBe(false);
    await tx.rollback();
    const res = await write;
    expect(res.status, await res.clone().text()).toBe(201);
  });
});
