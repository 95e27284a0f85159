/**
 * Azure confidential VMs with SEV-SNP (vTPM + HCL), token from Microsoft Azure Attestation the way
 * edgelesssys/go-azguestattestation does it (cocos' FetchAzureToken):
 * 1. IMDS THIM: the VCEK and its chain (PEM).
 * 2. vTPM: the AK certificate (NV 0x01C101D0), the AK at 0x81000003, a SHA-256 quote over PCRs
 *    0-23 with the nonce, the HCL report (NV 0x01400001: SNP report + runtime claims).
 * 3. A decrypt-only RSA-2048 key in the NULL hierarchy whose authPolicy is PolicyPCR over those
 *    PCR values, certified by the AK.
 * 4. `POST {maa}/attest/AzureGuest?api-version=2020-10-01`; the answer is encrypted: its AES key is
 *    RSAES-encrypted to our PCR-bound key, decrypted in the TPM under a PolicyPCR session, then the
 *    JWT is AES-GCM-decrypted (AAD "Transport Key").
 */
import { createDecipheriv } from "node:crypto";
import { readFile } from "node:fs/promises";
import { TpmError, type TpmClient } from "../tpm/client.ts";
import { ALG, PCR_COUNT, RH, SE, Writer, policyPcrDigest, tpm2bPublic } from "../tpm/marshal.ts";
import { verifyQuote, akPublicKey } from "../verify/tpm.ts";
import { HCL_REPORT_NV, HCL_REPORT_TYPE, parseHclReport } from "./azure.ts";
import { stripEventLog } from "./eventlog.ts";
import { CloudError, type CloudTokenProvider } from "./provider.ts";

export const AZURE_AK_HANDLE = 0x81000003;
export const AZURE_AK_CERT_NV = 0x01c101d0;
const SNP_REPORT = 0x4a0;
const ALL = Array.from({ length: PCR_COUNT }, (_, i) => i);
const SHA256_ALL = [{ alg: ALG.SHA256, pcrs: ALL }];
export const MAX_AZURE_SNP_NONCE = 32;

/** Template of the PCR-bound encryption key (go-azguestattestation getEncryptionKeyTemplate). */
export function encKeyTemplate(authPolicy: Uint8Array): Uint8Array {
  return new Writer()
    .u16(ALG.RSA)
    .u16(ALG.SHA256)
    .u32(0x00020432) // fixedTPM|fixedParent|sensitiveDataOrigin|noDA|decrypt
    .tpm2b(authPolicy)
    .u16(ALG.NULL) // symmetric
    .u16(ALG.NULL) // scheme
    .u16(2048)
    .u32(0)
    .u16(0)
    .bytes();
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

export interface AzureSnpOptions {
  tpm: TpmClient;
  maaUrl: string;
  imdsUrl: string;
  eventLog?: string;
  timeoutMs?: number;
}

export class AzureSnpProvider implements CloudTokenProvider {
  readonly name = "azure-maa-snp";
  private readonly o: AzureSnpOptions & { timeoutMs: number };
  private tail: Promise<unknown> = Promise.resolve();
  constructor(o: AzureSnpOptions) {
    this.o = { timeoutMs: 30_000, ...o };
  }

  token(nonce: Uint8Array, outer: AbortSignal): Promise<Uint8Array> {
    if (nonce.length > MAX_AZURE_SNP_NONCE) return Promise.reject(new CloudError("invalid", `nonce is ${nonce.length} bytes, at most ${MAX_AZURE_SNP_NONCE} for Azure SNP`));
    const job = this.tail.then(() => this.flow(nonce, AbortSignal.any([outer, AbortSignal.timeout(this.o.timeoutMs)])));
    this.tail = job.catch(() => {});
    return job;
  }

  private async http(url: URL, init: RequestInit, what: string, signal: AbortSignal): Promise<Record<string, unknown>> {
    let res: Response;
    try {
      res = await fetch(url, { ...init, signal });
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      throw new CloudError("unavailable", `${what} ${url.origin}: ${(e as Error).message}`);
    }
    const text = await res.text();
    if (!res.ok) throw new CloudError(res.status >= 500 || res.status === 429 ? "unavailable" : "internal", `${what} answered ${res.status}: ${text.slice(0, 200)}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new CloudError("internal", `${what} answered with non-JSON`);
    }
  }

  private async flow(nonce: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    const tpm = this.o.tpm;
    const base = (u: string) => (u.endsWith("/") ? u : `${u}/`);
    const vcek = await this.http(new URL("metadata/THIM/amd/certification", base(this.o.imdsUrl)), { headers: { Metadata: "True" } }, "IMDS THIM", signal);
    if (typeof vcek.vcekCert !== "string" || typeof vcek.certificateChain !== "string" || !vcek.vcekCert || !vcek.certificateChain)
      throw new CloudError("internal", "IMDS THIM answer lacks vcekCert/certificateChain");
    let encKey: number | undefined;
    try {
      const akCert = await tpm.nvReadAll(AZURE_AK_CERT_NV, RH.OWNER, signal);
      const akPub = await tpm.readPublic(AZURE_AK_HANDLE, signal);
      if (!akPub) throw new CloudError("unavailable", "no Azure AK at 0x81000003: not an Azure confidential VM");
      const { values } = await tpm.pcrRead(ALG.SHA256, ALL, signal);
      const q = await tpm.quote(AZURE_AK_HANDLE, nonce, SHA256_ALL, signal);
      const verified = verifyQuote(akPublicKey(akPub), { quote: q.attest, rawSig: q.signature, hash: ALG.SHA256, pcrs: values }, nonce);
      const hclRaw = await tpm.nvReadAll(HCL_REPORT_NV, RH.OWNER, signal);
      const hcl = parseHclReport(hclRaw);
      if (hcl.reportType !== HCL_REPORT_TYPE.SNP) throw new CloudError("unavailable", "the HCL report is not an SNP report: this is not an Azure SNP VM");
      const snpReport = hclRaw.subarray(0x20, 0x20 + SNP_REPORT);
      const rt = hclRaw.subarray(0x20 + SNP_REPORT + 0x14);
      const nul = rt.indexOf(0);
      const runtimeData = nul < 0 ? rt : rt.subarray(0, nul);

      // The PCR-bound key: its policy is computed here, exactly as a trial PolicyPCR session would.
      const policy = policyPcrDigest(verified.info.pcrDigest, SHA256_ALL);
      const made = await tpm.createPrimary(RH.NULL, encKeyTemplate(policy), signal);
      encKey = made.handle;
      const cert = await tpm.certify(encKey, AZURE_AK_HANDLE, signal);
      let eventLog = new Uint8Array(0);
      if (this.o.eventLog) eventLog = await readFile(this.o.eventLog).then((b) => new Uint8Array(b), () => new Uint8Array(0));

      const proof = JSON.stringify({ SnpReport: Buffer.from(snpReport).toString("base64url"), VcekCertChain: b64(Buffer.from(vcek.vcekCert + vcek.certificateChain)) });
      const info = {
        AttestationProtocolVersion: "2.0",
        ClientPayload: { nonce: b64(nonce) },
        IsolationInfo: { Evidence: { Proof: b64(Buffer.from(proof)), RunTimeData: b64(runtimeData) }, Type: "SevSnp" },
        OSBuild: b64(Buffer.from("attestation-agent")),
        OSDistro: b64(Buffer.from("attestation-agent")),
        OSType: b64(Buffer.from("Linux")),
        OSVersionMajor: 0,
        OSVersionMinor: 0,
        TcgLogs: b64(stripEventLog(eventLog)),
        TpmInfo: {
          AikCert: b64(akCert),
          AikPub: b64(tpm2bPublic(akPub)),
          EncKeyCertifyInfo: b64(cert.attest),
          // MAA wants TPM2B_PUBLIC_KEY_RSA.buffer: the TPMT_SIGNATURE without alg, hash and size.
          EncKeyCertifyInfoSignature: b64(cert.signature.subarray(6)),
          EncKeyPub: b64(tpm2bPublic(made.publicArea)),
          PCRs: ALL.map((i) => ({ Digest: b64(values.get(i)!), Index: i })),
          PcrQuote: b64(q.attest),
          PcrSet: ALL,
          PcrSignature: b64(q.signature.subarray(6)),
        },
      };
      const body = JSON.stringify({ AttestationInfo: Buffer.from(JSON.stringify(info)).toString("base64url") });
      const res = await this.http(
        new URL("attest/AzureGuest?api-version=2020-10-01", base(this.o.maaUrl)),
        { method: "POST", headers: { "content-type": "application/json" }, body },
        "MAA",
        signal,
      );
      if (typeof res.token !== "string" || !res.token) throw new CloudError("internal", "MAA returned no token");
      let enc: { Jwt: string; EncryptedInnerKey: string; EncryptionParams: { Iv: string }; AuthenticationData: string };
      try {
        enc = JSON.parse(Buffer.from(res.token, "base64url").toString("utf8"));
      } catch {
        throw new CloudError("internal", "MAA token is not the expected encrypted envelope");
      }

      // The AES key is RSAES-encrypted to our key; decrypting needs a PolicyPCR session over the same PCRs.
      const session = await tpm.startPolicySession(SE.POLICY, signal);
      let aesKey: Uint8Array;
      try {
        await tpm.policyPcr(session, verified.info.pcrDigest, SHA256_ALL, signal);
        aesKey = await tpm.rsaDecrypt(encKey, session, Buffer.from(enc.EncryptedInnerKey, "base64"), signal);
      } finally {
        await tpm.flush(session).catch(() => {});
      }
      const iv = Buffer.from(enc.EncryptionParams.Iv, "base64");
      const tag = Buffer.from(enc.AuthenticationData, "base64");
      if (iv.length !== 12 || tag.length !== 16) throw new CloudError("internal", "MAA token envelope has a bad IV or tag length");
      try {
        const d = createDecipheriv(`aes-${aesKey.length * 8}-gcm` as "aes-256-gcm", aesKey, iv);
        d.setAAD(Buffer.from("Transport Key"));
        d.setAuthTag(tag);
        return new Uint8Array(Buffer.concat([d.update(Buffer.from(enc.Jwt, "base64")), d.final()]));
      } catch (e) {
        throw new CloudError("internal", `cannot decrypt the MAA token: ${(e as Error).message}`);
      }
    } catch (e) {
      if (e instanceof TpmError && (e.rc & 0xbf) === 0x8b) throw new CloudError("unavailable", `Azure vTPM object missing (${e.message}): not an Azure confidential VM`);
      throw e;
    } finally {
      if (encKey !== undefined) await tpm.flush(encKey).catch(() => {});
    }
  }
}
