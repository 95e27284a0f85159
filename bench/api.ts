/**
 * `npm run bench` (issue 9 B.4): the project side by side with the reference server
 * (bench/reference.ts: plain node:http, the same token lookup and rows, statements prepared once),
 * on the same database file and machine, in one run.
 *
 * 1. Seed: bench/seed.ts with 1,000 repositories (10,000 users, 1,000 organizations) into a
 *    temporary DATA_DIR; the caller is the seed's well-connected non-admin `viewer` (all-scopes token).
 * 2. Start-up: BENCH_STARTS cold starts of each server, alternating: spawn → first 200 of
 *    `GET /api/v1/user`, then the RSS one second later with nothing else served.
 * 3. Reads: `GET /repos/{owner}/{repo}` (a private acme repository the viewer reaches through a
 *    team), `GET /user`, `GET /repos/search?q=needle` (38 accessible matches, a page of 30). Per route:
 *    a sequential check (50 requests each: all 200, the project's Server-Timing `db;desc`), a warm-up,
 *    then BENCH_ROUNDS rounds of one project run and one reference run in alternating order, load
 *    from a separate process (bench/load.ts, autocannon, BENCH_CONNECTIONS connections,
 *    BENCH_DURATION s). Medians; ratio project/reference, target ≥ 0.5.
 * 4. Writes: `POST /user/repos`, the same alternation; every request a new unique name; every answer
 *    must be 201, and the created rows are counted in the database afterwards. Target ≥ 1,000 req/s.
 * 5. Worker: workerd (the `wrangler deploy` bundle under Miniflare) → bench/latency-proxy.ts → sqld seeded the same way.
 *    Unloaded cost c0 = median of 50 sequential requests with the proxy delay at 0 ms (same path,
 *    same hops); then the delay at BENCH_DELAY_MS and BENCH_ROUNDS loaded runs; target: loaded p50 ≤
 *    delay + 1.3 × c0. The proxy counts the round trips of every sequential request and of each run.
 * Before every timed run the machine must be quiet (bench/lib/harness.ts `waitForQuiet`); the
 * 1-minute load average and the busy fraction are recorded per run.
 *
 * Writes the `## REST API` section of bench/RESULTS.md (other sections untouched).
 * Flags: --label TEXT (e.g. "before the rewrite"), --no-worker, --profile (runs bench/profile.ts instead).
 * Knobs: BENCH_DURATION (s, 5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10), BENCH_DELAY_MS (30),
 * BENCH_STARTS (5), BENCH_REPOS (1000).
 */
import Database from "libsql";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { freePort, startSqld, startWorker } from "../scripts/lib/processes.ts";
import { argOf, cleanups, describeRun, fmt, fmtInt, hasFlag, median, runLoad, startProject, startProxyProcess, startReference, waitForQuiet, writeSection, type Quiet, type Server } from "./lib/harness.ts";
import type { ProxyStats } from "./latency-proxy.ts";
import type { LoadResult, LoadSpec } from "./load.ts";
import { seedFile, seedServer, type Seeded } from "./seed.ts";

if (hasFlag("profile")) {
  await import("./profile.ts");
  process.exit(0);
}

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 30);
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const REPOS = Number(process.env.BENCH_REPOS ?? 1000);
const CHECKS = 50;
const WARMUP_S = 2;
const label = argOf("label");
const withWorker = !hasFlag("no-worker");

type Target = "project" | "reference";
interface Run {
  what: string;
  target: Target | "worker";
  round: number;
  quiet: Quiet;
  r: LoadResult;
}
const runs: Run[] = [];

const readRoutes = (s: Seeded) => [
  { name: "GET /repos/{owner}/{repo}", path: `/api/v1/repos/${s.privateRepo}` },
  { name: "GET /user", path: "/api/v1/user" },
  { name: `GET /repos/search?q=`, path: `/api/v1/repos/search?q=${s.repoKeyword}` },
];

const auth = (token: string) => ({ authorization: `token ${token}`, accept: "application/json" });

/** Sequential requests, one at a time: statuses, latencies, Server-Timing round trips, body bytes. */
async function sequential(url: string, token: string, n: number, onEach?: () => Promise<void>) {
  const ms: number[] = [];
  const trips: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: auth(token) });
    const body = await res.arrayBuffer();
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`);
    bytes = body.byteLength;
    const m = res.headers.get("server-timing")?.match(/db;dur=([\d.]+);desc="(\d+)"/);
    if (m) trips.push(Number(m[2]));
    await onEach?.();
  }
  return { p50: median(ms), trips, bytes };
}

/** One timed run after the machine is quiet. */
async function timed(what: string, target: Run["target"], round: number, spec: LoadSpec) {
  const quiet = await waitForQuiet();
  const r = await runLoad(spec);
  runs.push({ what, target, round, quiet, r });
  console.log(`${what} · ${target} · round ${round}: ${fmtInt(r.rps)} req/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms, failures ${r.failures}, load ${fmt(quiet.load1, 2)}, busy ${fmt(100 * quiet.busy, 0)}%`);
  if (r.failures) console.warn(`  statuses ${JSON.stringify(r.statuses)}`);
  return r;
}

const c = cleanups();
const tmp = await mkdtemp(path.join(os.tmpdir(), "bench-api-"));
c.add(() => rm(tmp, { recursive: true, force: true }));
const started = Date.now();
const header = describeRun();
const loadBefore = os.loadavg()[0];
const dataDir = path.join(tmp, "node");
const dbFile = path.join(dataDir, "gitea.db");

interface ReadRow {
  route: string;
  bytes: Record<Target, number>;
  seqP50: Record<Target, number>;
  trips: number[];
  rps: Record<Target, number>;
  p50: Record<Target, number>;
  p99: Record<Target, number>;
  failures: number;
  loadTrips: { timed: number; trips: number };
}
const reads: ReadRow[] = [];
const startup: { startMs: Record<Target, number[]>; rss: Record<Target, number[]> } = { startMs: { project: [], reference: [] }, rss: { project: [], reference: [] } };
let writes: { rps: Record<Target, number>; p50: Record<Target, number>; ok: boolean; notes: string[]; cutOff: number[] } | null = null;
interface WorkerRow {
  route: string;
  c0: number;
  seqDelayed: number;
  loadedP50: number;
  loadedRuns: number[];
  proxySeq: Record<string, number>;
  proxyLoaded: number;
  /** The proxy's hold of delayed bytes under load, p50 and p99 over the runs' writes (ms). */
  held: { p50: number; p99: number };
  stTrips: number;
  failures: number;
}
const workerRows: WorkerRow[] = [];
let seeded: Seeded;
let journalMode = "?";

try {
  console.log(`seeding ${REPOS} repositories …`);
  seeded = await seedFile(dbFile, REPOS);
  console.log(`seeded in ${fmt(seeded.seconds)} s`);
  const token = seeded.viewer.token;

  // ---- start-up: spawn → first answer, idle RSS ----
  const starters: Record<Target, () => Promise<Server>> = {
    project: () => startProject(dataDir, token),
    reference: () => startReference(dbFile, token),
  };
  for (let i = 0; i < STARTS; i++) {
    for (const t of (i % 2 ? ["reference", "project"] : ["project", "reference"]) as Target[]) {
      await waitForQuiet();
      const s = await starters[t]();
      await new Promise((r) => setTimeout(r, 1000));
      startup.startMs[t].push(s.startMs);
      startup.rss[t].push(s.rssMB());
      await s.stop();
    }
  }
  console.log(`start-up: ${JSON.stringify(startup)}`);

  // ---- reads, alternating ----
  const project = await startProject(dataDir, token);
  c.add(project.stop);
  // The reference renders the project's URLs, so that both bodies are the same bytes.
  const reference = await startReference(dbFile, token, `${project.url}/`);
  c.add(reference.stop);
  const servers: Record<Target, Server> = { project, reference };
  {
    // The journal mode the project left the file in (the reference follows it; see bench/reference.ts).
    const db = new Database(dbFile, { timeout: 5000 });
    journalMode = String((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode);
    db.close();
  }

  for (const route of readRoutes(seeded)) {
    const row: ReadRow = { route: route.name, bytes: {} as never, seqP50: {} as never, trips: [], rps: {} as never, p50: {} as never, p99: {} as never, failures: 0, loadTrips: { timed: 0, trips: 0 } };
    for (const t of ["project", "reference"] as Target[]) {
      const seq = await sequential(servers[t].url + route.path, token, CHECKS);
      row.bytes[t] = seq.bytes;
      row.seqP50[t] = seq.p50;
      if (t === "project") {
        if (seq.trips.length !== CHECKS) throw new Error(`${route.name}: the project sent no Server-Timing db entry`);
        row.trips = seq.trips;
      }
      await runLoad({ url: servers[t].url + route.path, headers: auth(token), connections: CONNECTIONS, duration: WARMUP_S, expectStatus: 200 });
    }
    const per: Record<Target, LoadResult[]> = { project: [], reference: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const t of (round % 2 ? ["project", "reference"] : ["reference", "project"]) as Target[]) {
        per[t].push(await timed(route.name, t, round, { url: servers[t].url + route.path, headers: auth(token), connections: CONNECTIONS, duration: DURATION, expectStatus: 200 }));
      }
    }
    for (const t of ["project", "reference"] as Target[]) {
      row.rps[t] = median(per[t].map((r) => r.rps));
      row.p50[t] = median(per[t].map((r) => r.p50));
      row.p99[t] = median(per[t].map((r) => r.p99));
      row.failures += per[t].reduce((n, r) => n + r.failures, 0);
    }
    row.loadTrips = per.project.reduce((a, r) => ({ timed: a.timed + r.timed, trips: a.trips + r.trips }), { timed: 0, trips: 0 });
    reads.push(row);
  }

  // ---- writes: POST /user/repos, alternating, every name new ----
  {
    const per: Record<Target, LoadResult[]> = { project: [], reference: [] };
    const notes: string[] = [];
    const cutOff: number[] = [];
    let ok = true;
    const stamp = Date.now().toString(36);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const t of (round % 2 ? ["project", "reference"] : ["reference", "project"]) as Target[]) {
        const prefix = `bench-${stamp}-${t[0]}${round}-`;
        const r = await timed("POST /user/repos", t, round, { url: `${servers[t].url}/api/v1/user/repos`, method: "POST", headers: auth(token), connections: CONNECTIONS, duration: DURATION, uniqueNamePrefix: prefix, expectStatus: 201 });
        per[t].push(r);
        const created = r.statuses["201"] ?? 0;
        // Requests cut off at the end of the run still complete on the server: let them land.
        await new Promise((res) => setTimeout(res, 1000));
        const db = new Database(dbFile, { timeout: 5000 });
        const { n } = db.prepare(`SELECT COUNT(*) AS n FROM repository WHERE owner_id = ? AND lower_name LIKE ?`).get(seeded.viewer.id, `${prefix}%`) as { n: number };
        db.close();
        cutOff.push(n - created);
        // Every answer 201 with a distinct name, and the rows in the database: those answers plus
        // at most the requests the run cut off (sent, never answered).
        if (r.failures || created !== r.completed || r.namesCreated !== created || n < created || n > r.sent) {
          ok = false;
          notes.push(`${t} round ${round}: ${r.sent} sent, ${r.completed} answers, ${created} × 201, ${r.namesCreated} distinct names answered 201, ${n} rows in the database, statuses ${JSON.stringify(r.statuses)}`);
        }
      }
    }
    writes = {
      rps: { project: median(per.project.map((r) => r.rps)), reference: median(per.reference.map((r) => r.rps)) },
      p50: { project: median(per.project.map((r) => r.p50)), reference: median(per.reference.map((r) => r.p50)) },
      ok,
      notes,
      cutOff,
    };
  }
  await reference.stop();
  await project.stop();

  // ---- Worker under workerd + sqld + DELAY_MS per round trip ----
  if (withWorker) {
    const sqld = await startSqld();
    c.add(sqld.stop);
    console.log("seeding sqld …");
    const ws = await seedServer(sqld.url, REPOS);
    const proxy = await startProxyProcess(sqld.url, 0);
    c.add(proxy.stop);
    const port = await freePort();
    const worker = await startWorker({ DATABASE_URL: proxy.url, GITEA__server__ROOT_URL: `http://127.0.0.1:${port}/`, GITEA__server__SERVER_TIMING_DURATION: "true" }, { port });
    c.add(worker.stop);
    for (const route of readRoutes(ws)) {
      const url = worker.url + route.path;
      await proxy.setDelay(0);
      await runLoad({ url, headers: auth(ws.viewer.token), connections: 1, duration: WARMUP_S, expectStatus: 200 });
      // A request cut off at the end of the warm-up still reaches sqld: let it land before counting.
      await new Promise((res) => setTimeout(res, 500));
      const proxySeq: Record<string, number> = {};
      await proxy.reset();
      const seq0 = await sequential(url, ws.viewer.token, CHECKS, async () => {
        const n = (await proxy.stats()).requests;
        proxySeq[n] = (proxySeq[n] ?? 0) + 1;
        await proxy.reset();
      });
      await proxy.setDelay(DELAY_MS);
      const seqD = await sequential(url, ws.viewer.token, 20);
      const loaded: LoadResult[] = [];
      let forwarded = 0;
      let sent = 0;
      const held: ProxyStats["held"][] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        await proxy.reset();
        const r = await timed(`Worker ${route.name}`, "worker", round, { url, headers: auth(ws.viewer.token), connections: CONNECTIONS, duration: DURATION, expectStatus: 200 });
        await new Promise((res) => setTimeout(res, 500 + 2 * DELAY_MS));
        const stats = await proxy.stats();
        forwarded += stats.requests;
        held.push(stats.held);
        sent += r.sent;
        loaded.push(r);
      }
      const stTimed = loaded.reduce((a, r) => a + r.timed, 0);
      workerRows.push({
        route: route.name,
        c0: seq0.p50,
        seqDelayed: seqD.p50,
        loadedP50: median(loaded.map((r) => r.p50)),
        loadedRuns: loaded.map((r) => r.p50),
        proxySeq,
        proxyLoaded: forwarded / sent,
        held: { p50: median(held.map((h) => h.p50)), p99: median(held.map((h) => h.p99)) },
        stTrips: stTimed ? loaded.reduce((a, r) => a + r.trips, 0) / stTimed : NaN,
        failures: loaded.reduce((a, r) => a + r.failures, 0),
      });
    }
  }
} finally {
  await c.stopAll();
}

// ---- RESULTS.md ----
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);
const meets = (ok: boolean) => (ok ? "yes" : "**no**");
const lines: string[] = [];
lines.push(
  `${label ? `**${label}** — ` : ""}\`npm run bench\`, ${header}. 1-minute load average ${fmt(loadBefore!, 2)} when the run began; whole run ${Math.round((Date.now() - started) / 1000)} s.`,
  "",
  `Data: \`bench/seed.ts\` with ${fmtInt(REPOS)} repositories, ${fmtInt(seeded!.users)} users, ${fmtInt(seeded!.orgs)} organizations (seeded in ${fmt(seeded!.seconds)} s). Caller: the seed's well-connected non-admin \`viewer\` with an all-scopes token (\`Authorization: token …\`). Project: \`npm start\`'s server (\`dist/node/node.js\`, the bundle of \`functions/node.ts\`) on the embedded file. Reference: \`bench/reference.ts\` (plain \`node:http\`, the \`libsql\` binding, statements prepared once) on the same file, answering with the same bytes. The file's journal mode as the project leaves it: \`${journalMode}\` (the reference uses synchronous=NORMAL only in WAL mode, SQLite's default FULL otherwise). Load: autocannon in its own process (\`bench/load.ts\`), ${CONNECTIONS} connections, ${DURATION} s per run after a ${WARMUP_S} s warm-up, ${ROUNDS} rounds of project and reference in alternating order; figures are medians over the rounds.`,
  "",
  "### Reads: project vs reference (target: ratio ≥ 0.5)",
  "",
  "| Route | Project req/s | Reference req/s | Ratio project/reference | Target | Meets | Project p50 / p99 ms | Reference p50 / p99 ms | Unloaded p50 ms project / reference | Project db round trips / request | Body bytes |",
  "|---|---|---|---|---|---|---|---|---|---|---|",
);
for (const r of reads) {
  const q = ratio(r.rps.project, r.rps.reference);
  const tripsSeq = r.trips.length ? `${fmt(r.trips.reduce((a, b) => a + b, 0) / r.trips.length, 2)} sequential, ${fmt(r.loadTrips.timed ? r.loadTrips.trips / r.loadTrips.timed : NaN, 2)} under load` : "–";
  lines.push(
    `| \`${r.route}\` | ${fmtInt(r.rps.project)} | ${fmtInt(r.rps.reference)} | **${fmt(q, 3)}** | ≥ 0.5 | ${meets(q >= 0.5)} | ${fmt(r.p50.project, 2)} / ${fmt(r.p99.project, 2)} | ${fmt(r.p50.reference, 2)} / ${fmt(r.p99.reference, 2)} | ${fmt(r.seqP50.project, 2)} / ${fmt(r.seqP50.reference, 2)} | ${tripsSeq} | ${r.bytes.project === r.bytes.reference ? `${r.bytes.project} (same)` : `${r.bytes.project} / ${r.bytes.reference}`}${r.failures ? ` — ${r.failures} failed answers` : ""} |`,
  );
}
if (writes) {
  const q = ratio(writes.rps.project, 1000);
  lines.push(
    "",
    "### Writes: `POST /user/repos` (target ≥ 1,000 req/s)",
    "",
    "| | Project | Reference | Ratio project/reference | Target | Ratio project/target | Meets |",
    "|---|---|---|---|---|---|---|",
    `| Created repositories per second | ${fmtInt(writes.rps.project)} | ${fmtInt(writes.rps.reference)} | ${fmt(ratio(writes.rps.project, writes.rps.reference), 3)} | ≥ 1,000 | **${fmt(q, 3)}** | ${meets(q >= 1)} |`,
    `| p50 ms | ${fmt(writes.p50.project, 2)} | ${fmt(writes.p50.reference, 2)} | – | – | – | – |`,
    "",
    writes.ok
      ? `Every request carried a new name; every answer was 201, every created name distinct, and each run's rows were counted in the database afterwards: the 201s plus the requests cut off at the end of the run, which the server still completed (${writes.cutOff.join(", ")} per run).`
      : `**Check failed:** ${writes.notes.join("; ")}`,
  );
}
{
  const m = (t: Target, k: "startMs" | "rss") => median(startup[k][t]);
  lines.push(
    "",
    `### Start-up (median of ${STARTS} cold starts each, alternating)`,
    "",
    "| | Project | Reference | Ratio project/reference | Target | Ratio project/target | Meets |",
    "|---|---|---|---|---|---|---|",
    `| Idle RSS 1 s after the first answer, MB | ${fmt(m("project", "rss"))} | ${fmt(m("reference", "rss"))} | ${fmt(ratio(m("project", "rss"), m("reference", "rss")), 2)} | ≤ 120 MB | **${fmt(ratio(m("project", "rss"), 120), 2)}** | ${meets(m("project", "rss") <= 120)} |`,
    `| Spawn → first 200 of \`GET /user\`, ms | ${fmt(m("project", "startMs"), 0)} | ${fmt(m("reference", "startMs"), 0)} | ${fmt(ratio(m("project", "startMs"), m("reference", "startMs")), 2)} | ≤ 500 ms | **${fmt(ratio(m("project", "startMs"), 500), 2)}** | ${meets(m("project", "startMs") <= 500)} |`,
    "",
    `Samples: project RSS ${startup.rss.project.map((x) => fmt(x)).join(", ")} MB, start ${startup.startMs.project.map((x) => fmt(x, 0)).join(", ")} ms; reference RSS ${startup.rss.reference.map((x) => fmt(x)).join(", ")} MB, start ${startup.startMs.reference.map((x) => fmt(x, 0)).join(", ")} ms. RSS is VmRSS of the server process (MB = 10⁶ bytes); the start time includes Node's start, the imports, the migration check and the first request (polled every 5 ms).`,
  );
}
if (workerRows.length) {
  lines.push(
    "",
    `### Worker: workerd + sqld + ${DELAY_MS} ms per database round trip (target: loaded p50 ≤ ${DELAY_MS} ms + 1.3 × unloaded cost)`,
    "",
    `| Route | Unloaded cost c0 (p50, proxy at 0 ms) | Target ${DELAY_MS} + 1.3 × c0 | Loaded p50 (median of ${ROUNDS} runs) | Ratio loaded p50/target | Meets | Sequential p50 at +${DELAY_MS} ms | Proxy round trips per sequential request | Proxy round trips / request under load | Proxy's hold under load, p50 / p99 | Server-Timing round trips under load |`,
    "|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const w of workerRows) {
    const target = DELAY_MS + 1.3 * w.c0;
    const q = ratio(w.loadedP50, target);
    lines.push(
      `| \`${w.route}\` | ${fmt(w.c0, 2)} ms | ${fmt(target, 2)} ms | ${fmt(w.loadedP50, 2)} ms (${w.loadedRuns.map((x) => fmt(x, 1)).join(", ")}) | **${fmt(q, 3)}** | ${meets(q <= 1)} | ${fmt(w.seqDelayed, 2)} ms | ${Object.entries(w.proxySeq).map(([k, v]) => `${k}: ${v}×`).join(", ")} | ${fmt(w.proxyLoaded, 3)} | ${fmt(w.held.p50, 2)} / ${fmt(w.held.p99, 2)} ms | ${fmt(w.stTrips, 2)}${w.failures ? ` — ${w.failures} failed answers` : ""} |`,
    );
  }
  lines.push(
    "",
    `The Worker runs as \`wrangler deploy\` bundles it, under Miniflare (local workerd, without \`wrangler dev\`'s proxy Worker in front; the database driver \`functions/db/hrana.ts\`), its database URL pointing at \`bench/latency-proxy.ts\` (own process), which forwards to sqld. The unloaded cost c0 is the median of ${CHECKS} sequential requests with the proxy's delay set to 0 ms: the same processes and hops, nothing added. Then the delay is set to ${DELAY_MS} ms and the route is loaded with ${CONNECTIONS} connections; the proxy reports how long it really held the bytes it delayed (medians over the runs of each run's p50 and p99; its timer is on time at the median, bench/lib/alarm.ts). The data is the same seed (${fmtInt(REPOS)} repositories), written into sqld over its HTTP API.`,
  );
}
lines.push(
  "",
  "### Runs",
  "",
  `${runs.filter((r) => r.quiet.gaveUp).length} of ${runs.length} runs went ahead while others kept the machine busy after the longest wait (marked "still busy"); with more than a few, run it again at a quieter time.`,
  "",
  "Every timed run, in order, with the machine's state just before it (our servers idle): the 1-minute load average (it mostly echoes our own previous run) and the CPU busy fraction over the second before the run (others' work; a run waits while it is above 25 %).",
  "",
  "| Measurement | Target | Round | Load avg 1 min | CPU busy before | Waited s | Req/s | p50 ms | p99 ms | Failures |",
  "|---|---|---|---|---|---|---|---|---|---|",
  ...runs.map((r) => `| \`${r.what}\` | ${r.target} | ${r.round} | ${fmt(r.quiet.load1, 2)} | ${fmt(100 * r.quiet.busy, 0)} % | ${fmt(r.quiet.waited, 0)}${r.quiet.gaveUp ? " (still busy)" : ""} | ${fmtInt(r.r.rps)} | ${fmt(r.r.p50, 2)} | ${fmt(r.r.p99, 2)} | ${r.r.failures} |`),
  "",
  "### How to read it",
  "",
  `- **Ratio project/reference** is the project's median throughput divided by the reference's, both measured in the same run on the same file with the same caller and load; the reference is the fastest this stack answers the same question on this machine (plain \`node:http\`, prepared statements, one synchronous query each). Issue 9 asks for ≥ 0.5.`,
  `- p50/p99 are under load (${CONNECTIONS} connections; the load generator, the server and everything else share the ${os.cpus().length} cores, so they include CPU queueing). "Unloaded p50" is one request at a time.`,
  `- Project round trips come from \`Server-Timing: db;desc\`; every read is one batch, so anything other than 1.00 is a regression.`,
  `- The Worker target compares a loaded p50 with ${DELAY_MS} ms (one round trip) plus 1.3 × what the request costs with no added latency: a request that makes one round trip and does little CPU work meets it; a second round trip or heavy CPU work under load does not.`,
  `- Medians over alternating rounds make a brief spike from another user of the machine move one sample, not the figure; the Runs table shows every sample.`,
);
const body = lines.join("\n");
console.log(body);
await writeSection("REST API", body);
process.exit(0);
