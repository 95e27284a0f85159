/**
 * verify/snp.ts, verify/tdx.ts and tsm/snp.ts: SEV-SNP reports and TDX quotes signed by test
 * chains made with openssl, each check failed by exactly one defect.
 */
import { X509Certificate, createPublicKey, generateKeyPairSync } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { AttestationSchema, CertificateChainSchema, SevProduct_SevProductName } from "../../../attestation-agent/gen/sevsnp/sevsnp_pb.ts";
import { CERT_GUID, SnpFormatError, buildCertTable, guidBytes, parseCertTable, parseSnpReport, productOf, serializeSnpReport, snpAttestation } from "../../../attestation-agent/tsm/snp.ts";
import { amdSignatureToP1363, verifySnpAttestation, verifySnpReportSignature } from "../../../attestation-agent/verify/snp.ts";
import { parseTdxQuote, verifyTdxQuote } from "../../../attestation-agent/verify/tdx.ts";
import { failsCheck } from "./verify-error.ts";
import { makePckChain, makeSnpChain, signedSnpReport, signedTdxQuote, type PckChain, type SnpChain } from "../fixtures/evidence.ts";

let chain: SnpChain;
let other: SnpChain;
let pck: PckChain;
let otherPck: PckChain;
beforeAll(async () => {
  [chain, other, pck, otherPck] = await Promise.all([makeSnpChain(), makeSnpChain(), makePckChain(), makePckChain()]);
});

const RD = new Uint8Array(64).fill(0xab);
const fails = failsCheck;

describe("tsm/snp.ts: ATTESTATION_REPORT and cert table", () => {
  it("parses every field at its ABI offset and serializes back to the same bytes (v3 and v5)", () => {
    const raw = signedSnpReport(RD, chain.vcekKey, { vmpl: 2 });
    const r = parseSnpReport(raw);
    expect([r.version, r.guestSvn, r.policy, r.vmpl, r.signatureAlgo, r.currentTcb, r.platformInfo, r.reportedTcb]).toEqual([3, 1, 0x30000n, 2, 1, 0xdb18000000000004n, 3n, 0xdb18000000000004n]);
    expect(Buffer.from(r.reportData)).toEqual(Buffer.from(RD));
    expect([r.currentBuild, r.currentMinor, r.currentMajor, r.committedTcb, r.launchTcb]).toEqual([7, 55, 1, 0xdb18000000000004n, 0xdb18000000000004n]);
    expect(Buffer.from(r.chipId)).toEqual(Buffer.alloc(64, 0xc1));
    expect(Buffer.from(r.reportId)).toEqual(Buffer.alloc(32, 0x11));
    expect(r.cpuid1eaxFms).toBe(0xa10f11); // family 19h (0xf + 0xa), model 11h, stepping 1
    expect(Buffer.from(serializeSnpReport(r))).toEqual(Buffer.from(raw));
    const b = Buffer.from(raw);
    b.writeUInt32LE(5, 0);
    b.writeBigUInt64LE(0x1122n, 0x1f8);
    b.writeBigUInt64LE(0x3344n, 0x200);
    b.writeUInt32LE(0x55, 0x48);
    b.fill(0x66, 0xc0, 0xe0);
    const v5 = parseSnpReport(b);
    expect([v5.launchMitVector, v5.currentMitVector, v5.signerInfo]).toEqual([0x1122n, 0x3344n, 0x55]);
    expect(Buffer.from(v5.hostData)).toEqual(Buffer.alloc(32, 0x66));
    expect(Buffer.from(serializeSnpReport(v5))).toEqual(b);
    const v2 = Buffer.from(raw);
    v2.writeUInt32LE(2, 0);
    v2.fill(0, 0x188, 0x18b);
    expect(parseSnpReport(v2).cpuid1eaxFms).toBe(0);
    expect(parseSnpReport(v2).launchMitVector).toBe(0n);
  });

  it("fields that exist only in later versions are neither read nor written for earlier ones", () => {
    const v2 = Buffer.from(signedSnpReport(RD, chain.vcekKey));
    v2.writeUInt32LE(2, 0); // CPUID bytes at 0x188 are reserved in v2: ignored
    const r2 = parseSnpReport(v2);
    expect(r2.cpuid1eaxFms).toBe(0);
    const v3 = Buffer.from(signedSnpReport(RD, chain.vcekKey));
    v3.writeBigUInt64LE(0x77n, 0x1f8); // mitigation vectors are v5 fields
    v3.writeBigUInt64LE(0x88n, 0x200);
    const r3 = parseSnpReport(v3);
    expect([r3.launchMitVector, r3.currentMitVector]).toEqual([0n, 0n]);
    r3.launchMitVector = 5n;
    r3.currentMitVector = 6n;
    const out3 = Buffer.from(serializeSnpReport(r3));
    expect([out3.readBigUInt64LE(0x1f8), out3.readBigUInt64LE(0x200)]).toEqual([0n, 0n]);
    r2.cpuid1eaxFms = 0xa10f11;
    expect(Buffer.from(serializeSnpReport(r2)).subarray(0x188, 0x18b)).toEqual(Buffer.alloc(3));
    // A family below 0xF has no extended family.
    const old = Buffer.from(signedSnpReport(RD, chain.vcekKey));
    old[0x188] = 0x06;
    old[0x189] = 0x55;
    old[0x18a] = 0x02;
    expect(parseSnpReport(old).cpuid1eaxFms).toBe((5 << 16) | (6 << 8) | (5 << 4) | 2);
    expect(Buffer.from(serializeSnpReport(parseSnpReport(old))).subarray(0x188, 0x18b)).toEqual(Buffer.from([0x06, 0x55, 0x02]));
  });

  it("every identity field round-trips at its own offset", () => {
    const b = Buffer.from(signedSnpReport(RD, chain.vcekKey));
    const fields: [number, number, string][] = [[0x10, 16, "familyId"], [0x20, 16, "imageId"], [0xe0, 48, "idKeyDigest"], [0x110, 48, "authorKeyDigest"], [0x160, 32, "reportIdMa"], [0xc0, 32, "hostData"]];
    fields.forEach(([off, n], i) => {
      b.fill(0xa0 + i, off, off + n);
    });
    const r = parseSnpReport(b);
    fields.forEach(([, n, name], i) => {
      expect([name, Buffer.from((r as unknown as Record<string, Uint8Array>)[name]!)]).toEqual([name, Buffer.alloc(n, 0xa0 + i)]);
    });
    expect(Buffer.from(serializeSnpReport(r))).toEqual(b);
  });

  it("rejects a short report, version < 2, a nonzero reserved field, a field of the wrong length", () => {
    const raw = signedSnpReport(RD, chain.vcekKey);
    expect(() => parseSnpReport(raw.subarray(0, 0x49f))).toThrow(new SnpFormatError("SNP report is 1183 bytes, want 1184"));
    const v1 = Buffer.from(raw);
    v1.writeUInt32LE(1, 0);
    expect(() => parseSnpReport(v1)).toThrow("SNP report version 1 unsupported");
    const res = Buffer.from(raw);
    res[0x4f] = 1;
    expect(() => parseSnpReport(res)).toThrow("reserved field at 0x4C is not zero");
    const r = parseSnpReport(raw);
    r.measurement = new Uint8Array(47);
    expect(() => serializeSnpReport(r)).toThrow("field at 0x90 has 47 bytes, want 48");
  });

  it("product from CPUID: Milan, Genoa, Turin, unknown", () => {
    const at = (family: number, model: number) => {
      const b = Buffer.from(signedSnpReport(RD, chain.vcekKey));
      b[0x188] = family;
      b[0x189] = model;
      b[0x18a] = 0x2;
      return productOf(parseSnpReport(b));
    };
    expect(at(0x19, 0x01)).toEqual({ name: SevProduct_SevProductName.SEV_PRODUCT_MILAN, stepping: 2 });
    expect(at(0x19, 0x0f)?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_MILAN);
    expect(at(0x19, 0x10)?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_GENOA);
    expect(at(0x19, 0x1f)?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_GENOA);
    expect(at(0x19, 0x20)?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_UNKNOWN);
    expect(at(0x1a, 0x02)?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_TURIN);
    expect(at(0x1a, 0x11)?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_TURIN);
    expect(at(0x17, 0x31)?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_UNKNOWN);
    expect(at(0x0f, 0x01)?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_UNKNOWN);
    const none = parseSnpReport(signedSnpReport(RD, chain.vcekKey));
    none.cpuid1eaxFms = 0;
    expect(productOf(none)).toBeUndefined();
  });

  it("cert table: GUIDs to their fields, others to extras; a missing terminator or an entry outside the table is refused", () => {
    const extra = "ecae0c0f-9502-43b1-afa2-0ae2e0d565b6";
    const t = buildCertTable([[CERT_GUID.VCEK, Buffer.from("v")], [CERT_GUID.VLEK, Buffer.from("l")], [CERT_GUID.ASK, Buffer.from("s")], [CERT_GUID.ARK, Buffer.from("r")], [extra, Buffer.from("x")]]);
    expect(Buffer.from(t.subarray(0, 24)).toString("hex")).toBe(`63da758de6644564adc5f4b93be8accd${"90000000"}01000000`);
    const c = parseCertTable(t);
    expect([c.vcekCert, c.vlekCert, c.askCert, c.arkCert, c.extras[extra]!].map((x) => Buffer.from(x).toString())).toEqual(["v", "l", "s", "r", "x"]);
    const unterminated = Buffer.from(buildCertTable([[CERT_GUID.VCEK, Buffer.from("vv")]]));
    unterminated.copy(unterminated, 24, 0, 24); // the terminator becomes a second entry; then the table ends
    expect(() => parseCertTable(unterminated)).toThrow("cert table has no terminating all-zero entry");
    const out = Buffer.from(buildCertTable([[CERT_GUID.VCEK, Buffer.from("vv")]]));
    out.writeUInt32LE(out.length - 1, 20);
    expect(() => parseCertTable(out)).toThrow(`cert table entry ${CERT_GUID.VCEK} points outside the table`);
    const inside = Buffer.from(buildCertTable([[CERT_GUID.VCEK, Buffer.from("vv")]]));
    inside.writeUInt32LE(8, 16); // points into the entry list itself
    expect(() => parseCertTable(inside)).toThrow(/points outside the table/);
    expect(parseCertTable(buildCertTable([]))).toEqual(create(CertificateChainSchema, {})); // just the terminator
    expect(new SnpFormatError("x").name).toBe("SnpFormatError");
    const exact = Buffer.from(buildCertTable([[CERT_GUID.VCEK, Buffer.from("vv")]]));
    expect(Buffer.from(parseCertTable(exact).vcekCert).toString()).toBe("vv"); // ends exactly at the table's end
    expect(Buffer.from(guidBytes(CERT_GUID.ARK)).toString("hex")).toBe("c0b406a4a80349529743 3fb6014cd0ae".replace(" ", ""));
  });

  it("snpAttestation: report, chain from auxblob (empty without one), product", () => {
    const raw = signedSnpReport(RD, chain.vcekKey);
    const a = snpAttestation(raw, buildCertTable([[CERT_GUID.ARK, chain.ark]]));
    expect(Buffer.from(a.certificateChain!.arkCert)).toEqual(chain.ark);
    expect(a.product?.name).toBe(SevProduct_SevProductName.SEV_PRODUCT_GENOA);
    expect(a.product?.machineStepping?.value).toBe(1);
    expect(snpAttestation(raw, new Uint8Array(0)).certificateChain).toEqual(create(CertificateChainSchema, {}));
    expect(snpAttestation(raw, undefined).certificateChain).toEqual(create(CertificateChainSchema, {}));
  });
});

describe("verify/snp.ts", () => {
  const att = (over: Partial<{ vcek: Uint8Array; ask: Uint8Array; ark: Uint8Array; vlek: Uint8Array; raw: Uint8Array }> = {}) =>
    create(AttestationSchema, {
      report: parseSnpReport(over.raw ?? signedSnpReport(RD, chain.vcekKey)),
      certificateChain: { vcekCert: over.vcek ?? chain.vcek, askCert: over.ask ?? chain.ask, arkCert: over.ark ?? chain.ark, vlekCert: over.vlek ?? new Uint8Array(0) },
    });

  it("accepts the chain and signature, serialized or decoded, pinned or not, with the expected REPORT_DATA", () => {
    const v = verifySnpAttestation(toBinary(AttestationSchema, att()), { trustedArk: chain.ark, reportData: RD });
    expect(v.report.version).toBe(3);
    expect(verifySnpAttestation(att()).raw).toHaveLength(0x4a0);
    expect(verifySnpAttestation(att({ vcek: new Uint8Array(0), vlek: chain.vcek })).report.vmpl).toBe(0); // VLEK-signed
    // Certificates the host did not supply come from the relying party (PEM works too).
    const bare = create(AttestationSchema, { report: parseSnpReport(signedSnpReport(RD, chain.vcekKey)), certificateChain: {} });
    expect(verifySnpAttestation(bare, { trustedArk: chain.pem.ark, ask: chain.pem.ask, vcek: chain.pem.vcek }).report.vmpl).toBe(0);
    expect(verifySnpAttestation(att({ ark: other.ark }), { ark: chain.ark }).report.version).toBe(3);
  });

  it("SNP: each chain, signature and report-data defect fails its own check", () => {
    fails(() => verifySnpAttestation(new Uint8Array([0xff, 0xff])), "format", /^format: not a sevsnp.Attestation: /);
    fails(() => verifySnpAttestation(create(AttestationSchema, {})), "format", "format: no report");
    fails(() => verifySnpAttestation(att({ ark: new Uint8Array(0) })), "chain", "chain: no ARK certificate");
    fails(() => verifySnpAttestation(att({ ask: new Uint8Array(0) })), "chain", "chain: no ASK certificate");
    fails(() => verifySnpAttestation(att({ vcek: new Uint8Array(0) })), "chain", "chain: no VCEK certificate");
    fails(() => verifySnpAttestation(att({ ask: new Uint8Array([1, 2, 3]) })), "chain", /^chain: ASK certificate unreadable: /);
    fails(() => verifySnpAttestation(att(), { trustedArk: other.ark }), "chain", "chain: ARK is not the trusted ARK");
    fails(() => verifySnpAttestation(att(), { trustedArk: new Uint8Array([1]) }), "chain", /^chain: trusted ARK certificate unreadable: /);
    fails(() => verifySnpAttestation(att({ ark: chain.ask })), "chain", "chain: ARK is not self-signed");
    fails(() => verifySnpAttestation(att({ ark: other.ark })), "chain", "chain: ASK is not signed by the ARK");
    fails(() => verifySnpAttestation(att({ vcek: other.vcek })), "chain", "chain: VCEK is not signed by the ASK");
    fails(() => verifySnpAttestation(att({ raw: signedSnpReport(RD, other.vcekKey) })), "signature", "signature: SNP report signature does not verify under the VCEK");
    fails(() => verifySnpAttestation(att(), { reportData: new Uint8Array(64) }), "report-data", "report-data: REPORT_DATA differs from the expected value");
    const algo = Buffer.from(signedSnpReport(RD, chain.vcekKey));
    algo.writeUInt32LE(2, 0x34);
    fails(() => verifySnpReportSignature(algo, new X509Certificate(chain.vcek)), "signature", "signature: signature algorithm 2 is not ECDSA P-384 SHA-384");
    fails(() => verifySnpReportSignature(signedSnpReport(RD, chain.vcekKey), generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey), "signature", "signature: VCEK key is not EC P-384");
    fails(() => verifySnpReportSignature(signedSnpReport(RD, chain.vcekKey), generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey), "signature", "signature: VCEK key is not EC P-384");
    expect(() => verifySnpReportSignature(signedSnpReport(RD, chain.vcekKey), createPublicKey(chain.vcekKey))).not.toThrow();
  });

  it("AMD's signature layout: R at 0, S at 72, little-endian, 48 significant bytes each", () => {
    const sig = new Uint8Array(512);
    sig.set([1, 2, 3], 0);
    sig.set([4, 5, 6], 72);
    sig[48] = 0xee; // beyond the 48 significant bytes of R: ignored
    const p = amdSignatureToP1363(sig);
    expect(p.length).toBe(96);
    expect(p.subarray(45, 48).toString("hex")).toBe("030201");
    expect(p.subarray(93, 96).toString("hex")).toBe("060504");
    expect(p.subarray(0, 45).every((x) => x === 0)).toBe(true);
  });
});

describe("verify/tdx.ts", () => {
  const q4 = () => Buffer.from(signedTdxQuote(RD, pck));
  /** Offset of the signature data (after the signed part and its length) for a v4 quote. */
  const SD = 48 + 584 + 4;

  it("parses v4 and v5 (TDX 1.0 body) quotes and verifies them, with or without a pinned root", () => {
    for (const version of [4, 5] as const) {
      const q = verifyTdxQuote(signedTdxQuote(RD, pck, version), { trustedRoot: pck.rootPem, reportData: RD });
      expect([q.version, q.teeType, q.body.length]).toEqual([version, 0x81, 584]);
      expect(Buffer.from(q.reportData)).toEqual(Buffer.from(RD));
      expect(Buffer.from(q.body.subarray(0x88, 0x88 + 48))).toEqual(Buffer.alloc(48, 0x22));
      expect(q.pckChainPem).toBe(pck.pckPem + pck.rootPem);
      expect(q.qeAuthData).toEqual(new Uint8Array(32).fill(0x5a));
    }
    expect(verifyTdxQuote(q4(), { trustedRoot: pck.root }).version).toBe(4);
    expect(verifyTdxQuote(q4()).version).toBe(4);
  });

  it("a v5 quote with a TDX 1.5 body (type 3, 648 bytes) puts REPORTDATA at 0x23E", () => {
    const q = q4();
    const body = Buffer.concat([q.subarray(48, 48 + 584), Buffer.alloc(64, 0x77)]);
    const desc = Buffer.alloc(6);
    desc.writeUInt16LE(3, 0);
    desc.writeUInt32LE(648, 2);
    const head = Buffer.from(q.subarray(0, 48));
    head.writeUInt16LE(5, 0);
    const v5 = Buffer.concat([head, desc, body, q.subarray(48 + 584)]);
    const p = parseTdxQuote(v5);
    expect([p.version, p.body.length]).toEqual([5, 648]);
    expect(Buffer.from(p.reportData)).toEqual(Buffer.from(RD));
    expect(v5.subarray(0x23e, 0x23e + 64)).toEqual(Buffer.from(RD));
  });

  it("each structural defect fails parsing", () => {
    const bad = (mut: (b: Buffer) => Buffer | void, msg: RegExp | string) => {
      const b = q4();
      fails(() => parseTdxQuote((mut(b) as Buffer | undefined) ?? b), "format", msg);
    };
    bad((b) => b.subarray(0, 47), "format: TDX quote truncated in header (47 < 48 bytes)");
    bad((b) => void b.writeUInt32LE(0, 4), "format: TEE type 0x0 is not TDX");
    bad((b) => void b.writeUInt16LE(3, 2), "format: attestation key type 3 is not ECDSA P-256");
    bad((b) => void b.writeUInt16LE(3, 0), "format: quote version 3 unsupported");
    bad((b) => void b.writeUInt16LE(6, 0), "format: quote version 6 unsupported");
    const v5 = (type: number, size: number) => (b: Buffer) => {
      b.writeUInt16LE(5, 0);
      const d = Buffer.alloc(6);
      d.writeUInt16LE(type, 0);
      d.writeUInt32LE(size, 2);
      return Buffer.concat([b.subarray(0, 48), d, b.subarray(48)]);
    };
    bad(v5(2, 648), "format: v5 body type 2 with size 648 is not a TD report body");
    bad(v5(3, 584), "format: v5 body type 3 with size 584 is not a TD report body");
    bad(v5(1, 584), "format: v5 body type 1 with size 584 is not a TD report body");
    bad((b) => { b.writeUInt16LE(5, 0); return b.subarray(0, 50); }, "format: TDX quote truncated in v5 body descriptor (50 < 54 bytes)");
    bad((b) => b.subarray(0, SD - 1), `format: TDX quote truncated in signed data length (${SD - 1} < ${SD} bytes)`);
    bad((b) => void b.writeUInt32LE(b.length, SD - 4), /^format: TDX quote truncated in signature data/);
    bad((b) => { b.writeUInt32LE(133, SD - 4); return b.subarray(0, SD + 133); }, "format: signature data of 133 bytes is too short");
    bad((b) => void b.writeUInt16LE(5, SD + 128), "format: certification data type 5 is not 6 (QE report)");
    bad((b) => void b.writeUInt32LE(b.length, SD + 130), "format: certification data overruns the signature data");
    const inner = SD + 128 + 6 + 448 + 2 + 32;
    bad((b) => void b.writeUInt16LE(4, inner), "format: inner certification data type 4 is not 5 (PCK chain)");
    bad((b) => void b.writeUInt32LE(b.length, inner + 2), "format: PCK chain overruns the certification data");
  });

  it("reads inside the certification data only; exact boundaries; trailing NULs after the PEM are dropped", () => {
    const certHead = SD + 128;
    const qe = certHead + 6;
    const inner = qe + 448 + 2 + 32;
    // Signature data of exactly the minimum 134 bytes: certification data type 6 of size 0.
    const min = q4().subarray(0, SD + 134);
    min.writeUInt32LE(134, SD - 4);
    min.writeUInt32LE(0, certHead + 2);
    fails(() => parseTdxQuote(min), "format", "format: certification data of 0 bytes ends inside the QE report");
    const shortAuth = q4();
    shortAuth.writeUInt16LE(0xffff, qe + 448); // auth data length past the certification data
    fails(() => parseTdxQuote(shortAuth), "format", /^format: certification data of \d+ bytes ends inside the QE auth data$/);
    // PCK chain size one byte more than there is: rejected; exactly what there is: accepted.
    const exact = q4();
    const size = exact.readUInt32LE(inner + 2);
    exact.writeUInt32LE(size + 1, inner + 2);
    fails(() => parseTdxQuote(exact), "format", "format: PCK chain overruns the certification data");
    exact.writeUInt32LE(size, inner + 2);
    expect(parseTdxQuote(exact).pckChainPem).toBe(pck.pckPem + pck.rootPem);
    // NUL padding after the PEM (and NULs inside it are kept).
    const padded = signedTdxQuote(RD, { ...pck, pckPem: `${pck.pckPem}\0\0`, rootPem: `${pck.rootPem}\0\0\0` });
    expect(parseTdxQuote(padded).pckChainPem).toBe(`${pck.pckPem}\0\0${pck.rootPem}`);
    expect(verifyTdxQuote(padded).version).toBe(4);
    fails(() => verifyTdxQuote(signedTdxQuote(RD, { ...pck, pckPem: "no certificates here", rootPem: "" })), "chain", "chain: PCK chain has 0 certificate(s)");
  });

  it("certification data bounds, byte exact: QE report, auth data, inner header", () => {
    const certHead = SD + 128;
    const qe = certHead + 6;
    /** The quote cut so that its certification data is `size` bytes (signature-data length adjusted). */
    const cut = (size: number) => {
      const b = Buffer.from(q4().subarray(0, qe + size));
      b.writeUInt32LE(128 + 6 + size, SD - 4);
      b.writeUInt32LE(size, certHead + 2);
      return b;
    };
    fails(() => parseTdxQuote(cut(449)), "format", "format: certification data of 449 bytes ends inside the QE report");
    // QE report, signature, auth length and 32 bytes of auth data, then only 3 of the 6 inner-header bytes.
    fails(() => parseTdxQuote(cut(448 + 2 + 32 + 3)), "format", "format: certification data of 485 bytes ends inside the QE auth data");
    // The inner header ends exactly at the end: an empty PCK chain parses, and fails the chain check.
    const empty = cut(448 + 2 + 32 + 6);
    empty.writeUInt32LE(0, qe + 448 + 2 + 32 + 2);
    expect(parseTdxQuote(empty).pckChainPem).toBe("");
    fails(() => verifyTdxQuote(empty), "chain", "chain: PCK chain has 0 certificate(s)");
  });

  it("each signature and chain defect fails its own check", () => {
    const flip = (off: number) => {
      const b = q4();
      b[off]! ^= 1;
      return b;
    };
    fails(() => verifyTdxQuote(flip(48 + 520)), "signature", "signature: quote signature does not verify under its attestation key");
    fails(() => verifyTdxQuote(flip(SD + 128 + 6 + 384)), "qe-report", "qe-report: QE report signature does not verify under the PCK");
    fails(() => verifyTdxQuote(q4(), { trustedRoot: otherPck.rootPem }), "chain", "chain: PCK chain does not end at the trusted root");
    fails(() => verifyTdxQuote(q4(), { reportData: new Uint8Array(64) }), "report-data", "report-data: REPORTDATA differs from the expected value");
    // A QE report that does not bind the attestation key (first half) or has nonzero padding (second half),
    // re-signed by the PCK so only the binding check can fail.
    for (const off of [320, 383]) {
      const b = q4();
      const qe = SD + 128 + 6;
      b[qe + off]! ^= 1;
      const { sign } = require("node:crypto") as typeof import("node:crypto");
      sign("sha256", b.subarray(qe, qe + 384), { key: pck.pckKey, dsaEncoding: "ieee-p1363" }).copy(b, qe + 384);
      fails(() => verifyTdxQuote(b), "qe-report", "qe-report: QE report does not bind the attestation key");
    }
    // A chain of one certificate, a root that is not self-signed, a broken link.
    const withChain = (pem: string) => signedTdxQuote(RD, { ...pck, pckPem: pem, rootPem: "" });
    fails(() => verifyTdxQuote(withChain(pck.pckPem)), "chain", "chain: PCK chain has 1 certificate(s)");
    fails(() => verifyTdxQuote(withChain(pck.pckPem + pck.pckPem)), "chain", "chain: root is not self-signed");
    fails(() => verifyTdxQuote(withChain(pck.pckPem + otherPck.rootPem)), "chain", "chain: PCK chain link 0 does not verify");
  });
});
