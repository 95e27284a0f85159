/**
 * Verification of SEV-SNP evidence (`sevsnp.Attestation` or a raw report): the report signature
 * (ECDSA P-384 over bytes 0..0x29F, R and S little-endian) under the VCEK, and the chain
 * VCEK ← ASK ← ARK (ARK self-signed, optionally pinned to a trusted ARK).
 */
import { X509Certificate, createPublicKey, verify as cryptoVerify } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { AttestationSchema, type Attestation, type Report } from "../gen/sevsnp/sevsnp_pb.ts";
import { SNP_SIGNED_SIZE, serializeSnpReport } from "../tsm/snp.ts";
import { VerifyError } from "./tpm.ts";

function cert(der: Uint8Array | string | undefined, what: string): X509Certificate {
  if (!der || der.length === 0) throw new VerifyError("chain", `no ${what} certificate`);
  try {
    return new X509Certificate(typeof der === "string" ? der : Buffer.from(der));
  } catch (e) {
    throw new VerifyError("chain", `${what} certificate unreadable: ${(e as Error).message}`);
  }
}

/** AMD's signature layout → IEEE P1363 r‖s (big-endian, 48 bytes each). */
export function amdSignatureToP1363(sig: Uint8Array): Buffer {
  const r = Buffer.from(sig.subarray(0, 48)).reverse();
  const s = Buffer.from(sig.subarray(72, 72 + 48)).reverse();
  return Buffer.concat([r, s]);
}

export interface SnpTrust {
  /** Override the evidence's certificates (DER or PEM). */
  vcek?: Uint8Array | string;
  ask?: Uint8Array | string;
  ark?: Uint8Array | string;
  /** The ARK the relying party trusts; the chain must end at exactly this certificate. */
  trustedArk?: Uint8Array | string;
  /** When set, REPORT_DATA must equal it. */
  reportData?: Uint8Array;
}

export interface VerifiedSnp {
  report: Report;
  raw: Uint8Array;
}

/** Verifies a `sevsnp.Attestation` (serialized or decoded). */
export function verifySnpAttestation(evidence: Uint8Array | Attestation, trust: SnpTrust = {}): VerifiedSnp {
  let att: Attestation;
  try {
    att = evidence instanceof Uint8Array ? fromBinary(AttestationSchema, evidence) : evidence;
  } catch (e) {
    throw new VerifyError("format", `not a sevsnp.Attestation: ${(e as Error).message}`);
  }
  if (!att.report) throw new VerifyError("format", "no report");
  const chain = att.certificateChain;
  // Without an ARK in the evidence (no host cert table), the relying party's trusted ARK is the root.
  const ark = cert(trust.ark ?? (chain?.arkCert?.length ? chain.arkCert : trust.trustedArk), "ARK");
  const ask = cert(trust.ask ?? chain?.askCert, "ASK");
  const vcek = cert(trust.vcek ?? (chain?.vcekCert?.length ? chain.vcekCert : chain?.vlekCert), "VCEK");
  if (trust.trustedArk) {
    const pinned = cert(trust.trustedArk, "trusted ARK");
    if (!pinned.raw.equals(ark.raw)) throw new VerifyError("chain", "ARK is not the trusted ARK");
  }
  if (!ark.verify(ark.publicKey)) throw new VerifyError("chain", "ARK is not self-signed");
  if (!ask.verify(ark.publicKey)) throw new VerifyError("chain", "ASK is not signed by the ARK");
  if (!vcek.verify(ask.publicKey)) throw new VerifyError("chain", "VCEK is not signed by the ASK");
  const raw = serializeSnpReport(att.report);
  verifySnpReportSignature(raw, vcek);
  if (trust.reportData && Buffer.compare(Buffer.from(att.report.reportData), Buffer.from(trust.reportData)) !== 0)
    throw new VerifyError("report-data", "REPORT_DATA differs from the expected value");
  return { report: att.report, raw };
}

/** Checks a raw report's signature under a VCEK (certificate or public key). */
export function verifySnpReportSignature(raw: Uint8Array, vcek: X509Certificate | ReturnType<typeof createPublicKey>): void {
  const key = vcek instanceof X509Certificate ? vcek.publicKey : vcek;
  if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "secp384r1") throw new VerifyError("signature", "VCEK key is not EC P-384");
  const algo = Buffer.from(raw).readUInt32LE(0x34);
  if (algo !== 1) throw new VerifyError("signature", `signature algorithm ${algo} is not ECDSA P-384 SHA-384`);
  // R and S are 48 bytes zero-extended to 72; the rest of the 512-byte field is zero (unsigned bytes, so checked here).
  const sig = raw.subarray(0x2a0, 0x2a0 + 512);
  if (sig.subarray(48, 72).some((x) => x !== 0) || sig.subarray(120).some((x) => x !== 0)) throw new VerifyError("signature", "signature field has nonzero bytes beyond R and S");
  const ok = cryptoVerify("sha384", raw.subarray(0, SNP_SIGNED_SIZE), { key, dsaEncoding: "ieee-p1363" }, amdSignatureToP1363(raw.subarray(0x2a0, 0x2a0 + 512)));
  if (!ok) throw new VerifyError("signature", "SNP report signature does not verify under the VCEK");
}
