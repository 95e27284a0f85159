/**
 * Issue 12 item 5: the evidence verifiers on published real-hardware samples (fixtures/hardware/,
 * sources and licences in its README), not only on our own encoders' output. Each sample
 * verifies, and a one-bit change in each part fails the check that owns that part.
 */
import { X509Certificate, createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { HCL_REPORT_TYPE, parseHclReport } from "../../../attestation-agent/cloud/azure.ts";
import { AttestationSchema, CertificateChainSchema, type Attestation } from "../../../attestation-agent/gen/sevsnp/sevsnp_pb.ts";
import { SnpFormatError, parseSnpReport } from "../../../attestation-agent/tsm/snp.ts";
import { verifyEvidence } from "../../../attestation-agent/verify/cli.ts";
import { verifySnpAttestation, verifySnpReportSignature } from "../../../attestation-agent/verify/snp.ts";
import { parseTdxQuote, verifyTdxQuote } from "../../../attestation-agent/verify/tdx.ts";
import { VerifyError } from "../../../attestation-agent/verify/tpm.ts";
import { failsCheck } from "./verify-error.ts";
import { makePckChain } from "../fixtures/evidence.ts";

const DIR = path.join(import.meta.dirname, "../fixtures/hardware");
const file = (f: string) => readFileSync(path.join(DIR, f));
const pemBlocks = (s: string) => s.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
/** A KDS cert_chain file: ASK (or ASVK) first, then ARK; DER each. */
function kdsChain(f: string): { ask: Buffer; ark: Buffer } {
  const [ask, ark] = pemBlocks(file(f).toString("latin1")).map((p) => new X509Certificate(p).raw);
  return { ask: ask!, ark: ark! };
}
const der = (f: string) => new X509Certificate(file(f)).raw;
const flip = (b: Uint8Array, at: number, bit = 0) => {
  const c = Buffer.from(b);
  c[at]! ^= 1 << bit;
  return c;
};
/** The last byte of a DER certificate lies in its signature value. */
const flipSignature = (d: Buffer) => flip(d, d.length - 1);

/** The messages here are given without the check name the verifier puts in front of them. */
const fails = (f: () => unknown, check: string, msg: RegExp | string) => failsCheck(f, check, typeof msg === "string" ? `${check}: ${msg}` : msg);

const SHA256: Record<string, string> = {
  "amd/ask-ark-genoa.pem": "e6ecc853fa56d3170a624d40851f98a1036f974b50204ea69e6aec91d777aca3",
  "amd/ask-ark-milan.pem": "22e62f8d2c21a156470145fc75f7b5a377cb053ced3e97f0bd3f8d8ca5941ce6",
  "amd/ask-ark-turin.pem": "cc9a52fbed3fbc6e4a0a50149a541a75938f975658909c2a6084767829b36e85",
  "amd/asvk-ark-milan.pem": "3098f7e90ee7049b8cf116448d1bdf33b08847b4250bd99507cf73b5c49d3467",
  "amd/genoa-azure-hcl-report-trustee.bin": "80af4373d6d8349d919f7d29903978f25c81e1d6ce6b1c7ac14bbccacfa03e4f",
  "amd/genoa-vcek-azure-trustee.pem": "d1d0050a7dde712e22d8d1fc5be85698beebb1cac9e320641d82afb2eeb076cd",
  "amd/milan-report-go-sev-guest.bin": "377e6241d3b373ab1df80c0f96978594e7e21f4797dd6ea95e2957e1c1e26060",
  "amd/milan-report-trustee.bin": "7c614616feb65823351fa42620ea260fb84fd22b2337a480ca0d5f04f363ca38",
  "amd/milan-report-virtee.hex": "3d956e9104969a038031a6b63dd6c4b60000619d37702065994f7da76f88ae7d",
  "amd/milan-vcek-go-sev-guest.der": "0d057f9b6e29a69eda9c0154b259567d291c1c08d73a11e9d31ace07c435b6d8",
  "amd/milan-vcek-trustee.der": "3430987528a9feebc90c1ba5cfac5849926ace82ae652a1bbf464d33bdc36d45",
  "amd/milan-vcek-virtee.der": "3bbfb6ee259f75a95d13168cfdf2e034181bb93c7c016825731cbe8ea16c95e1",
  "amd/milan-vlek-report-trustee.bin": "decdab949afc590668e45869b20f23e4afc7ac03c61201ab20208c6668a58a2d",
  "amd/milan-vlek-trustee.der": "296a7c99053efe4b1e480bb76d421fd24633d245f3e34708399a18a7713b7a7c",
  "amd/turin-vcek-virtee.der": "a4a6abff1c435f214cfbc35e4dadae55e467454d53dc417251b3ff1a169fd7fb",
  "intel/azure-tdx-hcl-report-trustee.bin": "f7d67cdc5dba980da1ac060110d51f270058fad599488c6aabb3f01f87be4a45",
  "intel/quote-v4-azure-trustee.dat": "a2c43c6937dcdb91403844f371acc26e39c4937951e61fbd2c8ecd18969f9e6f",
  "intel/quote-v4-cos-113-go-tdx-guest.dat": "54334c81b4e03634ab3a269ad397c9cea3b5c9ee96c57505b684470b964fd15e",
  "intel/quote-v4-spr-e4-go-tdx-guest.dat": "6dde5548bec99147fef832643301f113df99931547be26df8ac376c4eaa5b5a7",
  "intel/quote-v4-trustee-4.dat": "12b401a88a51edb2d12cac4db0c6b8668a163960fbf848c16889a40955f946a9",
  "intel/quote-v4-trustee-6.dat": "62657e5976da7686fc72f3b76f72c0cff830aef0b862a9a7dd96fded487b33f7",
  "intel/quote-v5-go-tdx-guest.dat": "cf77a6e91e48291d5d338c5f3b5d0674225a4d13e7d83ff5e537a4914bf22e1d",
  "intel/quote-v5-trustee-5.dat": "586c2be0dc38d3c5653ecf91a0a482d8dbfaf3d3a0bcea2947bc2d321c8108a2",
  "intel/sgx-root-ca.pem": "194123d2a18be2beb525d0f0cc10a8998be1e63d7a0ecb723cb194f3e9833912",
};

it("the samples are the published bytes the README lists (every file pinned by SHA-256)", () => {
  const present = ["amd", "intel"].flatMap((d) => readdirSync(path.join(DIR, d)).map((f) => `${d}/${f}`)).sort();
  expect(present).toEqual(Object.keys(SHA256).sort());
  for (const [f, digest] of Object.entries(SHA256)) expect([f, createHash("sha256").update(file(f)).digest("hex")]).toEqual([f, digest]);
});

describe("AMD SEV-SNP: AMD's published chains and VCEKs/VLEKs from real machines", () => {
  const CHAINS = [
    { f: "amd/ask-ark-milan.pem", ark: "ARK-Milan", ask: "SEV-Milan" },
    { f: "amd/ask-ark-genoa.pem", ark: "ARK-Genoa", ask: "SEV-Genoa" },
    { f: "amd/ask-ark-turin.pem", ark: "ARK-Turin", ask: "SEV-Turin" },
    { f: "amd/asvk-ark-milan.pem", ark: "ARK-Milan", ask: "SEV-VLEK-Milan" },
  ];
  const cn = (c: X509Certificate) => c.subject.split("\n").find((l) => l.startsWith("CN="));

  it("each ARK is self-signed and signs its ASK/ASVK, RSA-4096 with RSASSA-PSS SHA-384 (spec: ARK → ASK)", () => {
    for (const c of CHAINS) {
      const { ask, ark } = kdsChain(c.f);
      const [a, k] = [new X509Certificate(ark), new X509Certificate(ask)];
      expect([c.f, cn(a), cn(k), a.issuer === a.subject, k.issuer === a.subject]).toEqual([c.f, `CN=${c.ark}`, `CN=${c.ask}`, true, true]);
      for (const x of [a, k]) {
        expect([x.publicKey.asymmetricKeyType, x.publicKey.asymmetricKeyDetails?.modulusLength, x.signatureAlgorithm]).toEqual(["rsa", 4096, "rsassaPss"]);
      }
      expect([a.verify(a.publicKey), k.verify(a.publicKey)]).toEqual([true, true]);
    }
  });

  const LEAVES = [
    { f: "amd/milan-vcek-go-sev-guest.der", chain: "amd/ask-ark-milan.pem", cn: "SEV-VCEK" },
    { f: "amd/milan-vcek-virtee.der", chain: "amd/ask-ark-milan.pem", cn: "SEV-VCEK" },
    { f: "amd/milan-vcek-trustee.der", chain: "amd/ask-ark-milan.pem", cn: "SEV-VCEK" },
    { f: "amd/milan-vlek-trustee.der", chain: "amd/asvk-ark-milan.pem", cn: "SEV-VLEK" },
    { f: "amd/genoa-vcek-azure-trustee.pem", chain: "amd/ask-ark-genoa.pem", cn: "SEV-VCEK" },
    { f: "amd/turin-vcek-virtee.der", chain: "amd/ask-ark-turin.pem", cn: "SEV-VCEK" },
  ];

  it("each real VCEK/VLEK is EC P-384, signed RSASSA-PSS by its product's ASK/ASVK and by no other", () => {
    const asks = CHAINS.map((c) => new X509Certificate(kdsChain(c.f).ask));
    for (const l of LEAVES) {
      const v = new X509Certificate(file(l.f));
      expect([l.f, cn(v), v.publicKey.asymmetricKeyType, v.publicKey.asymmetricKeyDetails?.namedCurve, v.signatureAlgorithm]).toEqual([l.f, `CN=${l.cn}`, "ec", "secp384r1", "rsassaPss"]);
      const signers = CHAINS.filter((_, i) => v.verify(asks[i]!.publicKey)).map((c) => c.f);
      expect([l.f, signers]).toEqual([l.f, [l.chain]]);
    }
  });

  const REPORTS = [
    { f: "amd/milan-report-go-sev-guest.bin", leaf: "amd/milan-vcek-go-sev-guest.der", chain: "amd/ask-ark-milan.pem", version: 2, signerInfo: 0, fms: 0, vmpl: 0 },
    { f: "amd/milan-report-virtee.hex", leaf: "amd/milan-vcek-virtee.der", chain: "amd/ask-ark-milan.pem", version: 2, signerInfo: 0, fms: 0, vmpl: 0 },
    { f: "amd/milan-report-trustee.bin", leaf: "amd/milan-vcek-trustee.der", chain: "amd/ask-ark-milan.pem", version: 2, signerInfo: 0, fms: 0, vmpl: 0 },
    // SIGNING_KEY (bits 4:2 of 0x48) = 1: signed by the VLEK; CPUID family 19h model 01h stepping 1.
    { f: "amd/milan-vlek-report-trustee.bin", leaf: "amd/milan-vlek-trustee.der", chain: "amd/asvk-ark-milan.pem", version: 3, signerInfo: 4, fms: 0xa00f11, vmpl: 1, vlek: true },
  ];
  const raw = (f: string) => (f.endsWith(".hex") ? Buffer.from(file(f).toString("latin1").trim(), "hex") : file(f));
  function attestation(rawReport: Uint8Array, leaf: Uint8Array, chain: { ask: Uint8Array; ark: Uint8Array }, vlek = false): Attestation {
    return create(AttestationSchema, {
      report: parseSnpReport(rawReport),
      certificateChain: create(CertificateChainSchema, { [vlek ? "vlekCert" : "vcekCert"]: leaf, askCert: chain.ask, arkCert: chain.ark }),
    });
  }

  it("each real report parses losslessly and verifies: ARK (pinned) → ASK/ASVK → VCEK/VLEK → ECDSA P-384 report signature", () => {
    for (const r of REPORTS) {
      const bytes = raw(r.f);
      const chain = kdsChain(r.chain);
      const v = verifySnpAttestation(attestation(bytes, der(r.leaf), chain, r.vlek), { trustedArk: chain.ark });
      expect([r.f, bytes.length, Buffer.from(v.raw).equals(bytes)]).toEqual([r.f, 0x4a0, true]);
      expect([v.report.version, v.report.signerInfo, v.report.cpuid1eaxFms, v.report.signatureAlgo, v.report.vmpl]).toEqual([r.version, r.signerInfo, r.fms, 1, r.vmpl]);
    }
  });

  it("REPORT_DATA is the one the guest asked for (go-sev-guest's sample: nonce 01 02 03 04 05), a one-bit change is refused", () => {
    const r = REPORTS[0];
    const chain = kdsChain(r!.chain);
    const att = attestation(raw(r!.f), der(r!.leaf), chain);
    const nonce = new Uint8Array(64);
    nonce.set([1, 2, 3, 4, 5]);
    expect(Buffer.from(verifySnpAttestation(att, { trustedArk: chain.ark, reportData: nonce }).report.reportData)).toEqual(Buffer.from(nonce));
    fails(() => verifySnpAttestation(att, { trustedArk: chain.ark, reportData: flip(nonce, 5) }), "report-data", "REPORT_DATA differs from the expected value");
  });

  it("a one-bit change in any signed field, or in R or S, fails the report signature", () => {
    for (const r of REPORTS) {
      const bytes = raw(r.f);
      const vcek = new X509Certificate(der(r.leaf));
      verifySnpReportSignature(bytes, vcek);
      // REPORT_DATA, MEASUREMENT, REPORTED_TCB, CHIP_ID, policy, last signed byte, R, S.
      for (const at of [0x50, 0x90, 0x180, 0x1a0, 0x08, 0x29f, 0x2a0, 0x2a0 + 47, 0x2e8, 0x2e8 + 47])
        fails(() => verifySnpReportSignature(flip(bytes, at), vcek), "signature", "SNP report signature does not verify under the VCEK");
      const chain = kdsChain(r.chain);
      fails(() => verifySnpAttestation(attestation(flip(bytes, 0x90, 7), der(r.leaf), chain, r.vlek), { trustedArk: chain.ark }), "signature", "SNP report signature does not verify under the VCEK");
    }
  });

  it("a one-bit change in the unsigned bytes of the signature field or in a reserved byte is refused, not ignored", () => {
    const r = REPORTS[0];
    const bytes = raw(r!.f);
    const vcek = new X509Certificate(der(r!.leaf));
    for (const at of [0x2a0 + 48, 0x2a0 + 71, 0x2e8 + 48, 0x2e8 + 71, 0x330, 0x49f])
      fails(() => verifySnpReportSignature(flip(bytes, at), vcek), "signature", "signature field has nonzero bytes beyond R and S");
    fails(() => verifySnpReportSignature(flip(bytes, 0x34), vcek), "signature", "signature algorithm 0 is not ECDSA P-384 SHA-384");
    for (const [at, range] of [
      [0x4c, "reserved field at 0x4C"],
      [0x18b, "reserved bytes 0x18B..0x19F"],
      [0x19f, "reserved bytes 0x18B..0x19F"],
      [0x1eb, "reserved bytes 0x1EB..0x1EB"],
      [0x1ef, "reserved bytes 0x1EF..0x1EF"],
      [0x208, "reserved bytes 0x208..0x29F"],
      [0x29f, "reserved bytes 0x208..0x29F"],
    ] as const)
      expect(() => parseSnpReport(flip(bytes, at))).toThrow(new SnpFormatError(`SNP report ${range} ${range.endsWith("0x4C") ? "is" : "are"} not zero`));
  });

  it("a one-bit change in the ARK, ASK or VCEK fails the chain link it breaks", () => {
    const r = REPORTS[0];
    const chain = kdsChain(r!.chain);
    const att = attestation(raw(r!.f), der(r!.leaf), chain);
    const vcek = der(r!.leaf);
    fails(() => verifySnpAttestation(att, { ark: flipSignature(chain.ark) }), "chain", "ARK is not self-signed");
    fails(() => verifySnpAttestation(att, { ark: flipSignature(chain.ark), trustedArk: chain.ark }), "chain", "ARK is not the trusted ARK");
    fails(() => verifySnpAttestation(att, { trustedArk: chain.ark, ask: flipSignature(chain.ask) }), "chain", "ASK is not signed by the ARK");
    // A bit of the ASK's own subject name (inside what the ARK signed).
    const at = chain.ask.lastIndexOf(Buffer.from("SEV-Milan")) + 8;
    fails(() => verifySnpAttestation(att, { trustedArk: chain.ark, ask: flip(chain.ask, at) }), "chain", "ASK is not signed by the ARK");
    fails(() => verifySnpAttestation(att, { trustedArk: chain.ark, vcek: flipSignature(vcek) }), "chain", "VCEK is not signed by the ASK");
  });

  it("another product's ARK, another product's ASK, or another real chip's VCEK is refused", () => {
    const r = REPORTS[0];
    const milan = kdsChain(r!.chain);
    const genoa = kdsChain("amd/ask-ark-genoa.pem");
    const att = attestation(raw(r!.f), der(r!.leaf), milan);
    fails(() => verifySnpAttestation(att, { trustedArk: genoa.ark }), "chain", "ARK is not the trusted ARK");
    fails(() => verifySnpAttestation(att, { trustedArk: milan.ark, ask: genoa.ask }), "chain", "ASK is not signed by the ARK");
    fails(() => verifySnpAttestation(att, { ark: genoa.ark, ask: genoa.ask }), "chain", "VCEK is not signed by the ASK");
    // virtee's Milan VCEK chains to the same ARK but belongs to another chip.
    fails(() => verifySnpAttestation(att, { trustedArk: milan.ark, vcek: der("amd/milan-vcek-virtee.der") }), "signature", "SNP report signature does not verify under the VCEK");
  });

  it("the relying-party CLI verifies a real report as sevsnp.Attestation with the ARK pinned", async () => {
    const r = REPORTS[1];
    const chain = kdsChain(r!.chain);
    const bytes = toBinary(AttestationSchema, attestation(raw(r!.f), der(r!.leaf), chain));
    const out = await verifyEvidence("snp", bytes, { ark: chain.ark });
    expect([out.type, out.version, out.vmpl, out.chipId]).toEqual(["snp", 2, 0, Buffer.from(raw(r!.f).subarray(0x1a0, 0x1e0)).toString("hex")]);
    await expect(verifyEvidence("snp", bytes, { ark: kdsChain("amd/ask-ark-turin.pem").ark })).rejects.toThrow(new VerifyError("chain", "ARK is not the trusted ARK"));
  });

  it("Azure (Genoa): the real HCL report parses, its SNP report verifies to ARK-Genoa and binds SHA-256 of the runtime claims", () => {
    const hclRaw = file("amd/genoa-azure-hcl-report-trustee.bin");
    const hcl = parseHclReport(hclRaw);
    expect([hcl.reportType, hcl.hashType, hcl.hwReport.length]).toEqual([HCL_REPORT_TYPE.SNP, 1, 0x4a0]);
    const claims = JSON.parse(Buffer.from(hcl.runtimeClaims).toString("utf8"));
    expect(claims.keys.map((k: { kid: string }) => k.kid)).toContain("HCLAkPub");
    const genoa = kdsChain("amd/ask-ark-genoa.pem");
    const v = verifySnpAttestation(attestation(hcl.hwReport, der("amd/genoa-vcek-azure-trustee.pem"), genoa), { trustedArk: genoa.ark });
    const rd = Buffer.concat([createHash("sha256").update(hcl.runtimeClaims).digest(), Buffer.alloc(32)]);
    expect([v.report.version, v.report.cpuid1eaxFms, Buffer.from(v.report.reportData)]).toEqual([3, 0xa10f11, rd]); // family 19h model 11h: Genoa
    const changed = parseHclReport(flip(hclRaw, 0x20 + 0x90));
    fails(() => verifySnpReportSignature(changed.hwReport, new X509Certificate(file("amd/genoa-vcek-azure-trustee.pem"))), "signature", "SNP report signature does not verify under the VCEK");
  });
});

describe("Intel TDX: quotes from real machines, PCK chains to Intel's SGX Root CA", () => {
  const ROOT = file("intel/sgx-root-ca.pem").toString("latin1");
  const QUOTES = [
    { f: "intel/quote-v4-spr-e4-go-tdx-guest.dat", version: 4, body: 584 },
    { f: "intel/quote-v4-cos-113-go-tdx-guest.dat", version: 4, body: 584 },
    { f: "intel/quote-v4-trustee-4.dat", version: 4, body: 584 },
    { f: "intel/quote-v4-trustee-6.dat", version: 4, body: 584 },
    { f: "intel/quote-v4-azure-trustee.dat", version: 4, body: 584 },
    { f: "intel/quote-v5-go-tdx-guest.dat", version: 5, body: 648 },
    { f: "intel/quote-v5-trustee-5.dat", version: 5, body: 648 },
  ];
  let otherRoot: string;
  beforeAll(async () => {
    otherRoot = (await makePckChain()).rootPem;
  });

  it("the SGX Root CA is self-signed ECDSA P-256", () => {
    const root = new X509Certificate(ROOT);
    expect([root.subject.split("\n")[0], root.issuer === root.subject, root.verify(root.publicKey), root.publicKey.asymmetricKeyDetails?.namedCurve]).toEqual(["CN=Intel SGX Root CA", true, true, "prime256v1"]);
    expect(root.fingerprint256).toBe("44:A0:19:6B:2B:99:F8:89:B8:E1:49:E9:5B:80:7A:35:0E:74:24:96:43:99:E8:85:A7:CB:B8:CC:FA:B6:74:D3");
  });

  it("each real quote (v4, and v5 with a TDX 1.5 body) parses and verifies: AK signature, QE report under the PCK, AK binding, PCK → Platform CA → root", () => {
    for (const s of QUOTES) {
      const q = verifyTdxQuote(file(s.f), { trustedRoot: ROOT });
      const chain = pemBlocks(q.pckChainPem).map((p) => new X509Certificate(p).subject.split("\n").find((l) => l.startsWith("CN=")));
      expect([s.f, q.version, q.teeType, q.body.length, q.qeAuthData.length, chain]).toEqual([
        s.f,
        s.version,
        0x81,
        s.body,
        32,
        ["CN=Intel SGX PCK Certificate", "CN=Intel SGX PCK Platform CA", "CN=Intel SGX Root CA"],
      ]);
      expect(Buffer.from(verifyTdxQuote(file(s.f), { trustedRoot: ROOT, reportData: q.reportData }).reportData)).toEqual(Buffer.from(q.reportData));
    }
  });

  /** Offsets of a quote's parts, from the layout (reference §3.2), independent of the parser. */
  function layout(q: Buffer) {
    const v5 = q.readUInt16LE(0) === 5;
    const bodyStart = v5 ? 54 : 48;
    const sd = bodyStart + (v5 ? q.readUInt32LE(50) : 584) + 4;
    const qe = sd + 128 + 6;
    return { bodyStart, sig: sd, ak: sd + 64, qe, qeSig: qe + 384, auth: qe + 448 + 2 };
  }
  /** Re-encodes the n-th certificate of the quote's PEM chain with a change made to its DER. */
  function changeCert(q: Buffer, n: number, change: (d: Buffer) => Buffer): Buffer {
    const out = Buffer.from(q);
    let at = -1;
    for (let i = 0; i <= n; i++) at = out.indexOf("-----BEGIN CERTIFICATE-----", at + 1);
    const start = out.indexOf("\n", at) + 1;
    const end = out.indexOf("-----END CERTIFICATE-----", start);
    const lines = out.subarray(start, end).toString("latin1").split("\n");
    const b64 = change(Buffer.from(lines.join(""), "base64")).toString("base64");
    const starts = lines.map((_, i) => lines.slice(0, i).reduce((n, l) => n + l.length, 0));
    const rewrapped = lines.map((l, i) => b64.slice(starts[i], starts[i]! + l.length)).join("\n");
    expect(rewrapped.length).toBe(end - start);
    out.write(rewrapped, start, "latin1");
    return out;
  }

  it("a one-bit change in the header, body, signature, attestation key, QE report, its signature or the QE auth data fails its own check", () => {
    for (const s of [QUOTES[0], QUOTES[4]]) {
      const q = file(s!.f);
      const l = layout(q);
      expect(Buffer.from(parseTdxQuote(q).attestationKey)).toEqual(q.subarray(l.ak, l.ak + 64));
      const verify = (b: Buffer) => () => verifyTdxQuote(b, { trustedRoot: ROOT });
      fails(verify(flip(q, 4)), "format", "TEE type 0x80 is not TDX");
      for (const at of [l.bodyStart, l.bodyStart + 136, l.bodyStart + 520, l.bodyStart + 583, 8, l.sig, l.sig + 63])
        fails(verify(flip(q, at)), "signature", "quote signature does not verify under its attestation key");
      fails(verify(flip(q, l.ak)), "signature", /^signature: attestation key is not a P-256 point: /);
      fails(verify(flip(q, l.ak + 63)), "signature", /^signature: attestation key is not a P-256 point: /);
      for (const at of [l.qe, l.qe + 320, l.qe + 383, l.qeSig, l.qeSig + 63]) fails(verify(flip(q, at)), "qe-report", "QE report signature does not verify under the PCK");
      fails(verify(flip(q, l.auth)), "qe-report", "QE report does not bind the attestation key");
    }
  });

  it("a one-bit change in the PCK certificate, the Platform CA or the root fails the link it breaks; another root is refused", () => {
    for (const s of [QUOTES[0], QUOTES[4]]) {
      const q = file(s!.f);
      const verify = (b: Buffer, trustedRoot = ROOT) => () => verifyTdxQuote(b, { trustedRoot });
      fails(verify(changeCert(q, 0, flipSignature)), "chain", "PCK chain link 0 does not verify");
      fails(verify(changeCert(q, 1, flipSignature)), "chain", "PCK chain link 1 does not verify");
      fails(verify(changeCert(q, 2, flipSignature)), "chain", "PCK chain does not end at the trusted root");
      fails(() => verifyTdxQuote(changeCert(q, 2, flipSignature)), "chain", "root is not self-signed");
      fails(verify(q, otherRoot), "chain", "PCK chain does not end at the trusted root");
      // A flipped bit that leaves the PEM's alphabet ('A' → '@'): unreadable, still a chain failure.
      const broken = Buffer.from(q);
      broken[broken.indexOf("A", broken.indexOf("-----BEGIN CERTIFICATE-----") + 28)]! ^= 1;
      fails(verify(broken), "chain", /^chain: PCK chain certificate 0 unreadable: /);
      fails(() => verifyTdxQuote(q, { trustedRoot: "not a certificate" }), "chain", /^chain: trusted root unreadable: /);
    }
  });

  it("Azure (TDX): the real HCL report parses as TDX and the real quote binds SHA-256 of its runtime claims, as its TD report does", () => {
    const hcl = parseHclReport(file("intel/azure-tdx-hcl-report-trustee.bin"));
    expect([hcl.reportType, hcl.hashType, hcl.hwReport.length]).toEqual([HCL_REPORT_TYPE.TDX, 1, 1024]);
    const rd = Buffer.concat([createHash("sha256").update(hcl.runtimeClaims).digest(), Buffer.alloc(32)]);
    expect(Buffer.from(hcl.hwReport.subarray(128, 192))).toEqual(rd); // TDREPORT REPORTMACSTRUCT.REPORTDATA
    expect(Buffer.from(verifyTdxQuote(file("intel/quote-v4-azure-trustee.dat"), { trustedRoot: ROOT, reportData: rd }).reportData)).toEqual(rd);
    fails(() => verifyTdxQuote(file("intel/quote-v4-azure-trustee.dat"), { trustedRoot: ROOT, reportData: flip(rd, 0) }), "report-data", "REPORTDATA differs from the expected value");
  });

  it("the relying-party CLI verifies a real quote against the SGX Root CA", async () => {
    const out = await verifyEvidence("tdx", file(QUOTES[0]!.f), { root: file("intel/sgx-root-ca.pem") });
    expect([out.type, out.version]).toEqual(["tdx", 4]);
    expect(out.mrtd).toBe(file(QUOTES[0]!.f).subarray(48 + 136, 48 + 184).toString("hex"));
  });
});
