/**
 * The load generator of the benchmarks, always run as its own process (`runLoad` in
 * bench/lib/harness.ts spawns it), so that it never shares an event loop with a server under test.
 * autocannon drives the requests; every response's latency (float ms), status, Server-Timing
 * `db;desc` round trips and, for creates, the created name are recorded here.
 *
 *   node bench/load.ts '<LoadSpec as JSON>'   → one JSON line (LoadResult) on stdout
 */
import autocannon from "autocannon";
import type { IncomingHttpHeaders } from "node:http";

export interface LoadSpec {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  connections: number;
  /** Seconds; or `amount` requests in total. */
  duration?: number;
  amount?: number;
  /** POST: every request a new body `{"name": prefix + n}`. */
  uniqueNamePrefix?: string;
  expectStatus: number;
  /** Seconds before a request counts as timed out (autocannon's default is 10). */
  timeout?: number;
}

export interface LoadResult {
  sent: number;
  completed: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  statuses: Record<string, number>;
  /** Answers whose status was not `expectStatus`, plus socket errors and timeouts. */
  failures: number;
  /** Answers with a Server-Timing db entry, and the sum of their round trips and db ms. */
  timed: number;
  trips: number;
  dbMs: number;
  /** Distinct round-trip counts seen (e.g. {"1": 5000}). */
  tripHistogram: Record<string, number>;
  meanBodyBytes: number;
  /** Creates: distinct names answered with `expectStatus` (each request carries a new name). */
  namesCreated: number;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export async function generateLoad(spec: LoadSpec): Promise<LoadResult> {
  const u = new URL(spec.url);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const tripHistogram: Record<string, number> = {};
  let timed = 0;
  let trips = 0;
  let dbMs = 0;
  let bodyBytes = 0;
  let answers = 0;
  let nameSeq = 0;
  const created = new Set<string>();
  const headers = { ...(spec.headers ?? {}), ...(spec.uniqueNamePrefix ? { "content-type": "application/json" } : {}) };
  let finish!: (r: autocannon.Result) => void;
  let failRun!: (e: unknown) => void;
  const done = new Promise<autocannon.Result>((ok, fail) => {
    finish = ok;
    failRun = fail;
  });
  const instance = autocannon({
    url: u.origin,
    connections: spec.connections,
    timeout: spec.timeout ?? 10,
    ...(spec.amount ? { amount: spec.amount } : { duration: spec.duration ?? 5 }),
    headers,
    requests: [
      {
        method: spec.method ?? "GET",
        path: u.pathname + u.search,
        ...(spec.uniqueNamePrefix
          ? { setupRequest: (req: object) => ({ ...req, body: JSON.stringify({ name: `${spec.uniqueNamePrefix}${nameSeq++}` }) }) }
          : {}),
        onResponse: (status: number, body: string, _ctx: object, h: IncomingHttpHeaders | undefined) => {
          answers++;
          bodyBytes += body?.length ?? 0;
          const st = h && Object.entries(h).find(([k]) => k.toLowerCase() === "server-timing")?.[1];
          const m = (Array.isArray(st) ? st.join(",") : st)?.match(/db;dur=([\d.]+);desc="(\d+)"/);
          if (m) {
            timed++;
            dbMs += Number(m[1]);
            trips += Number(m[2]);
            tripHistogram[m[2]!] = (tripHistogram[m[2]!] ?? 0) + 1;
          }
          if (spec.uniqueNamePrefix && status === spec.expectStatus) {
            const n = /,"name":"([^"]+)","full_name"/.exec(body)?.[1];
            if (n) created.add(n);
          }
        },
      },
    ],
  } as autocannon.Options, (err, result) => (err ? failRun(err) : finish(result)));
  instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    latencies.push(ms);
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  const result = await done;
  latencies.sort((a, b) => a - b);
  const completed = latencies.length;
  const unexpected = Object.entries(statuses).reduce((n, [s, c]) => (Number(s) === spec.expectStatus ? n : n + c), 0);
  return {
    sent: result.requests.sent,
    completed,
    seconds: result.duration,
    rps: completed / result.duration,
    p50: pct(latencies, 50),
    p90: pct(latencies, 90),
    p99: pct(latencies, 99),
    statuses,
    failures: unexpected + result.errors + result.timeouts,
    timed,
    trips,
    dbMs,
    tripHistogram,
    meanBodyBytes: answers ? bodyBytes / answers : 0,
    namesCreated: created.size,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2] ?? "{}") as LoadSpec;
  console.log(JSON.stringify(await generateLoad(spec)));
  process.exit(0);
}
