/**
 * service.ts and limits.ts in-process: the input rules (lengths at their boundaries, platform
 * types), the platform rule per capability set, error mapping of every device failure, the
 * queued-call bound, the default deadline and the cap, and the FIFO lock.
 */
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import { describe, expect, it, vi } from "vitest";
import { CloudError } from "../../../attestation-agent/cloud/provider.ts";
import { AttestationSchema } from "../../../attestation-agent/gen/attest/attest_pb.ts";
import { AttestationService, PlatformType, type AttestationRequest, type CloudTokenRequest } from "../../../attestation-agent/gen/attestation/v1/attestation_pb.ts";
import { Admission, FifoLock } from "../../../attestation-agent/limits.ts";
import { fromName, type Capabilities } from "../../../attestation-agent/platform.ts";
import { bindAk, createAttestationService, pad, toConnectError, type Devices } from "../../../attestation-agent/service.ts";
import { TpmError } from "../../../attestation-agent/tpm/client.ts";
import { RC, TpmParseError } from "../../../attestation-agent/tpm/marshal.ts";
import { TpmTransportError } from "../../../attestation-agent/tpm/transport.ts";
import type { VtpmAttester } from "../../../attestation-agent/tpm/vtpm.ts";
import { SnpFormatError } from "../../../attestation-agent/tsm/snp.ts";
import { GenerationError, TsmClient, TsmError } from "../../../attestation-agent/tsm/report.ts";
import { VerifyError } from "../../../attestation-agent/verify/tpm.ts";
import { FakeConfigFs } from "../fixtures/fake-configfs.ts";
import { fromBinary } from "@bufbuild/protobuf";
import { getEventListeners } from "node:events";
import { AttestationSchema as SnpAttestationSchema } from "../../../attestation-agent/gen/sevsnp/sevsnp_pb.ts";
import { CERT_GUID, buildCertTable } from "../../../attestation-agent/tsm/snp.ts";

function ctx(timeoutMs?: number, signal = new AbortController().signal): HandlerContext {
  return createHandlerContext({
    service: AttestationService,
    method: AttestationService.method.fetchAttestation,
    protocolName: "test",
    requestMethod: "POST",
    url: "http://localhost/attestation.v1.AttestationService/FetchAttestation",
    timeoutMs,
    requestSignal: signal,
    requestHeader: {},
  });
}

/** A vTPM whose attestation records the nonce it got, and can be held until released. */
function fakeVtpm(opts: { hold?: boolean; fail?: unknown } = {}) {
  const seen: Uint8Array[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const vtpm = {
    async attest(nonce: Uint8Array, signal?: AbortSignal) {
      seen.push(nonce);
      if (opts.fail) throw opts.fail;
      if (opts.hold)
        await new Promise<void>((resolve, reject) => {
          gate.then(resolve);
          signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
        });
      return create(AttestationSchema, { akPub: new Uint8Array([1, 2]) });
    },
  } as unknown as VtpmAttester;
  return { vtpm, seen, release };
}

/** The service with promise-typed methods (ServiceImpl allows plain values too). */
function service(dev: Devices) {
  const s = createAttestationService(dev);
  return {
    fetchAttestation: (req: AttestationRequest, c: HandlerContext) => Promise.resolve(s.fetchAttestation(req, c)) as Promise<{ quote: Uint8Array }>,
    fetchCloudToken: (req: CloudTokenRequest, c: HandlerContext) => Promise.resolve(s.fetchCloudToken(req, c)) as Promise<{ token: Uint8Array }>,
  };
}

const caps = (name: Capabilities["name"]) => fromName(name);
const snpFs = () => new FakeConfigFs("/r", "sev_guest", () => ({ outblob: new Uint8Array(0) }));

async function code(p: Promise<unknown>): Promise<[Code, string]> {
  const e = await p.then(
    () => undefined,
    (x) => x,
  );
  expect(e).toBeInstanceOf(ConnectError);
  return [(e as ConnectError).code, (e as ConnectError).rawMessage];
}

describe("FetchAttestation input rules", () => {
  const { vtpm } = fakeVtpm();
  const svc = service({ caps: caps("vtpm"), vtpm });
  const call = (req: Partial<{ reportData: Uint8Array; nonce: Uint8Array; platformType: PlatformType }>) =>
    svc.fetchAttestation({ $typeName: "attestation.v1.AttestationRequest", reportData: new Uint8Array(0), nonce: new Uint8Array(0), platformType: PlatformType.UNSPECIFIED, ...req }, ctx());

  it("report_data ≤ 64 and nonce ≤ 32 bytes pass; one more byte is INVALID_ARGUMENT, checked before the platform", async () => {
    await expect(call({ reportData: new Uint8Array(64), nonce: new Uint8Array(32), platformType: PlatformType.VTPM })).resolves.toHaveProperty("quote");
    expect(await code(call({ reportData: new Uint8Array(65), platformType: PlatformType.VTPM }))).toEqual([Code.InvalidArgument, "report_data is 65 bytes; at most 64 are allowed"]);
    expect(await code(call({ nonce: new Uint8Array(33), platformType: PlatformType.UNSPECIFIED }))).toEqual([Code.InvalidArgument, "nonce is 33 bytes; at most 32 are allowed"]);
    expect(await code(call({ reportData: new Uint8Array(65), nonce: new Uint8Array(33) }))).toEqual([Code.InvalidArgument, "report_data is 65 bytes; at most 64 are allowed"]);
  });

  it("platform types: UNSPECIFIED, CLOUD and unknown values → INVALID_ARGUMENT; NO_CC → FAILED_PRECONDITION", async () => {
    expect(await code(call({}))).toEqual([Code.InvalidArgument, "platform_type is required"]);
    expect(await code(call({ platformType: PlatformType.CLOUD }))).toEqual([Code.InvalidArgument, "PLATFORM_TYPE_CLOUD has no quote; call FetchCloudToken"]);
    expect(await code(call({ platformType: 7 as PlatformType }))).toEqual([Code.InvalidArgument, "unknown platform_type 7"]);
    expect(await code(call({ platformType: -1 as PlatformType }))).toEqual([Code.InvalidArgument, "unknown platform_type -1"]);
    expect(await code(call({ platformType: PlatformType.NO_CC }))).toEqual([Code.FailedPrecondition, "PLATFORM_TYPE_NO_CC has no hardware evidence; the agent never returns canned evidence"]);
  });

  it("only evidence the machine has: every platform type against every capability set", async () => {
    const tsm = new TsmClient("/r", snpFs());
    const { vtpm: v } = fakeVtpm();
    const have: [Capabilities["name"], Partial<Devices>, PlatformType[]][] = [
      ["vtpm", { vtpm: v }, [PlatformType.VTPM]],
      ["snp", { tsm }, [PlatformType.SNP]],
      ["tdx", { tsm }, [PlatformType.TDX]],
      ["snp-vtpm", { vtpm: v, tsm }, [PlatformType.SNP, PlatformType.VTPM, PlatformType.SNP_VTPM]],
      ["none", { vtpm: v, tsm }, []],
      ["vtpm", {}, []], // capability without the device
      ["snp", {}, []],
      ["tdx", {}, []],
      ["snp-vtpm", { vtpm: v }, [PlatformType.VTPM]],
      ["snp-vtpm", { tsm }, [PlatformType.SNP]],
    ];
    for (const [name, dev, ok] of have) {
      const s = service({ caps: caps(name), ...dev });
      for (const t of [PlatformType.SNP, PlatformType.TDX, PlatformType.VTPM, PlatformType.SNP_VTPM]) {
        const r = await s
          .fetchAttestation({ $typeName: "attestation.v1.AttestationRequest", reportData: new Uint8Array(0), nonce: new Uint8Array(0), platformType: t }, ctx())
          .then(() => "ok", (e: ConnectError) => (e.code === Code.FailedPrecondition && e.rawMessage.endsWith(`is not available on this machine (platform ${name})`) ? "refused" : `other: ${e.code} ${e.rawMessage}`));
        expect([name, Object.keys(dev).join("+"), t, r]).toEqual([name, Object.keys(dev).join("+"), t, ok.includes(t) ? expect.stringMatching(/^(ok|other: 13 .*)$/) : "refused"]);
      }
    }
  });

  it("the vTPM gets the nonce zero-padded to 32 bytes", async () => {
    const f = fakeVtpm();
    const s = service({ caps: caps("vtpm"), vtpm: f.vtpm });
    await s.fetchAttestation({ $typeName: "attestation.v1.AttestationRequest", reportData: new Uint8Array(0), nonce: new Uint8Array([5, 6]), platformType: PlatformType.VTPM }, ctx());
    expect(Array.from(f.seen[0]!)).toEqual([5, 6, ...new Array(30).fill(0)]);
  });
});

describe("evidence per platform type (devices faked at their interfaces)", () => {
  const vreq = (platformType: PlatformType, reportData = new Uint8Array([1, 2]), nonce = new Uint8Array([3])) => ({ $typeName: "attestation.v1.AttestationRequest" as const, reportData, nonce, platformType });
  /** A configfs-tsm whose outblob is a 0x4A0-byte SNP report carrying the inblob as REPORT_DATA, or the inblob itself (TDX). */
  const tsmOf = (provider: "sev_guest" | "tdx_guest", inblobs: Uint8Array[]) =>
    new TsmClient("/r", new FakeConfigFs("/r", provider, (inblob) => {
      inblobs.push(inblob);
      if (provider === "tdx_guest") return { outblob: new Uint8Array([0x04, 0x00, ...inblob]) };
      const rep = Buffer.alloc(0x4a0);
      rep.writeUInt32LE(3, 0);
      rep.set(inblob, 0x50);
      return { outblob: new Uint8Array(rep), auxblob: buildCertTable([[CERT_GUID.ARK, Buffer.from("ark")]]) };
    }));

  it("SNP: sevsnp.Attestation with the zero-padded report data and the host's certificate table", async () => {
    const seen: Uint8Array[] = [];
    const s = service({ caps: caps("snp"), tsm: tsmOf("sev_guest", seen) });
    const att = fromBinary(SnpAttestationSchema, (await s.fetchAttestation(vreq(PlatformType.SNP), ctx())).quote);
    expect(Array.from(att.report!.reportData)).toEqual([1, 2, ...new Array(62).fill(0)]);
    expect(Buffer.from(att.certificateChain!.arkCert).toString()).toBe("ark");
    expect(Array.from(seen[0]!)).toEqual(Array.from(att.report!.reportData));
  });

  it("TDX: the outblob as is", async () => {
    const s = service({ caps: caps("tdx"), tsm: tsmOf("tdx_guest", []) });
    const q = (await s.fetchAttestation(vreq(PlatformType.TDX), ctx())).quote;
    expect(Array.from(q)).toEqual([4, 0, 1, 2, ...new Array(62).fill(0)]);
  });

  it("SNP_VTPM: the vTPM attestation with an SNP report whose REPORT_DATA binds the AK", async () => {
    const seen: Uint8Array[] = [];
    const f = fakeVtpm();
    const s = service({ caps: caps("snp-vtpm"), vtpm: f.vtpm, tsm: tsmOf("sev_guest", seen) });
    const att = fromBinary(AttestationSchema, (await s.fetchAttestation(vreq(PlatformType.SNP_VTPM), ctx())).quote);
    expect(att.teeAttestation.case).toBe("sevSnpAttestation");
    const want = bindAk(pad(new Uint8Array([1, 2]), 64), new Uint8Array([1, 2]));
    expect(Buffer.from(seen[0]!)).toEqual(Buffer.from(want));
    expect(Array.from(f.seen[0]!)).toEqual([3, ...new Array(31).fill(0)]);
  });

  it("a configfs-tsm provider other than the one asked for → INTERNAL", async () => {
    expect(await code(service({ caps: caps("snp"), tsm: tsmOf("tdx_guest", []) }).fetchAttestation(vreq(PlatformType.SNP), ctx()))).toEqual([Code.Internal, "configfs-tsm provider is tdx_guest, not sev_guest"]);
    expect(await code(service({ caps: caps("tdx"), tsm: tsmOf("sev_guest", []) }).fetchAttestation(vreq(PlatformType.TDX), ctx()))).toEqual([Code.Internal, "configfs-tsm provider is sev_guest, not tdx_guest"]);
  });

  it("the refusal names the platform type", async () => {
    for (const [t, name] of [[PlatformType.SNP, "SNP"], [PlatformType.TDX, "TDX"], [PlatformType.VTPM, "VTPM"], [PlatformType.SNP_VTPM, "SNP_VTPM"]] as const)
      expect(await code(service({ caps: caps("none") }).fetchAttestation(vreq(t), ctx()))).toEqual([Code.FailedPrecondition, `PLATFORM_TYPE_${name} is not available on this machine (platform none)`]);
  });
});

describe("FetchCloudToken", () => {
  it("no provider → FAILED_PRECONDITION; a provider's answer and its errors map to codes", async () => {
    const req = { $typeName: "attestation.v1.CloudTokenRequest" as const, nonce: new Uint8Array([1]) };
    expect(await code(service({ caps: caps("none") }).fetchCloudToken(req, ctx()))).toEqual([Code.FailedPrecondition, "no cloud attestation provider is configured"]);
    const ok = service({ caps: caps("none"), cloud: { name: "test", token: async (n: Uint8Array) => new Uint8Array([...n, 9]) } });
    expect(Array.from((await ok.fetchCloudToken(req, ctx())).token!)).toEqual([1, 9]);
    for (const [kind, c] of [["invalid", Code.InvalidArgument], ["unavailable", Code.Unavailable], ["internal", Code.Internal]] as const) {
      const s = service({ caps: caps("none"), cloud: { name: "test", token: async () => Promise.reject(new CloudError(kind, "why")) } });
      expect(await code(s.fetchCloudToken(req, ctx()))).toEqual([c, "why"]);
    }
  });
});

describe("limits: queued calls, default deadline, cap", () => {
  const vreq = { $typeName: "attestation.v1.AttestationRequest" as const, reportData: new Uint8Array(0), nonce: new Uint8Array(0), platformType: PlatformType.VTPM };

  it("beyond maxQueuedCalls → RESOURCE_EXHAUSTED; a finished call frees its slot", async () => {
    const f = fakeVtpm({ hold: true });
    const s = service({ caps: caps("vtpm"), vtpm: f.vtpm, maxQueuedCalls: 2 });
    const a = s.fetchAttestation(vreq, ctx());
    const b = s.fetchAttestation(vreq, ctx());
    expect(await code(s.fetchAttestation(vreq, ctx()))).toEqual([Code.ResourceExhausted, "2 calls are already waiting for the device (limit 2); retry later"]);
    f.release();
    await Promise.all([a, b]);
    await expect(s.fetchAttestation(vreq, ctx())).resolves.toHaveProperty("quote");
    const failing = service({ caps: caps("vtpm"), vtpm: fakeVtpm({ fail: new TpmTransportError("down") }).vtpm, maxQueuedCalls: 1 });
    for (let i = 0; i < 3; i++) expect((await code(failing.fetchAttestation(vreq, ctx())))[0]).toBe(Code.Unavailable); // failures free the slot too
  });

  it("no caller deadline: the default one applies; a caller's deadline wins; the cap bounds both", async () => {
    const held = () => fakeVtpm({ hold: true }).vtpm;
    const msg = "the call exceeded the agent's deadline (default or cap)";
    expect(await code(service({ caps: caps("vtpm"), vtpm: held(), defaultDeadlineMs: 30 }).fetchAttestation(vreq, ctx()))).toEqual([Code.DeadlineExceeded, msg]);
    expect(await code(service({ caps: caps("vtpm"), vtpm: held(), defaultDeadlineMs: 60_000, callTimeoutMs: 30 }).fetchAttestation(vreq, ctx()))).toEqual([Code.DeadlineExceeded, msg]);
    expect(await code(service({ caps: caps("vtpm"), vtpm: held(), defaultDeadlineMs: 60_000, callTimeoutMs: 30 }).fetchAttestation(vreq, ctx(60_000)))).toEqual([Code.DeadlineExceeded, msg]);
    // The caller's own 30 ms deadline wins over a long default (Connect aborts the context).
    const own = await code(service({ caps: caps("vtpm"), vtpm: held(), defaultDeadlineMs: 60_000 }).fetchAttestation(vreq, ctx(30)));
    expect(own[0]).toBe(Code.DeadlineExceeded);
    // A cancelled caller → CANCELLED.
    const ac = new AbortController();
    const p = service({ caps: caps("vtpm"), vtpm: held(), defaultDeadlineMs: 60_000 }).fetchAttestation(vreq, ctx(undefined, ac.signal));
    ac.abort();
    expect(await code(p)).toEqual([Code.Canceled, "call cancelled"]);
  });

  it("a caller gone before the device work → CANCELLED; a finished call leaves no listener and no timer behind", async () => {
    const vtpm = {
      async attest(_nonce: Uint8Array, signal?: AbortSignal) {
        if (signal?.aborted) throw signal.reason;
        return create(AttestationSchema, { akPub: new Uint8Array([1]) });
      },
    } as unknown as VtpmAttester;
    const s = service({ caps: caps("vtpm"), vtpm });
    const ac = new AbortController();
    ac.abort();
    expect(await code(s.fetchAttestation(vreq, ctx(undefined, ac.signal)))).toEqual([Code.Canceled, "call cancelled"]);
    vi.useFakeTimers();
    try {
      const c = ctx();
      const before = getEventListeners(c.signal, "abort").length;
      await expect(s.fetchAttestation(vreq, c)).resolves.toHaveProperty("quote");
      expect(getEventListeners(c.signal, "abort")).toHaveLength(before);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("toConnectError", () => {
  const live = new AbortController().signal;
  it("maps each device failure to its code", () => {
    const cases: [unknown, Code, string][] = [
      [new TpmTransportError("no TPM"), Code.Unavailable, "no TPM"],
      [new TpmError("Quote", RC.RETRY), Code.Unavailable, "TPM2_Quote failed: 0x922 TPM_RC_RETRY"],
      [new TpmError("Quote", RC.YIELDED), Code.Unavailable, "TPM2_Quote failed: 0x908 TPM_RC_YIELDED"],
      [new TpmError("Quote", RC.TESTING), Code.Unavailable, "TPM2_Quote failed: 0x90a TPM_RC_TESTING"],
      [new TpmError("Quote", RC.FAILURE), Code.Internal, "TPM2_Quote failed: 0x101 TPM_RC_FAILURE"],
      [new GenerationError("raced"), Code.Aborted, "raced"],
      [new TsmError("x", "ENXIO"), Code.Unavailable, "x"],
      [new TsmError("x", "ENOENT"), Code.Unavailable, "x"],
      [new TsmError("x", "EBUSY"), Code.Unavailable, "x"],
      [new TsmError("x", "ETIMEDOUT"), Code.Unavailable, "x"],
      [new TsmError("x", "ENOTTY"), Code.Unavailable, "x"],
      [new TsmError("x", "EAGAIN"), Code.Unavailable, "x"],
      [new TsmError("x", "EINVAL"), Code.Internal, "x"],
      [new TsmError("x"), Code.Internal, "x"],
      [new CloudError("invalid", "c"), Code.InvalidArgument, "c"],
      [new CloudError("unavailable", "c"), Code.Unavailable, "c"],
      [new CloudError("internal", "c"), Code.Internal, "c"],
      [new TpmParseError("short"), Code.Internal, "device returned malformed evidence: short"],
      [new SnpFormatError("bad"), Code.Internal, "device returned malformed evidence: bad"],
      [new VerifyError("nonce", "n"), Code.Internal, "device returned malformed evidence: nonce: n"],
      [new Error("boom"), Code.Internal, "internal error: boom"],
      ["text", Code.Internal, "internal error: text"],
      [undefined, Code.Internal, "internal error: undefined"],
      [new ConnectError("as is", Code.NotFound), Code.NotFound, "as is"],
    ];
    for (const [e, c, m] of cases) expect([toConnectError(e, live).code, toConnectError(e, live).rawMessage]).toEqual([c, m]);
  });

  it("an aborted signal decides: its ConnectError reason, a timeout → DEADLINE_EXCEEDED, else CANCELLED", () => {
    const ac = new AbortController();
    ac.abort(new ConnectError("deadline", Code.DeadlineExceeded));
    expect(toConnectError(new Error("x"), ac.signal).code).toBe(Code.DeadlineExceeded);
    const t = new AbortController();
    t.abort(new DOMException("t", "TimeoutError"));
    expect([toConnectError(new Error("x"), t.signal).code, toConnectError(new Error("x"), t.signal).rawMessage]).toEqual([Code.DeadlineExceeded, "the call exceeded the agent's deadline (default or cap)"]);
    const c = new AbortController();
    c.abort(new DOMException("a", "AbortError"));
    expect([toConnectError(new Error("x"), c.signal).code, toConnectError(new Error("x"), c.signal).rawMessage]).toEqual([Code.Canceled, "call cancelled"]);
  });
});

describe("helpers", () => {
  it("pad zero-fills; bindAk is SHA3-512(report_data ‖ AK public area)", () => {
    expect(Array.from(pad(new Uint8Array([1]), 3))).toEqual([1, 0, 0]);
    const rd = new Uint8Array(64).fill(1);
    const ak = new Uint8Array([9, 9]);
    expect(Buffer.from(bindAk(rd, ak)).toString("hex")).toBe(createHash("sha3-512").update(rd).update(ak).digest("hex"));
  });

  it("Admission: counts, refuses at the limit, release is idempotent", () => {
    const a = new Admission(2);
    const r1 = a.enter();
    a.enter();
    expect(a.inUse).toBe(2);
    expect(() => a.enter()).toThrow("2 calls are already waiting for the device (limit 2); retry later");
    r1();
    r1();
    expect(a.inUse).toBe(1);
    a.enter();
    expect(a.inUse).toBe(2);
  });

  it("FifoLock: one at a time in arrival order; an aborted waiter leaves the queue; an aborted signal never enters", async () => {
    const lock = new FifoLock();
    const order: string[] = [];
    let releaseA!: () => void;
    const a = lock.run(() => new Promise<void>((r) => (releaseA = () => (order.push("a"), r()))));
    const ac = new AbortController();
    const b = lock.run(async () => void order.push("b"), ac.signal);
    const c = lock.run(async () => void order.push("c"));
    ac.abort(new Error("b gave up"));
    await expect(b).rejects.toThrow("b gave up");
    releaseA();
    await Promise.all([a, c]);
    expect(order).toEqual(["a", "c"]);
    // A waiter that was granted the lock leaves no listener on its signal, and a later abort changes nothing.
    const granted = new AbortController();
    let releaseE: (() => void) | undefined;
    const e = lock.run(() => new Promise<void>((r) => (releaseE = r)));
    const f = lock.run(async () => "f ran", granted.signal);
    expect(getEventListeners(granted.signal, "abort")).toHaveLength(1);
    while (!releaseE) await Promise.resolve(); // the lock was free: e runs once acquire() settles
    releaseE();
    await e;
    await expect(f).resolves.toBe("f ran");
    expect(getEventListeners(granted.signal, "abort")).toHaveLength(0);
    granted.abort();
    const dead = new AbortController();
    dead.abort(new Error("already"));
    await expect(lock.run(async () => order.push("d"), dead.signal)).rejects.toThrow("already");
    const gone = new AbortController();
    gone.abort();
    await expect(lock.run(async () => 1, gone.signal)).rejects.toMatchObject({ name: "AbortError" });
    await expect(lock.run(async () => "free again")).resolves.toBe("free again");
    await expect(lock.run(async () => Promise.reject(new Error("fn failed")))).rejects.toThrow("fn failed");
    await expect(lock.run(async () => "released after a failure")).resolves.toBe("released after a failure");
  });
});
