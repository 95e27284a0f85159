/**
 * `npm run bench:compaction` — what pack compaction after writes (functions/services/git-maintenance.ts)
 * buys and costs, side by side in one run on the git engine (Node, a directory store, the git CLI
 * as client): one repository history pushed as a 2,000-commit base and then PUSHES one-commit
 * pushes into three repositories —
 *   - `none`: nothing compacted (a pack per push, what the app kept before compaction),
 *   - `app`: compacted as the app does after each write (geometric roll-up once 8 packs are owned),
 *   - `one`: everything merged into one pack at the end (`git gc`'s single pack, the reference).
 * Timed, alternating over ROUNDS rounds (medians): a full clone, a fetch of the last 10 commits,
 * and 200 file reads by path at the tip through the engine's read API with the shared index cache
 * cold — what a request of a fresh Worker isolate does (it fetches every pack's index first; the
 * store reads it made are counted). Also: what the app's compactions cost in all (ms, bytes written).
 */
import { cpSync, rmSync } from "node:fs";
import { compactPacks } from "../functions/git/repo/compact.ts";
import { setSharedIndexBudget } from "../functions/git/pack/reader.ts";
import { Repository } from "../functions/git/repo/repository.ts";
import { compactionDue, AUTO_PACK_LIMIT } from "../functions/services/git-maintenance.ts";
import { fastImportStream, makeHistory, Scratch } from "../test/git/helpers.ts";
import { startGitServer } from "../test/git/server.ts";
import { describeRun, fmt, median, waitForQuiet, writeSection } from "./lib/harness.ts";

const PUSHES = Number(process.env.BENCH_COMPACTION_PUSHES ?? 64);
const ROUNDS = Number(process.env.BENCH_COMPACTION_ROUNDS ?? 5);
const READS = 200;

const s = new Scratch("bench-compaction-");
const srv = await startGitServer({ dataDir: s.path("data") });
const REPOS = ["none", "app", "one"] as const;
type Name = (typeof REPOS)[number];
const url = (r: Name) => `${srv.url}/${r}.git`;
const ctx = (r: Name) => ({ repoId: r, objects: srv.objects, refs: srv.refs });

try {
  const src = s.path("src");
  await makeHistory(s, src, { commits: 2000, files: 40 });
  for (const r of REPOS) {
    srv.refs.create(r);
    await s.git(["push", "-q", url(r), "main"], { cwd: src });
  }
  let compactMs = 0;
  let compactBytes = 0;
  let compactions = 0;
  for (let i = 0; i < PUSHES; i++) {
    const tip = await s.gitText(["rev-parse", "main"], { cwd: src });
    await s.git(["fast-import", "--quiet"], { cwd: src, input: fastImportStream({ commits: 1, files: 40, from: tip, startMark: 100000 + i, seed: 11 + i, time: 1800000000 + i * 60 }) });
    for (const r of REPOS) await s.git(["push", "-q", url(r), "main"], { cwd: src });
    // the app: after a write that leaves a compaction due, one geometric compaction
    const own = (await srv.refs.read("app")).packs.filter((p) => p.repoId === "app");
    if (compactionDue(own)) {
      const t0 = performance.now();
      const c = await compactPacks(ctx("app"), { plan: "geometric", minOwn: AUTO_PACK_LIMIT });
      compactMs += performance.now() - t0;
      if (c) {
        compactions++;
        compactBytes += c.pack.size + c.pack.idxSize;
      }
    }
  }
  const t0 = performance.now();
  const all = await compactPacks(ctx("one"), { plan: "all" });
  const oneMs = performance.now() - t0;
  const packs = Object.fromEntries(await Promise.all(REPOS.map(async (r) => [r, (await srv.refs.read(r)).packs.length] as const))) as Record<Name, number>;
  const tip = await s.gitText(["rev-parse", "main"], { cwd: src });
  const paths = (await s.gitText(["ls-tree", "-r", "--name-only", "main"], { cwd: src })).split("\n");

  const times: Record<string, Record<Name, number[]>> = { clone: { none: [], app: [], one: [] }, fetch: { none: [], app: [], one: [] }, reads: { none: [], app: [], one: [] } };
  const storeReads: Record<Name, number> = { none: 0, app: 0, one: 0 };
  const stale = s.path("stale");
  await s.git(["clone", "-q", "--bare", url("none"), stale]);
  await s.git(["update-ref", "refs/heads/main", `${tip}~10`], { cwd: stale });
  let quietLoad = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const r of round % 2 ? [...REPOS].reverse() : REPOS) {
      quietLoad = Math.max(quietLoad, (await waitForQuiet()).load1);
      const dir = s.path(`clone-${r}-${round}`);
      let t = performance.now();
      await s.git(["clone", "-q", "--bare", url(r), dir]);
      times.clone![r].push(performance.now() - t);
      rmSync(dir, { recursive: true, force: true });
      const f = s.path(`fetch-${r}-${round}`);
      cpSync(stale, f, { recursive: true });
      t = performance.now();
      await s.git(["fetch", "-q", url(r), "main:main"], { cwd: f });
      times.fetch![r].push(performance.now() - t);
      rmSync(f, { recursive: true, force: true });
      // a cold isolate: no index cached in the process
      setSharedIndexBudget(0);
      let gets = 0;
      const counted = new Proxy(srv.objects, {
        get: (target, prop, receiver) => {
          const v = Reflect.get(target, prop, receiver);
          if (prop !== "get" || typeof v !== "function") return typeof v === "function" ? v.bind(target) : v;
          return (...args: unknown[]) => {
            gets++;
            return v.apply(target, args);
          };
        },
      });
      t = performance.now();
      const repo = await Repository.open({ repoId: r, objects: counted, refs: srv.refs });
      for (let i = 0; i < READS; i++) {
        const e = await repo.entryAt(tip, paths[i % paths.length]!);
        if (e) await repo.readBlob(e.oid);
      }
      times.reads![r].push(performance.now() - t);
      storeReads[r] = gets;
      setSharedIndexBudget(32 * 1024 * 1024);
    }
  }
  const row = (label: string, key: string, unit = "ms") =>
    `| ${label} | ${REPOS.map((r) => `${fmt(median(times[key]![r]), 1)} ${unit}`).join(" | ")} | ${fmt(median(times[key]!.none) / median(times[key]!.one), 2)}× | ${fmt(median(times[key]!.app) / median(times[key]!.one), 2)}× |`;
  const body = `\`npm run bench:compaction\` — ${describeRun()}; highest 1-minute load average before a timed run ${fmt(quietLoad, 2)}.

A 2,000-commit base (40 files) and then ${PUSHES} one-commit pushes into three repositories of the git engine (Node, directory store, git CLI over smart HTTP, protocol v2). Medians of ${ROUNDS} alternating rounds.

| Measurement | none: a pack per push | app: compacted after writes | one: a single pack (reference) | none ÷ one | app ÷ one |
|---|---|---|---|---|---|
| packs in the catalog | ${packs.none} | ${packs.app} | ${packs.one} | – | – |
${row("full clone (`git clone --bare`)", "clone")}
${row("fetch of the last 10 commits", "fetch")}
${row(`${READS} file reads at the tip through the read API, index cache cold (a fresh Worker isolate)`, "reads")}
| object-store reads of those ${READS} file reads | ${storeReads.none} | ${storeReads.app} | ${storeReads.one} | – | – |

The app's compactions over the ${PUSHES} pushes: ${compactions}, ${fmt(compactMs, 0)} ms in all (${fmt(compactMs / Math.max(1, compactions), 1)} ms each), ${fmt(compactBytes / 2 ** 20, 2)} MiB written; merging everything into one pack once (the reference): ${fmt(oneMs, 0)} ms${all ? `, ${fmt((all.pack.size + all.pack.idxSize) / 2 ** 20, 2)} MiB` : ""}. Every index is one object-store read (on the Worker, an R2 GET) for an isolate that has not cached it.`;
  console.log(body);
  await writeSection("Compaction", body);
} finally {
  await srv.close();
  s.cleanup();
}
