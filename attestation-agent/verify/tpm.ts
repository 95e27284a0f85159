/**
 * Verification of vTPM evidence (go-tpm-tools `attest.Attestation`): each quote's RSASSA
 * signature under the AK, its nonce (extraData), its PCR selection (exactly 0..23 of the bank)
 * and its PCR digest over the reported PCR values. Usable by relying parties.
 */
import { createHash, createPublicKey, verify as cryptoVerify, type KeyObject } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { AttestationSchema, type Attestation } from "../gen/attest/attest_pb.ts";
import { ALG, HASHES, PCR_COUNT, parseAttest, parseSignature, rsaPublicJwk, type QuoteInfo } from "../tpm/marshal.ts";
import { parseEventLog, type TcgEvent } from "../cloud/eventlog.ts";

/** Evidence failed a check; `check` names which. */
export class VerifyError extends Error {
  override name = "VerifyError";
  readonly check: string;
  constructor(check: string, message: string) {
    super(`${check}: ${message}`);
    this.check = check;
  }
}

export interface VerifiedQuote {
  bank: string;
  info: QuoteInfo;
  pcrs: Map<number, Uint8Array>;
}

export function akPublicKey(akPub: Uint8Array): KeyObject {
  try {
    return createPublicKey({ key: rsaPublicJwk(akPub), format: "jwk" });
  } catch (e) {
    throw new VerifyError("ak", `cannot read AK public area: ${(e as Error).message}`);
  }
}

/** Checks one quote; returns its decoded TPMS_ATTEST. */
export function verifyQuote(ak: KeyObject, q: { quote: Uint8Array; rawSig: Uint8Array; hash: number; pcrs: Map<number, Uint8Array> }, nonce: Uint8Array): VerifiedQuote {
  const bank = HASHES[q.hash];
  if (!bank) throw new VerifyError("bank", `unsupported PCR bank 0x${q.hash.toString(16)}`);
  let sig: ReturnType<typeof parseSignature>;
  let info: QuoteInfo;
  try {
    sig = parseSignature(q.rawSig);
    info = parseAttest(q.quote);
  } catch (e) {
    throw new VerifyError("format", (e as Error).message);
  }
  if (!sig.rsa || sig.alg !== ALG.RSASSA) throw new VerifyError("signature", `scheme 0x${sig.alg.toString(16)} is not RSASSA`);
  const sigHash = HASHES[sig.hash];
  if (!sigHash) throw new VerifyError("signature", `unsupported signature hash 0x${sig.hash.toString(16)}`);
  if (!cryptoVerify(sigHash.name, q.quote, ak, sig.rsa)) throw new VerifyError("signature", `${bank.name} quote signature does not verify under the AK`);
  if (Buffer.compare(Buffer.from(info.extraData), Buffer.from(nonce)) !== 0)
    throw new VerifyError("nonce", `${bank.name} quote extraData ${Buffer.from(info.extraData).toString("hex")} != nonce ${Buffer.from(nonce).toString("hex")}`);
  const own = info.selection[0];
  if (info.selection.length !== 1 || own?.alg !== q.hash) throw new VerifyError("selection", `${bank.name} quote does not select exactly its own bank`);
  const sel = own.pcrs;
  if (sel.length !== PCR_COUNT || sel.some((p, i) => p !== i)) throw new VerifyError("selection", `${bank.name} quote selects PCRs ${sel.join(",")}, not 0-23`);
  const h = createHash(sigHash.name);
  for (const p of sel) {
    const v = q.pcrs.get(p);
    if (!v) throw new VerifyError("pcrs", `${bank.name} PCR ${p} missing`);
    if (v.length !== bank.size) throw new VerifyError("pcrs", `${bank.name} PCR ${p} has ${v.length} bytes`);
    h.update(v);
  }
  if (q.pcrs.size !== PCR_COUNT) throw new VerifyError("pcrs", `${bank.name} reports ${q.pcrs.size} PCRs, want ${PCR_COUNT}`);
  const digest = h.digest();
  if (Buffer.compare(digest, Buffer.from(info.pcrDigest)) !== 0) throw new VerifyError("pcr-digest", `${bank.name} PCR values do not match the quoted digest`);
  return { bank: bank.name, info, pcrs: q.pcrs };
}

function pcrMap(m: { [k: number]: Uint8Array }): Map<number, Uint8Array> {
  return new Map(Object.entries(m).map(([k, v]) => [Number(k), v]));
}

export interface VerifiedVtpm {
  attestation: Attestation;
  quotes: VerifiedQuote[];
}

/**
 * Verifies a serialized `attest.Attestation`: every quote against `nonce` (the 32-byte padded
 * nonce the agent used). Throws VerifyError on the first failed check.
 */
export function verifyVtpmAttestation(bytes: Uint8Array | Attestation, nonce: Uint8Array, opts: { requireBanks?: number[] } = {}): VerifiedVtpm {
  let att: Attestation;
  try {
    att = bytes instanceof Uint8Array ? fromBinary(AttestationSchema, bytes) : bytes;
  } catch (e) {
    throw new VerifyError("format", `not an attest.Attestation: ${(e as Error).message}`);
  }
  if (att.quotes.length === 0) throw new VerifyError("quotes", "no quotes");
  const ak = akPublicKey(att.akPub);
  const quotes = att.quotes.map((q) => {
    if (!q.pcrs) throw new VerifyError("pcrs", "quote without PCR values");
    return verifyQuote(ak, { quote: q.quote, rawSig: q.rawSig, hash: q.pcrs.hash, pcrs: pcrMap(q.pcrs.pcrs) }, nonce);
  });
  const banks = new Set(att.quotes.map((q) => q.pcrs!.hash as number));
  if (banks.size !== att.quotes.length) throw new VerifyError("quotes", "two quotes for the same bank");
  for (const b of opts.requireBanks ?? []) if (!banks.has(b)) throw new VerifyError("quotes", `no quote for bank 0x${b.toString(16)}`);
  return { attestation: att, quotes };
}

/** EV_NO_ACTION: informational, never extended. */
const EV_NO_ACTION = 3;
const STARTUP_LOCALITY = Buffer.from("StartupLocality\0", "latin1");
/** PCRs the platform firmware measures into and logs every measurement of (TCG PC Client PFP). */
const FIRMWARE_PCRS = 8;

/**
 * What a replay of the event log found: the PCRs it reproduced and the quoted PCRs that are not at
 * their initial value although the log has no event for them; or why it was not replayed.
 */
export type EventLogReplay = { replayed: number[]; unexplained: number[] } | { notReplayed: string };

/** A PCR's value after reset: zeros, all ones for the DRTM PCRs 17-22, PCR 0 may start at locality 3 or 4. */
function isInitial(pcr: number, v: Uint8Array): boolean {
  const body = v.subarray(0, v.length - 1);
  const last = v[v.length - 1];
  if (pcr >= 17 && pcr <= 22 && v.every((b) => b === 0xff)) return true;
  return body.every((b) => b === 0) && (last === 0 || (pcr === 0 && (last === 3 || last === 4)));
}

/**
 * Parses a SHA-1-only legacy log (TCG_PCR_EVENT records: PCR, type, SHA-1 digest, data), as
 * go-attestation's `ParseEventLog` reads a log without a Spec ID Event03; anything else that is not
 * a TCG log fails.
 */
function parseLegacyLog(log: Uint8Array): TcgEvent[] {
  const b = Buffer.from(log.buffer, log.byteOffset, log.length);
  const events: TcgEvent[] = [];
  let o = 0;
  while (o < b.length) {
    if (o + 32 > b.length) throw new VerifyError("eventlog", `not a TCG event log: record truncated at byte ${o}`);
    const pcr = b.readUInt32LE(o);
    const type = b.readUInt32LE(o + 4);
    const size = b.readUInt32LE(o + 28);
    // An informational EV_NO_ACTION record extends nothing; firmware writes some with PCR index 0xFFFFFFFF.
    if (pcr >= PCR_COUNT && type !== EV_NO_ACTION) throw new VerifyError("eventlog", `not a TCG event log: PCR index ${pcr} at byte ${o}`);
    if (o + 32 + size > b.length) throw new VerifyError("eventlog", `not a TCG event log: record truncated at byte ${o}`);
    events.push({ pcr, type, digests: new Map([[ALG.SHA1, new Uint8Array(b.subarray(o + 8, o + 28))]]), data: new Uint8Array(b.subarray(o + 32, o + 32 + size)) });
    o += 32 + size;
  }
  return events;
}

/**
 * Replays a crypto-agile TCG event log against the quoted PCR values, as go-attestation's
 * `EventLog.Verify` (which go-tpm-tools' server uses): each bank's PCRs the log extends must equal
 * the quoted ones (a log that does not reproduce them was altered, or belongs to another boot).
 * Stricter than it: a firmware PCR (0-7) that is not at its initial value but has no event in the
 * log fails (its events were removed, or the log is only a header), and any other such PCR (an
 * OS's own measurements, which a firmware log does not hold) is reported `unexplained`. A SHA-1-only
 * legacy log is replayed against the sha1 quote (go-attestation's rule for such a log), and not
 * replayed when no sha1 bank was quoted; an empty log is not replayed; bytes that are not a TCG
 * log, or a crypto-agile log that does not parse, fail.
 */
export function replayEventLog(log: Uint8Array, quotes: readonly VerifiedQuote[]): EventLogReplay {
  if (log.length === 0) return { notReplayed: "no event log" };
  let events: TcgEvent[];
  let banks = quotes;
  if (log.length < 47 || Buffer.from(log.subarray(32, 47)).toString("latin1") !== "Spec ID Event03") {
    events = parseLegacyLog(log);
    // its digests are SHA-1: only a sha1 quote can show them right or wrong
    banks = quotes.filter((q) => q.bank === "sha1");
    if (banks.length === 0) return { notReplayed: "a SHA-1-only legacy event log (no Spec ID Event03) and no sha1 quote to replay it against" };
  } else {
    try {
      events = parseEventLog(log);
    } catch (e) {
      throw new VerifyError("eventlog", (e as Error).message);
    }
  }
  const replayed = new Set<number>();
  const unexplained = new Set<number>();
  for (const q of banks) {
    const alg = Number(Object.entries(HASHES).find(([, h]) => h.name === q.bank)?.[0]);
    const size = HASHES[alg]!.size; // !: a verified quote's bank is one of HASHES
    const pcrs = new Map<number, Buffer>();
    let locality = 0;
    for (const e of events) {
      if (e.type === EV_NO_ACTION) {
        // PCR 0 starts at the locality the firmware's TPM2_Startup used (TCG PFP 10.4.5.3)
        const data = Buffer.from(e.data);
        if (e.pcr === 0 && data.length >= 17 && data.subarray(0, 16).equals(STARTUP_LOCALITY)) locality = data[16]!;
        continue;
      }
      const d = e.digests.get(alg);
      if (!d) throw new VerifyError("eventlog", `an event of PCR ${e.pcr} has no ${q.bank} digest`);
      const start = Buffer.alloc(size);
      if (e.pcr === 0) start[size - 1] = locality;
      pcrs.set(e.pcr, createHash(q.bank).update(pcrs.get(e.pcr) ?? start).update(d).digest());
    }
    for (const [i, v] of pcrs) {
      const quoted = q.pcrs.get(i);
      if (!quoted || !v.equals(Buffer.from(quoted))) throw new VerifyError("eventlog", `${q.bank} PCR ${i} replayed from the event log is ${v.toString("hex")}, the quote says ${quoted ? Buffer.from(quoted).toString("hex") : "nothing"}`);
      replayed.add(i);
    }
    for (const [i, quoted] of q.pcrs) {
      if (pcrs.has(i) || isInitial(i, quoted)) continue;
      if (i < FIRMWARE_PCRS) throw new VerifyError("eventlog", `${q.bank} PCR ${i} is not its initial value and the event log has no event for it (the firmware logs every measurement of PCRs 0-7)`);
      unexplained.add(i);
    }
  }
  const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);
  return { replayed: sorted(replayed), unexplained: sorted(unexplained) };
}
