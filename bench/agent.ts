/**
 * `npm run bench:agent`: FetchAttestation(VTPM) against swtpm, through every protocol, beside the
 * raw TPM time, in one run on one machine.
 * Three swtpm instances made the same way: A behind the agent (a separate process), B driven
 * directly by this process, C behind the RPC floor (swtpm serves one client at a time). Measurements alternate in rounds
 * (BENCH_AGENT_ROUNDS of BENCH_AGENT_PER_ROUND calls per row) so machine noise falls on all of
 * them alike; p50/p99 over all rounds, and each row's overhead over the raw TPM both as the
 * difference of p50s and paired by round (median over rounds of the per-round difference).
 * 1. Raw TPM: the commands the agent sends per call, on B: steady state 2 × Quote (PCR values
 *    proven by the quote's digest are reused), and the full 2 × (3 PCR_Read + Quote) sequence.
 * 2. The agent's attestation code in this process on B (no RPC): VtpmAttester.attest.
 * 3. An RPC the agent answers without the TPM (INVALID_ARGUMENT): the transport's round trip.
 * 4. FetchAttestation(VTPM) through the agent per protocol × codec × HTTP version.
 * 5. The RPC floor (bench/lib/agent-floor.ts): grpc-js against a bare node:http2 process answering
 *    a fixed 3 KB message, without and with the same 2 quotes on a third swtpm first.
 * 6. 16 concurrent grpc-js callers: throughput, latency, errors; every answer verified.
 * 7. grpc-go (test/agent/go/client built offline by scripts/agent-go-client.sh, the client the
 *    agent's Go callers use): sequential FetchAttestation(VTPM) in the same alternating rounds, each
 *    call timed inside the Go process around the RPC alone, and 16 concurrent grpc-go callers.
 * Writes the `## Attestation agent` section of bench/RESULTS.md (other sections untouched; a
 * `### Where the time went` subsection written by hand is kept).
 * BENCH_AGENT_ROOT=<checkout> runs the agent (and attester) of another checkout, e.g. an older
 * commit, with BENCH_AGENT_PROTOCOLS=grpc-js when it serves gRPC only; BENCH_AGENT_WRITE=0 only prints.
 * `--profile`: instead, a CPU profile of the agent process over BENCH_AGENT_PROFILE_CALLS (400)
 * sequential grpc-js FetchAttestation(VTPM) calls after a warm-up, printed as CPU ms per call by
 * module (package, agent file, Node internals, V8) and by function; the profile goes to bench/out/.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import readline from "node:readline";
import os from "node:os";
import path from "node:path";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { AttestationService, PlatformType } from "../attestation-agent/gen/attestation/v1/attestation_pb.ts";
import { TpmClient } from "../attestation-agent/tpm/client.ts";
import { openTransport } from "../attestation-agent/tpm/transport.ts";
import { PCR_COUNT } from "../attestation-agent/tpm/marshal.ts";
import { verifyVtpmAttestation } from "../attestation-agent/verify/tpm.ts";
import { startSwtpm } from "../scripts/agent-swtpm.ts";
import { grpcJsClient, startAgentProcess } from "../test/agent/helpers.ts";

const ROUNDS = Number(process.env.BENCH_AGENT_ROUNDS ?? 60);
const PER_ROUND = Number(process.env.BENCH_AGENT_PER_ROUND ?? 5);
const CONCURRENCY = 16;
const PER_WORKER = Number(process.env.BENCH_AGENT_PER_WORKER ?? 40);
const ALL = Array.from({ length: PCR_COUNT }, (_, i) => i);
const AGENT_ROOT = process.env.BENCH_AGENT_ROOT ? path.resolve(process.env.BENCH_AGENT_ROOT) : path.resolve(import.meta.dirname, "..");
const ONLY = process.env.BENCH_AGENT_PROTOCOLS?.split(",");

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}
const ms = (x: number) => x.toFixed(2);

const dir = await mkdtemp(path.join(os.tmpdir(), "bench-agent-"));
if (process.argv.includes("--profile")) {
  await profileAgent();
  process.exit(0);
}
const [tpmA, tpmB, tpmC] = await Promise.all([startSwtpm(), startSwtpm(), startSwtpm()]);
const floors: ChildProcess[] = [];

/** Verifies after timing: each answer's quotes against the nonce it was asked with. */
interface GoCall {
  ms: number;
  code: number;
  message?: string;
  nonce: string;
  hex?: string;
}
/**
 * The grpc-go client in `-bench` mode on `socket`: one process, one connection; `command("seq N")`
 * or `command("conc C N")` answers every call's own duration and result.
 */
async function startGoClient(socket: string) {
  const bin = path.join(dir, "go-client");
  const build = spawn("bash", [path.join(import.meta.dirname, "../scripts/agent-go-client.sh"), bin], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  build.stderr!.on("data", (d) => {
    err += d;
  });
  const code = await new Promise<number | null>((resolve) => build.once("exit", resolve));
  if (code !== 0) throw new Error(`building the grpc-go client failed (scripts/test-deps.sh installs Go and grpc-go): ${err}`);
  const child = spawn(bin, ["-bench", "-socket", socket, "-timeout", "30s"], { stdio: ["pipe", "pipe", "inherit"] });
  floors.push(child);
  const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    async command(cmd: string): Promise<{ calls: GoCall[]; wallMs: number }> {
      child.stdin!.write(`${cmd}\n`);
      const calls: GoCall[] = [];
      for (;;) {
        const { value, done } = await lines.next();
        if (done) throw new Error("the grpc-go client exited");
        const o = JSON.parse(value as string) as GoCall & { done?: boolean; wallMs?: number };
        if (o.done) return { calls, wallMs: o.wallMs! };
        calls.push(o);
      }
    },
  };
}

/** Starts bench/lib/agent-floor.ts on a socket of its own; resolves once it serves. */
async function startFloor(name: string, args: string[]): Promise<string> {
  const socket = path.join(dir, `${name}.sock`);
  const child = spawn(process.execPath, [path.join(import.meta.dirname, "lib/agent-floor.ts"), socket, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  floors.push(child);
  let err = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (d) => {
      err += d;
      if (err.includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`floor server exited ${code}: ${err}`)));
  });
  return socket;
}
try {
  const { VtpmAttester } = (await import(path.join(AGENT_ROOT, "attestation-agent/tpm/vtpm.ts"))) as typeof import("../attestation-agent/tpm/vtpm.ts");
  const raw = new TpmClient(openTransport(tpmB.tpm));
  const attester = new VtpmAttester(raw);
  const ak = await attester.ak();
  const banks = await attester.banks();
  const agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--platform", "vtpm", "--tpm", tpmA.tpm], {}, path.join(AGENT_ROOT, "attestation-agent/main.ts"));
  const grpcJs = grpcJsClient(agent.socket);
  const sock = agent.socket;
  const h2 = { createConnection: () => net.connect(sock) };
  const baseUrl = "http://localhost";
  const transports: [string, Transport][] = [
    ["gRPC, binary, HTTP/2 (Connect-ES)", createGrpcTransport({ baseUrl, nodeOptions: h2 })],
    ["gRPC-Web, binary, HTTP/2", createGrpcWebTransport({ baseUrl, httpVersion: "2", nodeOptions: h2 })],
    ["gRPC-Web, binary, HTTP/1.1", createGrpcWebTransport({ baseUrl, httpVersion: "1.1", nodeOptions: { socketPath: sock } })],
    ["Connect, binary, HTTP/2", createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, nodeOptions: h2 })],
    ["Connect, binary, HTTP/1.1", createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true, nodeOptions: { socketPath: sock } })],
    ["Connect, JSON, HTTP/2", createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: false, nodeOptions: h2 })],
    ["Connect, JSON, HTTP/1.1 (what curl speaks)", createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false, nodeOptions: { socketPath: sock } })],
  ];

  /** A row runs one call (timed here), or `batch` runs n calls and answers their durations (timed by the client). */
  type Row = { name: string; run: () => Promise<void>; batch?: (n: number) => Promise<number[]>; xs: number[]; byRound: number[][] };
  const closers: (() => void)[] = [];
  const rows: Row[] = [];
  const row = (name: string, run: () => Promise<void>) => rows.push({ name, run, xs: [], byRound: [] });
  row("raw TPM, steady state: 2 banks × Quote (what the agent sends per call)", async () => {
    for (const alg of banks) await raw.quote(ak.handle, randomBytes(32), [{ alg, pcrs: ALL }]);
  });
  row("raw TPM, full sequence: 2 banks × (3 PCR_Read + Quote)", async () => {
    for (const alg of banks) {
      await raw.pcrRead(alg, ALL);
      await raw.quote(ak.handle, randomBytes(32), [{ alg, pcrs: ALL }]);
    }
  });
  row("agent's attestation code in-process, no RPC (VtpmAttester.attest, verified)", async () => {
    await attester.attest(randomBytes(32));
  });
  row("RPC without device work (INVALID_ARGUMENT), grpc-js", async () => {
    const r = await grpcJs.fetchAttestation({ nonce: Buffer.alloc(33), platformType: "PLATFORM_TYPE_VTPM" });
    if (r.code !== 3) throw new Error(`expected INVALID_ARGUMENT, got ${r.code}`);
  });
  const fetched: { nonce: Uint8Array; quote: Uint8Array }[] = [];
  row("FetchAttestation(VTPM): gRPC, binary, HTTP/2 (grpc-js)", async () => {
    const nonce = randomBytes(32);
    const r = await grpcJs.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
    if (r.code !== 0) throw new Error(`call failed: ${r.code} ${r.details}`);
    if (fetched.length < 50) fetched.push({ nonce, quote: r.value!.quote });
  });
  const grpcRow = rows.length - 1;
  const goClient = await startGoClient(agent.socket);
  const goFetched: GoCall[] = [];
  const goBatch = async (n: number) => {
    const { calls } = await goClient.command(`seq ${n}`);
    for (const c of calls) if (c.code !== 0) throw new Error(`grpc-go call failed: ${c.code} ${c.message}`);
    if (goFetched.length < 400) goFetched.push(...calls);
    return calls.map((c) => c.ms);
  };
  rows.push({ name: "FetchAttestation(VTPM): gRPC, binary, HTTP/2 (grpc-go, timed in the client)", run: async () => void (await goBatch(1)), batch: goBatch, xs: [], byRound: [] });
  const goRow = rows.length - 1;
  for (const [name, args] of [
    ["RPC floor: grpc-js → bare node:http2 process, fixed 3 KB answer, no device work", []],
    ["RPC floor with device work: grpc-js → bare node:http2 process sending the same 2 quotes, fixed answer", ["--tpm", tpmC.tpm]],
  ] as const) {
    const floor = grpcJsClient(await startFloor(`floor-${floors.length}`, [...args]));
    closers.push(() => floor.close());
    row(name, async () => {
      const r = await floor.fetchAttestation({ nonce: randomBytes(32), platformType: "PLATFORM_TYPE_VTPM" });
      if (r.code !== 0) throw new Error(`floor call failed: ${r.code} ${r.details}`);
    });
  }
  const floorRow = rows.length - 1;
  for (const [name, t] of transports) {
    if (ONLY && !ONLY.includes("connect-es")) break;
    const client = createClient(AttestationService, t);
    row(`FetchAttestation(VTPM): ${name}`, async () => {
      const nonce = randomBytes(32);
      const r = await client.fetchAttestation({ nonce, platformType: PlatformType.VTPM }, { timeoutMs: 30_000 });
      if (fetched.length < 400) fetched.push({ nonce, quote: r.quote });
    });
  }

  // Warm-up (JIT, AK, PCR cache, connections), then alternating rounds.
  for (const r of rows) for (let i = 0; i < 20; i++) await r.run();
  for (let round = 0; round < ROUNDS; round++)
    for (const r of rows) {
      const xs: number[] = r.batch ? await r.batch(PER_ROUND) : [];
      for (let i = 0; !r.batch && i < PER_ROUND; i++) {
        const t0 = performance.now();
        await r.run();
        xs.push(performance.now() - t0);
      }
      r.xs.push(...xs);
      r.byRound.push(xs);
    }

  // 16 concurrent callers; every answer is verified after the timed run.
  const conc: number[] = [];
  const results: { nonce: Buffer; quote: Uint8Array }[] = [];
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = 0; i < PER_WORKER; i++) {
        const nonce = randomBytes(32);
        const s = performance.now();
        const r = await grpcJs.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
        conc.push(performance.now() - s);
        if (r.code !== 0) errors++;
        else results.push({ nonce, quote: r.value!.quote });
      }
    }),
  );
  const wall = performance.now() - t0;
  // The same with 16 grpc-go callers on one connection.
  const goConc = await goClient.command(`conc ${CONCURRENCY} ${PER_WORKER}`);
  const goErrors = goConc.calls.filter((c) => c.code !== 0).length;
  for (const r of results) verifyVtpmAttestation(r.quote, r.nonce);
  for (const r of fetched) verifyVtpmAttestation(r.quote, r.nonce);
  for (const c of [...goFetched, ...goConc.calls.filter((c) => c.code === 0)]) verifyVtpmAttestation(Buffer.from(c.hex!, "hex"), Buffer.from(c.nonce, "hex"));
  grpcJs.close();
  for (const c of closers) c();
  await agent.stop();
  await raw.close();

  const rawP50 = pct(rows[0]!.xs, 50);
  const grpcP50 = pct(rows[grpcRow]!.xs, 50);
  // The same difference taken round by round (rows of a round ran back to back, on the same
  // machine load), then its median over rounds: far less noise than the difference of two p50s.
  const pairedTo = (r: Row, base: Row) => pct(r.byRound.map((xs, i) => pct(xs, 50) - pct(base.byRound[i]!, 50)), 50);
  const paired = (r: Row) => pairedTo(r, rows[0]!);
  const rawPerRound = pct(rows[0]!.byRound.map((xs) => pct(xs, 50)), 50);
  const share = (d: number, base: number) => `${((d / base) * 100).toFixed(0)}%`;
  const table = rows.map((r) => {
    const p50 = pct(r.xs, 50);
    const device = r.name.startsWith("FetchAttestation") || r.name.startsWith("agent's") || r.name.startsWith("RPC floor with");
    const over = device ? `${ms(p50 - rawP50)} (${share(p50 - rawP50, rawP50)})` : "–";
    const pairedOver = device ? `${ms(paired(r))} (${share(paired(r), rawPerRound)})` : "–";
    return `| ${r.name} | ${r.xs.length} | ${ms(p50)} | ${ms(pct(r.xs, 99))} | ${over} | ${pairedOver} |`;
  });
  const cpu = os.cpus();
  const load = os.loadavg()[0]!.toFixed(2);
  const section = [
    "## Attestation agent",
    "",
    `\`npm run bench:agent\` — ${new Date().toISOString().slice(0, 10)}, ${cpu.length} × ${cpu[0]?.model.trim()}, Node ${process.version}, 1-minute load average ${load} at the end (a machine shared with other engineers' test runs: absolute numbers move by ±30 % between runs; the rows of one run are comparable because they alternate in ${ROUNDS} rounds of ${PER_ROUND}). Three swtpm instances made alike (the agent's, this process's, the RPC floor's), over unix sockets; the agent and the RPC floor (bench/lib/agent-floor.ts) are separate processes; clients on their unix sockets. Every answer of the concurrent runs and ${fetched.length + goFetched.length} of the sequential ones were verified (signature, nonce, PCR digest) after timing.`,
    "",
    "| Measurement (one caller unless said) | Calls | p50 ms | p99 ms | Over raw TPM (p50s) | Over raw TPM, paired by round (median) |",
    "|---|---|---|---|---|---|",
    ...table,
    `| FetchAttestation(VTPM), ${CONCURRENCY} concurrent grpc-js callers | ${conc.length} | ${ms(pct(conc, 50))} | ${ms(pct(conc, 99))} | ${((conc.length / wall) * 1000).toFixed(0)} calls/s, ${errors} errors | – |`,
    `| FetchAttestation(VTPM), ${CONCURRENCY} concurrent grpc-go callers | ${goConc.calls.length} | ${ms(pct(goConc.calls.map((c) => c.ms), 50))} | ${ms(pct(goConc.calls.map((c) => c.ms), 99))} | ${((goConc.calls.length / goConc.wallMs) * 1000).toFixed(0)} calls/s, ${goErrors} errors | – |`,
    "",
    `Agent overhead (gRPC via grpc-js) over the raw TPM commands it sends: **${ms(paired(rows[grpcRow]!))} ms (${share(paired(rows[grpcRow]!), rawPerRound)})** paired by round (${ms(grpcP50 - rawP50)} ms, ${share(grpcP50 - rawP50, rawP50)}, as the difference of the two p50s); over the full PCR_Read + Quote sequence the agent sent before PCR values were reused: ${ms(grpcP50 - pct(rows[1]!.xs, 50))} ms. The RPC floor with the same device work (a bare node:http2 process, same client) costs ${ms(paired(rows[floorRow]!))} ms (${share(paired(rows[floorRow]!), rawPerRound)}) over the raw TPM; the agent, paired by round against that floor: ${ms(pairedTo(rows[grpcRow]!, rows[floorRow]!))} ms. The TPM serialises commands, so concurrency raises throughput only by overlapping RPC work with TPM work.`,
    "",
    `With a grpc-go caller (the client of the agent's Go users; each call timed inside the client around the RPC alone): **${ms(paired(rows[goRow]!))} ms (${share(paired(rows[goRow]!), rawPerRound)})** over the raw TPM paired by round (${ms(pct(rows[goRow]!.xs, 50) - rawP50)} ms, ${share(pct(rows[goRow]!.xs, 50) - rawP50, rawP50)}, as the difference of the two p50s); the agent's own attestation code in-process costs ${ms(paired(rows[2]!))} ms (${share(paired(rows[2]!), rawPerRound)}) of that. Target (issue 9 B.8): ≤ 10 % over the raw TPM, 16 concurrent callers without an error.`,
    "",
  ].join("\n");
  console.log(section);
  if (process.env.BENCH_AGENT_WRITE !== "0") {
    const file = path.join(import.meta.dirname, "RESULTS.md");
    const old = await readFile(file, "utf8").catch(() => "# Benchmark results\n");
    const start = old.indexOf("## Attestation agent");
    const next = start < 0 ? -1 : old.indexOf("\n## ", start + 1);
    const body = start < 0 ? "" : old.slice(start, next < 0 ? undefined : next + 1);
    const notesAt = body.indexOf("### Where the time went");
    const notes = notesAt < 0 ? "" : `${body.slice(notesAt).trimEnd()}\n\n`;
    const mine = `${section}\n${notes}`.replace(/\n{3,}/g, "\n\n");
    const updated = start < 0 ? `${old.trimEnd()}\n\n${mine}` : `${old.slice(0, start)}${mine}${next < 0 ? "" : old.slice(next + 1)}`;
    await writeFile(file, updated);
  }
} finally {
  for (const f of floors) f.kill();
  await tpmA.stop();
  await tpmB.stop();
  await tpmC.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(0);

/** `--profile`: where the agent process spends CPU per FetchAttestation(VTPM), by module and function. */
async function profileAgent(): Promise<void> {
  const calls = Number(process.env.BENCH_AGENT_PROFILE_CALLS ?? 400);
  const outDir = path.join(import.meta.dirname, "out");
  await mkdir(outDir, { recursive: true });
  const out = path.join(outDir, `agent-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`);
  const tpm = await startSwtpm();
  try {
    const hook = path.join(import.meta.dirname, "lib/cpu-profile-hook.ts");
    const env = { NODE_OPTIONS: `--import ${hook}`, BENCH_CPU_PROFILE: out };
    const agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--platform", "vtpm", "--tpm", tpm.tpm], env, path.join(AGENT_ROOT, "attestation-agent/main.ts"));
    const client = grpcJsClient(agent.socket);
    const call = async () => {
      const r = await client.fetchAttestation({ nonce: randomBytes(32), platformType: "PLATFORM_TYPE_VTPM" });
      if (r.code !== 0) throw new Error(`call failed: ${r.code} ${r.details}`);
    };
    for (let i = 0; i < 50; i++) await call();
    const signal = async (file: string) => {
      process.kill(agent.child.pid!, "SIGUSR2");
      while (!existsSync(file)) await new Promise((r) => setTimeout(r, 10));
    };
    await signal(`${out}.started`);
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await call();
    const wall = performance.now() - t0;
    await signal(out);
    client.close();
    await agent.stop();
    await rm(`${out}.started`, { force: true });
    const load = os.loadavg()[0]!.toFixed(2);
    console.log(`Agent CPU profile (${AGENT_ROOT === path.resolve(import.meta.dirname, "..") ? "this checkout" : AGENT_ROOT}): ${calls} sequential grpc-js FetchAttestation(VTPM), ${ms(wall / calls)} ms per call, 1-minute load average ${load}; ${out}\n`);
    console.log(profileSummary(JSON.parse(await readFile(out, "utf8")), calls));
  } finally {
    await tpm.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/**
 * CPU ms per call by module and by function. A sample is charged to its nearest frame with a
 * source (native code to its JavaScript caller); `(idle)` is left out.
 */
function profileSummary(p: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }, calls: number): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const moduleOf = (f: ProfileNode["callFrame"]): string | undefined => {
    if (f.functionName.startsWith("(") && f.functionName !== "(root)") return f.functionName === "(garbage collector)" ? "V8: garbage collector" : f.functionName === "(program)" ? "V8: (program), native" : f.functionName;
    const u = f.url;
    if (!u) return undefined;
    if (u.startsWith("node:") || !u.includes("/")) return "Node internals";
    const nm = u.lastIndexOf("/node_modules/");
    if (nm >= 0) {
      const [a, b] = u.slice(nm + 14).split("/");
      return a!.startsWith("@") ? `${a}/${b}` : a;
    }
    const at = u.indexOf("/attestation-agent/");
    return at >= 0 ? `agent: ${u.slice(at + 19)}` : "other";
  };
  const owner = (id: number): { module: string; fn: string } => {
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
      const f = byId.get(x)!.callFrame;
      const m = moduleOf(f);
      if (m) {
        const where = f.url ? ` (${f.url.replace(/^.*\/(node_modules|attestation-agent)\//, "").replace(/^node:internal\//, "node:")}:${f.lineNumber + 1})` : "";
        return { module: m, fn: `${f.functionName || "(anonymous)"}${where}${x === id ? "" : ", native part"}` };
      }
    }
    return { module: "other", fn: "(unknown)" };
  };
  const mods = new Map<string, number>();
  const fns = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i + 1] ?? p.timeDeltas[i])! / 1000;
    const o = owner(id);
    if (o.module === "(idle)") {
      idle += dt;
      return;
    }
    busy += dt;
    mods.set(o.module, (mods.get(o.module) ?? 0) + dt);
    fns.set(`${o.module}\t${o.fn}`, (fns.get(`${o.module}\t${o.fn}`) ?? 0) + dt);
  });
  const cells = (v: number) => `${(v / calls).toFixed(3)} | ${((100 * v) / busy).toFixed(1)} %`;
  return [
    `Busy ${(busy / calls).toFixed(2)} ms per call (${((100 * busy) / (busy + idle)).toFixed(0)} % of the wall time; samples of a process waiting for a CPU count as busy).`,
    "",
    "| Module | CPU ms per call | share |",
    "|---|---|---|",
    ...[...mods].sort((a, b) => b[1] - a[1]).map(([k, v]) => `| ${k} | ${cells(v)} |`),
    "",
    "| Function | Module | CPU ms per call | share |",
    "|---|---|---|---|",
    ...[...fns]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([k, v]) => `| ${k.split("\t")[1]!.replace(/\|/g, "\\|")} | ${k.split("\t")[0]} | ${cells(v)} |`),
  ].join("\n");
}
