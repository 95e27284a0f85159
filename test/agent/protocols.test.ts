/**
 * One socket, every protocol: gRPC, gRPC-Web and Connect (JSON and binary) over HTTP/2 cleartext
 * and HTTP/1.1, each with its own client, swtpm behind the agent (a process). Evidence verifies,
 * errors decode in each protocol's own client, `curl` gets a quote that tpm2_checkquote accepts,
 * and each protocol can be turned off.
 */
import { execFile } from "node:child_process";
import { createPublicKey, randomBytes } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationService, PlatformType } from "../../attestation-agent/gen/attestation/v1/attestation_pb.ts";
import { AttestationSchema } from "../../attestation-agent/gen/attest/attest_pb.ts";
import { Health } from "../../attestation-agent/gen/grpc/health/v1/health_pb.ts";
import { ALG, rsaPublicJwk } from "../../attestation-agent/tpm/marshal.ts";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { ROOT, grpcJsClient, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
let dir: string;
let tpm: Swtpm;
let agent: AgentProcess;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-proto-"));
  tpm = await startSwtpm();
  agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--platform", "vtpm", "--tpm", tpm.tpm, "--event-log", path.join(dir, "none")]);
});

afterAll(async () => {
  await agent?.stop();
  await tpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

type Kind = "grpc" | "grpc-web" | "connect";
type Version = "1.1" | "2";

/** A Connect-ES transport of `kind` over the unix socket. */
function transport(kind: Kind, httpVersion: Version, useBinaryFormat: boolean, socket = agent.socket): Transport {
  const baseUrl = "http://localhost";
  if (kind === "grpc") return createGrpcTransport({ baseUrl, useBinaryFormat, nodeOptions: { createConnection: () => net.connect(socket) } });
  const make = kind === "connect" ? createConnectTransport : createGrpcWebTransport;
  return httpVersion === "2"
    ? make({ baseUrl, httpVersion, useBinaryFormat, nodeOptions: { createConnection: () => net.connect(socket) } })
    : make({ baseUrl, httpVersion, useBinaryFormat, nodeOptions: { socketPath: socket } });
}

const MATRIX: [Kind, Version, boolean][] = [];
for (const kind of ["grpc", "grpc-web", "connect"] as Kind[])
  for (const v of ["2", "1.1"] as Version[])
    for (const binary of [true, false]) if (!(kind === "grpc" && v === "1.1")) MATRIX.push([kind, v, binary]);

describe("every protocol × codec × HTTP version, Connect-ES clients, swtpm behind the agent", () => {
  for (const [kind, v, binary] of MATRIX) {
    const name = `${kind} ${binary ? "binary" : "JSON"} over HTTP/${v}`;
    it(`${name}: a vTPM quote that verifies, and errors decoded by the client`, async () => {
      const client = createClient(AttestationService, transport(kind, v, binary));
      const nonce = randomBytes(32);
      const r = await client.fetchAttestation({ nonce, platformType: PlatformType.VTPM }, { timeoutMs: 20_000 });
      expect(verifyVtpmAttestation(r.quote, nonce, { requireBanks: [ALG.SHA1, ALG.SHA256] }).quotes).toHaveLength(2);

      const bad = await client.fetchAttestation({ nonce: new Uint8Array(33), platformType: PlatformType.VTPM }).catch((e) => e);
      expect(bad).toBeInstanceOf(ConnectError);
      expect([bad.code, bad.rawMessage]).toEqual([Code.InvalidArgument, "nonce is 33 bytes; at most 32 are allowed"]);
      const pre = await client.fetchAttestation({ platformType: PlatformType.SNP }).catch((e) => e);
      expect([pre.code, pre.rawMessage]).toEqual([Code.FailedPrecondition, "PLATFORM_TYPE_SNP is not available on this machine (platform vtpm)"]);

      const health = createClient(Health, transport(kind, v, binary));
      expect((await health.check({ service: "attestation.v1.AttestationService" })).status).toBe(1); // SERVING
    });
  }

  it("an unknown method is UNIMPLEMENTED in every protocol's client", async () => {
    // Health's Check method under a service name the agent does not serve.
    const unknown = { ...Health, typeName: "attestation.v1.Nope" } as typeof Health;
    const check = { ...Health.method.check, parent: unknown };
    Object.assign(unknown, { method: { check, watch: check, list: check }, methods: [check] });
    for (const [kind, v, binary] of MATRIX) {
      const err = await createClient(unknown, transport(kind, v, binary)).check({}).catch((e) => e);
      expect([kind, v, binary, err.code]).toEqual([kind, v, binary, Code.Unimplemented]);
    }
  });

  it("grpc-js and Connect-ES gRPC clients share the socket with the others", async () => {
    const c = grpcJsClient(agent.socket);
    const nonce = randomBytes(32);
    const r = await c.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
    c.close();
    expect(r.code).toBe(0);
    verifyVtpmAttestation(r.value!.quote, nonce);
  });
});

/** One raw gRPC request over HTTP/2: the answer's headers, data and trailers as sent. */
function grpcRaw(headers: Record<string, string>, body: Buffer | undefined, pathname = "/attestation.v1.AttestationService/FetchAttestation") {
  return new Promise<{ headers: http2.IncomingHttpHeaders; data: Buffer; trailers: http2.IncomingHttpHeaders }>((resolve, reject) => {
    const s = http2.connect("http://localhost", { createConnection: () => net.connect(agent.socket) });
    const req = s.request({ ":method": "POST", ":path": pathname, "content-type": "application/grpc", te: "trailers", ...headers });
    const out = { headers: {} as http2.IncomingHttpHeaders, data: Buffer.alloc(0), trailers: {} as http2.IncomingHttpHeaders };
    req.on("response", (h) => (out.headers = h));
    req.on("data", (d: Buffer) => (out.data = Buffer.concat([out.data, d])));
    req.on("trailers", (t) => (out.trailers = t));
    req.on("error", reject);
    req.on("close", () => {
      s.close();
      resolve(out);
    });
    if (body) req.end(body);
    else req.end();
  });
}

/** A gRPC length-prefixed message. */
function envelope(msg: Buffer, flags = 0): Buffer {
  const b = Buffer.alloc(5 + msg.length);
  b[0] = flags;
  b.writeUInt32BE(msg.length, 1);
  msg.copy(b, 5);
  return b;
}

describe("gRPC unary calls: the direct path answers as Connect-ES does", () => {
  // FetchAttestationRequest { nonce (2) = 32 bytes, platform_type (3) = VTPM }
  const nonce = randomBytes(32);
  const request = Buffer.concat([Buffer.from([0x12, 32]), nonce, Buffer.from([0x18, 3])]);
  const grpcHeaders = (r: { headers: http2.IncomingHttpHeaders }) => [r.headers[":status"], r.headers["content-type"], r.headers["grpc-encoding"]];
  const status = (r: { trailers: http2.IncomingHttpHeaders }) => [r.trailers["grpc-status"], r.trailers["grpc-message"]];

  it("a plain call (application/grpc or +proto, identity, grpc-timeout or none): headers, one message, grpc-status 0", async () => {
    const variants: Record<string, string>[] = [{}, { "content-type": "application/grpc+proto" }, { "grpc-timeout": "5S" }, { "grpc-encoding": "identity" }];
    for (const h of variants) {
      const r = await grpcRaw(h, envelope(request));
      expect([grpcHeaders(r), status(r)]).toEqual([[200, "application/grpc+proto", undefined], ["0", undefined]]);
      expect(r.data.readUInt32BE(1)).toBe(r.data.length - 5);
      const quote = fromBinary(AttestationSchema, fromBinary(AttestationService.method.fetchAttestation.output, r.data.subarray(5)).quote);
      verifyVtpmAttestation(quote, nonce);
    }
  });

  it("errors of the service, and every request the direct path leaves to Connect-ES, get Connect-ES's answer", async () => {
    const cases: [string, Record<string, string>, Buffer | undefined, (string | undefined)[]][] = [
      ["nonce too long", {}, envelope(Buffer.concat([Buffer.from([0x12, 33]), randomBytes(33), Buffer.from([0x18, 3])])), ["3", "nonce is 33 bytes; at most 32 are allowed"]],
      ["no platform", {}, envelope(Buffer.alloc(0)), ["3", "platform_type is required"]],
      ["not available", {}, envelope(Buffer.from([0x18, 1])), ["9", "PLATFORM_TYPE_SNP is not available on this machine (platform vtpm)"]],
      ["bad grpc-timeout", { "grpc-timeout": "5x" }, envelope(request), ["3", "protocol error: invalid grpc timeout value: 5x"]],
      ["no message", {}, undefined, ["12", "protocol error: missing input message for unary method"]],
      ["two messages", {}, Buffer.concat([envelope(request), envelope(request)]), ["12", "protocol error: received extra input message for unary method"]],
      ["truncated envelope", {}, envelope(request).subarray(0, 10), ["3", "protocol error: incomplete envelope"]],
      ["compressed flag without an encoding", {}, envelope(request, 1), ["13", "received compressed envelope, but do not know how to decompress"]],
      ["unknown encoding", { "grpc-encoding": "snappy" }, envelope(request), ["12", 'unknown compression "snappy": supported encodings are gzip,br']],
      ["not protobuf", {}, envelope(Buffer.from([0xff, 0xff, 0xff])), ["13", "parse binary: premature EOF"]],
      ["larger than --max-request-bytes", {}, envelope(Buffer.alloc(70_000)), ["8", "message size 70000 is larger than configured readMaxBytes 65536"]],
    ];
    for (const [name, h, body, want] of cases) {
      const r = await grpcRaw(h, body);
      expect([name, grpcHeaders(r), r.data.length, status(r)]).toEqual([name, [200, "application/grpc+proto", undefined], 0, want]);
    }
    // gzip requests and gRPC JSON are served by Connect-ES (the answer is never compressed).
    const gz = await grpcRaw({ "grpc-encoding": "gzip" }, envelope(request));
    expect([grpcHeaders(gz), status(gz), gz.data[0]]).toEqual([[200, "application/grpc+proto", "gzip"], ["0", undefined], 0]);
    const json = await grpcRaw({ "content-type": "application/grpc+json" }, envelope(Buffer.from(JSON.stringify({ nonce: nonce.toString("base64"), platformType: "PLATFORM_TYPE_VTPM" }))));
    expect([grpcHeaders(json), status(json)]).toEqual([[200, "application/grpc+json", undefined], ["0", undefined]]);
  });
});

/** A raw HTTP/1.1 POST over the unix socket; answers status, headers and body. */
function post1(pathname: string, headers: Record<string, string>, body: string | Buffer, socket = agent.socket) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ socketPath: socket, method: "POST", path: pathname, headers }, (res) => {
      let b = "";
      res.setEncoding("latin1");
      res.on("data", (d) => (b += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: b }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("deadlines", () => {
  it("a call whose deadline has already passed (grpc-timeout 0n) → DEADLINE_EXCEEDED, no device work and no timer armed (no TimeoutNegativeWarning)", async () => {
    // FetchAttestationRequest { platform_type (3) = VTPM }
    const r = await grpcRaw({ "grpc-timeout": "0n" }, envelope(Buffer.from([0x18, 0x03])));
    expect(r.trailers["grpc-status"] ?? r.headers["grpc-status"]).toBe(String(Code.DeadlineExceeded));
    // A later call's round trip: anything the first one printed is in stderr by then.
    const ok = await grpcRaw({ "grpc-timeout": "10S" }, envelope(Buffer.from([0x18, 0x03])));
    expect(ok.trailers["grpc-status"]).toBe("0");
    expect(agent.stderr()).not.toMatch(/TimeoutNegativeWarning/);
  });
});

describe("health Watch", () => {
  it("a Watch that reaches the client's deadline ends DEADLINE_EXCEEDED (as grpc-go's health server), not OK: a watcher does not reconnect at once", async () => {
    const r = await grpcRaw({ "grpc-timeout": "1S" }, envelope(Buffer.alloc(0)), "/grpc.health.v1.Health/Watch");
    expect(r.headers[":status"]).toBe(200);
    expect(r.data.subarray(5)).toEqual(Buffer.from([0x08, 0x01])); // status SERVING
    expect(r.trailers["grpc-status"]).toBe(String(Code.DeadlineExceeded));
  });
});

describe("plain HTTP clients", () => {
  const FETCH = "http://localhost/attestation.v1.AttestationService/FetchAttestation";

  it("curl, Connect JSON over HTTP/1.1: the quote verifies with tpm2_checkquote and with our verifier", async () => {
    const nonce = randomBytes(32);
    const { stdout } = await run("curl", ["-sS", "--fail-with-body", "--unix-socket", agent.socket, "-H", "Content-Type: application/json",
      "-d", JSON.stringify({ platformType: "PLATFORM_TYPE_VTPM", nonce: nonce.toString("base64") }), FETCH]);
    const quote = Buffer.from(JSON.parse(stdout).quote, "base64");
    const v = verifyVtpmAttestation(quote, nonce, { requireBanks: [ALG.SHA1, ALG.SHA256] });
    expect(v.quotes.map((q) => q.bank)).toEqual(["sha1", "sha256"]);
    const att = fromBinary(AttestationSchema, quote);
    const q = att.quotes.find((x) => x.pcrs!.hash === ALG.SHA256)!;
    await writeFile(path.join(dir, "ak.pem"), createPublicKey({ key: rsaPublicJwk(att.akPub), format: "jwk" }).export({ type: "spki", format: "pem" }));
    await writeFile(path.join(dir, "curl.msg"), q.quote);
    await writeFile(path.join(dir, "curl.sig"), q.rawSig);
    const args = ["-u", path.join(dir, "ak.pem"), "-m", path.join(dir, "curl.msg"), "-s", path.join(dir, "curl.sig"), "-g", "sha256"];
    await expect(run("tpm2_checkquote", [...args, "-q", nonce.toString("hex")])).resolves.toBeDefined();
    await expect(run("tpm2_checkquote", [...args, "-q", randomBytes(32).toString("hex")])).rejects.toThrow();
  });

  it("curl, Connect JSON over HTTP/2 (prior knowledge) and Connect binary over HTTP/1.1", async () => {
    const nonce = randomBytes(16);
    const { stdout } = await run("curl", ["-sS", "--fail-with-body", "--http2-prior-knowledge", "--unix-socket", agent.socket, "-H", "Content-Type: application/json",
      "-d", JSON.stringify({ platformType: "PLATFORM_TYPE_VTPM", nonce: nonce.toString("base64") }), FETCH]);
    verifyVtpmAttestation(Buffer.from(JSON.parse(stdout).quote, "base64"), Buffer.concat([nonce, Buffer.alloc(16)]));
    // AttestationRequest{nonce (2) = 01 02 03, platform_type (3) = VTPM}, hand-encoded.
    const req = Buffer.from([0x12, 3, 1, 2, 3, 0x18, 3]);
    const r = await post1("/attestation.v1.AttestationService/FetchAttestation", { "content-type": "application/proto" }, req);
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("application/proto");
    // AttestationResponse{quote (1)}: tag 0x0a, varint length, then the evidence.
    const body = Buffer.from(r.body, "latin1");
    expect(body[0]).toBe(0x0a);
    let len = 0;
    let i = 1;
    for (let shift = 0; ; shift += 7) {
      const b = body[i++];
      len |= (b! & 0x7f) << shift;
      if (b! < 0x80) break;
    }
    verifyVtpmAttestation(body.subarray(i, i + len), Buffer.concat([Buffer.from([1, 2, 3]), Buffer.alloc(29)]));
  });

  it("Connect errors are JSON {code, message} with the HTTP status the Connect spec gives per code", async () => {
    const cases: [object, number, string, string][] = [
      [{ platformType: "PLATFORM_TYPE_VTPM", nonce: Buffer.alloc(33).toString("base64") }, 400, "invalid_argument", "nonce is 33 bytes; at most 32 are allowed"],
      [{ platformType: "PLATFORM_TYPE_NO_CC" }, 400, "failed_precondition", "PLATFORM_TYPE_NO_CC has no hardware evidence; the agent never returns canned evidence"],
      [{ platformType: "PLATFORM_TYPE_TDX" }, 400, "failed_precondition", "PLATFORM_TYPE_TDX is not available on this machine (platform vtpm)"],
    ];
    for (const [body, status, code, message] of cases) {
      const r = await post1("/attestation.v1.AttestationService/FetchAttestation", { "content-type": "application/json" }, JSON.stringify(body));
      expect([r.status, r.headers["content-type"], JSON.parse(r.body)]).toEqual([status, "application/json", { code, message }]);
    }
    const token = await post1("/attestation.v1.AttestationService/FetchCloudToken", { "content-type": "application/json" }, "{}");
    expect([token.status, JSON.parse(token.body).code]).toEqual([400, "failed_precondition"]);
    const unknown = await post1("/attestation.v1.AttestationService/FetchNothing", { "content-type": "application/json" }, "{}");
    expect([unknown.status, JSON.parse(unknown.body)]).toEqual([404, { code: "unimplemented", message: "unknown method /attestation.v1.AttestationService/FetchNothing" }]);
    const notJson = await post1("/attestation.v1.AttestationService/FetchAttestation", { "content-type": "application/json" }, "{nope");
    expect([notJson.status, JSON.parse(notJson.body).code]).toEqual([400, "invalid_argument"]);
  });

  it("gRPC over HTTP/1.1 is refused with 505 (gRPC is HTTP/2 only; gRPC-Web and Connect serve HTTP/1.1)", async () => {
    const r = await post1("/attestation.v1.AttestationService/FetchAttestation", { "content-type": "application/grpc" }, Buffer.from([0, 0, 0, 0, 2, 0x18, 3]));
    expect([r.status, r.headers["grpc-status"], r.body]).toEqual([505, "12", "gRPC needs HTTP/2; over HTTP/1.1 use gRPC-Web or Connect\n"]);
  });

  it("an HTTP/2 client without gRPC (node:http2) gets Connect JSON", async () => {
    const s = http2.connect("http://localhost", { createConnection: () => net.connect(agent.socket) });
    const req = s.request({ ":method": "POST", ":path": "/attestation.v1.AttestationService/FetchAttestation", "content-type": "application/json" });
    let body = "";
    let status = 0;
    req.on("response", (h) => (status = Number(h[":status"])));
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.end("{}");
    await new Promise((r) => req.on("end", r));
    s.close();
    expect([status, JSON.parse(body)]).toEqual([400, { code: "invalid_argument", message: "platform_type is required" }]);
  });
});

describe("turning protocols off", () => {
  it("--protocols grpc: gRPC serves, Connect and gRPC-Web answer UNIMPLEMENTED in their own shape", async () => {
    const a = await startAgentProcess(path.join(dir, "grpc-only.sock"), ["--platform", "none", "--protocols", "grpc"]);
    try {
      const g = await createClient(Health, transport("grpc", "2", true, a.socket)).check({});
      expect(g.status).toBe(1);
      const r = await post1("/grpc.health.v1.Health/Check", { "content-type": "application/json" }, "{}", a.socket);
      expect([r.status, JSON.parse(r.body)]).toEqual([501, { code: "unimplemented", message: "the connect protocol is turned off on this agent" }]);
      for (const v of ["1.1", "2"] as Version[]) {
        const e = await createClient(Health, transport("grpc-web", v, true, a.socket)).check({}).catch((x) => x);
        expect([e.code, e.rawMessage]).toEqual([Code.Unimplemented, "the grpc-web protocol is turned off on this agent"]);
      }
    } finally {
      await a.stop();
    }
  });

  it("ATTESTATION_PROTOCOLS=connect,grpc-web: a gRPC client gets UNIMPLEMENTED, curl still works", async () => {
    const a = await startAgentProcess(path.join(dir, "no-grpc.sock"), ["--platform", "none"], { ATTESTATION_PROTOCOLS: "connect,grpc-web" });
    try {
      expect(a.stderr()).toMatch(/\(connect, grpc-web; HTTP\/2 and HTTP\/1\.1\)/);
      const c = new grpc.Client(`unix://${a.socket}`, grpc.credentials.createInsecure());
      const err = await new Promise<grpc.ServiceError>((r) =>
        c.makeUnaryRequest("/grpc.health.v1.Health/Check", (x: Buffer) => x, (x: Buffer) => x, Buffer.alloc(0), (e) => r(e!)),
      );
      c.close();
      expect([err.code, err.details]).toEqual([grpc.status.UNIMPLEMENTED, "the grpc protocol is turned off on this agent"]);
      const { stdout } = await run("curl", ["-sS", "--unix-socket", a.socket, "-H", "Content-Type: application/json", "-d", "{}", "http://localhost/grpc.health.v1.Health/Check"]);
      expect(JSON.parse(stdout)).toEqual({ status: "SERVING" });
    } finally {
      await a.stop();
    }
  });

  it("an unknown protocol name stops the agent at start (exit 2)", async () => {
    const e = await run(process.execPath, [path.join(ROOT, "attestation-agent/main.ts"), "--socket", path.join(dir, "x.sock"), "--protocols", "grpc,soap"]).catch((x) => x);
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(/--protocols takes a comma-separated subset of grpc,grpc-web,connect/);
  });
});
