/**
 * `npm run bench:git`: the git engine (functions/git, served on Node by test/git/server.ts over the
 * in-memory RefStore and the directory ObjectStore) side by side with git's own `git http-backend`
 * (through bench/git-cgi.ts), both as separate processes on this machine, driven by the git CLI.
 * One generated repository of 10,000 commits; per measurement the two servers alternate and the
 * median of the runs is reported:
 * - full push into an empty repository, full clone, incremental push of one commit;
 * - peak server memory (VmHWM, reset through /proc/<pid>/clear_refs) while serving a clone of the
 *   1,000- and the 10,000-commit repository, above the idle RSS before it.
 * Writes the `## Git` section of bench/RESULTS.md (other sections untouched).
 * Knobs: BENCH_GIT_RUNS (default 5), BENCH_GIT_COMMITS (10000).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { fastImportChunks, Scratch } from "../test/git/helpers.ts";

const ROOT = path.resolve(fileURLToPath(new URL("..", import.meta.url)));
const RUNS = Number(process.env.BENCH_GIT_RUNS ?? 5);
const COMMITS = Number(process.env.BENCH_GIT_COMMITS ?? 10_000);
const s = new Scratch("bench-git-");

interface Server {
  name: string;
  url: string;
  proc: ChildProcess;
  lines: string[];
  /** A URL for a repository that exists and is empty. */
  emptyRepo(name: string): Promise<string>;
}

/** Starts a Node script that prints its URL first; keeps its later stdout lines. */
async function startProcess(script: string, args: string[]): Promise<{ url: string; proc: ChildProcess; lines: string[] }> {
  const proc = spawn(process.execPath, [path.join(ROOT, script), ...args], { stdio: ["ignore", "pipe", "inherit"], detached: true });
  const lines: string[] = [];
  const rl = createInterface({ input: proc.stdout! });
  const url = await new Promise<string>((ok, fail) => {
    rl.once("line", ok);
    proc.once("exit", (c) => fail(new Error(`${script} exited with ${c}`)));
  });
  rl.on("line", (l) => lines.push(l));
  return { url, proc, lines };
}

function stop(p: ChildProcess): void {
  try {
    process.kill(-p.pid!, "SIGTERM");
  } catch {}
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2]! : (a[a.length / 2 - 1]! + a[a.length / 2]!) / 2;
};

/** KiB values of VmRSS / VmHWM of a process. */
function memOf(pid: number): { rss: number; hwm: number } {
  const st = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)![1]);
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** Resets the peak RSS counter (VmHWM) of a process to its current RSS. */
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, "5");

async function git(args: string[], cwd = s.dir): Promise<void> {
  await s.git(args, { cwd });
}

async function main() {
  const started = new Date();
  const load = os.loadavg()[0]!.toFixed(2);
  // ---- the repositories
  const src = s.path("src");
  await git(["init", "-q", "-b", "main", src]);
  let t = process.hrtime.bigint();
  await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportChunks({ commits: COMMITS, files: 40, touch: 2 }) });
  await git(["reset", "-q", "--hard", "main"], src);
  await git(["repack", "-adbq"], src);
  const objects = Number((await s.gitText(["count-objects", "-v"], { cwd: src })).match(/in-pack: (\d+)/)![1]);
  const packBytes = Number((await s.gitText(["count-objects", "-v"], { cwd: src })).match(/size-pack: (\d+)/)![1]) * 1024;
  console.log(`generated ${COMMITS} commits, ${objects} objects, pack ${(packBytes / 1e6).toFixed(1)} MB in ${ms(t).toFixed(0)} ms`);
  const small = s.path("small");
  await git(["clone", "-q", "--bare", "--no-local", src, small]);
  await git(["update-ref", "refs/heads/main", `main~${COMMITS - 1000}`], small);
  await git(["gc", "-q", "--prune=now"], small);

  // ---- the servers
  const ours = await startProcess("test/git/server.ts", [s.path("engine-data")]);
  const cgiRoot = s.path("cgi");
  mkdirSync(cgiRoot);
  const theirs = await startProcess("bench/git-cgi.ts", [cgiRoot]);
  const servers: Server[] = [
    { name: "engine (Node)", ...ours, emptyRepo: async (n) => `${ours.url}/${n}.git` },
    {
      name: "git http-backend",
      ...theirs,
      emptyRepo: async (n) => {
        await git(["init", "-q", "--bare", "-b", "main", path.join(cgiRoot, `${n}.git`)]);
        return `${theirs.url}/${n}.git`;
      },
    },
  ];
  const results: Record<string, Record<string, number[]>> = {};
  const record = (server: string, what: string, v: number) => {
    results[what] ??= {};
    (results[what][server] ??= []).push(v);
  };

  try {
    // full push into an empty repository
    for (let r = 0; r < RUNS; r++) {
      for (const srv of r % 2 ? [...servers].reverse() : servers) {
        const url = await srv.emptyRepo(`push${r}`);
        t = process.hrtime.bigint();
        await git(["push", "-q", url, "main"], src);
        record(srv.name, "full push", ms(t));
      }
    }
    // the repositories the clones read: push0 (10k) and a 1k one
    for (const srv of servers) {
      const url = await srv.emptyRepo("small");
      await git(["push", "-q", url, "main"], small);
    }
    // full clone
    for (let r = 0; r < RUNS; r++) {
      for (const srv of r % 2 ? [...servers].reverse() : servers) {
        const dst = s.path(`clone-${srv.proc.pid}-${r}`);
        t = process.hrtime.bigint();
        await git(["clone", "-q", `${srv.url}/push0.git`, dst]);
        record(srv.name, "full clone", ms(t));
        rmSync(dst, { recursive: true, force: true });
      }
    }
    // server memory while serving a clone: peak above idle, at 1k and 10k commits
    for (const srv of servers) {
      for (const [repo, label] of [
        ["small", "1k"],
        ["push0", "10k"],
      ] as const) {
        for (let r = 0; r < 3; r++) {
          const pid = srv.proc.pid!;
          const idle = memOf(pid).rss;
          resetPeak(pid);
          // git http-backend forks: its children's memory is theirs, sampled while they run
          let childPeak = 0;
          const timer = setInterval(() => {
            childPeak = Math.max(childPeak, childrenRss(pid));
          }, 20);
          const dst = s.path(`mem-${pid}-${label}-${r}`);
          await git(["clone", "-q", "--bare", `${srv.url}/${repo}.git`, dst]);
          clearInterval(timer);
          const peak = memOf(pid).hwm;
          record(srv.name, `clone memory ${label} (MiB above idle)`, (peak - idle + childPeak) / 1024);
          rmSync(dst, { recursive: true, force: true });
        }
      }
    }
    // incremental push of one commit
    const work = s.path("work");
    await git(["clone", "-q", src, work]);
    for (let r = 0; r < RUNS * 2; r++) {
      writeFileSync(path.join(work, `inc-${r}.txt`), `change ${r}\n`);
      await git(["add", "."], work);
      // a commit made now, newer than the generated history (as a real push would be)
      const now = `${Math.floor(Date.now() / 1000)} +0000`;
      await s.git(["commit", "-q", "-m", `file ${r}`], { cwd: work, env: { GIT_AUTHOR_DATE: now, GIT_COMMITTER_DATE: now } });
      for (const srv of r % 2 ? [...servers].reverse() : servers) {
        t = process.hrtime.bigint();
        await git(["push", "-q", `${srv.url}/push0.git`, "HEAD:main"], work);
        record(srv.name, "incremental push (1 commit)", ms(t));
      }
    }
  } finally {
    for (const srv of servers) stop(srv.proc);
  }
  const trips = ours.lines
    .map((l) => {
      try {
        return (JSON.parse(l) as { refStoreCalls?: number }).refStoreCalls;
      } catch {
        return undefined;
      }
    })
    .filter((n): n is number => typeof n === "number");

  // ---- report
  const [a, b] = servers.map((x) => x.name) as [string, string];
  const rows = Object.entries(results).map(([what, by]) => {
    const ma = median(by[a]!);
    const mb = median(by[b]!);
    const unit = what.includes("memory") ? "" : " ms";
    const fmt = (v: number) => (what.includes("memory") ? v.toFixed(1) : v.toFixed(0));
    return `| ${what} | ${fmt(ma)}${unit} | ${fmt(mb)}${unit} | ${(ma / mb).toFixed(2)}× | ${by[a]!.map(fmt).join(", ")} / ${by[b]!.map(fmt).join(", ")} |`;
  });
  const section = [
    "## Git",
    "",
    `\`npm run bench:git\` — ${started.toISOString().slice(0, 10)}, ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${(await s.gitText(["version"])).trim()}, 1-minute load average ${load} before the run (the machine is shared). Repository: ${COMMITS} generated commits (40 files in nested directories, 2 edited per commit), ${objects} objects, one ${(packBytes / 1e6).toFixed(1)} MB pack (repacked with a bitmap for http-backend's sake); the 1k-commit repository is its first 1,000 commits. Both servers are separate processes on 127.0.0.1, driven by the git CLI (protocol v2 for fetch); runs alternate between them; medians of ${RUNS} runs (memory: 3 runs, incremental push: ${RUNS * 2}).`,
    "",
    `| Measurement | ${a} | ${b} | ratio | runs (${a} / ${b}) |`,
    "|---|---|---|---|---|",
    ...rows,
    "",
    `RefStore round trips per push (engine): ${[...new Set(trips)].join(", ")} (one read, one atomic commit) over ${trips.length} pushes.`,
    "",
    "Reading it: the engine's full clone streams the stored pack unchanged, so its time is the client's own index-pack plus transfer, as with http-backend (which runs pack-objects with the bitmap). Full push: the engine indexes in JavaScript (node:zlib inflate, node:crypto SHA-1) where http-backend runs git index-pack in C. Memory: the engine's peak above idle while it serves the clone (the Node process streams the pack in 256 KiB reads); for http-backend the peak of its forked git processes is counted instead, since its bridge only pipes bytes.",
    "",
  ].join("\n");
  const resultsPath = path.join(ROOT, "bench", "RESULTS.md");
  const old = readFileSync(resultsPath, "utf8");
  const re = /## Git\n[\s\S]*?(?=\n## |$)/;
  const next = re.test(old) ? old.replace(re, section.trimEnd() + "\n") : `${old.trimEnd()}\n\n${section}`;
  writeFileSync(resultsPath, next.endsWith("\n") ? next : `${next}\n`);
  console.log(section);
  s.cleanup();
}

/** Sum of the RSS of a process's descendants (git processes forked by http-backend), in KiB. */
function childrenRss(pid: number): number {
  let total = 0;
  const kids = (p: number): number[] => {
    try {
      return readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const stack = kids(pid);
  while (stack.length) {
    const k = stack.pop()!;
    try {
      total += memOf(k).rss;
    } catch {}
    stack.push(...kids(k));
  }
  return total;
}

await main();
