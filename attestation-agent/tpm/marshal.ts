/**
 * Pure TPM 2.0 marshalling (TCG TPM 2.0 Library Part 2/3): big-endian builders and parsers for
 * the few commands the agent sends. No I/O here; see transport.ts and client.ts.
 */

import { createHash } from "node:crypto";

export const TPM_ST_NO_SESSIONS = 0x8001;
export const TPM_ST_SESSIONS = 0x8002;
export const TPM_ST_ATTEST_QUOTE = 0x8018;
export const TPM_GENERATED_VALUE = 0xff544347;

export const CC = {
  EvictControl: 0x120,
  CreatePrimary: 0x131,
  Quote: 0x158,
  FlushContext: 0x165,
  ReadPublic: 0x173,
  GetCapability: 0x17a,
  GetRandom: 0x17b,
  PCR_Read: 0x17e,
  NV_UndefineSpace: 0x122,
  NV_DefineSpace: 0x12a,
  NV_Write: 0x137,
  NV_Read: 0x14e,
  NV_ReadPublic: 0x169,
  Certify: 0x148,
  RSA_Decrypt: 0x159,
  StartAuthSession: 0x176,
  PolicyPCR: 0x17f,
} as const;

/** TPMA_NV bits used by the agent. */
export const NV_ATTR = { OWNERWRITE: 0x2, OWNERREAD: 0x20000 } as const;

export const RH = { OWNER: 0x40000001, NULL: 0x40000007, RS_PW: 0x40000009, ENDORSEMENT: 0x4000000b } as const;

export const ALG = {
  RSA: 0x0001,
  SHA1: 0x0004,
  SHA256: 0x000b,
  SHA384: 0x000c,
  SHA512: 0x000d,
  NULL: 0x0010,
  RSASSA: 0x0014,
} as const;

/** node:crypto hash name and digest size per TPM hash algorithm id. */
export const HASHES: Record<number, { name: string; size: number }> = {
  [ALG.SHA1]: { name: "sha1", size: 20 },
  [ALG.SHA256]: { name: "sha256", size: 32 },
  [ALG.SHA384]: { name: "sha384", size: 48 },
  [ALG.SHA512]: { name: "sha512", size: 64 },
};

export const RC = {
  SUCCESS: 0,
  INITIALIZE: 0x100,
  FAILURE: 0x101,
  OBJECT_MEMORY: 0x902,
  YIELDED: 0x908,
  TESTING: 0x90a,
  RETRY: 0x922,
} as const;

/** Persistent handle where go-tpm-tools caches the RSA AK (AttestationKeyRSA). */
export const AK_RSA_PERSISTENT_HANDLE = 0x81008f01;

/** Number of PCRs quoted: always exactly 0..23. */
export const PCR_COUNT = 24;

/** Byte builder. */
export class Writer {
  private chunks: Uint8Array[] = [];
  private len = 0;
  u8(v: number): this {
    return this.raw(Uint8Array.of(v & 0xff));
  }
  u16(v: number): this {
    const b = new Uint8Array(2);
    new DataView(b.buffer).setUint16(0, v);
    return this.raw(b);
  }
  u32(v: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v >>> 0);
    return this.raw(b);
  }
  raw(b: Uint8Array): this {
    this.chunks.push(b);
    this.len += b.length;
    return this;
  }
  /** TPM2B: u16 size then the bytes. */
  tpm2b(b: Uint8Array): this {
    return this.u16(b.length).raw(b);
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.len);
    let o = 0;
    for (const c of this.chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }
}

/** Bounds-checked byte reader; throws TpmParseError on truncation. */
export class Reader {
  private view: DataView;
  pos: number;
  readonly buf: Uint8Array;
  constructor(buf: Uint8Array, pos = 0) {
    this.buf = buf;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = pos;
  }
  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new TpmParseError(`truncated TPM structure at byte ${this.pos} (+${n})`);
  }
  u8(): number {
    this.need(1);
    return this.view.getUint8(this.pos++);
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.pos);
    this.pos += 8;
    return v;
  }
  raw(n: number): Uint8Array {
    this.need(n);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  tpm2b(): Uint8Array {
    return this.raw(this.u16());
  }
  get remaining(): number {
    return this.buf.length - this.pos;
  }
}

export class TpmParseError extends Error {
  override name = "TpmParseError";
}

/** The AK template of go-tpm-tools AKTemplateRSA(): RSA-2048 restricted signing, RSASSA-SHA256. */
export function akTemplateRsa(): Uint8Array {
  return new Writer()
    .u16(ALG.RSA) // type
    .u16(ALG.SHA256) // nameAlg
    .u32(0x00050072) // fixedTPM|fixedParent|sensitiveDataOrigin|userWithAuth|restricted|sign
    .u16(0) // authPolicy (empty)
    .u16(ALG.NULL) // symmetric
    .u16(ALG.RSASSA)
    .u16(ALG.SHA256) // scheme
    .u16(2048) // keyBits
    .u32(0) // exponent (default 65537)
    .u16(0) // unique (empty)
    .bytes();
}

/** Empty-password authorization area for one handle (TPM_RS_PW). */
function pwSession(): Uint8Array {
  return new Writer().u32(RH.RS_PW).u16(0).u8(0).u16(0).bytes();
}

/** A policy session used without an HMAC (PolicyPCR-only policies): handle, empty nonce, continueSession. */
export function policySessionAuth(handle: number): Uint8Array {
  return new Writer().u32(handle).u16(0).u8(1).u16(0).bytes();
}

/**
 * Frames a command: tag, size, code, handles, auth area, parameters. `auth` true gives one empty
 * password session; a number gives that many; an array gives those sessions verbatim.
 */
export function command(code: number, handles: number[], params: Uint8Array, auth: boolean | number | Uint8Array[] = false): Uint8Array {
  const sessions = Array.isArray(auth) ? auth : Array.from({ length: auth === true ? 1 : auth === false ? 0 : auth }, pwSession);
  const body = new Writer();
  for (const h of handles) body.u32(h);
  if (sessions.length > 0) {
    const area = new Writer();
    for (const s of sessions) area.raw(s);
    const a = area.bytes();
    body.u32(a.length).raw(a);
  }
  body.raw(params);
  const b = body.bytes();
  return new Writer()
    .u16(sessions.length > 0 ? TPM_ST_SESSIONS : TPM_ST_NO_SESSIONS)
    .u32(10 + b.length)
    .u32(code)
    .raw(b)
    .bytes();
}

/** A decoded response header. */
export interface Response {
  tag: number;
  rc: number;
  /** Bytes after the header. */
  body: Uint8Array;
}

export function parseResponse(bytes: Uint8Array): Response {
  const r = new Reader(bytes);
  const tag = r.u16();
  const size = r.u32();
  const rc = r.u32();
  if (size !== bytes.length) throw new TpmParseError(`response size field ${size} != ${bytes.length} bytes received`);
  return { tag, rc, body: bytes.subarray(10) };
}

/**
 * Reader positioned at the response parameters: skips `nHandles` response handles and, for a
 * sessions response, the parameterSize field (and bounds the reader to the parameters).
 */
export function paramsReader(res: Response, nHandles: number): { handles: number[]; r: Reader } {
  const r = new Reader(res.body);
  const handles: number[] = [];
  for (let i = 0; i < nHandles; i++) handles.push(r.u32());
  if (res.tag === TPM_ST_SESSIONS) {
    const n = r.u32();
    return { handles, r: new Reader(r.raw(n)) };
  }
  return { handles, r };
}

/** TPML_PCR_SELECTION for the given banks, each selecting PCRs `pcrs`. */
export function pcrSelection(banks: { alg: number; pcrs: number[] }[]): Uint8Array {
  const w = new Writer().u32(banks.length);
  for (const b of banks) {
    const bitmap = new Uint8Array(3);
    // A PCR beyond 23 has no bit in the 3-byte map: the write to a missing index is dropped, as before.
    for (const p of b.pcrs) bitmap[p >> 3] = (bitmap[p >> 3] ?? 0) | (1 << (p & 7));
    w.u16(b.alg).u8(3).raw(bitmap);
  }
  return w.bytes();
}

export interface PcrBankSelection {
  alg: number;
  pcrs: number[];
}

export function readPcrSelection(r: Reader): PcrBankSelection[] {
  const count = r.u32();
  if (count > 16) throw new TpmParseError(`implausible PCR selection count ${count}`);
  const out: PcrBankSelection[] = [];
  for (let i = 0; i < count; i++) {
    const alg = r.u16();
    const n = r.u8();
    const bm = r.raw(n);
    const pcrs: number[] = [];
    for (let j = 0; j < n * 8; j++) if (bm[j >> 3]! & (1 << (j & 7))) pcrs.push(j); // !: raw(n) returned n bytes
    out.push({ alg, pcrs });
  }
  return out;
}

export function createPrimaryCommand(hierarchy: number, template: Uint8Array): Uint8Array {
  const p = new Writer()
    .u16(4)
    .u16(0)
    .u16(0) // inSensitive: TPM2B{userAuth empty, data empty}
    .tpm2b(template) // inPublic
    .u16(0) // outsideInfo
    .u32(0) // creationPCR: empty selection
    .bytes();
  return command(CC.CreatePrimary, [hierarchy], p, true);
}

export function parseCreatePrimary(res: Response): { handle: number; publicArea: Uint8Array } {
  const { handles, r } = paramsReader(res, 1);
  return { handle: handles[0]!, publicArea: r.tpm2b() }; // !: paramsReader read 1 handle
}

export function readPublicCommand(handle: number): Uint8Array {
  return command(CC.ReadPublic, [handle], new Uint8Array(0));
}

export function parseReadPublic(res: Response): Uint8Array {
  return paramsReader(res, 0).r.tpm2b();
}

export function evictControlCommand(auth: number, object: number, persistent: number): Uint8Array {
  return command(CC.EvictControl, [auth, object], new Writer().u32(persistent).bytes(), true);
}

export function flushContextCommand(handle: number): Uint8Array {
  return command(CC.FlushContext, [], new Writer().u32(handle).bytes());
}

export function getRandomCommand(n: number): Uint8Array {
  return command(CC.GetRandom, [], new Writer().u16(n).bytes());
}

/** GetCapability(TPM_CAP_PCRS): the allocated PCR banks. */
export function getCapabilityPcrsCommand(): Uint8Array {
  return command(CC.GetCapability, [], new Writer().u32(5).u32(0).u32(1).bytes());
}

export function parseGetCapabilityPcrs(res: Response): PcrBankSelection[] {
  const { r } = paramsReader(res, 0);
  r.u8(); // moreData
  const cap = r.u32();
  if (cap !== 5) throw new TpmParseError(`GetCapability returned capability ${cap}, wanted TPM_CAP_PCRS`);
  return readPcrSelection(r);
}

export function quoteCommand(ak: number, nonce: Uint8Array, banks: PcrBankSelection[]): Uint8Array {
  const p = new Writer().tpm2b(nonce).u16(ALG.NULL).raw(pcrSelection(banks)).bytes();
  return command(CC.Quote, [ak], p, true);
}

/** Quote response: TPMS_ATTEST bytes and TPMT_SIGNATURE bytes, both exactly as the TPM sent them. */
export function parseQuote(res: Response): { attest: Uint8Array; signature: Uint8Array } {
  const { r } = paramsReader(res, 0);
  const attest = r.tpm2b();
  const sigStart = r.pos;
  const sigAlg = r.u16();
  if (sigAlg === ALG.NULL) throw new TpmParseError("quote carries a NULL signature");
  r.u16(); // hash
  if (sigAlg === ALG.RSASSA || sigAlg === 0x0016 /* RSAPSS */) r.tpm2b();
  else {
    r.tpm2b();
    r.tpm2b(); // ECDSA r, s
  }
  return { attest, signature: r.buf.slice(sigStart, r.pos) };
}

export function pcrReadCommand(alg: number, pcrs: number[]): Uint8Array {
  return command(CC.PCR_Read, [], pcrSelection([{ alg, pcrs }]));
}

export function parsePcrRead(res: Response): { updateCounter: number; selection: PcrBankSelection[]; digests: Uint8Array[] } {
  const { r } = paramsReader(res, 0);
  const updateCounter = r.u32();
  const selection = readPcrSelection(r);
  const n = r.u32();
  // One digest per selected PCR (Part 3, PCR_Read): a count that disagrees is malformed, not a PCR set with holes.
  const selected = selection.reduce((sum, s) => sum + s.pcrs.length, 0);
  if (n !== selected) throw new TpmParseError(`PCR_Read returned ${n} digests for ${selected} selected PCRs`);
  const digests: Uint8Array[] = [];
  for (let i = 0; i < n; i++) digests.push(r.tpm2b().slice());
  return { updateCounter, selection, digests };
}

/** Decoded TPMS_ATTEST of a quote. */
export interface QuoteInfo {
  qualifiedSigner: Uint8Array;
  extraData: Uint8Array;
  clock: bigint;
  resetCount: number;
  restartCount: number;
  safe: boolean;
  firmwareVersion: bigint;
  selection: PcrBankSelection[];
  pcrDigest: Uint8Array;
}

export function parseAttest(attest: Uint8Array): QuoteInfo {
  const r = new Reader(attest);
  const magic = r.u32();
  if (magic !== TPM_GENERATED_VALUE) throw new TpmParseError(`TPMS_ATTEST magic 0x${magic.toString(16)} is not TPM_GENERATED_VALUE`);
  const type = r.u16();
  if (type !== TPM_ST_ATTEST_QUOTE) throw new TpmParseError(`TPMS_ATTEST type 0x${type.toString(16)} is not a quote`);
  const qualifiedSigner = r.tpm2b();
  const extraData = r.tpm2b();
  const clock = r.u64();
  const resetCount = r.u32();
  const restartCount = r.u32();
  const safe = r.u8() === 1;
  const firmwareVersion = r.u64();
  const selection = readPcrSelection(r);
  const pcrDigest = r.tpm2b();
  return { qualifiedSigner, extraData, clock, resetCount, restartCount, safe, firmwareVersion, selection, pcrDigest };
}

/** Decoded TPMT_SIGNATURE (RSASSA/RSAPSS only; ECDSA gives r,s). */
export function parseSignature(sig: Uint8Array): { alg: number; hash: number; rsa?: Uint8Array; ecdsa?: { r: Uint8Array; s: Uint8Array } } {
  const r = new Reader(sig);
  const alg = r.u16();
  const hash = r.u16();
  if (alg === ALG.RSASSA || alg === 0x0016) return { alg, hash, rsa: r.tpm2b() };
  if (alg === 0x0018) return { alg, hash, ecdsa: { r: r.tpm2b(), s: r.tpm2b() } };
  throw new TpmParseError(`unsupported signature algorithm 0x${alg.toString(16)}`);
}

/** RSA public key of an RSA TPMT_PUBLIC, as a JWK usable by node:crypto. */
export function rsaPublicJwk(pub: Uint8Array): { kty: "RSA"; n: string; e: string } {
  const r = new Reader(pub);
  const type = r.u16();
  if (type !== ALG.RSA) throw new TpmParseError(`AK type 0x${type.toString(16)} is not RSA`);
  r.u16(); // nameAlg
  r.u32(); // attributes
  r.tpm2b(); // authPolicy
  const sym = r.u16();
  if (sym !== ALG.NULL) r.raw(4); // keyBits + mode
  const scheme = r.u16();
  if (scheme !== ALG.NULL) r.u16();
  r.u16(); // keyBits
  const exp = r.u32() || 65537;
  const n = r.tpm2b();
  const e = Buffer.alloc(4);
  e.writeUInt32BE(exp);
  let i = 0;
  while (i < 3 && e[i] === 0) i++;
  return { kty: "RSA", n: Buffer.from(n).toString("base64url"), e: e.subarray(i).toString("base64url") };
}

/** True when `pub` was made from `template` (same type, nameAlg, attributes, policy and parameters). */
export function publicMatchesTemplate(pub: Uint8Array, template: Uint8Array): boolean {
  // The template has an empty unique field (2 bytes); everything before it must match.
  const head = template.subarray(0, template.length - 2);
  if (pub.length < head.length) return false;
  return Buffer.compare(Buffer.from(pub.subarray(0, head.length)), Buffer.from(head)) === 0;
}

/** Human text for a TPM response code (format-0 and format-1 decoding, TPM 2.0 Part 2 §6.6). */
export function describeRc(rc: number): string {
  const hex = `0x${rc.toString(16).padStart(3, "0")}`;
  const layer = rc >>> 16;
  if (layer === 0x0b) return `${hex} (resource manager: command not supported)`;
  const names: Record<number, string> = {
    [RC.INITIALIZE]: "TPM_RC_INITIALIZE",
    [RC.FAILURE]: "TPM_RC_FAILURE",
    [RC.OBJECT_MEMORY]: "TPM_RC_OBJECT_MEMORY",
    [RC.RETRY]: "TPM_RC_RETRY",
    [RC.YIELDED]: "TPM_RC_YIELDED",
    [RC.TESTING]: "TPM_RC_TESTING",
    0x143: "TPM_RC_COMMAND_CODE",
    0x149: "TPM_RC_AUTH_UNAVAILABLE",
    0x14c: "TPM_RC_NV_SPACE",
  };
  if (names[rc]) return `${hex} ${names[rc]}`;
  if (rc & 0x80) {
    const err: Record<number, string> = { 0x0b: "TPM_RC_HANDLE", 0x15: "TPM_RC_SIZE", 0x0e: "TPM_RC_AUTH_FAIL", 0x02: "TPM_RC_HASH", 0x1c: "TPM_RC_KEY_SIZE", 0x12: "TPM_RC_SCHEME", 0x18: "TPM_RC_SELECTOR" };
    const e = rc & 0x3f;
    const where = rc & 0x40 ? `parameter ${(rc >> 8) & 0xf}` : rc & 0x800 ? `session ${(rc >> 8) & 0x7}` : `handle ${(rc >> 8) & 0x7}`;
    return `${hex} ${err[e] ?? `error 0x${e.toString(16)}`} (${where})`;
  }
  return hex;
}

/** TPMS_NV_PUBLIC fields the agent needs. */
export interface NvPublic {
  index: number;
  nameAlg: number;
  attributes: number;
  dataSize: number;
}

export function nvReadPublicCommand(index: number): Uint8Array {
  return command(CC.NV_ReadPublic, [index], new Uint8Array(0));
}

export function parseNvReadPublic(res: Response): NvPublic {
  const { r } = paramsReader(res, 0);
  const inner = new Reader(r.tpm2b());
  const index = inner.u32();
  const nameAlg = inner.u16();
  const attributes = inner.u32();
  inner.tpm2b();
  return { index, nameAlg, attributes, dataSize: inner.u16() };
}

export function nvReadCommand(auth: number, index: number, size: number, offset: number): Uint8Array {
  return command(CC.NV_Read, [auth, index], new Writer().u16(size).u16(offset).bytes(), true);
}

export function parseNvRead(res: Response): Uint8Array {
  return paramsReader(res, 0).r.tpm2b().slice();
}

export function nvWriteCommand(auth: number, index: number, data: Uint8Array, offset: number): Uint8Array {
  return command(CC.NV_Write, [auth, index], new Writer().tpm2b(data).u16(offset).bytes(), true);
}

export function nvDefineSpaceCommand(auth: number, pub: NvPublic): Uint8Array {
  const inner = new Writer().u32(pub.index).u16(pub.nameAlg).u32(pub.attributes).u16(0).u16(pub.dataSize).bytes();
  return command(CC.NV_DefineSpace, [auth], new Writer().u16(0).tpm2b(inner).bytes(), true);
}

export function nvUndefineSpaceCommand(auth: number, index: number): Uint8Array {
  return command(CC.NV_UndefineSpace, [auth, index], new Uint8Array(0), true);
}

/** GetCapability(TPM_CAP_TPM_PROPERTIES) for one property. */
export function getCapabilityPropertyCommand(property: number): Uint8Array {
  return command(CC.GetCapability, [], new Writer().u32(6).u32(property).u32(1).bytes());
}

export function parseGetCapabilityProperty(res: Response, property: number): number | undefined {
  const { r } = paramsReader(res, 0);
  r.u8();
  if (r.u32() !== 6) throw new TpmParseError("GetCapability did not return TPM properties");
  const n = r.u32();
  for (let i = 0; i < n; i++) {
    const p = r.u32();
    const v = r.u32();
    if (p === property) return v;
  }
  return undefined;
}

/** TPM_PT_NV_BUFFER_MAX: the largest NV_Read/NV_Write chunk. */
export const TPM_PT_NV_BUFFER_MAX = 0x12c;

export const SE = { HMAC: 0, POLICY: 1, TRIAL: 3 } as const;
export const ALG_RSAES = 0x0015;

/** StartAuthSession, unbound and unsalted, SHA-256, no symmetric parameter encryption. */
export function startAuthSessionCommand(type: number): Uint8Array {
  const p = new Writer().tpm2b(new Uint8Array(32)).u16(0).u8(type).u16(ALG.NULL).u16(ALG.SHA256).bytes();
  return command(CC.StartAuthSession, [RH.NULL, RH.NULL], p);
}

export function parseStartAuthSession(res: Response): number {
  return paramsReader(res, 1).handles[0]!; // !: paramsReader read 1 handle
}

export function policyPcrCommand(session: number, pcrDigest: Uint8Array, sel: PcrBankSelection[]): Uint8Array {
  return command(CC.PolicyPCR, [session], new Writer().tpm2b(pcrDigest).raw(pcrSelection(sel)).bytes());
}

/** The policy digest PolicyPCR extends into a fresh SHA-256 session (TPM 2.0 Part 3 §23.7). */
export function policyPcrDigest(pcrDigest: Uint8Array, sel: PcrBankSelection[]): Uint8Array {
  return new Uint8Array(
    createHash("sha256")
      .update(new Uint8Array(32))
      .update(new Writer().u32(CC.PolicyPCR).bytes())
      .update(pcrSelection(sel))
      .update(pcrDigest)
      .digest(),
  );
}

/** Certify `object` with `signer`; both authorized by empty passwords. */
export function certifyCommand(object: number, signer: number): Uint8Array {
  return command(CC.Certify, [object, signer], new Writer().u16(0).u16(ALG.NULL).bytes(), 2);
}

export function parseCertify(res: Response): { attest: Uint8Array; signature: Uint8Array } {
  return parseQuote(res);
}

export function rsaDecryptCommand(key: number, session: Uint8Array, ciphertext: Uint8Array): Uint8Array {
  const p = new Writer().tpm2b(ciphertext).u16(ALG_RSAES).u16(0).bytes();
  return command(CC.RSA_Decrypt, [key], p, [session]);
}

export function parseRsaDecrypt(res: Response): Uint8Array {
  return paramsReader(res, 0).r.tpm2b().slice();
}

/** TPM2B_PUBLIC of a TPMT_PUBLIC. */
export function tpm2bPublic(pub: Uint8Array): Uint8Array {
  return new Writer().tpm2b(pub).bytes();
}

/** Object name: nameAlg ‖ H(TPMT_PUBLIC), SHA-256 objects only. */
export function objectName(pub: Uint8Array): Uint8Array {
  return new Writer().u16(ALG.SHA256).raw(new Uint8Array(createHash("sha256").update(pub).digest())).bytes();
}
