/**
 * The database drivers (functions/db/driver.ts, native.ts): every round trip is counted — failed
 * ones too, so that Server-Timing reports what an error answer cost —, batches take the lock their
 * mode needs and are all or nothing, a database that does not answer or cannot be reached becomes
 * DatabaseUnavailable (503), and SQL errors stay what they are. Real libSQL throughout: an embedded
 * file (through `libsql` directly and through `@libsql/client`), and HTTP servers on this machine
 * that refuse, reset, fail or never answer.
 */
import { createClient, type Client } from "@libsql/client";
import Database from "libsql";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, createDb, DatabaseUnavailable, newMeter, uniqueViolation } from "../../functions/db/client.ts";
import { clientDriver, driverAsClient, metered, rowGone, unreachable, type BatchItem, type Driver } from "../../functions/db/driver.ts";
import { nativeDriver, singleRowRead } from "../../functions/db/native.ts";
import { migrateDb } from "../../functions/db/migrate.ts";
import { repository } from "../../functions/db/schema.ts";

const q = (text: string, ...args: unknown[]): BatchItem => ({ text, args });
type Failure = Error & { cause?: unknown };
/** The error `p` rejects with (a test fails when it resolves). */
const failure = (p: Promise<unknown>): Promise<Failure> =>
  p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: Failure) => e,
  );
/** The one-column value of each statement's first row (arrays from the native driver, rows from the client). */
const firsts = (rs: unknown[][]) => rs.map((rows) => (rows[0] as unknown as unknown[])?.[0]);

let dir: string;
let raw: Client;
const drivers: Driver[] = [];
/** Both drivers over the same file: `libsql` directly (prepared once) and `@libsql/client`. */
const both = () => {
  const d = { native: nativeDriver(new Database(join(dir, "db.sqlite"))), client: clientDriver(createClient({ url: `file:${join(dir, "db.sqlite")}` })) };
  drivers.push(d.native, d.client);
  return Object.entries(d);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "db-client-"));
  raw = createClient({ url: `file:${join(dir, "db.sqlite")}` });
  await raw.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)");
});
afterAll(() => {
  for (const d of drivers) d.close();
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
  it.each(["native", "client"])("%s: a batch is one round trip, whatever it holds, with its statements' answers in order", async (kind) => {
    const d = Object.fromEntries(both())[kind] as Driver;
    const meter = newMeter();
    const m = metered(d, meter);
    expect(firsts(await oneRoundTrip(meter, () => m.batch([q("SELECT ? AS x", 7)], "read")))).toEqual([7]);
    expect(firsts(await oneRoundTrip(meter, () => m.batch([q("SELECT 1 AS a"), q("SELECT ? AS b", 2), q("SELECT ? || ? AS c", "x", "y")], "read")))).toEqual([1, 2, "xy"]);
    await oneRoundTrip(meter, () => m.batch([q("INSERT INTO t (v) VALUES (?)", `${kind}-1`), q("UPDATE t SET v = ? WHERE v = ?", `${kind}-2`, `${kind}-1`)], "write"));
    expect((await raw.execute({ sql: "SELECT COUNT(*) AS n FROM t WHERE v = ?", args: [`${kind}-2`] })).rows[0]!.n).toBe(1);
    expect(meter.roundTrips).toBe(3);
  });

  it.each(["native", "client"])("%s: a failed round trip is counted too, and a failed write batch leaves nothing behind", async (kind) => {
    const d = Object.fromEntries(both())[kind] as Driver;
    const meter = newMeter();
    const m = metered(d, meter);
    await expect(oneRoundTrip(meter, () => m.batch([q("SELECT * FROM no_such_table")], "read"))).rejects.toThrow(/no such table/);
    await expect(oneRoundTrip(meter, () => m.batch([q("INSERT INTO t (v) VALUES ('dup')"), q("INSERT INTO t (v) VALUES ('dup')")], "write"))).rejects.toThrow(/UNIQUE/);
    expect(meter.roundTrips).toBe(2);
    expect((await raw.execute("SELECT COUNT(*) AS n FROM t WHERE v = 'dup'")).rows[0]!.n).toBe(0);
    // The connection is usable after the failure (no transaction left open).
    expect(firsts(await m.batch([q("SELECT 5")], "read"))).toEqual([5]);
  });

  it("the native driver prepares a statement text once and reuses it for every later call", async () => {
    const db = new Database(join(dir, "db.sqlite"));
    let prepares = 0;
    const prepare = db.prepare.bind(db);
    db.prepare = ((text: string) => (prepares++, prepare(text))) as typeof db.prepare;
    const d = nativeDriver(db);
    drivers.push(d);
    const baseline = prepares; // BEGIN / COMMIT / ROLLBACK
    for (let i = 0; i < 5; i++) await d.batch([q("SELECT ? AS x", i), q("SELECT 2")], "read");
    expect(prepares - baseline).toBe(2);
    d.close();
    await expect(d.batch([q("SELECT 1")], "read")).rejects.toThrow(/closed/);
  });

  it.each(["native", "client"])("%s: a read ending in LIMIT 1 answers its one row, or none, whatever ran before it", async (kind) => {
    const d = Object.fromEntries(both())[kind];
    await d!.batch([q("INSERT INTO t (v) VALUES ('one-a'), ('one-b')")], "write");
    const first = "SELECT v FROM t WHERE v >= ? ORDER BY v LIMIT 1";
    for (const [from, want] of [["one-", "one-a"], ["one-b", "one-b"], ["one-c", undefined], ["one-a", "one-a"]] as const) {
      const [rows] = await d!.batch([q(first, from)], "read");
      expect(rows!.map((r) => (r as unknown as unknown[])[0])).toEqual(want === undefined ? [] : [want]);
    }
    // In a batch with other reads, and with a lone NULL or blob argument (positional, never named).
    const [a, b, c] = await d!.batch([q(first, "one-b"), q("SELECT ? IS NULL LIMIT 1", null), q("SELECT length(?) LIMIT 1", new Uint8Array([1, 2, 3]))], "read");
    expect(firsts([a!, b!, c!])).toEqual(["one-b", 1, 3]);
    await d!.batch([q("DELETE FROM t WHERE v LIKE 'one-%'")], "write");
  });

  it("the native driver's failed one-row read does not poison the next call of the same statement", async () => {
    const d = nativeDriver(new Database(join(dir, "db.sqlite")));
    drivers.push(d);
    const text = "SELECT json(?) LIMIT 1";
    await expect(d.batch([q(text, "{not json")], "read")).rejects.toThrow(/malformed JSON/);
    expect(firsts(await d.batch([q(text, '{"a":1}')], "read"))).toEqual(['{"a":1}']);
    await expect(d.batch([q(text, "{")], "read")).rejects.toThrow(/malformed JSON/);
    expect(firsts(await d.batch([q(text, "[2]")], "read"))).toEqual(["[2]"]);
  });

  it("the native driver's write after another connection changed the schema runs (libsql 0.5 fails the first statement prepared in that write transaction with 'no such table', once)", async () => {
    const file = join(dir, "schema.sqlite");
    const setup = createClient({ url: `file:${file}` });
    await migrateDb(setup); // the server's schema, in WAL mode
    setup.close();
    const other = new Database(file);
    const d = nativeDriver(new Database(file));
    drivers.push(d);
    await d.batch([q("SELECT count(*) FROM user")], "read"); // the connection has read the schema
    for (let i = 0; i < 3; i++) {
      other.exec(`CREATE TABLE other_${i} (x)`); // another connection changes it (a migration)
      const name = `schema${i}`;
      await d.batch([q(`INSERT INTO user (lower_name, name, email) VALUES (?, ?, ?) -- ${i}`, name, name, `${name}@example.com`)], "write");
      expect(firsts(await d.batch([q("SELECT count(*) FROM user WHERE lower_name = ?", name)], "read"))).toEqual([1]);
    }
    // a table that is not there stays an error
    await expect(d.batch([q("INSERT INTO no_such_table VALUES (1)")], "write")).rejects.toThrow(/no such table/);
    other.close();
  });

  it("singleRowRead: only reads whose whole statement ends in LIMIT 1", () => {
    expect(singleRowRead("SELECT a FROM t WHERE id = ? LIMIT 1")).toBe(true);
    expect(singleRowRead("WITH v AS (SELECT 1) SELECT a FROM t, v\n  LIMIT 1\n")).toBe(true);
    expect(singleRowRead("select a from t limit 1")).toBe(true);
    expect(singleRowRead("SELECT a FROM t LIMIT 10")).toBe(false);
    expect(singleRowRead("SELECT a FROM t WHERE id = (SELECT id FROM u LIMIT 1)")).toBe(false);
    expect(singleRowRead("SELECT a FROM t LIMIT 1 OFFSET 2")).toBe(false);
    expect(singleRowRead("INSERT INTO t (v) SELECT v FROM u LIMIT 1")).toBe(false);
    expect(singleRowRead("WITH x AS (SELECT 1) DELETE FROM t WHERE id IN (SELECT id FROM u LIMIT 1)")).toBe(false);
    expect(singleRowRead("WITH x AS (SELECT id FROM t LIMIT 1) UPDATE t SET v = 'a' WHERE id IN x RETURNING id LIMIT 1")).toBe(false);
  });

  it("createDb counts the round trips of drizzle's queries, through the driver", async () => {
    const meter = newMeter();
    const db = createDb(metered(clientDriver(raw), meter));
    await db.run("SELECT 1");
    await db.batch([db.run("SELECT 1"), db.run("SELECT 2")]);
    expect(meter.roundTrips).toBe(2);
  });
});

describe("the native driver commits concurrent write batches together, each all or nothing", () => {
  it("batches requested in one turn share one commit; a failing one is rolled back alone and the others commit, in request order", async () => {
    const db = new Database(join(dir, "db.sqlite"));
    let commits = 0;
    const prepare = db.prepare.bind(db);
    db.prepare = ((text: string) => {
      const st = prepare(text);
      if (text !== "COMMIT") return st;
      const run = st.run.bind(st);
      st.run = ((...a: unknown[]) => (commits++, run(...a))) as typeof st.run;
      return st;
    }) as typeof db.prepare;
    const d = nativeDriver(db);
    drivers.push(d);
    const results = await Promise.allSettled([
      d.batch([q("INSERT INTO t (v) VALUES ('g-1')"), q("SELECT COUNT(*) FROM t WHERE v LIKE 'g-%'")], "write"),
      // Fails on its second statement: its first insert must not survive.
      d.batch([q("INSERT INTO t (v) VALUES ('g-2')"), q("INSERT INTO t (v) VALUES ('g-1')")], "write"),
      // Sees the first batch's row (they apply in order), not the failed one's.
      d.batch([q("INSERT INTO t (v) VALUES ('g-3')"), q("SELECT v FROM t WHERE v LIKE 'g-%' ORDER BY v")], "write"),
    ]);
    expect(commits).toBe(1);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed: t\.v/);
    expect((results[0] as PromiseFulfilledResult<unknown[][]>).value[1]).toEqual([[1]]);
    expect((results[2] as PromiseFulfilledResult<unknown[][]>).value[1]).toEqual([["g-1"], ["g-3"]]);
    expect((await raw.execute("SELECT v FROM t WHERE v LIKE 'g-%' ORDER BY v")).rows.map((r) => r.v)).toEqual(["g-1", "g-3"]);
    // A batch on its own later commits on its own, and the connection holds no transaction.
    await d.batch([q("DELETE FROM t WHERE v LIKE 'g-%'")], "write");
    expect(commits).toBe(2);
    expect(db.inTransaction).toBe(false);
  });

  it("when the group cannot take the write lock, every batch of it fails and nothing is written", async () => {
    const writer = createClient({ url: `file:${join(dir, "db.sqlite")}` });
    const tx = await writer.transaction("write");
    const d = nativeDriver(new Database(join(dir, "db.sqlite"), { timeout: 1 } as never));
    drivers.push(d);
    try {
      const results = await Promise.allSettled([d.batch([q("INSERT INTO t (v) VALUES ('busy-1')")], "write"), d.batch([q("INSERT INTO t (v) VALUES ('busy-2')")], "write")]);
      expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
      for (const r of results) expect(String((r as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    } finally {
      await tx.rollback();
      writer.close();
    }
    expect((await raw.execute("SELECT COUNT(*) AS n FROM t WHERE v LIKE 'busy-%'")).rows[0]!.n).toBe(0);
  });

  it("closing the connection fails the batches still waiting for their group", async () => {
    const d = nativeDriver(new Database(join(dir, "db.sqlite")));
    const pending = d.batch([q("INSERT INTO t (v) VALUES ('closed')")], "write");
    d.close();
    await expect(pending).rejects.toThrow(/closed/);
    expect((await raw.execute("SELECT COUNT(*) AS n FROM t WHERE v = 'closed'")).rows[0]!.n).toBe(0);
  });
});

describe("batches take the lock their statements need", () => {
  it.each(["native", "client"])("%s: a read batch runs beside another connection's write lock; a write batch waits for it and fails busy", async (kind) => {
    const writer = createClient({ url: `file:${join(dir, "db.sqlite")}` });
    const tx = await writer.transaction("write");
    await tx.execute("INSERT INTO t (v) VALUES ('held')");
    const db = kind === "native" ? nativeDriver(new Database(join(dir, "db.sqlite"), { timeout: 1 } as never)) : clientDriver(createClient({ url: `file:${join(dir, "db.sqlite")}`, timeout: 1 } as never));
    if (kind === "native") drivers.push(db);
    try {
      const rs = await db.batch([q("  select COUNT(*) FROM t"), q("WITH x AS (SELECT 1) SELECT * FROM x"), q("pragma user_version"), q("\nSelect 1")], "read");
      expect(rs).toHaveLength(4);
      await expect(db.batch([q("SELECT 1"), q("INSERT INTO t (v) VALUES ('blocked')")], "write")).rejects.toThrow(/locked|busy/i);
      await expect(db.batch([q("SELECT 1")], "write")).rejects.toThrow(/locked|busy/i);
    } finally {
      await tx.rollback();
      writer.close();
      if (kind === "client") db.close();
    }
  });

  it("driverAsClient (drizzle's view) sends reads as read batches and anything with a write as a write batch", async () => {
    const modes: string[] = [];
    const inner = clientDriver(raw);
    const spy: Driver = { batch: (items, mode) => (modes.push(mode), inner.batch(items, mode)), close: () => {} };
    const c = driverAsClient(spy);
    await c.execute("SELECT 1");
    await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: ["w1"] });
    await c.batch(["  select 1", "WITH x AS (SELECT 1) SELECT * FROM x", "pragma user_version", "EXPLAIN SELECT 1"]);
    await c.batch(["SELECT 1", { sql: "UPDATE t SET v = 'w2' WHERE v = ?", args: ["w1"] }]);
    await c.batch(["selectx 1"]).catch(() => {});
    // A mode drizzle states is kept: a read transaction of writes fails in SQLite, a write one of reads is a write.
    await c.batch(["SELECT 1", "SELECT 2"], "write");
    await c.batch(["SELECT 1"], "read");
    expect(modes).toEqual(["read", "write", "read", "write", "write", "write", "read"]);
    expect((await raw.execute("SELECT COUNT(*) AS n FROM t WHERE v = 'w2'")).rows[0]!.n).toBe(1);
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
    const c = metered(clientDriver(createClient({ url })), meter);
    const err = await failure(c.batch([q("SELECT 1")], "read"));
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
      const err = await failure(metered(clientDriver(createClient({ url })), newMeter()).batch([q("SELECT 1")], "read"));
      expect(err).toBeInstanceOf(DatabaseUnavailable);
    } finally {
      for (const s of sockets) s.destroy();
      await close(server);
    }
  });

  it.each([500, 502, 503, 599])("an HTTP %i from the server → unavailable", async (status) => {
    const { server, url } = await listen(createServer((_, res) => res.writeHead(status, { "Content-Type": "text/plain" }).end("down")));
    try {
      const err = await failure(metered(clientDriver(createClient({ url })), newMeter()).batch([q("SELECT 1")], "read"));
      expect(err).toBeInstanceOf(DatabaseUnavailable);
      expect(err.message).toBe("the database is unavailable: it cannot be reached");
    } finally {
      await close(server);
    }
  });

  it.each([400, 404])("an HTTP %i is the server's answer, not an outage", async (status) => {
    const { server, url } = await listen(createServer((_, res) => res.writeHead(status, { "Content-Type": "text/plain" }).end("no")));
    try {
      const err = await failure(metered(clientDriver(createClient({ url })), newMeter()).batch([q("SELECT 1")], "read"));
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
      const c = metered(clientDriver(createClient({ url })), meter, 50);
      const err = await failure(c.batch([q("SELECT 1")], "read"));
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
    await metered(clientDriver(raw), newMeter(), 60_000).batch([q("SELECT 1")], "read");
    expect(timers()).toBe(before);
    await metered(clientDriver(raw), newMeter(), 0).batch([q("SELECT 1")], "read");
    expect(timers()).toBe(before);
    const failed = await failure(metered(clientDriver(raw), newMeter(), 60_000).batch([q("SELECT * FROM nope")], "read"));
    expect(failed).not.toBeInstanceOf(DatabaseUnavailable);
    expect(timers()).toBe(before);
  });

  it("SQL errors stay SQL errors, with or without a timeout", async () => {
    for (const timeout of [0, 60_000]) {
      const err = await failure(metered(nativeDriver(new Database(join(dir, "db.sqlite"))), newMeter(), timeout).batch([q("SELEC 1")], "read"));
      expect(err).not.toBeInstanceOf(DatabaseUnavailable);
      expect(err.message).toMatch(/syntax error/);
    }
  });
});

describe("what counts as unreachable", () => {
  const coded = (code: string) => Object.assign(new Error("x"), { code });
  /** `inner` wrapped in `depth` errors, each the cause of the next. */
  const nested = (inner: Error, depth: number) => {
    let e: Error = inner;
    for (let i = 0; i < depth; i++) e = new Error(`wrap ${i}`, { cause: e });
    return e;
  };

  it("exactly the network and lock codes, whole (no prefix or suffix matches)", () => {
    for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT", "HRANA_WEBSOCKET_ERROR", "SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT"]) {
      expect(unreachable(coded(code)), code).toBe(true);
    }
    for (const code of ["", "XECONNREFUSED", "ECONNREFUSEDX", "UND_ERR_", "UND_ERR_-", "SQLITE_BUSY-", "SQLITE_CONSTRAINT", "SQLITE_ERROR"]) {
      expect(unreachable(coded(code)), code).toBe(false);
    }
  });

  it("looks through at most five causes, and stops on a cause that points back at itself", () => {
    expect(unreachable(nested(coded("ECONNRESET"), 4))).toBe(true);
    expect(unreachable(nested(coded("ECONNRESET"), 5))).toBe(false);
    const loop = new Error("loop") as Error & { cause?: unknown };
    loop.cause = loop;
    expect(unreachable(loop)).toBe(false);
  });

  it("rowGone (a whileExists guard tripped) is SQLite's SQLITE_TOOBIG message, through at most five causes, and nothing else", () => {
    const tooBig = () => new Error("SQLITE_TOOBIG: string or blob too big");
    expect(rowGone(tooBig())).toBe(true);
    expect(rowGone(nested(tooBig(), 4))).toBe(true);
    expect(rowGone(nested(tooBig(), 5))).toBe(false);
    for (const other of [new Error("integer overflow"), new Error("UNIQUE constraint failed: t.v"), coded("ECONNRESET"), { message: 42 }, null, "string or blob"]) expect(rowGone(other)).toBe(false);
    const loop = new Error("loop") as Error & { cause?: unknown };
    loop.cause = loop;
    expect(rowGone(loop)).toBe(false);
  });
});

describe("the metered driver and drizzle's view pass everything through", () => {
  it("closing the metered driver, the client driver or drizzle's view closes what is under it", () => {
    let closed = 0;
    const inner: Driver = { batch: async () => [], close: () => void closed++ };
    metered(inner, newMeter()).close();
    expect(closed).toBe(1);
    const viaClient = clientDriver({ close: () => void closed++ } as unknown as Client);
    viaClient.close();
    expect(closed).toBe(2);
    driverAsClient(inner).close();
    expect(closed).toBe(3);
  });

  it("a round trip that fails after its deadline is dropped, not an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      const late: Driver = { batch: () => new Promise((_, reject) => setTimeout(() => reject(new Error("late")), 30)), close: () => {} };
      const err = await failure(metered(late, newMeter(), 5).batch([q("SELECT 1")], "read"));
      expect(err).toBeInstanceOf(DatabaseUnavailable);
      await new Promise((r) => setTimeout(r, 60));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("the client driver sends a single read as one execute (no transaction) and anything else as a batch in its mode", async () => {
    const calls: string[] = [];
    const fake = {
      execute: async () => (calls.push("execute"), { rows: [[1]] }),
      batch: async (stmts: unknown[], mode: string) => (calls.push(`batch ${mode} ${stmts.length}`), stmts.map(() => ({ rows: [] }))),
      close: () => {},
    } as unknown as Client;
    const d = clientDriver(fake);
    expect(await d.batch([q("SELECT 1")], "read")).toEqual([[[1]]]);
    await d.batch([q("SELECT 1"), q("SELECT 2")], "read");
    await d.batch([q("INSERT INTO t (v) VALUES ('x')")], "write");
    expect(calls).toEqual(["execute", "batch read 2", "batch write 1"]);
  });

  it("drizzle's view sends a plain SQL string without arguments and booleans as 0/1", async () => {
    const seen: BatchItem[] = [];
    const inner = clientDriver(raw);
    const spy: Driver = { batch: (items, mode) => (seen.push(...items), inner.batch(items, mode)), close: () => {} };
    const c = driverAsClient(spy);
    const values = (rows: ArrayLike<unknown>[]) => rows.map((r) => Array.from(r));
    expect(values((await c.execute("SELECT 3 AS x")).rows as never)).toEqual([[3]]);
    expect(values((await c.execute({ sql: "SELECT ? AS a, ? AS b", args: [true, false] })).rows as never)).toEqual([[1, 0]]);
    expect(seen.map((i) => i.args)).toEqual([[], [1, 0]]);
  });
});

describe("uniqueViolation and col", () => {
  it("names the index columns of a UNIQUE failure, through nested causes; anything else is null", async () => {
    const err = await failure(raw.execute("INSERT INTO t (v) VALUES ('u'), ('u')"));
    expect(uniqueViolation(err)).toBe("t.v");
    expect(uniqueViolation(new Error("wrapped", { cause: new Error("wrapped again", { cause: err }) }))).toBe("t.v");
    expect(uniqueViolation(new Error("UNIQUE constraint failed: repository.owner_id, repository.lower_name  "))).toBe("repository.owner_id, repository.lower_name");
    expect(uniqueViolation(new Error("NOT NULL constraint failed: t.v"))).toBeNull();
    expect(uniqueViolation(null)).toBeNull();
    expect(uniqueViolation({ message: 42 })).toBeNull();
  });

  it("col renders a column qualified by its table", () => {
    const db = createDb(clientDriver(raw));
    expect(db.select({ x: col(repository.ownerId) }).from(repository).toSQL().sql).toBe('select "repository"."owner_id" from "repository"');
  });
});
