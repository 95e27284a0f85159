/**
 * What every benchmark shares: starting the project's Node server and the reference server (timing
 * spawn → first successful answer, reading RSS), running load from a separate process, waiting for
 * a quiet machine before each run, medians, and writing one section of bench/RESULTS.md.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { freePort, ROOT_DIR, stopGroup } from "../../scripts/lib/processes.ts";
import type { LoadResult, LoadSpec } from "../load.ts";
import type { ProxyStats } from "../latency-proxy.ts";

export { ROOT_DIR };
export const RESULTS_FILE = join(ROOT_DIR, "bench", "RESULTS.md");

export interface Server {
  url: string;
  pid: number;
  /** Spawn → first 200 answer of the probe, in ms. */
  startMs: number;
  rssMB: () => number;
  stop: () => Promise<void>;
}

/** Resident set size of a process in MB (10^6 bytes), from /proc. */
export function rssMB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? (Number(m[1]) * 1024) / 1e6 : NaN;
}

/**
 * Spawns `node <args>` in its own process group and polls `probe` every 5 ms until it answers 200.
 * `startMs` runs from just before spawn to the end of that first successful answer.
 */
async function spawnServer(args: string[], env: Record<string, string>, probe: { path: string; headers: Record<string, string> }, port: number): Promise<Server> {
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT_DIR,
    detached: true,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${proc.exitCode} before answering`);
    if (Date.now() > deadline) {
      await stopGroup(proc);
      throw new Error(`${args.join(" ")} did not answer ${probe.path} within 60 s`);
    }
    try {
      const res = await fetch(url + probe.path, { headers: probe.headers });
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const startMs = performance.now() - t0;
  return { url, pid: proc.pid!, startMs, rssMB: () => rssMB(proc.pid!), stop: () => stopGroup(proc) };
}

/** `dist/node/node.js`, built once per benchmark process (what `npm start` runs). */
let built: Promise<void> | null = null;

/**
 * The project's Node server on DATA_DIR/gitea.db: what `npm start` runs (the bundle,
 * `dist/node/node.js`), or with `sources` the TypeScript sources (`functions/node.ts`) — for CPU
 * profiles, whose summary by package needs the modules' own paths. `execArgv` for profiling hooks.
 */
export async function startProject(dataDir: string, token: string, opts: { execArgv?: string[]; env?: Record<string, string>; sources?: boolean } = {}): Promise<Server> {
  const port = await freePort();
  const env = { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", GITEA__server__ROOT_URL: `http://127.0.0.1:${port}/`, GITEA__server__SERVER_TIMING_DURATION: "true", ...(opts.env ?? {}) };
  let entry = join(ROOT_DIR, "functions", "node.ts");
  if (!opts.sources) {
    built ??= import(join(ROOT_DIR, "scripts", "build.ts")).then((m: { buildNode: () => Promise<void> }) => m.buildNode());
    await built;
    entry = join(ROOT_DIR, "dist", "node", "node.js");
  }
  return spawnServer([...(opts.execArgv ?? []), entry], env, { path: "/api/v1/user", headers: { authorization: `token ${token}` } }, port);
}

/** The reference server (`bench/reference.ts`) on the same file; `rootUrl` makes its URLs match the project's. */
export async function startReference(dbFile: string, token: string, rootUrl?: string): Promise<Server> {
  const port = await freePort();
  const args = [join(ROOT_DIR, "bench", "reference.ts"), "--db", dbFile, "--port", String(port), "--root-url", rootUrl ?? `http://127.0.0.1:${port}/`];
  return spawnServer(args, {}, { path: "/api/v1/user", headers: { authorization: `token ${token}` } }, port);
}

/** Runs `bench/load.ts` as its own process and returns its result. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((ok, fail) => {
    const proc = spawn(process.execPath, [join(ROOT_DIR, "bench", "load.ts"), JSON.stringify(spec)], { cwd: ROOT_DIR, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.on("exit", (code) => {
      if (code !== 0) return fail(new Error(`load generator exited with ${code}`));
      try {
        ok(JSON.parse(out.trim().split("\n").at(-1)!) as LoadResult);
      } catch (e) {
        fail(e);
      }
    });
  });
}

/** A latency-injecting proxy (bench/latency-proxy.ts) as its own process, with a settable delay. */
export async function startProxyProcess(target: string, delayMs: number) {
  const proc: ChildProcess = spawn(process.execPath, [join(ROOT_DIR, "bench", "latency-proxy.ts"), "--target", target, "--delay", String(delayMs)], {
    detached: true,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: proc.stdout! });
  const { url, control } = await new Promise<{ url: string; control: string }>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error("latency proxy did not start within 10 s")), 10_000);
    proc.once("exit", (code) => fail(new Error(`latency proxy exited with ${code}`)));
    lines.once("line", (l) => {
      clearTimeout(timer);
      ok(JSON.parse(l) as { url: string; control: string });
    });
  });
  return {
    url,
    pid: proc.pid!,
    stats: async () => (await (await fetch(`${control}/__stats`)).json()) as ProxyStats,
    reset: async () => void (await fetch(`${control}/__reset`, { method: "POST" })),
    setDelay: async (ms: number) => void (await fetch(`${control}/__delay?ms=${ms}`, { method: "POST" })),
    stop: () => stopGroup(proc),
  };
}

/** CPU busy fraction of the whole machine over `ms` (from /proc/stat). */
async function cpuBusy(ms: number): Promise<number> {
  const read = () => {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3]! + (f[4] ?? 0);
    return { idle, total: f.reduce((a, b) => a + b, 0) };
  };
  const a = read();
  await new Promise((r) => setTimeout(r, ms));
  const b = read();
  return b.total > a.total ? 1 - (b.idle - a.idle) / (b.total - a.total) : 0;
}

export interface Quiet {
  /** 1-minute load average just before the run. */
  load1: number;
  /** CPU busy fraction of the machine in the second before the run, our servers idle. */
  busy: number;
  /** Seconds waited for others' work to stop. */
  waited: number;
  /** The machine was still busy after the longest wait; the run went ahead anyway. */
  gaveUp: boolean;
}

/**
 * Called before every timed run, with our own servers idle: while someone else keeps the CPU more
 * than `threshold` busy, wait (up to `maxWaitS`, BENCH_QUIET_WAIT, default 60 s). The 1-minute load average is recorded too, but it
 * mostly echoes our own previous run, so the busy fraction is what decides.
 */
export async function waitForQuiet(threshold = 0.25, maxWaitS = Number(process.env.BENCH_QUIET_WAIT ?? 60)): Promise<Quiet> {
  const start = performance.now();
  let busy = await cpuBusy(1000);
  while (busy > threshold && (performance.now() - start) / 1000 < maxWaitS) {
    await new Promise((r) => setTimeout(r, 4000));
    busy = await cpuBusy(1000);
  }
  return { load1: os.loadavg()[0]!, busy, waited: Math.max(0, (performance.now() - start) / 1000 - 1), gaveUp: busy > threshold };
}

export const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2; // !: 0 < m < s.length
};

export const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "–");
export const fmtInt = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "–");

/** What a benchmark of the app measures: its code, migrations, Worker bundle settings and locked dependencies. */
const APP_PATHS = ["functions", "drizzle", "wrangler.toml", "package-lock.json"];

/** The machine and the code measured, for a section's first line. */
export function describeRun(): string {
  const cpu = os.cpus();
  let commit = "unknown";
  try {
    // The last commit that changed what runs (the app, its migrations, the Worker's bundle settings,
    // the locked dependencies), and the checkout it runs in.
    const app = execFileSync("git", ["log", "-1", "--format=%h (%s)", "--", ...APP_PATHS], { cwd: ROOT_DIR, encoding: "utf8" }).trim();
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT_DIR, encoding: "utf8" }).trim();
    commit = `${app}, checkout ${head}`;
    const dirty = execFileSync("git", ["status", "--porcelain", "--", ...APP_PATHS], { cwd: ROOT_DIR, encoding: "utf8" }).trim();
    if (dirty) commit += ` with uncommitted changes in ${APP_PATHS.join(", ")}`;
  } catch {
    // not a git checkout
  }
  return `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ${cpu.length} × ${cpu[0]?.model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${os.platform()}; app code last changed in ${commit}`;
}

/** Replaces the `## <title>` section of bench/RESULTS.md (up to the next `## `), or appends it. Other sections stay byte for byte. */
export async function writeSection(title: string, body: string): Promise<void> {
  const heading = `## ${title}`;
  const old = await readFile(RESULTS_FILE, "utf8").catch(() => "# Benchmark results\n");
  const section = `${heading}\n\n${body.trim()}\n`;
  const re = new RegExp(`(^|\\n)${heading.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n`);
  const m = re.exec(old);
  let updated: string;
  if (!m) updated = `${old.trimEnd()}\n\n${section}`;
  else {
    const start = m.index + m[1]!.length;
    const next = old.indexOf("\n## ", start + heading.length);
    updated = `${old.slice(0, start)}${section}${next < 0 ? "" : `\n${old.slice(next + 1)}`}`;
  }
  await writeFile(RESULTS_FILE, updated);
}

/** Runs cleanups in reverse order on exit or signal. */
export function cleanups() {
  const stops: (() => Promise<void> | void)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch((e) => console.error(e));
  };
  const onSignal = () => void stopAll().then(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return { add: (f: () => Promise<void> | void) => stops.push(f), stopAll };
}

/** `--name value` and `--flag` from argv. */
export function argOf(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : (process.argv[i + 1] ?? "");
}
export const hasFlag = (name: string) => process.argv.includes(`--${name}`);
