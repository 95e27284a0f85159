/**
 * A CPU profile of one route of the project's Node server under load (`npm run bench -- --profile`
 * or `node bench/profile.ts`), summarized by package: @libsql/client, the libsql binding,
 * drizzle-orm, hono, zod, app code, Node internals, V8.
 *
 * Seeds the `npm run bench` data (1,000 repositories), starts `functions/node.ts` with
 * bench/lib/cpu-profile-hook.ts preloaded, warms the route up, then profiles exactly the loaded
 * window (PROFILE_DURATION s, BENCH_CONNECTIONS connections, load from bench/load.ts in its own
 * process). Writes the `.cpuprofile` (open it in Chrome DevTools → Performance, or VS Code) to
 * bench/out/, prints the summary, and writes it to the `## Profile: <route>` section of
 * bench/RESULTS.md.
 *
 * Flags: --route repo|user|search (default repo = GET /repos/{owner}/{repo}), --label TEXT,
 * --out FILE.cpuprofile, --summarize FILE.cpuprofile (only summarize an existing profile).
 * Knobs: PROFILE_DURATION (s, 10), BENCH_CONNECTIONS (10), BENCH_CPU_PROFILE_INTERVAL_US (250).
 */
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { summarize, summaryMarkdown, type CpuProfile } from "./lib/cpuprofile.ts";
import { argOf, cleanups, describeRun, fmt, fmtInt, ROOT_DIR, runLoad, startProject, waitForQuiet, writeSection } from "./lib/harness.ts";
import { seedFile } from "./seed.ts";

const only = argOf("summarize");
if (only) {
  console.log(summaryMarkdown(summarize(JSON.parse(await readFile(only, "utf8")) as CpuProfile)));
  process.exit(0);
}

const DURATION = Number(process.env.PROFILE_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const routeKey = argOf("route") ?? "repo";
const label = argOf("label");

const waitFor = async (file: string, ms: number) => {
  const deadline = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} did not appear within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const c = cleanups();
const tmp = await mkdtemp(path.join(os.tmpdir(), "bench-profile-"));
c.add(() => rm(tmp, { recursive: true, force: true }));
const header = describeRun();
try {
  const dataDir = path.join(tmp, "node");
  const seeded = await seedFile(path.join(dataDir, "gitea.db"), 1000);
  const routes: Record<string, { name: string; path: string }> = {
    repo: { name: "GET /repos/{owner}/{repo}", path: `/api/v1/repos/${seeded.privateRepo}` },
    user: { name: "GET /user", path: "/api/v1/user" },
    search: { name: "GET /repos/search?q=", path: `/api/v1/repos/search?q=${seeded.repoKeyword}` },
  };
  const route = routes[routeKey];
  if (!route) throw new Error(`--route must be one of ${Object.keys(routes).join(", ")}`);
  const profileFile = path.join(tmp, "server.cpuprofile");
  const server = await startProject(dataDir, seeded.viewer.token, {
    sources: true,
    execArgv: ["--import", path.join(ROOT_DIR, "bench", "lib", "cpu-profile-hook.ts")],
    env: { BENCH_CPU_PROFILE: profileFile },
  });
  c.add(server.stop);
  const spec = { url: server.url + route.path, headers: { authorization: `token ${seeded.viewer.token}` }, connections: CONNECTIONS, expectStatus: 200 };
  await runLoad({ ...spec, duration: 3 });
  const quiet = await waitForQuiet();
  process.kill(server.pid, "SIGUSR2");
  await waitFor(`${profileFile}.started`, 10_000);
  const load = await runLoad({ ...spec, duration: DURATION });
  process.kill(server.pid, "SIGUSR2");
  await waitFor(profileFile, 30_000);
  await server.stop();
  if (load.failures) throw new Error(`${load.failures} failed answers: ${JSON.stringify(load.statuses)}`);

  const outFile = argOf("out") ?? path.join(ROOT_DIR, "bench", "out", `${routeKey}-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-")}.cpuprofile`);
  await mkdir(path.dirname(outFile), { recursive: true });
  await copyFile(profileFile, outFile);
  const summary = summarize(JSON.parse(await readFile(profileFile, "utf8")) as CpuProfile);
  const body = [
    `${label ? `**${label}** — ` : ""}\`npm run bench -- --profile${routeKey === "repo" ? "" : ` --route ${routeKey}`}\`, ${header}. Load before the run: 1-minute average ${fmt(quiet.load1, 2)}, CPU ${fmt(100 * quiet.busy, 0)} % busy.`,
    "",
    `\`${route.name}\` on the \`npm run bench\` data (1,000 repositories), as the well-connected \`viewer\` with a token; ${CONNECTIONS} connections for ${DURATION} s from a separate process after a 3 s warm-up: ${fmtInt(load.rps)} req/s, p50 ${fmt(load.p50, 2)} ms while profiled (the sampler costs a little). V8's sampling profiler every ${process.env.BENCH_CPU_PROFILE_INTERVAL_US ?? 250} µs, started and stopped around the loaded window only. The profile itself: \`${path.relative(ROOT_DIR, outFile)}\` (not committed).`,
    "",
    summaryMarkdown(summary),
  ].join("\n");
  console.log(body);
  await writeSection(`Profile: ${route.name}`, body);
} finally {
  await c.stopAll();
}
process.exit(0);
