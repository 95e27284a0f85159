/**
 * Watches for issue 10's stall while something else runs (`npm run bench:git`, BENCH_GIT_SOAK,
 * bench/r2-stall.ts): a blob Miniflare's local R2 is writing (`.kj-tmp.<workerd pid>.<n>.<id>.partial`,
 * the pid is in the name) that has not grown for R2W_STALE s while its workerd is alive is a stall.
 * Then it records, once per file, into `<file>.stall.txt` beside it: the file's size, the CPU each
 * workerd thread used over 2 s, each thread's wchan and kernel stack, and every thread's native
 * stack through gdb (when installed; a few stacks taken 1 s apart, to tell a spin from a wait).
 * `node bench/r2-stall-watch.ts DIR...` (directories searched recursively, e.g. the bench's
 * scratch directories under the temporary directory); R2W_STALE (s, 20), R2W_FOR (s to watch, 3600).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { threadTicks } from "./lib/procfs.ts";

const STALE_S = Number(process.env.R2W_STALE ?? 20);
const FOR_S = Number(process.env.R2W_FOR ?? 3600);
const PARTIAL = /^\.kj-tmp\.(\d+)\.\d+\..*\.partial$/;

/** `.partial` blob files under `dir` (with a prefix glob: every directory starting so). */
function partials(dir: string): string[] {
  const parent = path.dirname(dir);
  const prefix = path.basename(dir);
  const roots = existsSync(dir) ? [dir] : readdirSync(parent).filter((d) => d.startsWith(prefix)).map((d) => path.join(parent, d));
  const out: string[] = [];
  for (const root of roots) {
    try {
      for (const f of readdirSync(root, { recursive: true, encoding: "utf8" })) if (PARTIAL.test(path.basename(f))) out.push(path.join(root, f));
    } catch {}
  }
  return out;
}


function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    return `${cmd}: ${(e as Error).message.split("\n")[0]}`;
  }
}

async function record(file: string, pid: number): Promise<string> {
  const lines = [`stalled blob write ${file}: ${statSync(file).size} bytes, last written ${statSync(file).mtime.toISOString()}, workerd pid ${pid}`];
  const before = threadTicks(pid);
  await new Promise((ok) => setTimeout(ok, 2000));
  const busy = [...threadTicks(pid)].map(([t, v]) => `${t} ${(v - (before.get(t) ?? v)) * 10} ms`);
  lines.push(`CPU per thread over 2 s: ${busy.join(", ")}`);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let kstack = "";
    try {
      kstack = readFileSync(`/proc/${pid}/task/${tid}/stack`, "utf8").trim().split("\n").slice(0, 6).join(" < ");
    } catch {}
    lines.push(`thread ${tid}: wchan ${readFileSync(`/proc/${pid}/task/${tid}/wchan`, "utf8")}${kstack ? `, kernel stack ${kstack}` : ""}`);
  }
  for (let i = 1; i <= 3; i++) {
    lines.push(`--- gdb, sample ${i}`, run("gdb", ["-p", String(pid), "-batch", "-ex", "thread apply all bt 60"]));
    await new Promise((ok) => setTimeout(ok, 1000));
  }
  lines.push(`size after sampling: ${statSync(file).size} bytes`);
  return lines.join("\n");
}

const dirs = process.argv.slice(2);
if (dirs.length === 0) throw new Error("usage: node bench/r2-stall-watch.ts DIR...");
const done = new Set<string>();
const started = Date.now();
const isWorkerd = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd");
  } catch {
    return false;
  }
};
const end = Date.now() + FOR_S * 1000;
console.log(`watching ${dirs.join(", ")} for blob writes stalled ${STALE_S} s, for ${FOR_S} s`);
while (Date.now() < end) {
  for (const file of dirs.flatMap(partials)) {
    if (done.has(file)) continue;
    const pid = Number(PARTIAL.exec(path.basename(file))![1]);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(file);
    } catch {
      continue; // renamed: the write finished
    }
    // only writes of this watch (older leftovers are not stalls of a live process) by a live workerd
    if (st.mtimeMs < started - 60_000 || Date.now() - st.mtimeMs < STALE_S * 1000 || !isWorkerd(pid)) continue;
    done.add(file);
    const report = await record(file, pid);
    writeFileSync(`${file}.stall.txt`, report);
    console.log(`${new Date().toISOString()} STALL ${file} → ${file}.stall.txt\n${report.split("\n--- gdb")[0]}`);
  }
  await new Promise((ok) => setTimeout(ok, 3000));
}
