/**
 * Limits on every path, against misbehaving raw clients: the queued-call bound
 * (RESOURCE_EXHAUSTED / 429), the default deadline, the request size, header/request/idle
 * timeouts, unread responses and connection floods. Each test shows the agent still serves.
 * Calls are held at a real swtpm by a relay the test controls; nothing depends on the
 * machine's speed (every wait is for an event, bounded only by the test timeout).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import http2 from "node:http2";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationService, PlatformType } from "../../attestation-agent/gen/attestation/v1/attestation_pb.ts";
import { CC } from "../../attestation-agent/tpm/marshal.ts";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { startTpmGate, type TpmGate } from "./fixtures/tpm-gate.ts";
import { ROOT, grpcJsClient, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
const S = grpc.status;
let dir: string;
let tpm: Swtpm;
let gate: TpmGate;
let agent: AgentProcess;
let client: ReturnType<typeof grpcJsClient>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-limits-"));
  tpm = await startSwtpm();
  gate = await startTpmGate(tpm.sock, dir);
  agent = await startAgentProcess(path.join(dir, "agent.sock"), [
    "--platform", "vtpm", "--tpm", gate.tpm,
    "--max-queued-calls", "2", "--default-deadline-ms", "400", "--max-request-bytes", "200",
    "--header-timeout-ms", "300", "--request-timeout-ms", "300", "--idle-timeout-ms", "500", "--max-connections", "50",
  ]);
  client = grpcJsClient(agent.socket);
  expect((await client.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" })).code).toBe(0); // AK ready
});

afterAll(async () => {
  gate?.release();
  client?.close();
  await agent?.stop();
  await gate?.close();
  await tpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

const FETCH = "http://localhost/attestation.v1.AttestationService/FetchAttestation";
async function curlJson(body: object, extra: string[] = []) {
  const { stdout } = await run("curl", ["-sS", "-w", "\n%{http_code}", "--unix-socket", agent.socket, "-H", "Content-Type: application/json", ...extra, "-d", JSON.stringify(body), FETCH]);
  const i = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(i + 1)), body: JSON.parse(stdout.slice(0, i)) };
}

/** A vTPM call that answers at once and succeeds: the agent is not wedged. */
async function stillServes() {
  gate.release();
  const nonce = randomBytes(32);
  const r = await client.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
  expect(r.code).toBe(0);
  verifyVtpmAttestation(r.value!.quote, nonce);
}

/** Resolves when the agent closes `s` (the test never closes it itself). */
const closedByAgent = (s: net.Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once("close", () => r())));

function rawConnect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(agent.socket, () => resolve(s));
    s.on("error", () => {});
    s.resume(); // reads (and drops) what the agent sends, so its close is seen
    s.once("error", reject);
  });
}

describe("queued calls and deadlines", () => {
  it("beyond --max-queued-calls: RESOURCE_EXHAUSTED in gRPC and gRPC-Web, 429 in Connect; the admitted calls finish", async () => {
    gate.hold(CC.Quote);
    const nonces = [randomBytes(32), randomBytes(32)];
    const first = client.fetchAttestation({ nonce: nonces[0], platformType: "PLATFORM_TYPE_VTPM" });
    await gate.held();
    const second = client.fetchAttestation({ nonce: nonces[1], platformType: "PLATFORM_TYPE_VTPM" });
    // Answered without the TPM after `second` on the same connection: `second` is admitted.
    expect((await client.fetchAttestation({ nonce: Buffer.alloc(33), platformType: "PLATFORM_TYPE_VTPM" })).code).toBe(S.INVALID_ARGUMENT);

    const third = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" });
    expect([third.code, third.details]).toEqual([S.RESOURCE_EXHAUSTED, "2 calls are already waiting for the device (limit 2); retry later"]);
    const c = await curlJson({ platformType: "PLATFORM_TYPE_VTPM" });
    expect(c).toEqual({ status: 429, body: { code: "resource_exhausted", message: "2 calls are already waiting for the device (limit 2); retry later" } });
    const web = createClient(AttestationService, createGrpcWebTransport({ baseUrl: "http://localhost", httpVersion: "1.1", nodeOptions: { socketPath: agent.socket } }));
    expect((await web.fetchAttestation({ platformType: PlatformType.VTPM }).catch((e) => e)).code).toBe(Code.ResourceExhausted);

    gate.release();
    const rs = await Promise.all([first, second]);
    rs.forEach((r, i) => {
      verifyVtpmAttestation(r.value!.quote, nonces[i]!);
    });
  });

  it("a call without a deadline gets the default one (--default-deadline-ms) and leaves the TPM queue at once", async () => {
    gate.hold(CC.Quote);
    let firstDone = false;
    const first = client.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" }, 60_000).then((r) => {
      firstDone = true;
      return r;
    });
    await gate.held();
    // curl sets no deadline: the agent's default applies while the call waits behind `first`.
    const c = await curlJson({ platformType: "PLATFORM_TYPE_VTPM" });
    expect(c).toEqual({ status: 504, body: { code: "deadline_exceeded", message: "the call exceeded the agent's deadline (default or cap)" } });
    expect(firstDone).toBe(false); // still held at the TPM: the waiter left the queue without it
    // A caller's own deadline wins over the default.
    const own = await curlJson({ platformType: "PLATFORM_TYPE_VTPM" }, ["-H", "Connect-Timeout-Ms: 100"]);
    expect([own.status, own.body.code]).toEqual([504, "deadline_exceeded"]);
    gate.release();
    expect((await first).code).toBe(0);
  });

  it("a call whose own device command is stuck ends at its deadline, not when the device answers (a client that does not enforce deadlines itself)", async () => {
    gate.hold(CC.Quote);
    const started = Date.now();
    // curl waits for the agent's answer: the agent must end the call at the caller's deadline
    const pending = curlJson({ platformType: "PLATFORM_TYPE_VTPM" }, ["-H", "Connect-Timeout-Ms: 300"]);
    await gate.held(); // this call's own quote is the one held at the TPM
    const c = await pending;
    expect([c.status, c.body.code]).toEqual([504, "deadline_exceeded"]);
    expect(Date.now() - started).toBeLessThan(5_000);
    await stillServes();
  });

  it("a deadline longer than Node's timers hold (gRPC allows 8 digits of hours, Connect 10 of milliseconds) is served as the longest one, not expired at once", async () => {
    gate.release();
    for (const header of ["Connect-Timeout-Ms: 9999999999", "Connect-Timeout-Ms: 2147483648"]) {
      const c = await curlJson({ platformType: "PLATFORM_TYPE_VTPM" }, ["-H", header]);
      expect(c.status, header).toBe(200);
    }
    const h2 = http2.connect("http://localhost", { createConnection: () => net.connect(agent.socket) });
    try {
      for (const timeout of ["99999999H", "2147484S"]) {
        const status = await new Promise<string | undefined>((resolve, reject) => {
          const req = h2.request({ ":method": "POST", ":path": "/attestation.v1.AttestationService/FetchAttestation", "content-type": "application/grpc", te: "trailers", "grpc-timeout": timeout });
          req.on("trailers", (t) => resolve(t["grpc-status"] as string | undefined));
          req.on("response", (hd) => hd["grpc-status"] !== undefined && resolve(hd["grpc-status"] as string));
          req.on("error", reject);
          req.resume();
          // a VTPM request: field 3 (platform_type) = 3 (PLATFORM_TYPE_VTPM)
          req.end(Buffer.from([0, 0, 0, 0, 2, 0x18, 3]));
        });
        expect(status, timeout).toBe("0");
      }
    } finally {
      h2.close();
    }
  });

  it("a request larger than --max-request-bytes → RESOURCE_EXHAUSTED / 429, before any device work", async () => {
    const big = { platformType: "PLATFORM_TYPE_VTPM", nonce: randomBytes(300).toString("base64") };
    const c = await curlJson(big);
    expect([c.status, c.body.code]).toEqual([429, "resource_exhausted"]);
    const g = await client.fetchAttestation({ reportData: randomBytes(250), platformType: "PLATFORM_TYPE_VTPM" });
    expect(g.code).toBe(S.RESOURCE_EXHAUSTED);
    await stillServes();
  });
});

describe("misbehaving raw clients never wedge the agent", () => {
  it("HTTP/1.1 half-sent request headers: closed after --header-timeout-ms; others are served meanwhile", async () => {
    const s = await rawConnect();
    s.write("POST /attestation.v1.AttestationService/FetchAttestation HTTP/1.1\r\nHost: localhost\r\nContent-Ty");
    await stillServes();
    await closedByAgent(s);
  });

  it("HTTP/1.1 headers sent, body never finished: the agent answers 408 and closes", async () => {
    const s = await rawConnect();
    let got = "";
    s.on("data", (d) => (got += d));
    s.write("POST /attestation.v1.AttestationService/FetchAttestation HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"platf");
    await stillServes();
    await closedByAgent(s);
    expect(got).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("a connection that sends nothing, or only part of the HTTP/2 preface, is closed", async () => {
    const silent = await rawConnect();
    const partial = await rawConnect();
    partial.write("PRI * HTTP/2.0\r\n");
    await stillServes();
    await Promise.all([closedByAgent(silent), closedByAgent(partial)]);
  });

  it("an HTTP/2 connection that completes its preface but never opens a stream gets the header timeout, not the idle one", async () => {
    // an agent whose idle timeout is far longer than the test: only the header timeout can close it
    const patient = await startAgentProcess(path.join(dir, "patient.sock"), ["--platform", "vtpm", "--tpm", gate.tpm, "--header-timeout-ms", "300", "--idle-timeout-ms", "600000"]);
    try {
      const s = await new Promise<net.Socket>((resolve, reject) => {
        const c = net.connect(patient.socket, () => resolve(c));
        c.once("error", reject);
      });
      s.on("error", () => {});
      s.resume();
      // the client preface and an empty SETTINGS frame, then nothing
      s.write(Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]));
      await closedByAgent(s);
    } finally {
      await patient.stop();
    }
  });

  it("HTTP/2 request whose body never ends: the stream is cancelled (RST_STREAM CANCEL), the session lives on", async () => {
    const session = http2.connect("http://localhost", { createConnection: () => net.connect(agent.socket) });
    const req = session.request({ ":method": "POST", ":path": "/attestation.v1.AttestationService/FetchAttestation", "content-type": "application/json" });
    req.write("{\"platformType\":");
    req.on("error", () => {});
    await new Promise((r) => req.once("close", r));
    expect(req.rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
    // The same connection still serves a complete request.
    const ok = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/json" });
    let body = "";
    ok.setEncoding("utf8");
    ok.on("data", (d) => (body += d));
    ok.end("{}");
    await new Promise((r) => ok.once("end", r));
    expect(JSON.parse(body)).toEqual({ status: "SERVING" });
    // Idle (no open stream) after that: the agent sends GOAWAY and the session closes.
    await new Promise((r) => session.once("close", r));
  });

  it("a reflection stream exchanging messages outlives --request-timeout-ms (it bounds request bodies, not bidi streams); once it goes quiet for --idle-timeout-ms it is cancelled", async () => {
    const def = loader.loadSync("grpc/reflection/v1/reflection.proto", { includeDirs: [path.join(ROOT, "proto")], bytes: Buffer, oneofs: true });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const R = (grpc.loadPackageDefinition(def) as any).grpc.reflection.v1.ServerReflection;
    const c = new R(`unix://${agent.socket}`, grpc.credentials.createInsecure());
    try {
      const call = c.ServerReflectionInfo();
      const t0 = Date.now();
      let answers = 0;
      const ended = new Promise<{ code: number }>((resolve) => {
        // Each answer is followed at once by the next request, for 4 × the request timeout (300 ms).
        call.on("data", () => {
          answers++;
          if (Date.now() - t0 < 1200) call.write({ listServices: "" });
          else call.end();
        });
        call.on("status", (st: { code: number }) => resolve(st));
        call.on("error", () => {});
      });
      call.write({ listServices: "" });
      expect(await ended).toMatchObject({ code: S.OK });
      expect(answers).toBeGreaterThan(1);
      // A stream that goes quiet is bounded by the idle timeout (500 ms): cancelled by the agent.
      const quiet = c.ServerReflectionInfo();
      const quietEnd = new Promise<{ code: number }>((resolve) => {
        quiet.on("status", (st: { code: number }) => resolve(st));
        quiet.on("error", () => {});
        quiet.on("data", () => {});
      });
      quiet.write({ listServices: "" });
      expect((await quietEnd).code).toBe(S.CANCELLED);
    } finally {
      c.close();
    }
  });

  it("pipelined requests whose responses are never read: the agent keeps serving others and drops that client", async () => {
    const one = "POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    // Size of one answer, from a well-behaved client.
    const probe = await rawConnect();
    let answer = "";
    probe.on("data", (d) => (answer += d));
    probe.end(one.replace("HTTP/1.1\r\n", "HTTP/1.1\r\nConnection: close\r\n"));
    await closedByAgent(probe);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\{"status":"SERVING"\}$/);
    const s = await rawConnect();
    s.pause(); // the application never reads (node buffers up to its high-water mark, then stops reading the socket)
    const N = 5000;
    s.write(one.repeat(N));
    await stillServes();
    // The agent closes its end while we still have not read a byte: our writes then fail (EPIPE).
    // Until then they only queue (the agent stopped reading this connection: node:http pauses a
    // client whose answers pile up).
    await new Promise<void>((resolve) => {
      const poke = () => (s.destroyed ? resolve() : s.write("\r\n", (e) => (e ? resolve() : setTimeout(poke, 50))));
      s.once("close", () => resolve());
      poke();
    });
    // Far fewer bytes than N answers: the agent stopped producing them and dropped the client.
    expect(s.bytesRead).toBeLessThan((N * answer.length) / 4);
    await stillServes();
  });

  it("a flood of idle connections: under --max-connections others are served; above it the extra ones are closed; all are reclaimed", async () => {
    const under = await Promise.all(Array.from({ length: 40 }, rawConnect));
    await stillServes();
    const over = await Promise.all(Array.from({ length: 100 }, () => rawConnect().catch(() => undefined)));
    const all = [...under, ...over].filter((s): s is net.Socket => !!s);
    await Promise.all(all.map(closedByAgent));
    await stillServes();
  });

  it("an HTTP/1.0 request without Host gets a 400 Connect error instead of crashing the agent", async () => {
    const s = await rawConnect();
    let got = "";
    s.on("data", (d) => (got += d));
    s.end("POST /attestation.v1.AttestationService/FetchAttestation HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    await closedByAgent(s);
    expect(got).toMatch(/^HTTP\/1\.1 400 /);
    expect(got).toContain('"code":"invalid_argument"');
    await stillServes();
  });
});
