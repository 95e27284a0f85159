/**
 * vTPM evidence as go-tpm-tools `Attest` makes it: the AttestationKeyRSA AK (owner hierarchy,
 * cached at 0x81008F01), one quote per allocated bank over exactly PCRs 0-23 with the values
 * read alongside, and the TCG event log when readable. Never extends PCRs.
 */
import type { KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import { create, toBinary } from "@bufbuild/protobuf";
import { AttestationSchema, type Attestation } from "../gen/attest/attest_pb.ts";
import { PCRsSchema, QuoteSchema, type HashAlgo, type PCRs } from "../gen/tpm/tpm_pb.ts";
import { VerifyError, verifyQuote, akPublicKey } from "../verify/tpm.ts";
import { FifoLock } from "../limits.ts";
import { TpmClient, TpmError } from "./client.ts";
import { AK_RSA_PERSISTENT_HANDLE, HASHES, PCR_COUNT, RH, akTemplateRsa, publicMatchesTemplate } from "./marshal.ts";

const ALL_PCRS = Array.from({ length: PCR_COUNT }, (_, i) => i);
const MAX_PCR_RACE_RETRIES = 3;
const isDigestMismatch = (e: unknown) => (e as { check?: string }).check === "pcr-digest";

export interface Ak {
  handle: number;
  publicArea: Uint8Array;
  /** The AK public key, for checking each quote before it is returned. */
  key: KeyObject;
}

/** One bank's PCR values, as a map for checking and as the `tpm.PCRs` message of the evidence. */
interface BankPcrs {
  values: Map<number, Uint8Array>;
  pcrs: PCRs;
}

export interface VtpmOptions {
  /** Path of the binary TCG event log; omitted from evidence when unreadable. */
  eventLog?: string;
  log?: (msg: string) => void;
}

export class VtpmAttester {
  readonly tpm: TpmClient;
  private readonly opts: VtpmOptions;
  private akPromise: Promise<Ak> | undefined;
  private banksPromise: Promise<number[]> | undefined;
  /** PCR values per bank as last read and proven by a quote's digest. */
  private readonly pcrCache = new Map<number, BankPcrs>();
  /** The event log as read with the cached PCR values. */
  private eventLogRead: Promise<Uint8Array> | undefined;
  /** The last read failed for a reason other than absence or permissions: read again. */
  private eventLogFailed = false;
  /** One attestation at a time, first come first served: a call's commands run back to back. */
  private readonly lock = new FifoLock();

  constructor(tpm: TpmClient, opts: VtpmOptions = {}) {
    this.tpm = tpm;
    this.opts = opts;
  }

  /**
   * The AK at 0x81008F01, as go-tpm-tools' NewCachedKey does it: reuse it when its public area
   * matches the template; otherwise (re)create it with CreatePrimary, persist it with
   * EvictControl and flush the transient copy.
   */
  ak(signal?: AbortSignal): Promise<Ak> {
    this.akPromise ??= this.loadAk(signal).catch((e) => {
      this.akPromise = undefined;
      throw e;
    });
    return this.akPromise;
  }

  private async loadAk(signal?: AbortSignal): Promise<Ak> {
    const template = akTemplateRsa();
    const existing = await this.tpm.readPublic(AK_RSA_PERSISTENT_HANDLE, signal);
    if (existing && publicMatchesTemplate(existing, template)) return { handle: AK_RSA_PERSISTENT_HANDLE, publicArea: existing, key: akPublicKey(existing) };
    if (existing) await this.tpm.evictControl(RH.OWNER, AK_RSA_PERSISTENT_HANDLE, AK_RSA_PERSISTENT_HANDLE, signal);
    const made = await this.tpm.createPrimary(RH.OWNER, template, signal);
    try {
      await this.tpm.evictControl(RH.OWNER, made.handle, AK_RSA_PERSISTENT_HANDLE);
    } finally {
      await this.tpm.flush(made.handle);
    }
    this.opts.log?.(`created AK at persistent handle 0x${AK_RSA_PERSISTENT_HANDLE.toString(16)}`);
    const publicArea = made.publicArea.slice();
    return { handle: AK_RSA_PERSISTENT_HANDLE, publicArea, key: akPublicKey(publicArea) };
  }

  banks(signal?: AbortSignal): Promise<number[]> {
    this.banksPromise ??= this.tpm.allocatedBanks(signal).then((b) => {
      const known = b.filter((a) => HASHES[a]);
      if (known.length === 0) throw new TpmError("GetCapability", 0x1c4);
      return known;
    });
    this.banksPromise.catch(() => (this.banksPromise = undefined));
    return this.banksPromise;
  }

  /**
   * Builds an `attest.Attestation` for a nonce (already padded by the caller). Calls queue in
   * arrival order; a call whose signal aborts while queued leaves at once.
   */
  attest(nonce: Uint8Array, signal?: AbortSignal): Promise<Attestation> {
    return this.lock.run(() => this.attestNow(nonce, signal), signal);
  }

  private async attestNow(nonce: Uint8Array, signal?: AbortSignal): Promise<Attestation> {
    const ak = await this.ak(signal);
    try {
      return await this.attestWith(ak, nonce, signal);
    } catch (e) {
      // A refused Quote or a signature that does not verify may mean the key at the handle is no
      // longer the one cached (evicted, replaced, or TPM2_Clear gave the same template another
      // key): if it changed, take it as start-up would and retry once.
      const akSuspect = (e instanceof TpmError && e.command === "Quote") || (e instanceof VerifyError && e.check === "signature");
      if (!akSuspect || !(await this.akChanged(ak, signal))) throw e;
      return this.attestWith(await this.ak(signal), nonce, signal);
    }
  }

  /** Reads the key at the AK's handle again; when it is not `ak`, drops the cached AK. */
  private async akChanged(ak: Ak, signal?: AbortSignal): Promise<boolean> {
    const now = await this.tpm.readPublic(ak.handle, signal);
    if (now && Buffer.from(now).equals(Buffer.from(ak.publicArea))) return false;
    this.opts.log?.(`the key at 0x${ak.handle.toString(16)} is not the AK read before (${now ? "another key" : "none"}): taking the AK again`);
    this.akPromise = undefined;
    return true;
  }

  private async attestWith(ak: Ak, nonce: Uint8Array, signal?: AbortSignal): Promise<Attestation> {
    const banks = await this.banks(signal);
    // Every bank's commands are queued at once, so the TPM goes from one quote to the next while
    // the agent checks the previous one. PCR values last seen for a bank are reused: a quote whose
    // digest matches them proves them current (SHA-256 over the values is what the TPM signed),
    // so the 3 PCR_Reads per bank are skipped until a PCR moves.
    const queued = banks.map((alg) => {
      const cached = this.pcrCache.get(alg);
      const values = cached ? Promise.resolve(cached) : this.readPcrs(alg, signal);
      const quote = this.tpm.quote(ak.handle, nonce, [{ alg, pcrs: ALL_PCRS }], signal);
      // Awaited below in bank order; a failure of one bank must not leave the others unhandled.
      quote.catch(() => {});
      values.catch(() => {});
      return { alg, values, quote };
    });
    // The event log describes the PCR values: it is read again whenever they are (every event
    // it gains is an extend), and after a read that failed for a passing reason.
    let eventLog = this.eventLogRead;
    if (!eventLog || this.eventLogFailed || queued.some((b) => !this.pcrCache.has(b.alg))) eventLog = this.eventLogRead = this.readEventLog();
    const quotes = [];
    let moved = false;
    for (const b of queued) {
      let { pcrs, values } = await b.values;
      let q = await b.quote;
      for (let attempt = 0; ; attempt++) {
        // Same check go-tpm-tools makes before returning: signature, nonce, digest of the values.
        const check = (v: Map<number, Uint8Array>) => verifyQuote(ak.key, { quote: q.attest, rawSig: q.signature, hash: b.alg, pcrs: v }, nonce);
        try {
          check(values);
          break;
        } catch (e) {
          if (!isDigestMismatch(e)) throw e;
        }
        // A PCR moved since `values` were read: read them now; they match this quote unless one
        // moved again in between, and then we quote again.
        moved = true;
        ({ pcrs, values } = await this.readPcrs(b.alg, signal));
        try {
          check(values);
          break;
        } catch (e) {
          if (!isDigestMismatch(e) || attempt >= MAX_PCR_RACE_RETRIES) throw e;
        }
        q = await this.tpm.quote(ak.handle, nonce, [{ alg: b.alg, pcrs: ALL_PCRS }], signal);
      }
      this.pcrCache.set(b.alg, { pcrs, values });
      quotes.push(create(QuoteSchema, { quote: q.attest.slice(), rawSig: q.signature, pcrs }));
    }
    if (moved) eventLog = this.eventLogRead = this.readEventLog();
    return create(AttestationSchema, { akPub: ak.publicArea, quotes, eventLog: await eventLog });
  }

  /** All PCRs of a bank, as a map for checking and as the message that goes into evidence. */
  private async readPcrs(alg: number, signal?: AbortSignal): Promise<BankPcrs> {
    const { values } = await this.tpm.pcrRead(alg, ALL_PCRS, signal);
    return { values, pcrs: create(PCRsSchema, { hash: alg as HashAlgo, pcrs: Object.fromEntries(values) }) };
  }

  /** The event log byte for byte, or empty when absent or unreadable (e.g. swtpm, no securityfs). */
  private async readEventLog(): Promise<Uint8Array> {
    this.eventLogFailed = false;
    if (!this.opts.eventLog) return new Uint8Array(0);
    try {
      return new Uint8Array(await readFile(this.opts.eventLog));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "EACCES" && code !== "EPERM") {
        this.opts.log?.(`event log ${this.opts.eventLog} unreadable: ${(e as Error).message}`);
        this.eventLogFailed = true;
      }
      return new Uint8Array(0);
    }
  }
}

export function serializeAttestation(a: Attestation): Uint8Array {
  return toBinary(AttestationSchema, a);
}
