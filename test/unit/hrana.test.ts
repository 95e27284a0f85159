/**
 * The Worker's driver (functions/db/hrana.ts) against a real sqld: a batch is one HTTP request and
 * one transaction, values keep their types, open streams are reused (each baton once, never a
 * stream left inside a transaction), a stream the server no longer knows is replaced without
 * running anything twice, and a database that is down or refuses stays what `unreachable()` takes
 * for a 503. Every request the driver sends is recorded from `fetch`.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { sql } from "drizzle-orm";
import { DatabaseUnavailable, metered, newMeter, REFUSED_ATTEMPTS, rowGone, uniqueViolation, unreachable, type BatchItem } from "../../functions/db/driver.ts";
import { hranaDriver, LEASE_MS, MAX_OPEN_STREAMS, STREAM_IDLE_MS } from "../../functions/db/hrana.ts";
import { guardCommand, p, whileExists } from "../../functions/db/sql.ts";
import { isGuardTrip } from "../../functions/services/common.ts";
import { freePort, startSqld, type Running } from "../../scripts/lib/processes.ts";

const q = (text: string, ...args: unknown[]): BatchItem => ({ text, args });
let sqld: Running;
let n = 0;
/** A driver whose stream pool no other test shares (pools are per URL and token; this sqld checks no token). */
const fresh = () => hranaDriver(sqld.url, `pool-${n++}`);

interface Sent {
  url: string;
  baton: string | null;
  types: string[];
}
let sent: Sent[] = [];
/** Rewrites a request's body before it goes (to hand sqld a baton it does not know). */
let tamper: ((body: { baton: string | null }) => void) | null = null;
const realFetch = globalThis.fetch;

beforeAll(async () => {
  sqld = await startSqld();
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { baton: string | null; requests: { type: string }[] };
    if (tamper) {
      tamper(body);
      tamper = null;
    }
    sent.push({ url: String(input), baton: body.baton, types: body.requests.map((r) => r.type) });
    return realFetch(input, { ...init, body: JSON.stringify(body) });
  }) as typeof fetch;
  await hranaDriver(sqld.url).batch([q("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE, n INTEGER)")], "write");
}, 60_000);
afterAll(async () => {
  globalThis.fetch = realFetch;
  await sqld?.stop();
});
beforeEach(() => {
  sent = [];
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("batches", () => {
  it("a single read is one execute; a batch of reads or writes is one request holding one transaction, answers in order", async () => {
    const d = fresh();
    expect(await d.batch([q("SELECT ? AS x", 7)], "read")).toEqual([[[7]]]);
    expect(await d.batch([q("SELECT 1"), q("SELECT ?", 2), q("SELECT ? || ?", "x", "y")], "read")).toEqual([[[1]], [[2]], [["xy"]]]);
    expect(await d.batch([q("INSERT INTO t (v, n) VALUES (?, ?)", "b-1", 1), q("UPDATE t SET n = n + 1 WHERE v = ? RETURNING n", "b-1")], "write")).toEqual([[], [[2]]]);
    expect(sent.map((s) => s.types)).toEqual([["execute"], ["batch"], ["batch"]]);
  });

  it("values keep their types both ways: integers, floats, text, NULL, blobs, booleans as 1/0", async () => {
    const d = fresh();
    const [[row] = []] = await d.batch([q("SELECT ?, typeof(?), ?, typeof(?), ?, ?, typeof(?), ?, ?", 42, 42, 2.5, 2.5, "é✓", null, null, new Uint8Array([0, 255, 7]), true)], "read");
    expect(row).toEqual([42, "integer", 2.5, "real", "é✓", null, "null", new Uint8Array([0, 255, 7]), 1]);
    await expect(d.batch([q("SELECT 9007199254740993")], "read")).rejects.toThrow(RangeError);
    await expect(d.batch([q("SELECT ?", undefined)], "read")).rejects.toThrow(TypeError);
  });

  it("statement texts reach sqld unchanged whatever JSON must escape in them, alone and in a batch, sent again from the encoded-text cache", async () => {
    const d = fresh();
    const odd = `q"b\\s\n\t\u0001\u2028é✓😀`;
    const text = `SELECT '${odd}' AS "c""${odd.replaceAll('"', '""')}"`;
    for (let i = 0; i < 2; i++) {
      expect(await d.batch([q(text)], "read")).toEqual([[[odd]]]);
      expect(await d.batch([q(text), q(`${text} WHERE ? = 1`, 1)], "read")).toEqual([[[odd]], [[odd]]]);
    }
    expect(sent.map((s) => s.types)).toEqual([["execute"], ["batch"], ["execute"], ["batch"]]);
  });

  it("a failed write batch leaves nothing behind and answers the statement's error (UNIQUE stays recognisable)", async () => {
    const d = fresh();
    const e = await d.batch([q("INSERT INTO t (v) VALUES ('dup')"), q("INSERT INTO t (v) VALUES ('dup')")], "write").catch((x: Error) => x);
    expect(e).toBeInstanceOf(Error);
    expect(uniqueViolation(e)).toBe("t.v");
    expect(unreachable(e)).toBe(false);
    expect(await d.batch([q("SELECT COUNT(*) FROM t WHERE v = 'dup'")], "read")).toEqual([[[0]]]);
    await expect(d.batch([q("SELECT * FROM no_such_table")], "read")).rejects.toThrow(/no such table/);
  });

  it("a tripped guard aborts its whole write batch on sqld, and the two kinds are told apart: guardCommand → isGuardTrip, whileExists → rowGone", async () => {
    const d = fresh();
    const stmt = (s: { compiled: { text: string } }, ...args: unknown[]) => q(s.compiled.text, ...args);
    const exists = whileExists<{ v: string }>("probeWhileExists", sql`EXISTS (SELECT 1 FROM t WHERE v = ${p("v")})`);
    const guard = guardCommand<{ v: string }>("probeGuard", sql`EXISTS (SELECT 1 FROM t WHERE v = ${p("v")})`);
    await d.batch([q("INSERT INTO t (v) VALUES ('parent')")], "write");
    // Held: the row exists, the guard's condition is false — both let the batch through.
    await d.batch([stmt(exists, "parent"), stmt(guard, "no-such"), q("INSERT INTO t (v) VALUES ('child-1')")], "write");
    const gone = await d.batch([stmt(exists, "no-such"), q("INSERT INTO t (v) VALUES ('child-2')")], "write").catch((x: Error) => x);
    expect([rowGone(gone), isGuardTrip(gone), unreachable(gone)]).toEqual([true, false, false]);
    const tripped = await d.batch([q("INSERT INTO t (v) VALUES ('child-3')"), stmt(guard, "parent")], "write").catch((x: Error) => x);
    expect([rowGone(tripped), isGuardTrip(tripped), unreachable(tripped)]).toEqual([false, true, false]);
    expect(await d.batch([q("SELECT v FROM t WHERE v LIKE 'child-%' ORDER BY v")], "read")).toEqual([[["child-1"]]]);
  });
});

describe("streams", () => {
  it("the next batch goes on the stream the last one left open, with the baton the server answered", async () => {
    const d = fresh();
    for (let i = 0; i < 4; i++) await d.batch([q("SELECT ?", i)], i % 2 ? "read" : "write");
    expect(sent[0]!.baton).toBeNull();
    expect(sent.slice(1).every((s) => typeof s.baton === "string" && s.baton.length > 0)).toBe(true);
    expect(new Set(sent.map((s) => s.baton)).size).toBe(4);
    expect(sent.every((s) => !s.types.includes("close"))).toBe(true);
  });

  it("a stream is reused after a failed statement and after a failed transaction, never inside a transaction", async () => {
    const d = fresh();
    await d.batch([q("SELECT 1")], "read");
    await expect(d.batch([q("SELECT nope")], "read")).rejects.toThrow(/no such column/);
    await expect(d.batch([q("INSERT INTO t (v) VALUES ('r1')"), q("INSERT INTO t (v) VALUES ('r1')")], "write")).rejects.toThrow(/UNIQUE/);
    // Were a transaction left open, this BEGIN would fail ("cannot start a transaction within a transaction").
    expect(await d.batch([q("INSERT INTO t (v) VALUES ('r2') RETURNING v"), q("SELECT COUNT(*) FROM t WHERE v LIKE 'r%'")], "write")).toEqual([[["r2"]], [[1]]]);
    expect(sent.slice(1).every((s) => s.baton !== null)).toBe(true);
  });

  it("a stream idle for longer than STREAM_IDLE_MS is not used: the batch opens a new one", async () => {
    const d = fresh();
    await d.batch([q("SELECT 1")], "read");
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + STREAM_IDLE_MS + 1);
    await d.batch([q("SELECT 2")], "read");
    expect(sent.map((s) => s.baton === null)).toEqual([true, true]);
  });

  it("a stream the server no longer knows: the request goes once more on a new stream, and runs once", async () => {
    const d = fresh();
    await d.batch([q("SELECT 1")], "read");
    tamper = (body) => {
      body.baton = `${body.baton}x`; // a baton sqld cannot read: 400, nothing run
    };
    expect(await d.batch([q("INSERT INTO t (v) VALUES ('once') RETURNING v")], "write")).toEqual([[["once"]]]);
    expect(sent.map((s) => s.baton === null)).toEqual([true, false, true]);
    expect(await d.batch([q("SELECT COUNT(*) FROM t WHERE v = 'once'")], "read")).toEqual([[[1]]]);
  });

  it("a stream sqld expired (10 s idle): answered STREAM_EXPIRED, the batch runs on a new stream", async () => {
    const d = fresh();
    await d.batch([q("SELECT 1")], "read");
    await new Promise((ok) => setTimeout(ok, 11_000));
    vi.spyOn(Date, "now").mockReturnValue(0); // the driver would not reuse a stream this old: make it think it is fresh
    sent = [];
    expect(await d.batch([q("SELECT 3")], "read")).toEqual([[[3]]]);
    expect(sent.map((s) => s.baton === null)).toEqual([false, true]);
  }, 30_000);

  it("concurrent batches never share a baton, and at most MAX_OPEN_STREAMS stay open; the rest close their own", async () => {
    const token = `pool-${n++}`;
    const d = hranaDriver(sqld.url, token);
    const many = MAX_OPEN_STREAMS + 8;
    const answers = await Promise.all(Array.from({ length: many }, (_, i) => d.batch([q("SELECT ?", i)], "read")));
    expect(answers).toEqual(Array.from({ length: many }, (_, i) => [[[i]]]));
    expect(sent.filter((s) => !s.types.includes("close"))).toHaveLength(MAX_OPEN_STREAMS);
    expect(sent.filter((s) => s.types.includes("close"))).toHaveLength(8);
    sent = [];
    // Another request's driver of the same database takes the streams left open.
    const again = await Promise.all(Array.from({ length: many }, (_, i) => hranaDriver(sqld.url, token).batch([q("SELECT ?", 100 + i)], "read")));
    expect(again).toEqual(Array.from({ length: many }, (_, i) => [[[100 + i]]]));
    const batons = sent.map((s) => s.baton).filter((b) => b !== null);
    expect(batons).toHaveLength(MAX_OPEN_STREAMS);
    expect(new Set(batons).size).toBe(MAX_OPEN_STREAMS);
  });
});

describe("a database that refuses for now", () => {
  /** A server answering each pipeline as `answer` says, after `hold` resolves; it counts requests in flight. */
  async function fakeDatabase(answer: (res: import("node:http").ServerResponse) => void) {
    const { createServer } = await import("node:http");
    const state = { inFlight: 0, most: 0, total: 0, hold: Promise.resolve() };
    const server = createServer(async (req, res) => {
      state.total += 1;
      state.most = Math.max(state.most, ++state.inFlight);
      for await (const _ of req);
      await state.hold;
      state.inFlight -= 1;
      answer(res);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    return { state, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => server.close() };
  }
  const result = '{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[[{"type":"integer","value":"1"}]],"affected_row_count":0,"last_insert_rowid":null}}}]}';

  it("a 429 (sqld: too many concurrent requests) is sent again after a pause and succeeds; one that persists is a 503 after REFUSED_ATTEMPTS round trips, each counted", async () => {
    let refusals = 2;
    const db = await fakeDatabase((res) => (refusals-- > 0 ? res.writeHead(429, { "content-type": "application/json" }).end('{"error":"Too many concurrent requests"}') : res.writeHead(200, { "content-type": "application/json" }).end(result)));
    try {
      const meter = newMeter();
      expect(await metered(hranaDriver(db.url), meter, 5_000).batch([q("SELECT 1")], "read")).toEqual([[[1]]]);
      expect([meter.roundTrips, db.state.total]).toEqual([3, 3]);
      refusals = Number.POSITIVE_INFINITY;
      const always = newMeter();
      await expect(metered(hranaDriver(db.url), always, 10_000).batch([q("SELECT 1")], "read")).rejects.toBeInstanceOf(DatabaseUnavailable);
      expect(always.roundTrips).toBe(REFUSED_ATTEMPTS);
      // a refusal that is not for now (401) is not sent again
      const other = await fakeDatabase((res) => res.writeHead(401, { "content-type": "application/json" }).end('{"message":"no"}'));
      try {
        const once = newMeter();
        await expect(metered(hranaDriver(other.url), once, 5_000).batch([q("SELECT 1")], "read")).rejects.toThrow(/401/);
        expect([once.roundTrips, other.state.total]).toEqual([1, 1]);
      } finally {
        other.close();
      }
    } finally {
      db.close();
    }
  });
});

describe("requests that never finish", () => {
  it("a batch whose request is cancelled (its finally never runs) stops counting as an open stream after LEASE_MS: later batches keep their streams again", async () => {
    const { createServer } = await import("node:http");
    const bodies: string[] = [];
    const result = '{"baton":"b1","base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[[{"type":"integer","value":"1"}]],"affected_row_count":0,"last_insert_rowid":null}}}]}';
    let answer = false;
    const server = createServer(async (req, res) => {
      let body = "";
      for await (const c of req) body += c;
      bodies.push(body);
      // the first MAX_OPEN_STREAMS requests never get an answer: their batches never settle, as a cancelled request's
      if (answer) res.writeHead(200, { "content-type": "application/json" }).end(result);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const keeps = (b: string) => !b.includes('"type":"close"');
    try {
      const d = hranaDriver(url);
      for (let i = 0; i < MAX_OPEN_STREAMS; i++) void d.batch([q("SELECT 1")], "read").catch(() => {});
      await vi.waitFor(() => expect(bodies).toHaveLength(MAX_OPEN_STREAMS));
      expect(bodies.every(keeps)).toBe(true);
      answer = true;
      // while those count, a new batch closes its own stream
      await d.batch([q("SELECT 1")], "read");
      expect(keeps(bodies.at(-1)!)).toBe(false);
      // LEASE_MS later they no longer count
      const now = Date.now();
      vi.spyOn(Date, "now").mockReturnValue(now + LEASE_MS + 1);
      await d.batch([q("SELECT 1")], "read");
      expect(keeps(bodies.at(-1)!)).toBe(true);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("a database that is down", () => {
  it("nothing listening: the error is what unreachable() takes for a 503", async () => {
    const d = metered(hranaDriver(`http://127.0.0.1:${await freePort()}`), newMeter());
    await expect(d.batch([q("SELECT 1")], "read")).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it("a 5xx answer is unreachable (503); a 4xx refusal is not", async () => {
    const { createServer } = await import("node:http");
    let status = 503;
    const server = createServer((_, res) => res.writeHead(status, { "content-type": "application/json" }).end('{"message":"down"}'));
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const port = (server.address() as { port: number }).port;
    try {
      const d = metered(hranaDriver(`http://127.0.0.1:${port}`), newMeter());
      await expect(d.batch([q("SELECT 1")], "read")).rejects.toBeInstanceOf(DatabaseUnavailable);
      status = 401;
      const e = await d.batch([q("SELECT 1")], "read").catch((x: Error) => x);
      expect(e).not.toBeInstanceOf(DatabaseUnavailable);
      expect(String(e)).toMatch(/401: down/);
    } finally {
      server.close();
    }
  });

  it("the URL forms @libsql/client accepts: libsql: means https, http: and https: as given; others refused", () => {
    expect(() => hranaDriver("libsql://db.example.org")).not.toThrow();
    expect(() => hranaDriver("ws://127.0.0.1:8080")).toThrow(/speaks HTTP/);
    expect(() => hranaDriver("file:x.db")).toThrow(/speaks HTTP/);
  });
});
