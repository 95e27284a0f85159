/**
 * Structural and signature verification of an Intel TDX quote (v4, or v5 with a TDX 1.0/1.5
 * body): the attestation-key signature over header‖body, the QE report signature under the PCK
 * certificate, the QE report's binding of the attestation key, and the PCK chain to a root.
 * TCB status and QE identity need Intel PCS collateral and are out of scope.
 */
import { X509Certificate, createHash, createPublicKey, verify as cryptoVerify, type KeyObject } from "node:crypto";
import { VerifyError } from "./tpm.ts";

export interface TdxQuote {
  version: number;
  teeType: number;
  body: Uint8Array;
  reportData: Uint8Array;
  signedBytes: Uint8Array;
  signature: Uint8Array;
  attestationKey: Uint8Array;
  qeReport: Uint8Array;
  qeReportSignature: Uint8Array;
  qeAuthData: Uint8Array;
  pckChainPem: string;
}

const HEADER = 48;

/** Splits a quote into its parts; throws VerifyError("format") on any inconsistency. */
export function parseTdxQuote(q: Uint8Array): TdxQuote {
  const b = Buffer.from(q.buffer, q.byteOffset, q.length);
  const need = (n: number, what: string) => {
    if (b.length < n) throw new VerifyError("format", `TDX quote truncated in ${what} (${b.length} < ${n} bytes)`);
  };
  need(HEADER, "header");
  const version = b.readUInt16LE(0);
  const akType = b.readUInt16LE(2);
  const teeType = b.readUInt32LE(4);
  if (teeType !== 0x81) throw new VerifyError("format", `TEE type 0x${teeType.toString(16)} is not TDX`);
  if (akType !== 2) throw new VerifyError("format", `attestation key type ${akType} is not ECDSA P-256`);
  let bodyStart = HEADER;
  let bodySize = 584;
  if (version === 5) {
    need(HEADER + 6, "v5 body descriptor");
    const bodyType = b.readUInt16LE(HEADER);
    bodySize = b.readUInt32LE(HEADER + 2);
    if ((bodyType === 2 && bodySize !== 584) || (bodyType === 3 && bodySize !== 648) || (bodyType !== 2 && bodyType !== 3))
      throw new VerifyError("format", `v5 body type ${bodyType} with size ${bodySize} is not a TD report body`);
    bodyStart = HEADER + 6;
  } else if (version !== 4) throw new VerifyError("format", `quote version ${version} unsupported`);
  const bodyEnd = bodyStart + bodySize;
  need(bodyEnd + 4, "signed data length");
  const body = new Uint8Array(b.subarray(bodyStart, bodyEnd));
  const sigLen = b.readUInt32LE(bodyEnd);
  const sd = bodyEnd + 4;
  need(sd + sigLen, "signature data");
  if (sigLen < 64 + 64 + 6) throw new VerifyError("format", `signature data of ${sigLen} bytes is too short`);
  const signature = new Uint8Array(b.subarray(sd, sd + 64));
  const attestationKey = new Uint8Array(b.subarray(sd + 64, sd + 128));
  let o = sd + 128;
  const certType = b.readUInt16LE(o);
  const certSize = b.readUInt32LE(o + 2);
  o += 6;
  if (certType !== 6) throw new VerifyError("format", `certification data type ${certType} is not 6 (QE report)`);
  if (o + certSize > sd + sigLen) throw new VerifyError("format", "certification data overruns the signature data");
  // Every read below stays inside the certification data: QE report, its signature, auth data, inner header.
  const certEnd = o + certSize;
  const within = (n: number, what: string) => {
    if (n > certEnd) throw new VerifyError("format", `certification data of ${certSize} bytes ends inside the ${what}`);
  };
  within(o + 448 + 2, "QE report");
  const qeReport = new Uint8Array(b.subarray(o, o + 384));
  const qeReportSignature = new Uint8Array(b.subarray(o + 384, o + 448));
  o += 448;
  const authLen = b.readUInt16LE(o);
  within(o + 2 + authLen + 6, "QE auth data");
  const qeAuthData = new Uint8Array(b.subarray(o + 2, o + 2 + authLen));
  o += 2 + authLen;
  const innerType = b.readUInt16LE(o);
  const innerSize = b.readUInt32LE(o + 2);
  if (innerType !== 5) throw new VerifyError("format", `inner certification data type ${innerType} is not 5 (PCK chain)`);
  if (o + 6 + innerSize > certEnd) throw new VerifyError("format", "PCK chain overruns the certification data");
  const pckChainPem = b.subarray(o + 6, o + 6 + innerSize).toString("latin1").replace(/\0+$/, "");
  return {
    version,
    teeType,
    body,
    reportData: body.subarray(520, 584),
    signedBytes: new Uint8Array(b.subarray(0, bodyEnd)),
    signature,
    attestationKey,
    qeReport,
    qeReportSignature,
    qeAuthData,
    pckChainPem,
  };
}

// A changed bit in the key almost always leaves the curve; node:crypto then throws a TypeError.
function p256Key(raw64: Uint8Array): KeyObject {
  const x = Buffer.from(raw64.subarray(0, 32)).toString("base64url");
  const y = Buffer.from(raw64.subarray(32, 64)).toString("base64url");
  try {
    return createPublicKey({ key: { kty: "EC", crv: "P-256", x, y }, format: "jwk" });
  } catch (e) {
    throw new VerifyError("signature", `attestation key is not a P-256 point: ${(e as Error).message}`);
  }
}

function x509(der: string | Uint8Array, what: string): X509Certificate {
  try {
    return new X509Certificate(der);
  } catch (e) {
    throw new VerifyError("chain", `${what} unreadable: ${(e as Error).message}`);
  }
}

function splitPem(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((p, i) => x509(p, `PCK chain certificate ${i}`));
}

export interface TdxTrust {
  /** Root CA (PEM/DER) the PCK chain must end at; without it the chain's own root is used. */
  trustedRoot?: string | Uint8Array;
  reportData?: Uint8Array;
}

/** Verifies signatures and structure; returns the parsed quote. */
export function verifyTdxQuote(quote: Uint8Array, trust: TdxTrust = {}): TdxQuote {
  const q = parseTdxQuote(quote);
  const ak = p256Key(q.attestationKey);
  if (!cryptoVerify("sha256", q.signedBytes, { key: ak, dsaEncoding: "ieee-p1363" }, q.signature)) throw new VerifyError("signature", "quote signature does not verify under its attestation key");
  const chain = splitPem(q.pckChainPem);
  const leaf = chain[0];
  const last = chain[chain.length - 1];
  if (chain.length < 2 || !leaf || !last) throw new VerifyError("chain", `PCK chain has ${chain.length} certificate(s)`);
  const root = trust.trustedRoot ? x509(trust.trustedRoot, "trusted root") : last;
  if (!last.raw.equals(root.raw)) throw new VerifyError("chain", "PCK chain does not end at the trusted root");
  if (!root.verify(root.publicKey)) throw new VerifyError("chain", "root is not self-signed");
  for (let i = 0; i < chain.length - 1; i++) if (!chain[i]!.verify(chain[i + 1]!.publicKey)) throw new VerifyError("chain", `PCK chain link ${i} does not verify`); // !: i + 1 < chain.length
  if (!cryptoVerify("sha256", q.qeReport, { key: leaf.publicKey, dsaEncoding: "ieee-p1363" }, q.qeReportSignature)) throw new VerifyError("qe-report", "QE report signature does not verify under the PCK");
  const binding = createHash("sha256").update(q.attestationKey).update(q.qeAuthData).digest();
  if (!Buffer.from(q.qeReport.subarray(320, 352)).equals(binding) || !Buffer.from(q.qeReport.subarray(352, 384)).equals(Buffer.alloc(32)))
    throw new VerifyError("qe-report", "QE report does not bind the attestation key");
  if (trust.reportData && !Buffer.from(q.reportData).equals(Buffer.from(trust.reportData))) throw new VerifyError("report-data", "REPORTDATA differs from the expected value");
  return q;
}
