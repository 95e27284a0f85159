/**
 * verify/tpm.ts: every check on vTPM evidence, each failed by exactly one defect in otherwise
 * valid evidence (quotes signed here with an RSA key as a TPM would sign them).
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AttestationSchema, type Attestation } from "../../../attestation-agent/gen/attest/attest_pb.ts";
import type { HashAlgo } from "../../../attestation-agent/gen/tpm/tpm_pb.ts";
import { ALG, Writer, pcrSelection } from "../../../attestation-agent/tpm/marshal.ts";
import { VerifyError, akPublicKey, verifyQuote, verifyVtpmAttestation } from "../../../attestation-agent/verify/tpm.ts";

const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const n = Buffer.from(publicKey.export({ format: "jwk" }).n!, "base64url");
const AK_PUB = new Writer().u16(ALG.RSA).u16(ALG.SHA256).u32(0x00050072).u16(0).u16(ALG.NULL).u16(ALG.RSASSA).u16(ALG.SHA256).u16(2048).u32(0).tpm2b(n).bytes();
const NONCE = new Uint8Array(32).fill(7);
const ALL = [...Array(24).keys()];
const SIZE: Record<number, number> = { [ALG.SHA1]: 20, [ALG.SHA256]: 32 };

function pcrValues(alg: number, seed = 0): Map<number, Uint8Array> {
  return new Map(ALL.map((i) => [i, new Uint8Array(SIZE[alg]!).fill(i + seed)]));
}

interface QuoteOpts {
  nonce?: Uint8Array;
  selection?: { alg: number; pcrs: number[] }[];
  /** TPML_PCR_SELECTION bytes to put in the quote instead of `selection`'s. */
  selectionBytes?: Uint8Array;
  digestOf?: Map<number, Uint8Array>;
  sigAlg?: number;
  sigHash?: number;
  key?: KeyObject;
  magic?: number;
}

/** TPMS_ATTEST over `values` and its TPMT_SIGNATURE (RSASSA-SHA256 by default). */
function makeQuote(alg: number, values: Map<number, Uint8Array>, o: QuoteOpts = {}) {
  const sel = o.selection ?? [{ alg, pcrs: ALL }];
  const h = createHash("sha256");
  for (const p of sel[0]?.pcrs ?? []) h.update((o.digestOf ?? values).get(p) ?? new Uint8Array(0));
  const attest = new Writer()
    .u32(o.magic ?? 0xff544347)
    .u16(0x8018)
    .tpm2b(new Uint8Array(34))
    .tpm2b(o.nonce ?? NONCE)
    .raw(new Uint8Array(17))
    .raw(new Uint8Array(8))
    .raw(o.selectionBytes ?? pcrSelection(sel))
    .tpm2b(h.digest())
    .bytes();
  const rawSig = new Writer()
    .u16(o.sigAlg ?? ALG.RSASSA)
    .u16(o.sigHash ?? ALG.SHA256)
    .tpm2b(sign("sha256", attest, o.key ?? privateKey))
    .bytes();
  return { quote: attest, rawSig, hash: alg, pcrs: values };
}

function attestation(quotes: ReturnType<typeof makeQuote>[], akPub = AK_PUB): Attestation {
  return create(AttestationSchema, {
    akPub,
    quotes: quotes.map((q) => ({ quote: q.quote, rawSig: q.rawSig, pcrs: { hash: q.hash as HashAlgo, pcrs: Object.fromEntries(q.pcrs) } })),
  });
}

const ak = akPublicKey(AK_PUB);
const fails = (f: () => unknown, check: string, msg: RegExp | string) => {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(VerifyError);
  expect((err as VerifyError).check).toBe(check);
  expect((err as VerifyError).message).toMatch(msg);
};

describe("verifyQuote", () => {
  it("accepts a well-formed quote for either bank and returns the decoded TPMS_ATTEST", () => {
    for (const alg of [ALG.SHA1, ALG.SHA256]) {
      const v = verifyQuote(ak, makeQuote(alg, pcrValues(alg)), NONCE);
      expect(v.bank).toBe(alg === ALG.SHA1 ? "sha1" : "sha256");
      expect(Buffer.from(v.info.extraData)).toEqual(Buffer.from(NONCE));
      expect(v.pcrs.size).toBe(24);
    }
  });

  it("vTPM quote: each defect fails its own check", () => {
    const v = pcrValues(ALG.SHA256);
    fails(() => verifyQuote(ak, { ...makeQuote(ALG.SHA256, v), hash: 0x99 }, NONCE), "bank", "bank: unsupported PCR bank 0x99");
    fails(() => verifyQuote(ak, { ...makeQuote(ALG.SHA256, v), rawSig: new Uint8Array([0, 0x17, 0, 0x0b]) }, NONCE), "format", /unsupported signature algorithm/);
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { magic: 0x12345678 }), NONCE), "format", /magic/);
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { sigAlg: 0x16 }), NONCE), "signature", "signature: scheme 0x16 is not RSASSA");
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { sigHash: 0x99 }), NONCE), "signature", "signature: unsupported signature hash 0x99");
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { key: generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey }), NONCE), "signature", "signature: sha256 quote signature does not verify under the AK");
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { nonce: new Uint8Array(32).fill(8) }), NONCE), "nonce", /^nonce: sha256 quote extraData 0808.* != nonce 0707/);
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { selection: [] }), NONCE), "selection", "does not select exactly its own bank");
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { selection: [{ alg: ALG.SHA256, pcrs: ALL }, { alg: ALG.SHA1, pcrs: ALL }] }), NONCE), "selection", "does not select exactly its own bank");
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { selection: [{ alg: ALG.SHA1, pcrs: ALL }] }), NONCE), "selection", "does not select exactly its own bank");
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { selection: [{ alg: ALG.SHA256, pcrs: ALL.slice(0, 23) }] }), NONCE), "selection", /selects PCRs 0,1,.*,22, not 0-23$/);
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { selection: [{ alg: ALG.SHA256, pcrs: [...ALL.slice(1), 24] }] }), NONCE), "selection", /not 0-23/);
    // 24 PCRs, but 1-24 (a 4-byte bitmap), not 0-23.
    const shifted = new Map([...v].map(([i, d]) => [i + 1, d]));
    const sel124 = new Writer().u32(1).u16(ALG.SHA256).u8(4).raw(new Uint8Array([0xfe, 0xff, 0xff, 0x01])).bytes();
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, shifted, { selection: [{ alg: ALG.SHA256, pcrs: [...ALL.slice(1), 24] }], selectionBytes: sel124 }), NONCE), "selection", /selects PCRs 1,2,.*,24, not 0-23$/);
    // 24 PCRs, 0-22 and 24: only the last is out of place.
    const skip23 = new Map([...v].map(([i, d]) => [i === 23 ? 24 : i, d]));
    const sel0to22and24 = new Writer().u32(1).u16(ALG.SHA256).u8(4).raw(new Uint8Array([0xff, 0xff, 0x7f, 0x01])).bytes();
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, skip23, { selection: [{ alg: ALG.SHA256, pcrs: [...ALL.slice(0, 23), 24] }], selectionBytes: sel0to22and24 }), NONCE), "selection", /selects PCRs 0,1,.*,22,24, not 0-23$/);
    expect(new VerifyError("x", "y").name).toBe("VerifyError");
    const missing = new Map(v);
    missing.delete(5);
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, missing, { digestOf: v }), NONCE), "pcrs", "pcrs: sha256 PCR 5 missing");
    const short = new Map(v).set(3, new Uint8Array(31));
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, short), NONCE), "pcrs", "pcrs: sha256 PCR 3 has 31 bytes");
    const extra = new Map(v).set(24, new Uint8Array(32));
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, extra), NONCE), "pcrs", "pcrs: sha256 reports 25 PCRs, want 24");
    fails(() => verifyQuote(ak, makeQuote(ALG.SHA256, v, { digestOf: pcrValues(ALG.SHA256, 1) }), NONCE), "pcr-digest", "pcr-digest: sha256 PCR values do not match the quoted digest");
  });
});

describe("verifyVtpmAttestation", () => {
  const good = () => attestation([makeQuote(ALG.SHA1, pcrValues(ALG.SHA1)), makeQuote(ALG.SHA256, pcrValues(ALG.SHA256))]);

  it("verifies serialized and decoded evidence, and can require banks", () => {
    const v = verifyVtpmAttestation(toBinary(AttestationSchema, good()), NONCE, { requireBanks: [ALG.SHA1, ALG.SHA256] });
    expect(v.quotes.map((q) => q.bank)).toEqual(["sha1", "sha256"]);
    expect(verifyVtpmAttestation(good(), NONCE).quotes).toHaveLength(2);
  });

  it("rejects malformed evidence, no quotes, a quote without PCR values, duplicate banks, a missing required bank, an unreadable AK", () => {
    fails(() => verifyVtpmAttestation(new Uint8Array([0xff, 0xff, 0xff]), NONCE), "format", /^format: not an attest.Attestation: /);
    fails(() => verifyVtpmAttestation(attestation([]), NONCE), "quotes", "quotes: no quotes");
    const noPcrs = good();
    noPcrs.quotes[1]!.pcrs = undefined;
    fails(() => verifyVtpmAttestation(noPcrs, NONCE), "pcrs", "pcrs: quote without PCR values");
    const q = makeQuote(ALG.SHA256, pcrValues(ALG.SHA256));
    fails(() => verifyVtpmAttestation(attestation([q, q]), NONCE), "quotes", "quotes: two quotes for the same bank");
    fails(() => verifyVtpmAttestation(attestation([q]), NONCE, { requireBanks: [ALG.SHA256, ALG.SHA1] }), "quotes", "quotes: no quote for bank 0x4");
    fails(() => verifyVtpmAttestation(attestation([q], new Uint8Array([0, 0x23])), NONCE), "ak", /^ak: cannot read AK public area: /);
    fails(() => verifyVtpmAttestation(good(), new Uint8Array(32)), "nonce", /nonce/);
  });
});
