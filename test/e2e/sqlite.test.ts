/**
 * Issue 9 B.3 on the Node target: the embedded file is configured for a server. A second process
 * holds a long write transaction on the server's file (BEGIN IMMEDIATE, several MB written); the
 * server's readers proceed during it, and a second writer (the server, the admin CLI) waits for it
 * (busy timeout) instead of failing with SQLITE_BUSY.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT_DIR, runScript, startNodeServer, type Running } from "../../scripts/lib/processes.ts";
import { basicAuth } from "../fixtures/targets.ts";

const dir = mkdtempSync(join(tmpdir(), "gitea-sqlite-"));
const file = join(dir, "gitea.db");
const env = { DATA_DIR: dir, GITEA__database__SQLITE_TIMEOUT: "30000" };
const admin = { name: "root", password: "root-password-1" };
let server: Running;
let holder: ChildProcessWithoutNullStreams | null = null;

beforeAll(async () => {
  const created = await runScript("functions/cli.ts", ["user", "create", "--username", admin.name, "--password", admin.password, "--email", "root@example.com", "--admin"], env);
  if (created.code !== 0) throw new Error(created.stderr);
  server = await startNodeServer(env);
}, 120_000);

afterAll(async () => {
  holder?.kill();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the lock holder; `send` writes a command and resolves with its answer line. */
function startHolder(name: string) {
  holder = spawn(process.execPath, [join(ROOT_DIR, "test", "fixtures", "hold-write-lock.ts"), file, name], { env: { ...process.env, ...env } });
  holder.stderr.on("data", (d) => process.stderr.write(d));
  const lines = createInterface({ input: holder.stdout })[Symbol.asyncIterator]();
  const proc = holder;
  return {
    send: async (command: string) => {
      proc.stdin.write(`${command}\n`);
      const { value, done } = await lines.next();
      if (done) throw new Error(`the lock holder exited (${proc.exitCode}) after "${command}"`);
      return value;
    },
  };
}

describe("the embedded file configured for a server", () => {
  it("B.3 the file is in WAL mode after the migrator opened it", async () => {
    const fresh = mkdtempSync(join(tmpdir(), "gitea-sqlite-wal-"));
    try {
      const migrated = await runScript("scripts/migrate.ts", [], { DATABASE_URL: `file:${join(fresh, "gitea.db")}` });
      expect(migrated.code, migrated.stderr).toBe(0);
      const { createClient } = await import("@libsql/client");
      const plain = createClient({ url: `file:${join(fresh, "gitea.db")}` });
      // The journal mode is stored in the file: a plain connection opened afterwards reads it.
      expect((await plain.execute("PRAGMA journal_mode")).rows[0]!.journal_mode).toBe("wal");
      plain.close();
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it("B.3 a reader proceeds during a long write transaction of another process, and second writers (server, CLI) wait for it instead of failing with SQLITE_BUSY", async () => {
    const h = startHolder("lockholder");
    const auth = basicAuth(admin.name, admin.password);
    expect(await h.send("lock")).toBe("locked");

    // Readers proceed while the write transaction is open, and see the last committed state.
    const me = await fetch(`${server.url}/api/v1/user`, { headers: auth });
    expect(me.status).toBe(200);
    expect((await me.json()).login).toBe(admin.name);
    expect((await fetch(`${server.url}/api/v1/users/search?q=root`)).status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/users/lockholder`, { headers: auth })).status).toBe(404);

    // Second writers arrive while the lock is still held (the holder commits a second later):
    // without a busy timeout their BEGIN IMMEDIATE fails at once with SQLITE_BUSY (a 500, exit 1).
    const committed = h.send("commit-after 1000");
    const write = fetch(`${server.url}/api/v1/admin/users`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ username: "serverwriter", email: "serverwriter@example.com", password: "writer-password-1", must_change_password: false }),
    });
    const cli = runScript("functions/cli.ts", ["user", "create", "--username", "cliwriter", "--password", "writer-password-2", "--email", "cliwriter@example.com"], env);
    const [res, cliResult, holderAnswer] = await Promise.all([write, cli, committed]);

    expect(holderAnswer).toBe("committed");
    expect(res.status, await res.clone().text()).toBe(201);
    expect(cliResult.code, cliResult.stderr).toBe(0);
    for (const name of ["lockholder", "serverwriter", "cliwriter"]) {
      expect((await fetch(`${server.url}/api/v1/users/${name}`, { headers: auth })).status, name).toBe(200);
    }
  });
});
