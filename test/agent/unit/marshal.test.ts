/**
 * tpm/marshal.ts against byte layouts written out from the TCG TPM 2.0 Library spec (Part 2
 * structures, Part 3 commands): every command the agent sends, every response it parses, and
 * the checks that reject malformed TPM output. In-process and fast (StrykerJS runs these).
 */
import { createHash, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import * as m from "../../../attestation-agent/tpm/marshal.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const bytes = (h: string) => new Uint8Array(Buffer.from(h.replace(/\s+/g, ""), "hex"));
/** A command/response frame: tag, size (computed from the rest), code/rc, body. */
function frame(tag: string, codeOrRc: string, body: string): string {
  const b = body.replace(/\s+/g, "");
  const size = (2 + 4 + 4 + b.length / 2).toString(16).padStart(8, "0");
  return `${tag}${size}${codeOrRc}${b}`;
}
const PW = "40000009 0000 00 0000"; // TPM_RS_PW, empty nonce, no attributes, empty hmac
const ALL24 = [...Array(24).keys()];

describe("command encodings (TPM 2.0 Part 3)", () => {
  it("GetRandom, GetCapability(PCRS), GetCapability(property), FlushContext, ReadPublic, NV_ReadPublic", () => {
    expect(hex(m.getRandomCommand(8))).toBe("80010000000c0000017b0008");
    expect(hex(m.getCapabilityPcrsCommand())).toBe(frame("8001", "0000017a", "00000005 00000000 00000001"));
    expect(hex(m.getCapabilityPropertyCommand(0x12c))).toBe(frame("8001", "0000017a", "00000006 0000012c 00000001"));
    expect(hex(m.flushContextCommand(0x80000001))).toBe(frame("8001", "00000165", "80000001"));
    expect(hex(m.readPublicCommand(0x81008f01))).toBe(frame("8001", "00000173", "81008f01"));
    expect(hex(m.nvReadPublicCommand(0x01400001))).toBe(frame("8001", "00000169", "01400001"));
  });

  it("the AK template is go-tpm-tools AKTemplateRSA and CreatePrimary carries it with a password session", () => {
    const t = "0001 000b 00050072 0000 0010 0014 000b 0800 00000000 0000".replace(/\s/g, "");
    expect(hex(m.akTemplateRsa())).toBe(t);
    expect(hex(m.createPrimaryCommand(0x40000001, m.akTemplateRsa()))).toBe(
      frame("8002", "00000131", `40000001 00000009 ${PW} 0004 0000 0000 0018 ${t} 0000 00000000`),
    );
  });

  it("Quote: nonce, NULL scheme, one bank selecting PCRs 0-23", () => {
    expect(hex(m.quoteCommand(0x81008f01, bytes("abcd"), [{ alg: 0x0b, pcrs: ALL24 }]))).toBe(
      frame("8002", "00000158", `81008f01 00000009 ${PW} 0002abcd 0010 00000001 000b 03 ffffff`),
    );
  });

  it("PCR_Read selects a chunk of PCRs as a bitmap; EvictControl and NV commands carry owner auth", () => {
    expect(hex(m.pcrReadCommand(0x04, [0, 1, 2, 3, 4, 5, 6, 7]))).toBe(frame("8001", "0000017e", "00000001 0004 03 ff0000"));
    expect(hex(m.pcrReadCommand(0x0b, [8, 15, 16, 23]))).toBe(frame("8001", "0000017e", "00000001 000b 03 008181"));
    expect(hex(m.pcrSelection([{ alg: 4, pcrs: [1] }, { alg: 0x0b, pcrs: [9, 17] }]))).toBe("00000002 0004 03 020000 000b 03 000202".replace(/\s/g, ""));
    expect(hex(m.evictControlCommand(0x40000001, 0x80000000, 0x81008f01))).toBe(frame("8002", "00000120", `40000001 80000000 00000009 ${PW} 81008f01`));
    expect(hex(m.nvReadCommand(0x40000001, 0x01400001, 0x400, 0x10))).toBe(frame("8002", "0000014e", `40000001 01400001 00000009 ${PW} 0400 0010`));
    expect(hex(m.nvWriteCommand(0x40000001, 0x01400002, bytes("0102"), 3))).toBe(frame("8002", "00000137", `40000001 01400002 00000009 ${PW} 0002 0102 0003`));
    expect(hex(m.nvUndefineSpaceCommand(0x40000001, 0x01400002))).toBe(frame("8002", "00000122", `40000001 01400002 00000009 ${PW}`));
    expect(hex(m.nvDefineSpaceCommand(0x40000001, { index: 0x01400002, nameAlg: 0x0b, attributes: 0x20002, dataSize: 64 }))).toBe(
      frame("8002", "0000012a", `40000001 00000009 ${PW} 0000 000e 01400002 000b 00020002 0000 0040`),
    );
  });

  it("sessions: StartAuthSession, PolicyPCR, a policy session's auth, Certify with two passwords, RSA_Decrypt", () => {
    expect(hex(m.startAuthSessionCommand(m.SE.POLICY))).toBe(frame("8001", "00000176", `40000007 40000007 0020 ${"00".repeat(32)} 0000 01 0010 000b`));
    expect(hex(m.policySessionAuth(0x03000000))).toBe("03000000 0000 01 0000".replace(/\s/g, ""));
    expect(hex(m.policyPcrCommand(0x03000000, bytes("aa"), [{ alg: 0x0b, pcrs: [0] }]))).toBe(frame("8001", "0000017f", "03000000 0001aa 00000001 000b 03 010000"));
    expect(hex(m.certifyCommand(0x80000001, 0x81000003))).toBe(frame("8002", "00000148", `80000001 81000003 00000012 ${PW} ${PW} 0000 0010`));
    expect(hex(m.rsaDecryptCommand(0x80000002, m.policySessionAuth(0x03000001), bytes("c0ffee")))).toBe(
      frame("8002", "00000159", "80000002 00000009 03000001 0000 01 0000 0003 c0ffee 0015 0000"),
    );
  });

  it("Writer and TPM2B helpers", () => {
    expect(hex(new m.Writer().u8(0x1ff).u16(0x10203).u32(0xffffffff).tpm2b(bytes("ab")).bytes())).toBe("ff0203ffffffff0001ab");
    expect(hex(m.tpm2bPublic(bytes("0102")))).toBe("00020102");
    const pub = bytes("0001000b");
    expect(hex(m.objectName(pub))).toBe(`000b${createHash("sha256").update(pub).digest("hex")}`);
  });
});

describe("response parsing and its checks", () => {
  it("parseResponse reads tag and rc, and rejects a size field that disagrees with the bytes", () => {
    const r = m.parseResponse(bytes(frame("8001", "00000000", "0004 01020304")));
    expect([r.tag, r.rc, hex(r.body)]).toEqual([0x8001, 0, "000401020304"]);
    expect(m.parseResponse(bytes("80010000000a00000922")).rc).toBe(0x922);
    expect(() => m.parseResponse(bytes("80010000000b00000000"))).toThrow(/response size field 11 != 10 bytes received/);
    expect(() => m.parseResponse(bytes("8001000000"))).toThrow(m.TpmParseError);
  });

  it("paramsReader skips handles and, for a sessions response, bounds the reader to parameterSize", () => {
    const res = m.parseResponse(bytes(frame("8002", "00000000", "80000001 00000004 0002abcd 0000010000")));
    const { handles, r } = m.paramsReader(res, 1);
    expect(handles).toEqual([0x80000001]);
    expect(hex(r.tpm2b())).toBe("abcd");
    expect(r.remaining).toBe(0);
    expect(() => r.u8()).toThrow(/truncated TPM structure at byte 4 \(\+1\)/);
    const plain = m.paramsReader(m.parseResponse(bytes(frame("8001", "00000000", "0001ff"))), 0);
    expect(hex(plain.r.tpm2b())).toBe("ff");
  });

  it("GetRandom, CreatePrimary, ReadPublic, NV_Read, NV_ReadPublic, StartAuthSession, RSA_Decrypt", () => {
    expect(hex(m.paramsReader(m.parseResponse(bytes(frame("8001", "00000000", "0003 010203"))), 0).r.tpm2b())).toBe("010203");
    const cp = m.parseCreatePrimary(m.parseResponse(bytes(frame("8002", "00000000", "80000007 00000008 0004 0001000b 0000 00"))));
    expect([cp.handle, hex(cp.publicArea)]).toEqual([0x80000007, "0001000b"]);
    expect(hex(m.parseReadPublic(m.parseResponse(bytes(frame("8001", "00000000", "0002 0001 0000 0000")))))).toBe("0001");
    expect(hex(m.parseNvRead(m.parseResponse(bytes(frame("8002", "00000000", "00000004 0002 beef 0000010000")))))).toBe("beef");
    const nvPub = m.parseNvReadPublic(m.parseResponse(bytes(frame("8001", "00000000", "000e 01400001 000b 00020002 0000 04a0 0022 000b" + "00".repeat(32)))));
    expect(nvPub).toEqual({ index: 0x01400001, nameAlg: 0x0b, attributes: 0x20002, dataSize: 0x4a0 });
    expect(m.parseStartAuthSession(m.parseResponse(bytes(frame("8001", "00000000", "03000000 0020" + "11".repeat(32)))))).toBe(0x03000000);
    expect(hex(m.parseRsaDecrypt(m.parseResponse(bytes(frame("8002", "00000000", "00000003 0001 7f 0000010000")))))).toBe("7f");
  });

  it("GetCapability: the PCR banks, and a property; the wrong capability is rejected", () => {
    const pcrs = m.parseGetCapabilityPcrs(m.parseResponse(bytes(frame("8001", "00000000", "00 00000005 00000002 0004 03 ffffff 000b 03 000000"))));
    expect(pcrs).toEqual([{ alg: 4, pcrs: ALL24 }, { alg: 0x0b, pcrs: [] }]);
    expect(() => m.parseGetCapabilityPcrs(m.parseResponse(bytes(frame("8001", "00000000", "00 00000006 00000000"))))).toThrow(/capability 6, wanted TPM_CAP_PCRS/);
    const props = m.parseResponse(bytes(frame("8001", "00000000", "00 00000006 00000002 00000100 00000001 0000012c 00000800")));
    expect(m.parseGetCapabilityProperty(props, 0x12c)).toBe(0x800);
    expect(m.parseGetCapabilityProperty(props, 0x100)).toBe(1);
    expect(m.parseGetCapabilityProperty(props, 0x101)).toBeUndefined();
    expect(() => m.parseGetCapabilityProperty(m.parseResponse(bytes(frame("8001", "00000000", "00 00000005 00000000"))), 0x12c)).toThrow(/did not return TPM properties/);
  });

  it("a PCR selection with an implausible bank count is rejected; a 4-byte bitmap selects PCRs beyond 23", () => {
    expect(() => m.readPcrSelection(new m.Reader(bytes("00000011")))).toThrow(/implausible PCR selection count 17/);
    expect(m.readPcrSelection(new m.Reader(bytes("00000010" + "000403000000".repeat(16))))).toHaveLength(16);
    expect(m.readPcrSelection(new m.Reader(bytes("00000001 000b 04 01000080")))).toEqual([{ alg: 0x0b, pcrs: [0, 31] }]);
  });

  it("PCR_Read: update counter, selection and digests", () => {
    const out = m.parsePcrRead(m.parseResponse(bytes(frame("8001", "00000000", "0000002a 00000001 000b 03 030000 00000002 0001aa 0002bbcc"))));
    expect(out.updateCounter).toBe(42);
    expect(out.selection).toEqual([{ alg: 0x0b, pcrs: [0, 1] }]);
    expect(out.digests.map(hex)).toEqual(["aa", "bbcc"]);
  });

  it("PCR_Read: a digest count that disagrees with the PCRs selected is malformed (not PCR values with holes)", () => {
    const read = (body: string) => () => m.parsePcrRead(m.parseResponse(bytes(frame("8001", "00000000", body))));
    expect(read("0000002a 00000001 000b 03 030000 00000001 0001aa")).toThrow(new m.TpmParseError("PCR_Read returned 1 digests for 2 selected PCRs"));
    expect(read("0000002a 00000001 000b 03 010000 00000002 0001aa 0002bbcc")).toThrow(new m.TpmParseError("PCR_Read returned 2 digests for 1 selected PCRs"));
  });

  it("Quote/Certify: the TPMS_ATTEST and the TPMT_SIGNATURE bytes exactly as sent; a NULL signature is refused", () => {
    const attest = "ff544347 8018 0000 0000";
    const rsa = "0014 000b 0003 010203";
    const q = m.parseQuote(m.parseResponse(bytes(frame("8002", "00000000", `00000015 000a ${attest} ${rsa} 0000010000`))));
    expect([hex(q.attest), hex(q.signature)]).toEqual([attest.replace(/\s/g, ""), rsa.replace(/\s/g, "")]);
    const pss = m.parseQuote(m.parseResponse(bytes(frame("8001", "00000000", "0001 aa 0016 000b 0001 bb ff"))));
    expect(hex(pss.signature)).toBe("0016000b0001bb");
    const ecdsa = m.parseCertify(m.parseResponse(bytes(frame("8001", "00000000", "0001 aa 0018 000b 0001 01 0002 0203 ff"))));
    expect(hex(ecdsa.signature)).toBe("0018000b0001010002 0203".replace(/\s/g, ""));
    expect(() => m.parseQuote(m.parseResponse(bytes(frame("8001", "00000000", "0001 aa 0010 0000"))))).toThrow(/NULL signature/);
  });

  it("parseAttest decodes a TPMS_ATTEST quote and rejects a wrong magic or type", () => {
    const body = "0022 000b" + "ab".repeat(32) + " 0002 cafe 0000000000001234 00000005 00000006 01 0000000000000007 00000001 000b 03 ffffff 0002 dddd";
    const info = m.parseAttest(bytes(`ff544347 8018 ${body}`));
    expect(hex(info.qualifiedSigner)).toBe(`000b${"ab".repeat(32)}`);
    expect(hex(info.extraData)).toBe("cafe");
    expect([info.clock, info.resetCount, info.restartCount, info.safe, info.firmwareVersion]).toEqual([0x1234n, 5, 6, true, 7n]);
    expect(info.selection).toEqual([{ alg: 0x0b, pcrs: ALL24 }]);
    expect(hex(info.pcrDigest)).toBe("dddd");
    expect(m.parseAttest(bytes(`ff544347 8018 ${body.replace(" 01 ", " 00 ")}`)).safe).toBe(false);
    expect(m.parseAttest(bytes(`ff544347 8018 ${body.replace(" 01 ", " 02 ")}`)).safe).toBe(false);
    expect(() => m.parseAttest(bytes(`ff544348 8018 ${body}`))).toThrow(/magic 0xff544348 is not TPM_GENERATED_VALUE/);
    expect(() => m.parseAttest(bytes(`ff544347 8017 ${body}`))).toThrow(/type 0x8017 is not a quote/);
  });

  it("parseSignature: RSASSA, RSAPSS, ECDSA; anything else is refused", () => {
    expect(m.parseSignature(bytes("0014 000b 0002 0102"))).toEqual({ alg: 0x14, hash: 0x0b, rsa: bytes("0102") });
    expect(m.parseSignature(bytes("0016 000c 0001 ff"))).toEqual({ alg: 0x16, hash: 0x0c, rsa: bytes("ff") });
    expect(m.parseSignature(bytes("0018 000b 0001 01 0001 02"))).toEqual({ alg: 0x18, hash: 0x0b, ecdsa: { r: bytes("01"), s: bytes("02") } });
    expect(() => m.parseSignature(bytes("0017 000b 0000"))).toThrow(/unsupported signature algorithm 0x17/);
  });

  it("rsaPublicJwk reads n and e from a TPMT_PUBLIC (default exponent, symmetric and scheme fields skipped)", () => {
    const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const jwk = publicKey.export({ format: "jwk" });
    const n = Buffer.from(jwk.n!, "base64url");
    const tpmt = (sym: string, scheme: string, exp: string) => bytes(`0001 000b 00050072 0000 ${sym} ${scheme} 0400 ${exp} ${n.length.toString(16).padStart(4, "0")}${n.toString("hex")}`);
    expect(m.rsaPublicJwk(tpmt("0010", "0014 000b", "00000000"))).toEqual({ kty: "RSA", n: jwk.n, e: "AQAB" });
    expect(m.rsaPublicJwk(tpmt("0006 0080 0043", "0010", "00000003"))).toEqual({ kty: "RSA", n: jwk.n, e: "Aw" });
    expect(m.rsaPublicJwk(tpmt("0010", "0010", "01000001")).e).toBe("AQAAAQ");
    expect(() => m.rsaPublicJwk(bytes("0023 000b"))).toThrow(/AK type 0x23 is not RSA/);
  });

  it("publicMatchesTemplate compares everything before the unique field", () => {
    const t = m.akTemplateRsa();
    const made = new Uint8Array([...t.subarray(0, t.length - 2), 0x01, 0x00, ...new Uint8Array(256)]);
    expect(m.publicMatchesTemplate(made, t)).toBe(true);
    const other = made.slice();
    other[5]! ^= 0x20; // decrypt attribute flipped
    expect(m.publicMatchesTemplate(other, t)).toBe(false);
    expect(m.publicMatchesTemplate(t.subarray(0, t.length - 3), t)).toBe(false);
    expect(m.publicMatchesTemplate(t.subarray(0, t.length - 2), t)).toBe(true);
  });

  it("policyPcrDigest is SHA-256(0³² ‖ TPM_CC_PolicyPCR ‖ selection ‖ pcrDigest) (Part 3 §23.7)", () => {
    const sel = [{ alg: 0x0b, pcrs: [0, 1, 2, 3, 4, 5, 6, 7] }];
    const d = bytes("11".repeat(32));
    const want = createHash("sha256").update(Buffer.alloc(32)).update(bytes("0000017f 00000001 000b 03 ff0000")).update(d).digest("hex");
    expect(hex(m.policyPcrDigest(d, sel))).toBe(want);
  });
});

describe("the reader and the hash table", () => {
  it("every read is bounds-checked with TpmParseError (no silent short reads)", () => {
    const one = () => new m.Reader(bytes("01"));
    for (const [what, f] of [["u16", (r: m.Reader) => r.u16()], ["u32", (r: m.Reader) => r.u32()], ["u64", (r: m.Reader) => r.u64()], ["raw", (r: m.Reader) => r.raw(2)]] as const) {
      const err = (() => {
        try {
          f(one());
        } catch (e) {
          return e as Error;
        }
      })();
      expect([what, err?.name, err?.message]).toEqual([what, "TpmParseError", expect.stringMatching(/^truncated TPM structure at byte 0 \(\+[2-8]\)$/)]);
    }
    expect(new m.Reader(bytes("0102030405060708")).u64()).toBe(0x0102030405060708n);
  });

  it("parsed values are copies, not views that keep the whole response alive", () => {
    const pcr = m.parsePcrRead(m.parseResponse(bytes(frame("8001", "00000000", "00000001 00000001 000b 03 010000 00000001 0001aa"))));
    expect(pcr.digests[0]!.buffer.byteLength).toBe(1);
    expect(m.parseNvRead(m.parseResponse(bytes(frame("8002", "00000000", "00000004 0002 beef 0000010000")))).buffer.byteLength).toBe(2);
    expect(m.parseRsaDecrypt(m.parseResponse(bytes(frame("8002", "00000000", "00000003 0001 7f 0000010000")))).buffer.byteLength).toBe(1);
  });

  it("HASHES names node:crypto's hash and the digest size per TPM algorithm", () => {
    expect(m.HASHES).toEqual({ 4: { name: "sha1", size: 20 }, 11: { name: "sha256", size: 32 }, 12: { name: "sha384", size: 48 }, 13: { name: "sha512", size: 64 } });
  });
});

describe("describeRc (Part 2 §6.6)", () => {
  it("names format-0 codes, the resource-manager layer, and format-1 errors with handle/parameter/session numbers", () => {
    expect(m.describeRc(0x101)).toBe("0x101 TPM_RC_FAILURE");
    expect(m.describeRc(0x100)).toBe("0x100 TPM_RC_INITIALIZE");
    expect(m.describeRc(0x902)).toBe("0x902 TPM_RC_OBJECT_MEMORY");
    expect(m.describeRc(0x922)).toBe("0x922 TPM_RC_RETRY");
    expect(m.describeRc(0x908)).toBe("0x908 TPM_RC_YIELDED");
    expect(m.describeRc(0x90a)).toBe("0x90a TPM_RC_TESTING");
    expect(m.describeRc(0x143)).toBe("0x143 TPM_RC_COMMAND_CODE");
    expect(m.describeRc(0x149)).toBe("0x149 TPM_RC_AUTH_UNAVAILABLE");
    expect(m.describeRc(0x14c)).toBe("0x14c TPM_RC_NV_SPACE");
    expect(m.describeRc(0xb0143)).toBe("0xb0143 (resource manager: command not supported)");
    expect(m.describeRc(0x18b)).toBe("0x18b TPM_RC_HANDLE (handle 1)");
    expect(m.describeRc(0x28b)).toBe("0x28b TPM_RC_HANDLE (handle 2)");
    expect(m.describeRc(0x1d5)).toBe("0x1d5 TPM_RC_SIZE (parameter 1)");
    expect(m.describeRc(0x2d5)).toBe("0x2d5 TPM_RC_SIZE (parameter 2)");
    expect(m.describeRc(0x98e)).toBe("0x98e TPM_RC_AUTH_FAIL (session 1)");
    expect(m.describeRc(0x9a2)).toBe("0x9a2 error 0x22 (session 1)");
    expect(m.describeRc(0x182)).toBe("0x182 TPM_RC_HASH (handle 1)");
    expect(m.describeRc(0x1dc)).toBe("0x1dc TPM_RC_KEY_SIZE (parameter 1)");
    expect(m.describeRc(0x1d2)).toBe("0x1d2 TPM_RC_SCHEME (parameter 1)");
    expect(m.describeRc(0x1d8)).toBe("0x1d8 TPM_RC_SELECTOR (parameter 1)");
    expect(m.describeRc(0x123)).toBe("0x123");
    expect(m.describeRc(0x5)).toBe("0x005");
  });
});
