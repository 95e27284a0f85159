/**
 * Issue 10's stall without the project's code: a plain-JS Worker under Miniflare (started as
 * scripts/lib/processes.ts starts one: convertV4MiniflareOptions, local state on disk) with one R2
 * binding, driven from here with the R2 calls a full push of the 10,000-commit bench repository
 * makes, many times into one workerd process, or R2S_RUNS new ones in turn:
 * - `push` (default): the request body (the "pack", 9,642,018 bytes, sent chunked as git does)
 *   read by the Worker into a multipart upload of 8 MiB parts (createMultipartUpload, uploadPart ×2,
 *   complete); memory grown and dropped in the isolate (R2S_GROW MiB of 32 KiB and ~0.5 KiB arrays,
 *   as indexing does); R2S_HASHES node:crypto SHA-1 hashes (indexing makes one per object,
 *   74,166); CPU spent (R2S_CPU_MS); two 256 KiB range reads of the pack; then `put` of the `.rev`
 *   (296,716 bytes) and of the `.idx` (2,077,720 bytes), each a plain Uint8Array. With R2S_EOF=0
 *   the Worker reads the body up to the pack's size only and cancels it after the puts (as the
 *   engine does: it reads the pack to its trailer and cancels the body after indexing).
 * - `put`: only `bucket.put` of a 2,077,720-byte Uint8Array, R2S_CONCURRENCY at a time.
 * A request unanswered for R2S_TIMEOUT s is a stall: the script prints the `.partial` blob files
 * workerd is still writing, the CPU each workerd thread used over 2 s, each thread's wchan and
 * (when gdb is installed) every thread's native stack (to a file in the state directory), tries a
 * new put into the stalled process, then stops (R2S_KEEP=1 leaves the stalled workerd running for
 * inspection). A request that fails at once is counted and the run goes on.
 * Knobs: R2S_MODE (push|put), R2S_ITERATIONS (100 per workerd process), R2S_RUNS (1; the bench's
 * stalls came at the 3rd or 4th push into a process), R2S_GROW (MiB, 200), R2S_HASHES (0),
 * R2S_CPU_MS (2000), R2S_EOF (1), R2S_GAP (s of idle between iterations, 0; the bench's full
 * pushes into one workerd come ~25 s apart), R2S_LOAD (busy-looping processes started beside it,
 * 0), R2S_TIMEOUT (s, 60), R2S_CONCURRENCY (1), R2S_CHUNK (bytes per chunk of the pushed body,
 * 65536), R2S_KEEP (0), R2S_MINIFLARE (a miniflare package directory to use instead of this
 * project's, e.g. a newer release installed elsewhere). Miniflare passes
 * MINIFLARE_WORKERD_V8_FLAGS (space-separated) to workerd's V8, e.g. `--gc-interval=500`.
 * `node bench/r2-stall.ts`; prints one line per iteration and a summary.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { threadTicks } from "./lib/procfs.ts";

const MODE = process.env.R2S_MODE ?? "push";
const ITERATIONS = Number(process.env.R2S_ITERATIONS ?? 100);
const RUNS = Number(process.env.R2S_RUNS ?? 1);
const GROW_MB = Number(process.env.R2S_GROW ?? 200);
const CPU_MS = Number(process.env.R2S_CPU_MS ?? 2000);
const LOAD = Number(process.env.R2S_LOAD ?? 0);
const TIMEOUT_S = Number(process.env.R2S_TIMEOUT ?? 60);
const CONCURRENCY = Number(process.env.R2S_CONCURRENCY ?? 1);
const CHUNK = Number(process.env.R2S_CHUNK ?? 65536);
const KEEP = process.env.R2S_KEEP === "1";
const GAP_S = Number(process.env.R2S_GAP ?? 0);
const HASHES = Number(process.env.R2S_HASHES ?? 0);
const EOF = process.env.R2S_EOF !== "0";
/** The bench repository's sizes: its pack, and the `.rev` and `.idx` of its 74,166 objects. */
const PACK_BYTES = 9_642_018;
const REV_BYTES = 296_716;
const IDX_BYTES = 2_077_720;

/** The Worker: plain JavaScript, nothing of the project. */
const WORKER = `
import { createHash } from "node:crypto";
/** n SHA-1 hashes of small buffers through node:crypto (native objects, as indexing hashes every object). */
function hashes(n) {
  let last = "";
  for (let i = 0; i < n; i++) last = createHash("sha1").update(new Uint8Array(64 + (i % 512))).digest("hex");
  return last;
}
function bytes(n, seed) {
  const b = new Uint8Array(n);
  let x = seed | 1;
  for (let i = 0; i < n; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; b[i] = x; }
  return b;
}
function concat(list) {
  const out = new Uint8Array(list.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of list) { out.set(b, at); at += b.length; }
  return out;
}
/** Allocates about mb MiB as indexing does (many small arrays, 32 KiB ones), touches it, drops it. */
function grow(mb) {
  let keep = [];
  let sum = 0;
  for (let i = 0; i < mb * 16; i++) {
    const big = new Uint8Array(32 * 1024);
    big[i % big.length] = i;
    keep.push(big);
    for (let j = 0; j < 64; j++) keep.push(new Uint8Array(512 + (j % 7) * 16));
    if (keep.length > 20000) { sum += keep.length; keep = []; }
  }
  return sum + keep.length;
}
function spin(ms) {
  const end = Date.now() + ms;
  let n = 0;
  while (Date.now() < end) n++;
  return n;
}
export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    const q = (k, d) => Number(u.searchParams.get(k) ?? d);
    const B = env.BUCKET;
    const key = u.searchParams.get("key") ?? "k";
    if (u.pathname === "/put") {
      await B.put(key, bytes(q("size", ${IDX_BYTES}), q("seed", 1)));
      return Response.json({ ok: true });
    }
    if (u.pathname !== "/push") return new Response("not found", { status: 404 });
    const partSize = 8 * 1024 * 1024;
    const reader = req.body.getReader();
    let pending = [];
    let pendingBytes = 0;
    let total = 0;
    let upload = null;
    const parts = [];
    // with eof=0 the body is read up to its known size only, its end left unread until the response,
    // as the engine does (it reads the pack up to its trailer and cancels the body after indexing)
    const size = q("size", Infinity);
    const toEof = q("eof", 1) === 1;
    for (;;) {
      if (!toEof && total >= size) break;
      const { done, value } = await reader.read();
      if (done) break;
      pending.push(value);
      pendingBytes += value.length;
      total += value.length;
      while (pendingBytes >= partSize) {
        const all = concat(pending);
        upload ??= await B.createMultipartUpload(key + ".pack");
        parts.push(await upload.uploadPart(parts.length + 1, all.subarray(0, partSize)));
        const rest = all.subarray(partSize);
        pending = rest.length ? [rest] : [];
        pendingBytes = rest.length;
      }
    }
    const last = concat(pending);
    if (upload) {
      if (last.length) parts.push(await upload.uploadPart(parts.length + 1, last));
      await upload.complete(parts);
    } else await B.put(key + ".pack", last);
    const grown = grow(q("grow", 0));
    hashes(q("hashes", 0));
    spin(q("cpu", 0));
    for (const offset of [12, total - 300000]) {
      const o = await B.get(key + ".pack", { range: { offset, length: 256 * 1024 } });
      await o.arrayBuffer();
    }
    await B.put(key + ".rev", bytes(${REV_BYTES}, q("seed", 1)));
    await B.put(key + ".idx", bytes(${IDX_BYTES}, q("seed", 2)));
    if (!toEof) await reader.cancel();
    return Response.json({ total, parts: parts.length, grown });
  },
};
`;

/** This process's direct children (Miniflare starts workerd as one). */
function ownChildren(): number[] {
  try {
    return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
}


let diagnoses = 0;

/** What a stalled workerd is doing: unfinished blob files, busy threads, native stacks. */
async function diagnose(pid: number, stateDir: string): Promise<string> {
  const partial = readdirSync(stateDir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".partial"));
  const blobs = partial.map((f) => `${f} (${statSync(path.join(stateDir, f)).size} bytes)`).join(", ") || "none";
  const before = threadTicks(pid);
  await new Promise((ok) => setTimeout(ok, 2000));
  const busy = [...threadTicks(pid)].map(([t, v]) => [t, v - (before.get(t) ?? v)] as const).filter(([, d]) => d > 0);
  const lines = [`unfinished blob writes: ${blobs}`, `workerd pid ${pid}, RSS ${rssMiB(pid).toFixed(0)} MiB, busy threads over 2 s: ${busy.map(([t, d]) => `${t} ${d * 10} ms`).join(", ") || "none"}`];
  try {
    const wchan = readdirSync(`/proc/${pid}/task`).map((t) => `${t}:${readFileSync(`/proc/${pid}/task/${t}/wchan`, "utf8")}`);
    lines.push(`wchan: ${wchan.join(" ")}`);
  } catch {}
  try {
    const out = execFileSync("gdb", ["-p", String(pid), "-batch", "-ex", "thread apply all bt 40"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
    const file = path.join(stateDir, `gdb-backtrace-${++diagnoses}.txt`);
    writeFileSync(file, out);
    lines.push(`native stacks (gdb): ${file}`);
  } catch (e) {
    lines.push(`no native stacks: ${(e as Error).message.split("\n")[0]}`);
  }
  return lines.join("\n");
}

/** The pushed body, sent in CHUNK-byte pieces as a chunked request (git streams its pack so). */
function packBody(seed: number): ReadableStream<Uint8Array> {
  let sent = 0;
  let x = seed | 1;
  return new ReadableStream({
    pull(c) {
      if (sent >= PACK_BYTES) return c.close();
      const n = Math.min(CHUNK, PACK_BYTES - sent);
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i += 4) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        b[i] = x;
      }
      sent += n;
      c.enqueue(b);
    },
  });
}

async function call(url: string, init: RequestInit): Promise<string> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_S * 1000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

/** The versions in use (R2S_MINIFLARE: another miniflare package directory, to try a newer release without installing it here). */
async function loadMiniflare() {
  const mfDir = process.env.R2S_MINIFLARE;
  const version = (file: string) => (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  const mod = (await (mfDir ? import(pathToFileURL(path.join(mfDir, "dist/src/index.js")).href) : import("miniflare"))) as typeof import("miniflare");
  const mfPkg = mfDir ? path.join(mfDir, "package.json") : fileURLToPath(import.meta.resolve("miniflare/package.json"));
  const wdPkg = path.join(path.dirname(mfPkg), "../workerd/package.json");
  return { ...mod, versions: `miniflare ${version(mfPkg)}, workerd ${existsSync(wdPkg) ? version(wdPkg) : "?"}` };
}

/** One workerd process: ITERATIONS requests into it; the iteration that stalled, or null. */
async function oneRun(mfLib: Awaited<ReturnType<typeof loadMiniflare>>, run: number): Promise<{ stalledAt: number | null; done: number; failures: number; times: number[] }> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "r2-stall-"));
  const before = new Set(ownChildren());
  const mf = new mfLib.Miniflare(
    mfLib.convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      resourcePersistencePath: stateDir,
      workers: [{ name: "worker", modules: true, script: WORKER, compatibilityDate: "2026-08-01", compatibilityFlags: ["nodejs_compat"], r2Buckets: { BUCKET: { id: "r2-stall" } } }],
    }),
  );
  const url = (await mf.ready).origin;
  const pid = ownChildren().find((p) => !before.has(p) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes("workerd"));
  if (!pid) throw new Error("no workerd child found");
  console.log(`run ${run}: workerd pid ${pid}, state ${stateDir}`);
  let stalledAt: number | null = null;
  let failures = 0;
  const times: number[] = [];
  const stamp = () => new Date().toISOString().slice(11, 19);
  try {
    for (let i = 1; i <= ITERATIONS && stalledAt === null; i++) {
      const t0 = performance.now();
      try {
        if (MODE === "push") {
          await call(`${url}/push?key=p${i}&grow=${GROW_MB}&cpu=${CPU_MS}&hashes=${HASHES}&size=${PACK_BYTES}&eof=${EOF ? 1 : 0}&seed=${i}`, { method: "POST", body: packBody(i), duplex: "half" } as RequestInit);
        } else {
          await Promise.all(Array.from({ length: CONCURRENCY }, (_, j) => call(`${url}/put?key=i${i}-${j}&seed=${i}`, { method: "POST" })));
        }
      } catch (e) {
        const err = e as Error & { cause?: { message?: string; code?: string } };
        if (err.name !== "TimeoutError") {
          // not a stall: the request failed at once (seen: Node's fetch losing a kept-alive connection)
          failures++;
          console.log(`${stamp()} run ${run} iteration ${i}: failed after ${((performance.now() - t0) / 1000).toFixed(1)} s (${err.message}${err.cause ? `: ${err.cause.code ?? ""} ${err.cause.message ?? ""}` : ""}), not a stall`);
          continue;
        }
        stalledAt = i;
        console.log(`${stamp()} run ${run} iteration ${i}: STALLED (${err.message}) after ${((performance.now() - t0) / 1000).toFixed(0)} s, load ${os.loadavg()[0]!.toFixed(1)}`);
        console.log(await diagnose(pid, stateDir));
        // does the stalled process still serve a new write (what R2ObjectStore's resend relies on)?
        const t1 = performance.now();
        const again = await call(`${url}/put?key=after-stall&seed=7`, { method: "POST" }).then(
          () => "answered",
          (e2: Error) => `failed (${e2.name}: ${e2.message})`,
        );
        console.log(`a new 2 MB put into the stalled workerd: ${again} in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
        console.log(await diagnose(pid, stateDir));
        break;
      }
      const ms = performance.now() - t0;
      times.push(ms);
      console.log(`${stamp()} run ${run} iteration ${i}: ${ms.toFixed(0)} ms, workerd RSS ${rssMiB(pid).toFixed(0)} MiB, load ${os.loadavg()[0]!.toFixed(1)}`);
      if (GAP_S > 0) await new Promise((ok) => setTimeout(ok, GAP_S * 1000));
    }
    if (stalledAt !== null && KEEP) {
      console.log(`R2S_KEEP=1: workerd ${pid} left running at ${url} (state ${stateDir}); stop this script (Ctrl-C) to end it`);
      await new Promise(() => {});
    }
  } finally {
    await mf.dispose().catch(() => {});
    if (stalledAt === null) rmSync(stateDir, { recursive: true, force: true });
  }
  return { stalledAt, done: times.length, failures, times };
}

async function main() {
  const mfLib = await loadMiniflare();
  const load: ChildProcess[] = [];
  for (let i = 0; i < LOAD; i++) load.push(spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
  console.log(`${mfLib.versions}, mode ${MODE}, ${RUNS} run(s) of ${ITERATIONS} iterations, each run a new workerd; grow ${GROW_MB} MiB, ${HASHES} hashes, cpu ${CPU_MS} ms, ${LOAD} busy processes, concurrency ${CONCURRENCY}, chunk ${CHUNK}, gap ${GAP_S} s, body read to its end: ${EOF}, V8 flags "${process.env.MINIFLARE_WORKERD_V8_FLAGS ?? ""}"`);
  const times: number[] = [];
  let failures = 0;
  let stalls = 0;
  try {
    for (let run = 1; run <= RUNS; run++) {
      const r = await oneRun(mfLib, run);
      times.push(...r.times);
      failures += r.failures;
      if (r.stalledAt !== null) {
        stalls++;
        break;
      }
    }
  } finally {
    for (const p of load) p.kill("SIGKILL");
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(`${stalls ? "STALLED" : "no stall"}: ${times.length} iterations completed (${failures} failed at once); median ${(sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(0)} ms, max ${(sorted.at(-1) ?? 0).toFixed(0)} ms`);
}

await main();
