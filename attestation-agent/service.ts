/**
 * AttestationService (attestation.v1): input rules first, then the platform check, then the
 * device. Every failure is a ConnectError with a specific code; nothing returns canned evidence.
 *
 * | Case | Code |
 * |---|---|
 * | report_data > 64 bytes, nonce > 32 bytes | INVALID_ARGUMENT |
 * | platform_type UNSPECIFIED, CLOUD, or not in the enum | INVALID_ARGUMENT |
 * | platform_type NO_CC (no evidence exists) | FAILED_PRECONDITION |
 * | platform type this machine does not have | FAILED_PRECONDITION |
 * | TPM or configfs-tsm unreachable / busy / timed out | UNAVAILABLE |
 * | configfs-tsm entry written by someone else (generation mismatch, after retries) | ABORTED |
 * | TPM error code, malformed device output | INTERNAL |
 * | FetchCloudToken without a configured provider | FAILED_PRECONDITION |
 * | more calls waiting for a device than the configured bound | RESOURCE_EXHAUSTED |
 * | no caller deadline and the agent's default deadline passed | DEADLINE_EXCEEDED |
 */
import { createHash } from "node:crypto";
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { AttestationService, PlatformType, type AttestationRequest, type CloudTokenRequest } from "./gen/attestation/v1/attestation_pb.ts";
import { AttestationSchema as SnpAttestationSchema, type Attestation as SnpAttestation } from "./gen/sevsnp/sevsnp_pb.ts";
import type { Capabilities } from "./platform.ts";
import { CloudError, type CloudTokenProvider } from "./cloud/provider.ts";
import { TpmError } from "./tpm/client.ts";
import { TpmParseError, RC } from "./tpm/marshal.ts";
import { TpmTransportError } from "./tpm/transport.ts";
import { serializeAttestation, type VtpmAttester } from "./tpm/vtpm.ts";
import { SnpFormatError, snpAttestation } from "./tsm/snp.ts";
import { GenerationError, TsmError, type TsmClient } from "./tsm/report.ts";
import { VerifyError } from "./verify/tpm.ts";
import { Admission } from "./limits.ts";

export const REPORT_DATA_SIZE = 64;
export const NONCE_SIZE = 32;
/** Upper bound on device work per call, whatever the client's deadline. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Deadline of a call whose client set none (grpc-timeout / connect-timeout-ms absent). */
export const DEFAULT_DEADLINE_MS = 30_000;
/** Calls admitted at once (running or waiting for a device). */
export const DEFAULT_MAX_QUEUED_CALLS = 64;

export interface Devices {
  caps: Capabilities;
  vtpm?: VtpmAttester;
  tsm?: TsmClient;
  /** VMPL written to configfs `privlevel` for SNP reports; unset leaves the kernel default. */
  snpPrivilege?: number;
  cloud?: CloudTokenProvider;
  /** Cap on any call's device work, whatever its deadline. */
  callTimeoutMs?: number;
  /** Deadline applied when the caller sets none. */
  defaultDeadlineMs?: number;
  /** Bound on calls running or waiting for a device; beyond it RESOURCE_EXHAUSTED. */
  maxQueuedCalls?: number;
  /** The agent's log: gets the full text of a device error whose client message leaves out host paths. */
  log?: (msg: string) => void;
  /** Aborted when the shutdown grace ends: calls still at a device end with its reason (UNAVAILABLE). */
  stopping?: AbortSignal;
}

/** Zero-pads `b` to `size` bytes (callers checked the length). */
export function pad(b: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  out.set(b);
  return out;
}

/** SNP_VTPM binding as cocos makes it: REPORT_DATA = SHA3-512(report_data64 ‖ AK TPMT_PUBLIC). */
export function bindAk(reportData64: Uint8Array, akPub: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha3-512").update(reportData64).update(akPub).digest());
}

const NAMES: Record<number, string> = Object.fromEntries(Object.entries(PlatformType).map(([k, v]) => [v, `PLATFORM_TYPE_${k}`]));

/** Maps device-layer failures to gRPC codes; ConnectErrors and aborts pass through. */
export function toConnectError(e: unknown, signal: AbortSignal): ConnectError {
  if (e instanceof ConnectError) return e;
  if (signal.aborted) {
    const reason = signal.reason;
    if (reason instanceof ConnectError) return reason;
    const timeout = reason instanceof DOMException && reason.name === "TimeoutError";
    return new ConnectError(timeout ? "the call exceeded the agent's deadline (default or cap)" : "call cancelled", timeout ? Code.DeadlineExceeded : Code.Canceled);
  }
  const msg = (e as Error)?.message ?? String(e);
  if (e instanceof TpmTransportError) return new ConnectError(e.publicMessage, Code.Unavailable);
  if (e instanceof TpmError) return new ConnectError(msg, e.rc === RC.RETRY || e.rc === RC.YIELDED || e.rc === RC.TESTING ? Code.Unavailable : Code.Internal);
  if (e instanceof GenerationError) return new ConnectError(msg, Code.Aborted);
  if (e instanceof TsmError) {
    const unavailable = ["ENXIO", "ENOENT", "EBUSY", "ETIMEDOUT", "ENOTTY", "EAGAIN"];
    return new ConnectError(e.publicMessage, e.errno && unavailable.includes(e.errno) ? Code.Unavailable : Code.Internal);
  }
  if (e instanceof CloudError) return new ConnectError(e.publicMessage, e.kind === "invalid" ? Code.InvalidArgument : e.kind === "unavailable" ? Code.Unavailable : Code.Internal);
  if (e instanceof TpmParseError || e instanceof SnpFormatError || e instanceof VerifyError) return new ConnectError(`device returned malformed evidence: ${msg}`, Code.Internal);
  return new ConnectError(`internal error: ${msg}`, Code.Internal);
}

export function createAttestationService(dev: Devices): ServiceImpl<typeof AttestationService> {
  const callTimeout = dev.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const defaultDeadline = dev.defaultDeadlineMs ?? DEFAULT_DEADLINE_MS;
  const admission = new Admission(dev.maxQueuedCalls ?? DEFAULT_MAX_QUEUED_CALLS);

  /**
   * Runs device work under the call's deadline (the caller's, else the default; never above the
   * cap). One controller and one timer, both dropped when the work ends: a call that finishes
   * fires no abort event (AbortSignal.any and AbortSignal.timeout cost more per call than the
   * protobuf answer).
   */
  async function deviceCall<T>(ctx: HandlerContext, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ms = Math.min(ctx.timeoutMs() ?? defaultDeadline, callTimeout);
    // A deadline already past (grpc-timeout 0n, or spent in transit): no device work, no timer.
    if (ms <= 0) throw new ConnectError("the call's deadline had passed before device work began", Code.DeadlineExceeded);
    const release = admission.enter();
    const controller = new AbortController();
    const onAbort = () => controller.abort(ctx.signal.reason);
    const onStop = () => controller.abort(dev.stopping!.reason); // !: only registered on dev.stopping
    const timer = setTimeout(() => controller.abort(new DOMException("the call exceeded the agent's deadline", "TimeoutError")), ms);
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener("abort", onAbort, { once: true });
    if (dev.stopping?.aborted) onStop();
    else dev.stopping?.addEventListener("abort", onStop, { once: true });
    // The call ends at its deadline (or cancellation) even while a device command it started is
    // stuck — a TPM command cannot be taken back, and a caller that does not enforce its own deadline
    // would wait for the device's timeout. Its slot is released once the device is done with it.
    const ended = new Promise<never>((_, reject) => {
      const fail = () => reject(controller.signal.reason);
      if (controller.signal.aborted) fail();
      else controller.signal.addEventListener("abort", fail, { once: true });
    });
    const running = work(controller.signal);
    void running
      .catch(() => {})
      .finally(() => {
        clearTimeout(timer);
        ctx.signal.removeEventListener("abort", onAbort);
        dev.stopping?.removeEventListener("abort", onStop);
        release();
      });
    try {
      return await Promise.race([running, ended]);
    } catch (e) {
      // A device error's client message leaves out host paths; the operator gets the whole text.
      const { message, publicMessage } = (e ?? {}) as { message?: unknown; publicMessage?: unknown };
      if (!controller.signal.aborted && typeof publicMessage === "string" && publicMessage !== message) dev.log?.(`call failed: ${message}`);
      throw toConnectError(e, controller.signal);
    }
  }

  async function snp(reportData64: Uint8Array, signal: AbortSignal): Promise<SnpAttestation> {
    const r = await dev.tsm!.getReport({ inblob: reportData64, privilege: dev.snpPrivilege, getAuxblob: true }, signal);
    if (r.provider !== "sev_guest") throw new TsmError(`configfs-tsm provider is ${r.provider}, not sev_guest`);
    return snpAttestation(r.outblob, r.auxblob);
  }

  async function evidence(req: AttestationRequest, signal: AbortSignal): Promise<Uint8Array> {
    const reportData = pad(req.reportData, REPORT_DATA_SIZE);
    const nonce = pad(req.nonce, NONCE_SIZE);
    switch (req.platformType) {
      case PlatformType.SNP:
        return toBinary(SnpAttestationSchema, await snp(reportData, signal));
      case PlatformType.TDX: {
        const r = await dev.tsm!.getReport({ inblob: reportData }, signal);
        if (r.provider !== "tdx_guest") throw new TsmError(`configfs-tsm provider is ${r.provider}, not tdx_guest`);
        return r.outblob;
      }
      case PlatformType.VTPM:
        return serializeAttestation(await dev.vtpm!.attest(nonce, signal));
      case PlatformType.SNP_VTPM: {
        const att = await dev.vtpm!.attest(nonce, signal);
        const tee = await snp(bindAk(reportData, att.akPub), signal);
        att.teeAttestation = { case: "sevSnpAttestation", value: tee };
        return serializeAttestation(att);
      }
    }
    throw new ConnectError("unreachable platform type", Code.Internal);
  }

  return {
    async fetchAttestation(req: AttestationRequest, ctx: HandlerContext) {
      // Input rule 1: lengths are checked before anything else (shorter values are zero-padded).
      if (req.reportData.length > REPORT_DATA_SIZE)
        throw new ConnectError(`report_data is ${req.reportData.length} bytes; at most ${REPORT_DATA_SIZE} are allowed`, Code.InvalidArgument);
      if (req.nonce.length > NONCE_SIZE) throw new ConnectError(`nonce is ${req.nonce.length} bytes; at most ${NONCE_SIZE} are allowed`, Code.InvalidArgument);
      // Input rule 2: the platform type must name evidence.
      const t = req.platformType;
      if (t === PlatformType.UNSPECIFIED) throw new ConnectError("platform_type is required", Code.InvalidArgument);
      if (t === PlatformType.CLOUD) throw new ConnectError("PLATFORM_TYPE_CLOUD has no quote; call FetchCloudToken", Code.InvalidArgument);
      if (!(t in NAMES)) throw new ConnectError(`unknown platform_type ${t}`, Code.InvalidArgument);
      if (t === PlatformType.NO_CC) throw new ConnectError("PLATFORM_TYPE_NO_CC has no hardware evidence; the agent never returns canned evidence", Code.FailedPrecondition);
      // Platform rule: only evidence this machine has.
      const c = dev.caps;
      const have =
        (t === PlatformType.SNP && c.snp && dev.tsm) ||
        (t === PlatformType.TDX && c.tdx && dev.tsm) ||
        (t === PlatformType.VTPM && c.tpm && dev.vtpm) ||
        (t === PlatformType.SNP_VTPM && c.snp && c.tpm && dev.tsm && dev.vtpm);
      if (!have) throw new ConnectError(`${NAMES[t]} is not available on this machine (platform ${c.name})`, Code.FailedPrecondition);
      return { quote: await deviceCall(ctx, (signal) => evidence(req, signal)) };
    },

    async fetchCloudToken(req: CloudTokenRequest, ctx: HandlerContext) {
      if (!dev.cloud) throw new ConnectError("no cloud attestation provider is configured", Code.FailedPrecondition);
      const cloud = dev.cloud;
      return { token: await deviceCall(ctx, (signal) => cloud.token(req.nonce, signal)) };
    },
  };
}

