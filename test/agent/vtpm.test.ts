/**
 * The agent as a process (`attestation-agent/main.ts`) in front of a real swtpm: vTPM evidence,
 * input rules and error codes, health, reflection, unknown methods, concurrency and shutdown.
 */
import { execFile } from "node:child_process";
import { createPublicKey, randomBytes } from "node:crypto";
import { lstat, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import { Code, ConnectError } from "@connectrpc/connect";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { PlatformType } from "../../attestation-agent/gen/attestation/v1/attestation_pb.ts";
import { AttestationSchema } from "../../attestation-agent/gen/attest/attest_pb.ts";
import { ALG, CC, rsaPublicJwk } from "../../attestation-agent/tpm/marshal.ts";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { startTpmGate } from "./fixtures/tpm-gate.ts";
import { ROOT, connectClient, grpcJsClient, leftoverSocket, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
const S = grpc.status;

let tpm: Swtpm;
let agent: AgentProcess;
let client: ReturnType<typeof grpcJsClient>;
let dir: string;
/** SHA-256 PCR 16 after the test's own extend (the agent never extends). */
let pcr16: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-vtpm-"));
  tpm = await startSwtpm();
  // swtpm serves one client at a time: the test's own tpm2-tools work happens before the agent connects.
  await run("tpm2_pcrextend", ["-T", tpm.tcti, `16:sha256=${"ab".repeat(32)},sha1=${"cd".repeat(20)}`]);
  const { stdout } = await run("tpm2_pcrread", ["-T", tpm.tcti, "sha256:16"]);
  pcr16 = /0x([0-9A-F]{64})/i.exec(stdout)![1]!.toLowerCase();
  const sock = path.join(dir, "agent.sock");
  await leftoverSocket(sock); // a crashed agent's leftover: must be replaced
  agent = await startAgentProcess(sock, ["--tpm", tpm.tpm, "--tsm-root", path.join(dir, "no-configfs"), "--event-log", path.join(dir, "no-log")]);
  client = grpcJsClient(sock);
});

afterAll(async () => {
  client?.close();
  await agent?.stop();
  await tpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

function nonceOf(n: number): Buffer {
  return randomBytes(n);
}

describe("VTPM evidence", () => {
  it("detects the platform once at start and logs it", () => {
    expect(agent.stderr()).toMatch(/platform vtpm \(configfs-tsm provider none; TPM at unix:/);
  });

  it("replaces a stale socket file and serves with mode 0660", async () => {
    const st = await lstat(agent.socket);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o660);
  });

  it("returns attest.Attestation: one quote per allocated bank over PCRs 0-23 that verifies", async () => {
    const nonce = nonceOf(32);
    const r = await client.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
    expect(r.code).toBe(0);
    const v = verifyVtpmAttestation(r.value!.quote, nonce, { requireBanks: [ALG.SHA1, ALG.SHA256] });
    expect(v.quotes.map((q) => q.bank)).toEqual(["sha1", "sha256"]);
    for (const q of v.quotes) expect(q.info.selection).toEqual([{ alg: q.bank === "sha1" ? ALG.SHA1 : ALG.SHA256, pcrs: [...Array(24).keys()] }]);
    const sha256 = v.attestation.quotes.find((q) => q.pcrs!.hash === ALG.SHA256)!;
    expect(Buffer.from(sha256.pcrs!.pcrs[16]!).toString("hex")).toBe(pcr16);
    expect(Buffer.from(sha256.pcrs!.pcrs[0]!).toString("hex")).toBe("00".repeat(32));
    // AK = go-tpm-tools AttestationKeyRSA: RSA-2048, restricted signing, RSASSA-SHA256.
    expect(Buffer.from(v.attestation.akPub.subarray(0, 10)).toString("hex")).toBe("0001000b000500720000");
    expect(v.attestation.eventLog.length).toBe(0); // swtpm has no firmware log and the path is absent
    const q = v.quotes[1]!.info;
    console.log(`verified vTPM quote: banks ${v.quotes.map((x) => x.bank).join("+")}, PCRs 0-23, nonce ${nonce.toString("hex").slice(0, 16)}…, ` +
      `sha256 pcrDigest ${Buffer.from(q.pcrDigest).toString("hex").slice(0, 16)}…, clock ${q.clock}, resetCount ${q.resetCount}, AK n ${rsaPublicJwk(v.attestation.akPub).n.slice(0, 12)}…`);
  });

  it("tpm2_checkquote accepts the agent's quote and rejects it under a different nonce", async () => {
    const nonce = nonceOf(32);
    const r = await client.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
    const att = fromBinary(AttestationSchema, r.value!.quote);
    const q = att.quotes.find((x) => x.pcrs!.hash === ALG.SHA256)!;
    const pem = createPublicKey({ key: rsaPublicJwk(att.akPub), format: "jwk" }).export({ type: "spki", format: "pem" });
    await writeFile(path.join(dir, "ak.pem"), pem);
    await writeFile(path.join(dir, "quote.msg"), q.quote);
    await writeFile(path.join(dir, "quote.sig"), q.rawSig);
    const args = ["-u", path.join(dir, "ak.pem"), "-m", path.join(dir, "quote.msg"), "-s", path.join(dir, "quote.sig"), "-g", "sha256"];
    await expect(run("tpm2_checkquote", [...args, "-q", nonce.toString("hex")])).resolves.toBeDefined();
    await expect(run("tpm2_checkquote", [...args, "-q", nonceOf(32).toString("hex")])).rejects.toThrow();
  });

  it("`npm run attest` CLI: fetch from the agent, verify (exit 0), and reject a wrong nonce (exit 1)", async () => {
    const cli = path.join(ROOT, "attestation-agent/verify/cli.ts");
    const nonce = nonceOf(32).toString("hex");
    const file = path.join(dir, "evidence.bin");
    await run(process.execPath, [cli, "fetch", "--socket", agent.socket, "--platform", "vtpm", "--nonce", nonce, "--out", file]);
    const { stdout } = await run(process.execPath, [cli, "verify", "--type", "vtpm", "--in", file, "--nonce", nonce]);
    const summary = JSON.parse(stdout);
    expect(summary.ok).toBe(true);
    expect(summary.quotes.map((q: { bank: string }) => q.bank)).toEqual(["sha1", "sha256"]);
    expect(summary.quotes[1].pcrs["16"]).toBe(pcr16);
    const bad = await run(process.execPath, [cli, "verify", "--type", "vtpm", "--in", file, "--nonce", "00"]).catch((e) => e);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, check: "nonce" });
  });

  it("zero-pads a nonce shorter than 32 bytes", async () => {
    const nonce = Buffer.from("short");
    const r = await client.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
    const padded = Buffer.concat([nonce, Buffer.alloc(27)]);
    const v = verifyVtpmAttestation(r.value!.quote, padded);
    expect(Buffer.from(v.quotes[0]!.info.extraData)).toEqual(padded);
    expect(() => verifyVtpmAttestation(r.value!.quote, nonce)).toThrow(/nonce/);
  });

  it("16 concurrent callers all get valid, distinct quotes", async () => {
    const nonces = Array.from({ length: 16 }, () => nonceOf(32));
    const rs = await Promise.all(nonces.map((nonce) => client.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" })));
    const digests = new Set<string>();
    rs.forEach((r, i) => {
      expect(r.code).toBe(0);
      const v = verifyVtpmAttestation(r.value!.quote, nonces[i]!);
      digests.add(Buffer.from(v.attestation.quotes[0]!.quote).toString("hex"));
    });
    expect(digests.size).toBe(16);
  });

  it("serves a Connect-ES gRPC client the same evidence", async () => {
    const c = connectClient(agent.socket);
    const nonce = nonceOf(32);
    const r = await c.fetchAttestation({ nonce, platformType: PlatformType.VTPM });
    expect(verifyVtpmAttestation(r.quote, nonce).quotes).toHaveLength(2);
  });
});

describe("input rules and error codes", () => {
  const cases: [string, object, number, RegExp][] = [
    ["report_data of 65 bytes → INVALID_ARGUMENT", { reportData: Buffer.alloc(65), platformType: "PLATFORM_TYPE_SNP" }, S.INVALID_ARGUMENT, /report_data is 65 bytes/],
    ["nonce of 33 bytes → INVALID_ARGUMENT", { nonce: Buffer.alloc(33), platformType: "PLATFORM_TYPE_VTPM" }, S.INVALID_ARGUMENT, /^nonce is 33 bytes; at most 32 are allowed$/],
    ["length checks come before the platform check", { nonce: Buffer.alloc(40), platformType: "PLATFORM_TYPE_TDX" }, S.INVALID_ARGUMENT, /nonce/],
    ["UNSPECIFIED → INVALID_ARGUMENT", { platformType: "PLATFORM_TYPE_UNSPECIFIED" }, S.INVALID_ARGUMENT, /platform_type is required/],
    ["CLOUD → INVALID_ARGUMENT (use FetchCloudToken)", { platformType: "PLATFORM_TYPE_CLOUD" }, S.INVALID_ARGUMENT, /FetchCloudToken/],
    ["NO_CC → FAILED_PRECONDITION, no canned evidence", { platformType: "PLATFORM_TYPE_NO_CC" }, S.FAILED_PRECONDITION, /never returns canned evidence/],
    ["SNP on a vTPM-only machine → FAILED_PRECONDITION", { platformType: "PLATFORM_TYPE_SNP" }, S.FAILED_PRECONDITION, /PLATFORM_TYPE_SNP is not available/],
    ["TDX on a vTPM-only machine → FAILED_PRECONDITION", { platformType: "PLATFORM_TYPE_TDX" }, S.FAILED_PRECONDITION, /PLATFORM_TYPE_TDX is not available/],
    ["SNP_VTPM without SNP → FAILED_PRECONDITION", { platformType: "PLATFORM_TYPE_SNP_VTPM" }, S.FAILED_PRECONDITION, /PLATFORM_TYPE_SNP_VTPM is not available/],
  ];
  for (const [name, req, code, msg] of cases)
    it(name, async () => {
      const r = await client.fetchAttestation(req);
      expect(r.code).toBe(code);
      expect(r.details).toMatch(msg);
    });

  it("a platform_type outside the enum → INVALID_ARGUMENT", async () => {
    const err = await connectClient(agent.socket).fetchAttestation({ platformType: 42 as PlatformType }).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((err as ConnectError).rawMessage).toBe("unknown platform_type 42");
  });

  it("FetchCloudToken without a configured provider → FAILED_PRECONDITION", async () => {
    const r = await client.fetchCloudToken({ nonce: Buffer.alloc(32) });
    expect(r.code).toBe(S.FAILED_PRECONDITION);
  });

  it("an unknown method gets a trailers-only UNIMPLEMENTED", async () => {
    const raw = new grpc.Client(`unix://${agent.socket}`, grpc.credentials.createInsecure());
    const err = await new Promise<grpc.ServiceError>((r) =>
      raw.makeUnaryRequest("/attestation.v1.AttestationService/FetchNothing", (x: Buffer) => x, (x: Buffer) => x, Buffer.alloc(0), (e) => r(e!)),
    );
    raw.close();
    expect(err.code).toBe(S.UNIMPLEMENTED);
    expect(err.details).toBe("unknown method /attestation.v1.AttestationService/FetchNothing");
  });
});

describe("standard services", () => {
  it("grpc.health.v1 Check answers SERVING, and NOT_FOUND for an unknown service", async () => {
    expect((await client.healthCheck({ service: "" })).value?.status).toBe("SERVING");
    expect((await client.healthCheck({ service: "attestation.v1.AttestationService" })).value?.status).toBe("SERVING");
    expect((await client.healthCheck({ service: "nope.Service" })).code).toBe(S.NOT_FOUND);
  });

  it("server reflection lists the services and returns the proto with its imports", async () => {
    const def = loader.loadSync("grpc/reflection/v1/reflection.proto", { includeDirs: [path.join(ROOT, "proto")], bytes: Buffer, oneofs: true });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const R = (grpc.loadPackageDefinition(def) as any).grpc.reflection.v1.ServerReflection;
    const c = new R(`unix://${agent.socket}`, grpc.credentials.createInsecure());
    const call = c.ServerReflectionInfo();
    const answers: unknown[] = [];
    const done = new Promise<void>((res, rej) => {
      call.on("data", (d: unknown) => answers.push(d));
      call.on("end", () => res());
      call.on("error", rej);
    });
    call.write({ listServices: "" });
    call.write({ fileContainingSymbol: "attestation.v1.AttestationService" });
    call.write({ fileContainingSymbol: "attest.Attestation" });
    call.end();
    await done;
    c.close();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const [list, file, attest] = answers as any[];
    expect(list.listServicesResponse.service.map((s: { name: string }) => s.name)).toEqual(
      expect.arrayContaining(["attestation.v1.AttestationService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]),
    );
    expect(file.fileDescriptorResponse.fileDescriptorProto[0].toString("latin1")).toContain("attestation/v1/attestation.proto");
    // attest.proto comes with its imports (sevsnp, tpm).
    expect(attest.fileDescriptorResponse.fileDescriptorProto).toHaveLength(3);
  });

  it("server reflection: every message, enum, enum value, field and oneof of every file it serves resolves with FileContainingSymbol to its own file", async () => {
    const def = loader.loadSync("grpc/reflection/v1/reflection.proto", { includeDirs: [path.join(ROOT, "proto")], bytes: Buffer, oneofs: true });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const R = (grpc.loadPackageDefinition(def) as any).grpc.reflection.v1.ServerReflection;
    const c = new R(`unix://${agent.socket}`, grpc.credentials.createInsecure());
    const call = c.ServerReflectionInfo();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const ask = (req: object) => new Promise<any>((res, rej) => {
      call.once("data", res);
      call.once("error", rej);
      call.write(req);
    });
    try {
      const services: string[] = (await ask({ listServices: "" })).listServicesResponse.service.map((x: { name: string }) => x.name);
      const files = new Map<string, ReturnType<typeof fromBinary<typeof FileDescriptorProtoSchema>>>();
      // The services' files, and the evidence types' (the quote bytes are attest.Attestation or sevsnp.Attestation).
      const requests = [...services.map((svc) => ({ fileContainingSymbol: svc })), { fileByFilename: "attest/attest.proto" }];
      for (const req of requests)
        for (const b of (await ask(req)).fileDescriptorResponse.fileDescriptorProto) {
          const f = fromBinary(FileDescriptorProtoSchema, b);
          files.set(f.name, f);
        }
      expect([...files.keys()]).toEqual(expect.arrayContaining(["attest/attest.proto", "sevsnp/sevsnp.proto", "tpm/tpm.proto"]));
      const symbols: [string, string][] = [];
      type Enum = { name: string; value: { name: string }[] };
      type Msg = { name: string; nestedType: Msg[]; enumType: Enum[]; field: { name: string }[]; oneofDecl: { name: string }[] };
      // Enum values are siblings of their enum (protobuf's C++ scoping); fields and oneofs are the message's.
      const walk = (file: string, prefix: string, msgs: Msg[], enums: Enum[]) => {
        for (const e of enums) symbols.push([`${prefix}${e.name}`, file], ...e.value.map((v): [string, string] => [`${prefix}${v.name}`, file]));
        for (const m of msgs) {
          symbols.push([`${prefix}${m.name}`, file]);
          for (const x of [...m.field, ...m.oneofDecl]) symbols.push([`${prefix}${m.name}.${x.name}`, file]);
          walk(file, `${prefix}${m.name}.`, m.nestedType, m.enumType);
        }
      };
      for (const f of files.values()) walk(f.name, f.package ? `${f.package}.` : "", f.messageType, f.enumType);
      expect(symbols.map(([sym]) => sym)).toEqual(expect.arrayContaining(["sevsnp.Attestation", "attestation.v1.AttestationRequest.nonce", "attestation.v1.PLATFORM_TYPE_VTPM"]));
      const unresolved: string[] = [];
      for (const [sym, file] of symbols) {
        const r = await ask({ fileContainingSymbol: sym });
        const first = r.fileDescriptorResponse ? fromBinary(FileDescriptorProtoSchema, r.fileDescriptorResponse.fileDescriptorProto[0]).name : undefined;
        if (first !== file) unresolved.push(`${sym} → ${first ?? r.errorResponse?.errorMessage}`);
      }
      expect(unresolved).toEqual([]);
    } finally {
      call.end();
      c.close();
    }
  });

  it("server reflection v1alpha (what older grpcurl versions use) answers too", async () => {
    const def = loader.loadSync("grpc/reflection/v1alpha/reflection.proto", { includeDirs: [path.join(ROOT, "proto")], bytes: Buffer, oneofs: true });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const R = (grpc.loadPackageDefinition(def) as any).grpc.reflection.v1alpha.ServerReflection;
    const c = new R(`unix://${agent.socket}`, grpc.credentials.createInsecure());
    const call = c.ServerReflectionInfo();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const first = new Promise<any>((res, rej) => {
      call.once("data", res);
      call.once("error", rej);
    });
    call.write({ listServices: "" });
    const answer = await first;
    call.end();
    c.close();
    expect(answer.listServicesResponse.service.map((s: { name: string }) => s.name)).toContain("grpc.reflection.v1alpha.ServerReflection");
  });
});

describe("robustness", () => {
  it("a TPM that never answers: the client deadline fires, the call fails UNAVAILABLE after --tpm-timeout-ms, the agent keeps serving", async () => {
    const stallSock = path.join(dir, "stall.sock");
    const conns = new Set<net.Socket>();
    const stall = net.createServer((s) => conns.add(s.on("data", () => {}))).listen(stallSock);
    const a = await startAgentProcess(path.join(dir, "stall-agent.sock"), ["--platform", "vtpm", "--tpm", `unix:${stallSock}`, "--tpm-timeout-ms", "1500"]);
    const c = grpcJsClient(a.socket);
    try {
      const t0 = Date.now();
      const r1 = await c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" }, 300);
      expect(r1.code).toBe(S.DEADLINE_EXCEEDED);
      expect(Date.now() - t0).toBeLessThan(1500);
      const r2 = await c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" }, 10_000);
      expect(r2.code).toBe(S.UNAVAILABLE);
      expect(r2.details).toBe("TPM socket: no response within 1500 ms");
      expect((await c.healthCheck({ service: "" })).value?.status).toBe("SERVING");
    } finally {
      c.close();
      await a.stop();
      for (const s of conns) s.destroy();
      stall.close();
    }
  });

  it("a missing TPM device or socket → UNAVAILABLE naming the kind of TPM and the error code, not the path (which goes to the agent's log)", async () => {
    const cases = [
      [path.join(dir, "no-tpmrm0"), "TPM device: open ENOENT"],
      [`unix:${path.join(dir, "no-swtpm.sock")}`, "TPM socket: connect ENOENT"],
    ] as const;
    for (const [tpmArg, details] of cases) {
      const a = await startAgentProcess(path.join(dir, "missing-agent.sock"), ["--platform", "vtpm", "--tpm", tpmArg]);
      const c = grpcJsClient(a.socket);
      try {
        const r = await c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" });
        expect(r.code).toBe(S.UNAVAILABLE);
        expect(r.details).toBe(details);
        expect(a.stderr()).toContain(tpmArg.replace(/^unix:/, "")); // the full text, path and all, is the operator's
      } finally {
        c.close();
        await a.stop();
      }
    }
  });

  it("SIGTERM drains in-flight calls held at the TPM, health Watch turns NOT_SERVING, then exit 0 and the socket is gone", async () => {
    const t2 = await startSwtpm();
    const gate = await startTpmGate(t2.sock, dir);
    const gid = process.getuid?.() === 0 ? 1 : process.getgid!();
    const a = await startAgentProcess(path.join(dir, "drain-agent.sock"), ["--platform", "vtpm", "--tpm", gate.tpm, "--socket-mode", "600", "--socket-group", String(gid)]);
    const c = grpcJsClient(a.socket);
    const def = loader.loadSync("grpc/health/v1/health.proto", { includeDirs: [path.join(ROOT, "proto")], enums: String });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const H = (grpc.loadPackageDefinition(def) as any).grpc.health.v1.Health;
    const hc = new H(`unix://${a.socket}`, grpc.credentials.createInsecure());
    const watched: string[] = [];
    const watch = hc.Watch({ service: "" });
    let firstStatus!: () => void;
    const watching = new Promise<void>((r) => (firstStatus = r));
    const watchEnded = new Promise<void>((r) => {
      watch.on("data", (d: { status: string }) => {
        watched.push(d.status);
        firstStatus();
      });
      watch.on("end", () => r());
      watch.on("error", () => r());
    });
    try {
      const st = await lstat(a.socket);
      expect(st.mode & 0o777).toBe(0o600);
      expect(st.gid).toBe(gid);
      expect((await c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" })).code).toBe(0); // AK ready
      await watching;
      // From here on every Quote waits at the TPM until the test releases it.
      gate.hold(CC.Quote);
      const nonces = Array.from({ length: 16 }, () => nonceOf(32));
      const calls = nonces.map((nonce) => c.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" }));
      await gate.held(); // the first call is at the TPM, the others queue behind it
      // A call the agent answers without the TPM, sent after the 16 on the same HTTP/2 connection:
      // frames are processed in order, so once it is answered the agent holds all 16.
      expect((await c.fetchAttestation({ nonce: Buffer.alloc(33), platformType: "PLATFORM_TYPE_VTPM" })).code).toBe(S.INVALID_ARGUMENT);
      const stopped = a.stop("SIGTERM");
      while (!/draining \d+ in-flight/.test(a.stderr())) await new Promise((r) => setTimeout(r, 20));
      // 16 held calls plus the health Watch stream.
      expect(a.stderr()).toMatch(/draining 17 in-flight call\(s\)/);
      gate.release();
      const code = await stopped;
      const rs = await Promise.all(calls);
      expect(rs.map((r) => r.code)).toEqual(Array(16).fill(0));
      rs.forEach((r, i) => {
        verifyVtpmAttestation(r.value!.quote, nonces[i]!);
      });
      expect(code).toBe(0);
      expect(a.stderr()).toMatch(/SIGTERM: draining/);
      await expect(lstat(a.socket)).rejects.toThrow(/ENOENT/);
      await watchEnded;
      expect(watched).toEqual(["SERVING", "NOT_SERVING"]);
    } finally {
      gate.release();
      hc.close();
      c.close();
      await a.stop();
      await gate.close();
      await t2.stop();
    }
  });

  it("SIGTERM with a call stuck at a stalled TPM: when the 10 s grace ends the call gets UNAVAILABLE, and the agent exits 0 within systemd's TimeoutStopSec (15 s)", async () => {
    const t2 = await startSwtpm();
    const gate = await startTpmGate(t2.sock, dir);
    const a = await startAgentProcess(path.join(dir, "stall-stop-agent.sock"), ["--platform", "vtpm", "--tpm", gate.tpm]);
    const c = grpcJsClient(a.socket);
    try {
      expect((await c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" })).code).toBe(0); // AK ready
      // The TPM stops answering Quote (as a SIGSTOPped swtpm would) for the rest of the test.
      gate.hold(CC.Quote);
      const call = c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" }, 60_000);
      await gate.held();
      const t0 = Date.now();
      const code = await a.stop("SIGTERM"); // the helper SIGKILLs after 15 s: that would be null
      const elapsed = Date.now() - t0;
      const r = await call;
      expect(r.code).toBe(S.UNAVAILABLE);
      expect(r.details).toMatch(/shutting down/);
      expect(code).toBe(0);
      expect(elapsed).toBeLessThan(15_000);
      await expect(lstat(a.socket)).rejects.toThrow(/ENOENT/);
    } finally {
      c.close();
      await a.stop();
      await gate.close();
      await t2.stop();
    }
  });

  it("after the agent stops: no transient objects left, the AK persisted at 0x81008F01", async () => {
    client.close();
    await agent.stop();
    const { stdout: transients } = await run("tpm2_getcap", ["-T", tpm.tcti, "handles-transient"]);
    expect(transients.trim()).toBe("");
    const { stdout: persistent } = await run("tpm2_getcap", ["-T", tpm.tcti, "handles-persistent"]);
    expect(persistent).toMatch(/0x81008F01/i);
  });
});
