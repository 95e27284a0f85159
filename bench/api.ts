/**
 * `npm run bench`: requests per second and p50/p99 latency of `GET /api/v1/user` and
 * `GET /api/v1/users/{username}` (token auth) on three targets, one after another so they never
 * share the 2 cores:
 * 1. node: `functions/node.ts` on an embedded libSQL file;
 * 2. workerd: the Worker (wrangler unstable_dev) against a real sqld;
 * 3. workerd + 30 ms: the same Worker against sqld through `bench/latency-proxy.ts`, which adds
 *    30 ms to every database round trip and counts them.
 * Per route: a warm-up, a sequential check (every answer 200, Server-Timing round trips, and on the
 * proxy the exact round trips of each request), then autocannon with fixed connections.
 * Writes the `## REST API` section of bench/RESULTS.md (other sections untouched).
 * Knobs: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (10), BENCH_DELAY_MS (30).
 */
import autocannon from "autocannon";
import { spawn, type ChildProcess } from "node:child_process";
import type { IncomingHttpHeaders } from "node:http";
import { createInterface } from "node:readline";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { freePort, ROOT_DIR, runScript, startNodeServer, startSqld, startWorker, stopGroup } from "../scripts/lib/processes.ts";
import type { ProxyStats } from "./latency-proxy.ts";

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP_S = 2;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 30);
const CHECKS = 50;
const CALLER = { name: "bench-caller", password: "bench-password-1", email: "bench-caller@example.com" };
const SUBJECT = { name: "octocat", password: "bench-password-2", email: "octocat@example.com" };
const ROUTES = [
  { name: "GET /api/v1/user", path: "/api/v1/user" },
  { name: "GET /api/v1/users/{username}", path: `/api/v1/users/${SUBJECT.name}` },
];

interface Row {
  scenario: string;
  route: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  dbTrips: number;
  dbMs: number;
  proxyTrips: number | null;
  seqP50: number;
  errors: number;
}

/** Round trips and db time from `Server-Timing: db;dur=<ms>;desc="<N>"`. */
function serverTiming(value: string | string[] | null | undefined): { n: number; ms: number } | null {
  const v = Array.isArray(value) ? value.join(",") : value;
  const m = v?.match(/db;dur=([\d.]+);desc="(\d+)"/);
  return m ? { ms: Number(m[1]), n: Number(m[2]) } : null;
}

const headerOf = (headers: IncomingHttpHeaders, name: string) =>
  Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];

/** Creates the caller (with an all-scopes token) and the looked-up user with the admin CLI. */
async function bootstrap(env: Record<string, string>): Promise<string> {
  for (const u of [CALLER, SUBJECT]) {
    const r = await runScript("functions/cli.ts", ["user", "create", "--username", u.name, "--password", u.password, "--email", u.email, "--must-change-password=false"], env);
    if (r.code !== 0) throw new Error(`admin CLI failed: ${r.stderr}`);
  }
  const tok = await runScript("functions/cli.ts", ["user", "generate-access-token", "--username", CALLER.name, "--scopes", "all", "--raw"], env);
  if (tok.code !== 0) throw new Error(`admin CLI failed: ${tok.stderr}`);
  return tok.stdout.trim();
}

/** The latency proxy as its own process (own event loop, own process group). */
async function startProxyProcess(target: string, delayMs: number) {
  const proc: ChildProcess = spawn(process.execPath, [path.join(ROOT_DIR, "bench", "latency-proxy.ts"), "--target", target, "--delay", String(delayMs)], {
    detached: true,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: proc.stdout! });
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error("latency proxy did not start within 10 s")), 10_000);
    proc.once("exit", (code) => fail(new Error(`latency proxy exited with ${code}`)));
    lines.once("line", (l) => {
      clearTimeout(timer);
      ok((JSON.parse(l) as { url: string }).url);
    });
  });
  return {
    url,
    stats: async () => (await (await fetch(`${url}/__stats`)).json()) as ProxyStats,
    reset: async () => void (await fetch(`${url}/__reset`, { method: "POST" })),
    stop: () => stopGroup(proc),
  };
}

type Proxy = Awaited<ReturnType<typeof startProxyProcess>>;

/** Requests cut off at the end of an autocannon run still reach the database: let them land. */
const drain = () => new Promise((r) => setTimeout(r, 500 + 2 * DELAY_MS));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(scenario: string, baseUrl: string, token: string, proxy: Proxy | null): Promise<Row[]> {
  const headers = { authorization: `token ${token}`, accept: "application/json" };
  const rows: Row[] = [];
  for (const route of ROUTES) {
    const url = baseUrl + route.path;
    await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_S, headers });
    await drain();

    // Sequential check: every answer is 200 and reports its round trips; on the proxy, the
    // round trips it forwarded for exactly this request.
    const perRequest: number[] = [];
    const sequential: number[] = [];
    for (let i = 0; i < CHECKS; i++) {
      await proxy?.reset();
      const t0 = performance.now();
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      sequential.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`${scenario} ${route.name}: ${res.status}`);
      const st = serverTiming(res.headers.get("server-timing"));
      if (!st) throw new Error(`${scenario} ${route.name}: no Server-Timing db entry`);
      if (proxy) {
        const counted = (await proxy.stats()).requests;
        if (counted !== st.n) console.warn(`${scenario} ${route.name}: proxy counted ${counted} round trips, Server-Timing says ${st.n}`);
        perRequest.push(counted);
      }
    }
    if (proxy) {
      const histogram: Record<number, number> = {};
      for (const n of perRequest) histogram[n] = (histogram[n] ?? 0) + 1;
      console.log(`${scenario} ${route.name}: proxy-counted round trips per sequential request (trips: requests) ${JSON.stringify(histogram)}`);
    }

    await proxy?.reset();
    let trips = 0;
    let dbMs = 0;
    let timed = 0;
    const result = await autocannon({
      url,
      connections: CONNECTIONS,
      duration: DURATION_S,
      headers,
      requests: [
        {
          method: "GET",
          path: route.path,
          onResponse: (_status: number, _body: string, _ctx: object, h: IncomingHttpHeaders | undefined) => {
            const st = serverTiming(h && headerOf(h, "server-timing"));
            if (st) {
              trips += st.n;
              dbMs += st.ms;
              timed++;
            }
          },
        },
      ],
    });
    let proxyTrips: number | null = null;
    if (proxy) {
      await drain();
      const stats = await proxy.stats();
      proxyTrips = stats.requests / result.requests.sent;
      console.log(`${scenario} ${route.name}: proxy ${JSON.stringify(stats.byPath)} for ${result.requests.sent} requests sent`);
    }
    const errors = result.errors + result.timeouts + result.non2xx;
    const row: Row = {
      scenario,
      route: route.name,
      requests: result.requests.total,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      dbTrips: timed ? trips / timed : NaN,
      dbMs: timed ? dbMs / timed : NaN,
      proxyTrips,
      seqP50: median(sequential),
      errors,
    };
    console.log(JSON.stringify(row));
    rows.push(row);
  }
  return rows;
}

const stops: (() => Promise<void>)[] = [];
const stopAll = async () => {
  for (const stop of stops.splice(0).reverse()) await stop().catch((e) => console.error(e));
};
const onSignal = () => void stopAll().then(() => process.exit(130));
process.once("SIGINT", onSignal);
process.once("SIGTERM", onSignal);

const tmp = await mkdtemp(path.join(os.tmpdir(), "bench-api-"));
stops.push(() => rm(tmp, { recursive: true, force: true }));
const rows: Row[] = [];
const started = Date.now();
const loadBefore = os.loadavg()[0];
try {
  // 1. Node on an embedded libSQL file.
  {
    const port = await freePort();
    const env = { DATA_DIR: path.join(tmp, "node"), GITEA__server__ROOT_URL: `http://127.0.0.1:${port}/` };
    const token = await bootstrap(env);
    const node = await startNodeServer(env, { port });
    stops.push(node.stop);
    rows.push(...(await measure("node, embedded libSQL file", node.url, token, null)));
    await node.stop();
    stops.pop();
  }

  // 2. and 3. workerd against one sqld, directly and through the latency proxy.
  const sqld = await startSqld();
  stops.push(sqld.stop);
  const token = await bootstrap({ DATABASE_URL: sqld.url });
  {
    const port = await freePort();
    const worker = await startWorker({ DATABASE_URL: sqld.url, GITEA__server__ROOT_URL: `http://127.0.0.1:${port}/` }, { port });
    stops.push(worker.stop);
    rows.push(...(await measure("workerd, sqld", worker.url, token, null)));
    await worker.stop();
    stops.pop();
  }
  {
    const proxy = await startProxyProcess(sqld.url, DELAY_MS);
    stops.push(proxy.stop);
    const port = await freePort();
    const worker = await startWorker({ DATABASE_URL: proxy.url, GITEA__server__ROOT_URL: `http://127.0.0.1:${port}/` }, { port });
    stops.push(worker.stop);
    rows.push(...(await measure(`workerd, sqld + ${DELAY_MS} ms per round trip`, worker.url, token, proxy)));
  }
} finally {
  await stopAll();
}

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "–");
const cpu = os.cpus();
const proxyRows = rows.filter((r) => r.proxyTrips !== null);
const section = [
  "## REST API",
  "",
  `\`npm run bench\` — ${new Date().toISOString().slice(0, 10)}, ${cpu.length} × ${cpu[0]?.model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}, 1-minute load average ${f(loadBefore)} before the run. Load from autocannon (in the benchmark process) with ${CONNECTIONS} connections for ${DURATION_S} s per row after a ${WARMUP_S} s warm-up; token auth (\`Authorization: token …\`) as a regular user; every target runs alone. Latencies in ms. "db round trips" is the mean of \`Server-Timing: db;desc\` over all answers of the timed run; "Unloaded p50" is the median of ${CHECKS} sequential requests (one at a time) before it; "proxy round trips" is what the latency proxy forwarded to sqld divided by the requests sent.`,
  "",
  "| Target | Route | Requests | Req/s | p50 ms | p99 ms | Unloaded p50 ms | db round trips / req | db ms / req | proxy round trips / req | Errors |",
  "|---|---|---|---|---|---|---|---|---|---|---|",
  ...rows.map((r) => `| ${r.scenario} | \`${r.route}\` | ${r.requests} | ${f(r.rps, 0)} | ${r.p50} | ${r.p99} | ${f(r.seqP50, 1)} | ${f(r.dbTrips)} | ${f(r.dbMs)} | ${r.proxyTrips === null ? "–" : f(r.proxyTrips, 3)} | ${r.errors} |`),
  "",
  `Targets: node = \`functions/node.ts\` (\`@hono/node-server\`, \`@libsql/client\` on a \`file:\` database); workerd = \`functions/worker.ts\` under wrangler \`unstable_dev\` (local workerd, \`@libsql/client/web\` to sqld over HTTP, a client per request); the proxy (\`bench/latency-proxy.ts\`, its own process) buffers each sqld request, waits ${DELAY_MS} ms and forwards it over a keep-alive agent. Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  "",
  `Reading it: autocannon, the server, sqld and the proxy share the ${cpu.length} cores, so the loaded p50/p99 include CPU queueing; the unloaded p50 is one request alone. With ${DELAY_MS} ms added per round trip, ${CONNECTIONS} connections allow at most ${CONNECTIONS} ÷ latency requests per second: ${proxyRows.map((r) => `\`${r.route}\` ${f((CONNECTIONS * 1000) / r.seqP50, 0)}/s at its unloaded latency, ${f((100 * r.rps * r.seqP50) / (CONNECTIONS * 1000), 0)}% of that measured`).join("; ")}. One database round trip per request is what keeps a request at about ${DELAY_MS} ms plus its unloaded cost instead of a multiple of ${DELAY_MS} ms.`,
  "",
].join("\n");
console.log(section);
const file = path.join(import.meta.dirname, "RESULTS.md");
const old = await readFile(file, "utf8").catch(() => "# Benchmark results\n");
const start = old.indexOf("## REST API");
const next = start < 0 ? -1 : old.indexOf("\n## ", start + 1);
const updated = start < 0 ? `${old.trimEnd()}\n\n${section}` : `${old.slice(0, start)}${section}${next < 0 ? "" : `\n${old.slice(next + 1)}`}`;
await writeFile(file, updated.endsWith("\n") ? updated : `${updated}\n`);
process.exit(0);
