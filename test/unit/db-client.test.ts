/**
 * The metered database client (functions/db/client.ts): every round trip is counted — failed ones
 * too, so that Server-Timing reports what an error answer cost —, batches take the lock their
 * statements need, a database that does not answer or cannot be reached becomes DatabaseUnavailable
 * (503), and SQL errors stay what they are. Real libSQL clients throughout: an embedded file, and
 * HTTP servers on this machine that refuse, reset, fail or never answer.
 */
import { createClient, type Client } from "@libsql/client";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, createDb, DatabaseUnavailable, meteredClient, newMeter, uniqueViolation } from "../../functions/db/client.ts";
import { repository } from "../../functions/db/schema.ts";

let dir: string;
let raw: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "db-client-"));
  raw = createClient({ url: `file:${join(dir, "db.sqlite")}` });
  await raw.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)");
});
afterAll(() => {
  raw.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Calls `fn` and checks that the meter grew by exactly one round trip and by no more time than the call took. */
async function oneRoundTrip<T>(meter: ReturnType<typeof newMeter>, fn: () => Promise<T>): Promise<T> {
  const before = { ...meter };
  const start = performance.now();
  try {
    return await fn();
  } finally {
    const took = performance.now() - start;
    expect(meter.roundTrips).toBe(before.roundTrips + 1);
    expect(meter.ms).toBeGreaterThanOrEqual(before.ms);
    expect(meter.ms - before.ms).toBeLessThanOrEqual(took);
  }
}

describe("round trips are counted", () => {
  it("execute (statement object, or SQL and arguments), batch, executeMultiple, migrate and transaction count one each", async () => {
    const meter = newMeter();
    const c = meteredClient(raw, meter);
    expect((await oneRoundTrip(meter, () => c.execute({ sql: "SELECT ? AS x", args: [7] }))).rows[0].x).toBe(7);
    expect((await oneRoundTrip(meter, () => c.execute("SELECT ? AS y", [8]))).rows[0].y).toBe(8);
    expect((await oneRoundTrip(meter, () => c.execute("SELECT 9 AS z"))).rows[0].z).toBe(9);
    const rs = await oneRoundTrip(meter, () => c.batch(["SELECT 1 AS a", { sql: "SELECT ? AS b", args: [2] }]));
    expect(rs.map((r) => r.rows[0][0])).toEqual([1, 2]);
    await oneRoundTrip(meter, () => c.executeMultiple("CREATE TABLE IF NOT EXISTS m1 (x); INSERT INTO m1 VALUES (1);"));
    await oneRoundTrip(meter, () => c.migrate(["CREATE TABLE IF NOT EXISTS m2 (x)"]));
    const tx = await oneRoundTrip(meter, () => c.transaction("read"));
    tx.close();
    expect(meter.roundTrips).toBe(7);
  });

  it("a failed round trip is counted too (an error answer reports what it cost)", async () => {
    const meter = newMeter();
    const c = meteredClient(raw, meter);
    await expect(oneRoundTrip(meter, () => c.execute("SELECT * FROM no_such_table"))).rejects.toThrow(/no such table/);
    await expect(oneRoundTrip(meter, () => c.batch(["INSERT INTO t (v) VALUES ('dup')", "INSERT INTO t (v) VALUES ('dup')"]))).rejects.toThrow(/UNIQUE/);
    await expect(oneRoundTrip(meter, () => c.executeMultiple("SELECT * FROM no_such_table;"))).rejects.toThrow(/no such table/);
    expect(meter.roundTrips).toBe(3);
    // The failed batch rolled back as a whole.
    expect((await raw.execute("SELECT COUNT(*) AS n FROM t WHERE v = 'dup'")).rows[0].n).toBe(0);
  });

  it("everything else passes through to the client unmetered (properties, close)", async () => {
    const own = createClient({ url: `file:${join(dir, "other.sqlite")}` });
    const meter = newMeter();
    const c = meteredClient(own, meter);
    expect(c.protocol).toBe("file");
    expect(c.closed).toBe(false);
    c.close();
    expect(own.closed).toBe(true);
    expect(c.closed).toBe(true);
    expect(meter).toEqual({ roundTrips: 0, ms: 0 });
  });

  it("createDb counts the round trips of drizzle's queries", async () => {
    const meter = newMeter();
    const db = createDb(raw, meter);
    await db.run("SELECT 1");
    await db.batch([db.run("SELECT 1"), db.run("SELECT 2")]);
    expect(meter.roundTrips).toBe(2);
  });
});

describe("batches take the lock their statements need", () => {
  it("a batch of reads (SELECT, WITH, PRAGMA, EXPLAIN; any case, leading blanks) runs as a read transaction, beside another connection's write lock; an explicit mode is kept", async () => {
    const writer = createClient({ url: `file:${join(dir, "db.sqlite")}` });
    const tx = await writer.transaction("write");
    await tx.execute("INSERT INTO t (v) VALUES ('held')");
    try {
      // A second connection that would need the write lock gives up at once.
      const reader = createClient({ url: `file:${join(dir, "db.sqlite")}`, timeout: 1 } as never);
      const c = meteredClient(reader, newMeter());
      const rs = await c.batch(["  select COUNT(*) FROM t", "WITH x AS (SELECT 1) SELECT * FROM x", "pragma user_version", "EXPLAIN SELECT 1", "\nSelect 1"]);
      expect(rs).toHaveLength(5);
      await expect(c.batch(["SELECT 1", "INSERT INTO t (v) VALUES ('blocked')"])).rejects.toThrow(/locked|busy/i);
      await expect(c.batch(["SELECT 1"], "write")).rejects.toThrow(/locked|busy/i);
      // A statement whose first word only starts like a read is not a read.
      await expect(c.batch(["selectx 1"])).rejects.toThrow(/locked|busy/i);
      reader.close();
    } finally {
      await tx.rollback();
      writer.close();
    }
  });

  it("a batch with any write runs as a write transaction", async () => {
    const c = meteredClient(raw, newMeter());
    await c.batch(["SELECT 1", "INSERT INTO t (v) VALUES ('w1')"]);
    expect((await raw.execute("SELECT COUNT(*) AS n FROM t WHERE v = 'w1'")).rows[0].n).toBe(1);
    await c.batch([{ sql: "UPDATE t SET v = 'w2' WHERE v = ?", args: ["w1"] }]);
    expect((await raw.execute("SELECT COUNT(*) AS n FROM t WHERE v = 'w2'")).rows[0].n).toBe(1);
  });
});

/** A server on this machine; closed after the test. */
async function listen<S extends Server | TcpServer>(server: S): Promise<{ server: S; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}` };
}
const close = (s: Server | TcpServer) => new Promise<void>((resolve) => s.close(() => resolve()));

describe("a database that cannot be reached or does not answer is unavailable", () => {
  it("nothing listening → DatabaseUnavailable `it cannot be reached`, the cause kept", async () => {
    const { server, url } = await listen(createTcpServer());
    await close(server);
    const meter = newMeter();
    const c = meteredClient(createClient({ url }), meter);
    const err = await c.execute("SELECT 1").catch((e) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailable);
    expect(err.message).toBe("the database is unavailable: it cannot be reached");
    expect(err.name).toBe("DatabaseUnavailable");
    expect(err.cause).toBeInstanceOf(Error);
    expect(meter.roundTrips).toBe(1);
  });

  it("a connection reset mid-request → unavailable", async () => {
    const sockets: Socket[] = [];
    const { server, url } = await listen(createTcpServer((s) => (sockets.push(s), s.once("data", () => s.destroy()))));
    try {
      const err = await meteredClient(createClient({ url }), newMeter()).execute("SELECT 1").catch((e) => e);
      expect(err).toBeInstanceOf(DatabaseUnavailable);
    } finally {
      for (const s of sockets) s.destroy();
      await close(server);
    }
  });

  it.each([500, 502, 503, 599])("an HTTP %i from the server → unavailable", async (status) => {
    const { server, url } = await listen(createServer((_, res) => res.writeHead(status, { "Content-Type": "text/plain" }).end("down")));
    try {
      const err = await meteredClient(createClient({ url }), newMeter()).execute("SELECT 1").catch((e) => e);
      expect(err).toBeInstanceOf(DatabaseUnavailable);
      expect(err.message).toBe("the database is unavailable: it cannot be reached");
    } finally {
      await close(server);
    }
  });

  it.each([400, 404])("an HTTP %i is the server's answer, not an outage", async (status) => {
    const { server, url } = await listen(createServer((_, res) => res.writeHead(status, { "Content-Type": "text/plain" }).end("no")));
    try {
      const err = await meteredClient(createClient({ url }), newMeter()).execute("SELECT 1").catch((e) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(DatabaseUnavailable);
      expect(String(err.message)).toContain(String(status));
    } finally {
      await close(server);
    }
  });

  it("a server that accepts and never answers → `no answer within N ms`, counted once", async () => {
    const sockets: Socket[] = [];
    const { server, url } = await listen(createTcpServer((s) => sockets.push(s)));
    try {
      const meter = newMeter();
      const c = meteredClient(createClient({ url }), meter, 50);
      const err = await c.execute("SELECT 1").catch((e) => e);
      expect(err).toBeInstanceOf(DatabaseUnavailable);
      expect(err.message).toBe("the database is unavailable: no answer within 50 ms");
      expect(meter.roundTrips).toBe(1);
      expect(meter.ms).toBeGreaterThanOrEqual(0);
    } finally {
      for (const s of sockets) s.destroy();
      await close(server);
    }
  });

  it("an answered round trip leaves no deadline timer behind; without a timeout none is set", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    await meteredClient(raw, newMeter(), 60_000).execute("SELECT 1");
    expect(timers()).toBe(before);
    await meteredClient(raw, newMeter(), 0).execute("SELECT 1");
    expect(timers()).toBe(before);
    const failed = await meteredClient(raw, newMeter(), 60_000).execute("SELECT * FROM nope").catch((e) => e);
    expect(failed).not.toBeInstanceOf(DatabaseUnavailable);
    expect(timers()).toBe(before);
  });

  it("SQL errors stay SQL errors, with or without a timeout", async () => {
    for (const timeout of [0, 60_000]) {
      const err = await meteredClient(raw, newMeter(), timeout).execute("SELEC 1").catch((e) => e);
      expect(err).not.toBeInstanceOf(DatabaseUnavailable);
      expect(err.message).toMatch(/syntax error/);
    }
  });
});

describe("uniqueViolation and col", () => {
  it("names the index columns of a UNIQUE failure, through nested causes; anything else is null", async () => {
    const err = await raw.execute("INSERT INTO t (v) VALUES ('u'), ('u')").catch((e) => e);
    expect(uniqueViolation(err)).toBe("t.v");
    expect(uniqueViolation(new Error("wrapped", { cause: new Error("wrapped again", { cause: err }) }))).toBe("t.v");
    expect(uniqueViolation(new Error("UNIQUE constraint failed: repository.owner_id, repository.lower_name  "))).toBe("repository.owner_id, repository.lower_name");
    expect(uniqueViolation(new Error("NOT NULL constraint failed: t.v"))).toBeNull();
    expect(uniqueViolation(null)).toBeNull();
    expect(uniqueViolation({ message: 42 })).toBeNull();
  });

  it("col renders a column qualified by its table", () => {
    const db = createDb(raw, newMeter());
    expect(db.select({ x: col(repository.ownerId) }).from(repository).toSQL().sql).toBe('select "repository"."owner_id" from "repository"');
  });
});
