/**
 * Issue 10's stall with the project's engine (the step after bench/r2-stall.ts): the git engine's
 * test Worker (test/git/worker, the `engine (workerd, local R2)` column of bench:git) started as
 * bench:git starts it, and full pushes of the bench repository by the git CLI, R2E_PUSHES into each
 * workerd, a new workerd per run (the bench's stalls came at the 3rd or 4th push into a process).
 * A push that takes longer than R2E_TIMEOUT s is a stall: the script prints the unfinished blob
 * files and waits R2E_HOLD s so that bench/r2-stall-watch.ts (run beside it on the same state
 * directories) can take the native stacks, then stops. Knobs: R2E_RUNS (20), R2E_PUSHES (5),
 * R2E_TIMEOUT (120), R2E_HOLD (60), R2E_COMMITS (10000).
 */
import { execFile } from "node:child_process";
import { readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startWorkerd } from "../scripts/lib/processes.ts";
import { fastImportChunks, Scratch } from "../test/git/helpers.ts";

const ROOT = path.resolve(fileURLToPath(new URL("..", import.meta.url)));
const RUNS = Number(process.env.R2E_RUNS ?? 20);
const PUSHES = Number(process.env.R2E_PUSHES ?? 5);
const TIMEOUT_S = Number(process.env.R2E_TIMEOUT ?? 120);
const HOLD_S = Number(process.env.R2E_HOLD ?? 60);
const COMMITS = Number(process.env.R2E_COMMITS ?? 10_000);
const s = new Scratch("r2-stall-engine-");

/** git, failed after TIMEOUT_S (a stall) instead of waited for. */
function gitInTime(args: string[], cwd: string): Promise<void> {
  return new Promise((ok, fail) => {
    const child = execFile("git", args, { cwd, env: s.env, timeout: TIMEOUT_S * 1000, maxBuffer: 64 * 1024 * 1024 }, (e) => (e ? fail(e) : ok()));
    child.stdin?.end();
  });
}

function partials(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".partial"))
    .map((f) => `${f} (${statSync(path.join(dir, f)).size} bytes)`);
}

const src = s.path("src");
await s.git(["init", "-q", "-b", "main", src]);
await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportChunks({ commits: COMMITS, files: 40, touch: 2 }) });
await s.git(["reset", "-q", "--hard", "main"], { cwd: src });
await s.git(["repack", "-adbq"], { cwd: src });
console.log(`${COMMITS} commits generated; ${RUNS} runs of ${PUSHES} full pushes, each run a new workerd; state under ${s.dir}`);
let pushes = 0;
try {
  for (let run = 1; run <= RUNS; run++) {
    const state = s.path(`state-${run}`);
    const w = await startWorkerd(path.join(ROOT, "test/git/worker/wrangler.toml"), {}, { persistTo: state });
    try {
      for (let i = 1; i <= PUSHES; i++) {
        const t0 = performance.now();
        try {
          await gitInTime(["push", "-q", `${w.url}/r${run}p${i}.git`, "main"], src);
        } catch (e) {
          console.log(`${new Date().toISOString().slice(11, 19)} run ${run} push ${i}: STALLED or failed after ${((performance.now() - t0) / 1000).toFixed(0)} s (${(e as Error).message.split("\n")[0]}), load ${os.loadavg()[0]!.toFixed(1)}; unfinished blobs: ${partials(state).join(", ") || "none"}`);
          await new Promise((ok) => setTimeout(ok, HOLD_S * 1000));
          throw e;
        }
        pushes++;
        console.log(`${new Date().toISOString().slice(11, 19)} run ${run} push ${i}: ${(performance.now() - t0).toFixed(0)} ms, load ${os.loadavg()[0]!.toFixed(1)}`);
      }
    } finally {
      await w.stop();
    }
    rmSync(state, { recursive: true, force: true });
  }
  console.log(`no stall in ${pushes} full pushes`);
} finally {
  console.log(`${pushes} full pushes completed`);
  if (!readdirSync(s.dir).some((d) => d.startsWith("state-"))) s.cleanup();
}
