/**
 * AMD SEV-SNP evidence: the raw ATTESTATION_REPORT (0x4A0 bytes, SEV-SNP ABI spec 56860 table 22)
 * decoded into go-sev-guest's `sevsnp.Report`, plus the certificate chain from the host's GHCB
 * cert table (configfs `auxblob`), as `sevsnp.Attestation`.
 */
import { create } from "@bufbuild/protobuf";
import {
  AttestationSchema,
  CertificateChainSchema,
  ReportSchema,
  SevProduct_SevProductName,
  type Attestation,
  type CertificateChain,
  type Report,
} from "../gen/sevsnp/sevsnp_pb.ts";

export const SNP_REPORT_SIZE = 0x4a0;
/** Bytes covered by the report signature. */
export const SNP_SIGNED_SIZE = 0x2a0;

/** Cert-table GUIDs (GHCB spec / go-sev-guest abi). */
export const CERT_GUID = {
  VCEK: "63da758d-e664-4564-adc5-f4b93be8accd",
  VLEK: "a8074bc2-a25a-483e-aae6-39c045a0b8a1",
  ASK: "4ab7b379-bbac-4fe4-a02f-05aef327c782",
  ARK: "c0b406a4-a803-4952-9743-3fb6014cd0ae",
} as const;

/** Byte ranges [lo, hi) reserved (must be zero) in every report version up to 5. */
const RESERVED: [number, number][] = [
  [0x18b, 0x1a0],
  [0x1eb, 0x1ec],
  [0x1ef, 0x1f0],
  [0x208, SNP_SIGNED_SIZE],
];

export class SnpFormatError extends Error {
  override name = "SnpFormatError";
}

/** Decodes a raw report; throws SnpFormatError on a wrong size or nonzero reserved bytes. */
export function parseSnpReport(raw: Uint8Array): Report {
  if (raw.length < SNP_REPORT_SIZE) throw new SnpFormatError(`SNP report is ${raw.length} bytes, want ${SNP_REPORT_SIZE}`);
  const b = Buffer.from(raw.buffer, raw.byteOffset, SNP_REPORT_SIZE);
  const u32 = (o: number) => b.readUInt32LE(o);
  const u64 = (o: number) => b.readBigUInt64LE(o);
  const bytes = (o: number, n: number) => new Uint8Array(b.subarray(o, o + n));
  const version = u32(0);
  if (version < 2) throw new SnpFormatError(`SNP report version ${version} unsupported`);
  if (u32(0x4c) !== 0) throw new SnpFormatError("SNP report reserved field at 0x4C is not zero");
  // Reserved in every version: a report is decoded losslessly or not at all, since the verifier
  // checks the signature over the re-encoded report. (Version-gated fields stay ignored below v3/v5.)
  for (const [lo, hi] of RESERVED)
    if (b.subarray(lo, hi).some((x) => x !== 0)) throw new SnpFormatError(`SNP report reserved bytes 0x${lo.toString(16).toUpperCase()}..0x${(hi - 1).toString(16).toUpperCase()} are not zero`);
  let cpuid1eaxFms = 0;
  if (version >= 3) {
    const family = b.readUInt8(0x188);
    const model = b.readUInt8(0x189);
    const stepping = b.readUInt8(0x18a) & 0xf;
    const extFamily = family > 0xf ? family - 0xf : 0;
    cpuid1eaxFms = ((extFamily & 0xff) << 20) | ((model >> 4) << 16) | (Math.min(family, 0xf) << 8) | ((model & 0xf) << 4) | stepping;
  }
  return create(ReportSchema, {
    version,
    guestSvn: u32(0x4),
    policy: u64(0x8),
    familyId: bytes(0x10, 16),
    imageId: bytes(0x20, 16),
    vmpl: u32(0x30),
    signatureAlgo: u32(0x34),
    currentTcb: u64(0x38),
    platformInfo: u64(0x40),
    signerInfo: u32(0x48),
    reportData: bytes(0x50, 64),
    measurement: bytes(0x90, 48),
    hostData: bytes(0xc0, 32),
    idKeyDigest: bytes(0xe0, 48),
    authorKeyDigest: bytes(0x110, 48),
    reportId: bytes(0x140, 32),
    reportIdMa: bytes(0x160, 32),
    reportedTcb: u64(0x180),
    chipId: bytes(0x1a0, 64),
    committedTcb: u64(0x1e0),
    currentBuild: b[0x1e8],
    currentMinor: b[0x1e9],
    currentMajor: b[0x1ea],
    committedBuild: b[0x1ec],
    committedMinor: b[0x1ed],
    committedMajor: b[0x1ee],
    launchTcb: u64(0x1f0),
    launchMitVector: version >= 5 ? u64(0x1f8) : 0n,
    currentMitVector: version >= 5 ? u64(0x200) : 0n,
    signature: bytes(0x2a0, 512),
    cpuid1eaxFms,
  });
}

/** Re-encodes a decoded report into its raw 0x4A0-byte form (inverse of parseSnpReport). */
export function serializeSnpReport(r: Report): Uint8Array {
  const b = Buffer.alloc(SNP_REPORT_SIZE);
  const put = (o: number, v: Uint8Array, n: number) => {
    if (v.length !== n) throw new SnpFormatError(`field at 0x${o.toString(16)} has ${v.length} bytes, want ${n}`);
    b.set(v, o);
  };
  b.writeUInt32LE(r.version, 0);
  b.writeUInt32LE(r.guestSvn, 4);
  b.writeBigUInt64LE(r.policy, 8);
  put(0x10, r.familyId, 16);
  put(0x20, r.imageId, 16);
  b.writeUInt32LE(r.vmpl, 0x30);
  b.writeUInt32LE(r.signatureAlgo, 0x34);
  b.writeBigUInt64LE(r.currentTcb, 0x38);
  b.writeBigUInt64LE(r.platformInfo, 0x40);
  b.writeUInt32LE(r.signerInfo, 0x48);
  put(0x50, r.reportData, 64);
  put(0x90, r.measurement, 48);
  put(0xc0, r.hostData, 32);
  put(0xe0, r.idKeyDigest, 48);
  put(0x110, r.authorKeyDigest, 48);
  put(0x140, r.reportId, 32);
  put(0x160, r.reportIdMa, 32);
  b.writeBigUInt64LE(r.reportedTcb, 0x180);
  if (r.version >= 3 && r.cpuid1eaxFms) {
    const f = r.cpuid1eaxFms;
    b[0x188] = ((f >> 8) & 0xf) + ((f >> 20) & 0xff);
    b[0x189] = (((f >> 16) & 0xf) << 4) | ((f >> 4) & 0xf);
    b[0x18a] = f & 0xf;
  }
  put(0x1a0, r.chipId, 64);
  b.writeBigUInt64LE(r.committedTcb, 0x1e0);
  b[0x1e8] = r.currentBuild;
  b[0x1e9] = r.currentMinor;
  b[0x1ea] = r.currentMajor;
  b[0x1ec] = r.committedBuild;
  b[0x1ed] = r.committedMinor;
  b[0x1ee] = r.committedMajor;
  b.writeBigUInt64LE(r.launchTcb, 0x1f0);
  if (r.version >= 5) {
    b.writeBigUInt64LE(r.launchMitVector, 0x1f8);
    b.writeBigUInt64LE(r.currentMitVector, 0x200);
  }
  put(0x2a0, r.signature, 512);
  return new Uint8Array(b);
}

function guidToString(g: Uint8Array): string {
  const h = Buffer.from(g).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function guidBytes(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s.replace(/-/g, ""), "hex"));
}

/**
 * Parses a GHCB cert table: 24-byte entries (GUID in canonical byte order, u32 LE offset, u32 LE
 * length) up to an all-zero entry, offsets relative to the table start. VCEK, VLEK, ASK and ARK
 * go to their own fields (ASK to ask_cert, ARK to ark_cert); anything else to extras.
 */
export function parseCertTable(table: Uint8Array): CertificateChain {
  const chain = create(CertificateChainSchema, {});
  const b = Buffer.from(table.buffer, table.byteOffset, table.length);
  for (let o = 0; ; o += 24) {
    if (o + 24 > b.length) throw new SnpFormatError("cert table has no terminating all-zero entry");
    const entry = b.subarray(o, o + 24);
    if (entry.every((x) => x === 0)) break;
    const guid = guidToString(entry.subarray(0, 16));
    const off = entry.readUInt32LE(16);
    const len = entry.readUInt32LE(20);
    if (off + len > b.length || off < o + 24) throw new SnpFormatError(`cert table entry ${guid} points outside the table`);
    const cert = new Uint8Array(b.subarray(off, off + len));
    switch (guid) {
      case CERT_GUID.VCEK: chain.vcekCert = cert; break;
      case CERT_GUID.VLEK: chain.vlekCert = cert; break;
      case CERT_GUID.ASK: chain.askCert = cert; break;
      case CERT_GUID.ARK: chain.arkCert = cert; break;
      default: chain.extras[guid] = cert;
    }
  }
  return chain;
}

/** Builds a cert table from GUID → DER entries (for fixtures and tests). */
export function buildCertTable(entries: [string, Uint8Array][]): Uint8Array {
  const head = 24 * (entries.length + 1);
  const total = head + entries.reduce((n, [, c]) => n + c.length, 0);
  const b = Buffer.alloc(total);
  let off = head;
  entries.forEach(([guid, cert], i) => {
    b.set(guidBytes(guid), i * 24);
    b.writeUInt32LE(off, i * 24 + 16);
    b.writeUInt32LE(cert.length, i * 24 + 20);
    b.set(cert, off);
    off += cert.length;
  });
  return new Uint8Array(b);
}

/** KDS product line from the report's CPUID family/model (go-sev-guest abi.SevProductFromCpuid1Eax). */
export function productOf(r: Report): { name: SevProduct_SevProductName; stepping: number } | undefined {
  if (!r.cpuid1eaxFms) return undefined;
  const f = r.cpuid1eaxFms;
  const family = ((f >> 8) & 0xf) + ((f >> 20) & 0xff);
  const model = (((f >> 16) & 0xf) << 4) | ((f >> 4) & 0xf);
  const stepping = f & 0xf;
  let name: SevProduct_SevProductName = SevProduct_SevProductName.SEV_PRODUCT_UNKNOWN;
  if (family === 0x19 && model < 0x10) name = SevProduct_SevProductName.SEV_PRODUCT_MILAN;
  else if (family === 0x19 && model >= 0x10 && model < 0x20) name = SevProduct_SevProductName.SEV_PRODUCT_GENOA;
  else if (family === 0x1a) name = SevProduct_SevProductName.SEV_PRODUCT_TURIN;
  return { name, stepping };
}

/** `sevsnp.Attestation` from configfs outputs. */
export function snpAttestation(outblob: Uint8Array, auxblob: Uint8Array | undefined): Attestation {
  const report = parseSnpReport(outblob);
  const certificateChain = auxblob && auxblob.length > 0 ? parseCertTable(auxblob) : create(CertificateChainSchema, {});
  const p = productOf(report);
  return create(AttestationSchema, {
    report,
    certificateChain,
    product: p ? { name: p.name, machineStepping: { value: p.stepping } } : undefined,
  });
}
