/**
 * Azure confidential VMs with a TDX paravisor (HCL), token from Microsoft Azure Attestation, as
 * cocos does it: report data = SHA-256(nonce) ‖ 0³², written to the vTPM NV index 0x01400002
 * (defined with owner read/write if needed); after the HCL refreshes, the HCL report is read from
 * NV 0x01400001; its TD report must bind the runtime claims (REPORTDATA[0:32] = SHA-256(claims))
 * and the claims must carry our report data; IMDS `POST /acc/tdquote` turns the TD report into a
 * quote; MAA `POST /attest/TdxVm?api-version=2025-06-01` returns the JWT.
 * Only the configured IMDS and MAA base URLs are contacted.
 */
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { TpmError, type TpmClient } from "../tpm/client.ts";
import { ALG, NV_ATTR, RH } from "../tpm/marshal.ts";
import { CloudError, type CloudTokenProvider } from "./provider.ts";

export const HCL_REPORT_NV = 0x01400001;
export const HCL_USER_DATA_NV = 0x01400002;
const HCL_HEADER = 0x20;
const HCL_HW_REPORT_MAX = 0x4a0;
const RUNTIME_DATA = HCL_HEADER + HCL_HW_REPORT_MAX;
const RUNTIME_CLAIMS = 0x14;
const TD_REPORT_SIZE = 0x400;
const TD_REPORT_DATA = 0x80;
export const HCL_REPORT_TYPE = { SNP: 2, TDX: 4 } as const;
const MAX_NONCE = 1024;

export interface HclReport {
  reportType: number;
  hashType: number;
  hwReport: Uint8Array;
  runtimeClaims: Uint8Array;
}

/** Parses the HCL report ("HCLA", version 2, request type 2) found at NV 0x01400001. */
export function parseHclReport(r: Uint8Array): HclReport {
  const b = Buffer.from(r.buffer, r.byteOffset, r.length);
  if (b.length < RUNTIME_DATA + RUNTIME_CLAIMS) throw new CloudError("internal", `HCL report is ${b.length} bytes`);
  if (b.toString("latin1", 0, 4) !== "HCLA") throw new CloudError("internal", "HCL report signature is not HCLA");
  if (b.readUInt32LE(4) !== 2) throw new CloudError("internal", `HCL report version ${b.readUInt32LE(4)} is not 2`);
  if (b.readUInt32LE(12) !== 2) throw new CloudError("internal", `HCL request type ${b.readUInt32LE(12)} is not 2`);
  const dataSize = b.readUInt32LE(RUNTIME_DATA);
  if (dataSize < RUNTIME_CLAIMS || RUNTIME_DATA + dataSize > b.length) throw new CloudError("internal", `HCL runtime data size ${dataSize} is invalid`);
  if (b.readUInt32LE(RUNTIME_DATA + 4) !== 1) throw new CloudError("internal", "HCL runtime data version is not 1");
  const reportType = b.readUInt32LE(RUNTIME_DATA + 8);
  if (reportType !== HCL_REPORT_TYPE.SNP && reportType !== HCL_REPORT_TYPE.TDX) throw new CloudError("internal", `HCL report type ${reportType} unknown`);
  const hashType = b.readUInt32LE(RUNTIME_DATA + 12);
  const claimsSize = b.readUInt32LE(RUNTIME_DATA + 16);
  if (RUNTIME_CLAIMS + claimsSize > dataSize) throw new CloudError("internal", "HCL runtime claims overrun the runtime data");
  const hwSize = reportType === HCL_REPORT_TYPE.TDX ? TD_REPORT_SIZE : HCL_HW_REPORT_MAX;
  const start = RUNTIME_DATA + RUNTIME_CLAIMS;
  return {
    reportType,
    hashType,
    hwReport: new Uint8Array(b.subarray(HCL_HEADER, HCL_HEADER + hwSize)),
    runtimeClaims: new Uint8Array(b.subarray(start, start + claimsSize)),
  };
}

/** Builds an HCL report (for fixtures): header, hardware report, runtime data with claims. */
export function buildHclReport(reportType: number, hwReport: Uint8Array, claims: Uint8Array): Uint8Array {
  const total = RUNTIME_DATA + RUNTIME_CLAIMS + claims.length;
  const b = Buffer.alloc(total);
  b.write("HCLA", 0, "latin1");
  b.writeUInt32LE(2, 4);
  b.writeUInt32LE(total, 8);
  b.writeUInt32LE(2, 12);
  b.set(hwReport, HCL_HEADER);
  b.writeUInt32LE(RUNTIME_CLAIMS + claims.length, RUNTIME_DATA);
  b.writeUInt32LE(1, RUNTIME_DATA + 4);
  b.writeUInt32LE(reportType, RUNTIME_DATA + 8);
  b.writeUInt32LE(1, RUNTIME_DATA + 12);
  b.writeUInt32LE(claims.length, RUNTIME_DATA + 16);
  b.set(claims, RUNTIME_DATA + RUNTIME_CLAIMS);
  return new Uint8Array(b);
}

/** REPORT_DATA for a token nonce: SHA-256(nonce) in the first 32 bytes, zeros after. */
export function azureReportData(nonce: Uint8Array): Uint8Array {
  const rd = new Uint8Array(64);
  rd.set(createHash("sha256").update(nonce).digest());
  return rd;
}

export interface AzureOptions {
  tpm: TpmClient;
  maaUrl: string;
  imdsUrl: string;
  /** Wait after writing the user data before reading the HCL report (the HCL refreshes it). */
  hclWaitMs?: number;
  timeoutMs?: number;
}

export class AzureTdxProvider implements CloudTokenProvider {
  readonly name = "azure-maa-tdx";
  private readonly o: Required<AzureOptions>;
  private tail: Promise<unknown> = Promise.resolve();
  constructor(o: AzureOptions) {
    this.o = { hclWaitMs: 3000, timeoutMs: 30_000, ...o };
  }

  private async post(base: string, route: string, body: unknown, signal: AbortSignal, what: string): Promise<Record<string, unknown>> {
    let res: Response;
    try {
      res = await fetch(new URL(route, base.endsWith("/") ? base : `${base}/`), {
        method: "POST",
        headers: { "content-type": "application/json", ...(what === "IMDS" ? { Metadata: "true" } : {}) },
        body: JSON.stringify(body),
        signal,
      });
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      throw new CloudError("unavailable", `${what} ${base}: ${(e as Error).message}`);
    }
    const text = await res.text();
    if (!res.ok) throw new CloudError(res.status >= 500 || res.status === 429 ? "unavailable" : "internal", `${what} answered ${res.status}: ${text.slice(0, 200)}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new CloudError("internal", `${what} answered with non-JSON`);
    }
  }

  /** Writes the user data NV index (defining it with owner read/write when absent or sized wrong). */
  private async writeUserData(rd: Uint8Array, signal: AbortSignal): Promise<void> {
    const tpm = this.o.tpm;
    const pub = await tpm.nvReadPublic(HCL_USER_DATA_NV, signal);
    if (pub && pub.dataSize !== rd.length) await tpm.nvUndefineSpace(RH.OWNER, HCL_USER_DATA_NV, signal);
    if (!pub || pub.dataSize !== rd.length)
      await tpm.nvDefineSpace(RH.OWNER, { index: HCL_USER_DATA_NV, nameAlg: ALG.SHA256, attributes: NV_ATTR.OWNERWRITE | NV_ATTR.OWNERREAD, dataSize: rd.length }, signal);
    await tpm.nvWrite(HCL_USER_DATA_NV, RH.OWNER, rd, signal);
  }

  token(nonce: Uint8Array, outer: AbortSignal): Promise<Uint8Array> {
    if (nonce.length > MAX_NONCE) return Promise.reject(new CloudError("invalid", `nonce is ${nonce.length} bytes, at most ${MAX_NONCE} for Azure`));
    // The user-data NV index is one slot per VM: one token flow at a time.
    const job = this.tail.then(() => this.flow(nonce, AbortSignal.any([outer, AbortSignal.timeout(this.o.timeoutMs)])));
    this.tail = job.catch(() => {});
    return job;
  }

  private async flow(nonce: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    const rd = azureReportData(nonce);
    try {
      await this.writeUserData(rd, signal);
      if (this.o.hclWaitMs > 0) await sleep(this.o.hclWaitMs, undefined, { signal });
      const hcl = parseHclReport(await this.o.tpm.nvReadAll(HCL_REPORT_NV, RH.OWNER, signal));
      if (hcl.reportType !== HCL_REPORT_TYPE.TDX) throw new CloudError("unavailable", "the HCL report is not a TDX report: this is not an Azure TDX VM");
      if (hcl.hashType !== 1) throw new CloudError("internal", `HCL runtime data hash type ${hcl.hashType} is not SHA-256`);
      const claimsHash = createHash("sha256").update(hcl.runtimeClaims).digest();
      if (!claimsHash.equals(Buffer.from(hcl.hwReport.subarray(TD_REPORT_DATA, TD_REPORT_DATA + 32))))
        throw new CloudError("internal", "the TD report does not bind the HCL runtime claims");
      let claims: Record<string, unknown>;
      try {
        claims = JSON.parse(new TextDecoder().decode(hcl.runtimeClaims).replace(/\0+$/, ""));
      } catch {
        throw new CloudError("internal", "HCL runtime claims are not JSON");
      }
      if (typeof claims["user-data"] === "string" && claims["user-data"].toLowerCase() !== Buffer.from(rd).toString("hex"))
        throw new CloudError("unavailable", "the HCL report does not carry our report data yet (stale HCL report)");
      const q = await this.post(this.o.imdsUrl, "acc/tdquote", { report: Buffer.from(hcl.hwReport).toString("base64url") }, signal, "IMDS");
      if (typeof q.quote !== "string" || !q.quote) throw new CloudError("internal", "IMDS returned no quote");
      const t = await this.post(
        this.o.maaUrl,
        "attest/TdxVm?api-version=2025-06-01",
        {
          quote: Buffer.from(q.quote, "base64url").toString("base64url"),
          runtimeData: { data: Buffer.from(hcl.runtimeClaims).toString("base64url"), dataType: "JSON" },
          ...(nonce.length > 0 ? { nonce: Buffer.from(nonce).toString("base64url") } : {}),
        },
        signal,
        "MAA",
      );
      if (typeof t.token !== "string" || !t.token) throw new CloudError("internal", "MAA returned no token");
      return new TextEncoder().encode(t.token);
    } catch (e) {
      if (e instanceof TpmError && (e.rc & 0xbf) === 0x8b) throw new CloudError("unavailable", `no Azure HCL report in the vTPM (${e.message})`);
      throw e;
    }
  }
}
