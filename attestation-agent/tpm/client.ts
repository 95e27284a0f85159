/**
 * A TPM 2.0 client over one transport: exactly one command in flight, retries on
 * TPM_RC_RETRY/YIELDED/TESTING, and `AbortSignal` checked before every command.
 */
import {
  ALG,
  RC,
  createPrimaryCommand,
  describeRc,
  evictControlCommand,
  flushContextCommand,
  getCapabilityPcrsCommand,
  getRandomCommand,
  getCapabilityPropertyCommand,
  nvDefineSpaceCommand,
  nvReadCommand,
  nvReadPublicCommand,
  nvUndefineSpaceCommand,
  nvWriteCommand,
  parseGetCapabilityProperty,
  parseNvRead,
  parseNvReadPublic,
  TPM_PT_NV_BUFFER_MAX,
  certifyCommand,
  parseCertify,
  parseRsaDecrypt,
  parseStartAuthSession,
  policyPcrCommand,
  policySessionAuth,
  rsaDecryptCommand,
  startAuthSessionCommand,
  type NvPublic,
  paramsReader,
  parseCreatePrimary,
  parseGetCapabilityPcrs,
  parsePcrRead,
  parseQuote,
  parseReadPublic,
  parseResponse,
  pcrReadCommand,
  quoteCommand,
  readPublicCommand,
  type PcrBankSelection,
  type Response,
} from "./marshal.ts";
import { TpmTransportError, type TpmTransport } from "./transport.ts";

/** The TPM answered with a non-success response code. */
export class TpmError extends Error {
  override name = "TpmError";
  readonly rc: number;
  readonly command: string;
  constructor(command: string, rc: number) {
    super(`TPM2_${command} failed: ${describeRc(rc)}`);
    this.rc = rc;
    this.command = command;
  }
}

const RETRYABLE = new Set<number>([RC.RETRY, RC.YIELDED, RC.TESTING]);
const MAX_RETRIES = 50;

function abortError(signal: AbortSignal): Error {
  const r = signal.reason;
  return r instanceof Error ? r : new DOMException("aborted", "AbortError");
}

export class TpmClient {
  readonly transport: TpmTransport;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  constructor(transport: TpmTransport) {
    this.transport = transport;
  }

  /**
   * Sends one command (queued behind any in flight), retrying the TPM's warning codes with a
   * short backoff. Returns the parsed response; throws TpmError on any other non-zero code.
   */
  async run(name: string, cmd: Uint8Array, signal?: AbortSignal): Promise<Response> {
    const job = this.tail.then(async () => {
      for (let attempt = 0; ; attempt++) {
        if (signal?.aborted) throw abortError(signal);
        if (this.closed) throw new TpmTransportError("the TPM connection is closed");
        const res = parseResponse(await this.transport.send(cmd));
        if (res.rc === RC.SUCCESS) return res;
        if (RETRYABLE.has(res.rc) && attempt < MAX_RETRIES) {
          await new Promise((r) => setTimeout(r, Math.min(2 + attempt * 5, 100)));
          continue;
        }
        throw new TpmError(name, res.rc);
      }
    });
    this.tail = job.catch(() => {});
    return job;
  }

  async getRandom(n: number, signal?: AbortSignal): Promise<Uint8Array> {
    const res = await this.run("GetRandom", getRandomCommand(n), signal);
    return paramsReader(res, 0).r.tpm2b().slice();
  }

  /** Allocated PCR banks that have at least one PCR selected. */
  async allocatedBanks(signal?: AbortSignal): Promise<number[]> {
    const sel = parseGetCapabilityPcrs(await this.run("GetCapability", getCapabilityPcrsCommand(), signal));
    return sel.filter((b) => b.pcrs.length > 0).map((b) => b.alg);
  }

  async createPrimary(hierarchy: number, template: Uint8Array, signal?: AbortSignal): Promise<{ handle: number; publicArea: Uint8Array }> {
    return parseCreatePrimary(await this.run("CreatePrimary", createPrimaryCommand(hierarchy, template), signal));
  }

  /** TPMT_PUBLIC of a loaded or persistent object, or undefined when the handle is absent. */
  async readPublic(handle: number, signal?: AbortSignal): Promise<Uint8Array | undefined> {
    try {
      return parseReadPublic(await this.run("ReadPublic", readPublicCommand(handle), signal)).slice();
    } catch (e) {
      // TPM_RC_HANDLE on handle 1 (0x18B): nothing at that handle.
      if (e instanceof TpmError && (e.rc & 0xbf) === 0x8b) return undefined;
      throw e;
    }
  }

  async evictControl(auth: number, object: number, persistent: number, signal?: AbortSignal): Promise<void> {
    await this.run("EvictControl", evictControlCommand(auth, object, persistent), signal);
  }

  /** Flushes a transient object; never aborted, so a created object cannot leak. */
  async flush(handle: number): Promise<void> {
    await this.run("FlushContext", flushContextCommand(handle));
  }

  async quote(ak: number, nonce: Uint8Array, banks: PcrBankSelection[], signal?: AbortSignal) {
    return parseQuote(await this.run("Quote", quoteCommand(ak, nonce, banks), signal));
  }

  /**
   * Reads `pcrs` of one bank, at most 8 per command as TPMs allow. Returns the values and the
   * update counters seen, so a caller can detect a concurrent extend.
   */
  async pcrRead(alg: number, pcrs: number[], signal?: AbortSignal): Promise<{ values: Map<number, Uint8Array>; counters: number[] }> {
    const values = new Map<number, Uint8Array>();
    const counters: number[] = [];
    let todo = [...pcrs];
    while (todo.length > 0) {
      const chunk = todo.slice(0, 8);
      const out = parsePcrRead(await this.run("PCR_Read", pcrReadCommand(alg, chunk), signal));
      counters.push(out.updateCounter);
      const got = out.selection.find((s) => s.alg === alg)?.pcrs ?? [];
      if (got.length === 0) throw new TpmError("PCR_Read", 0x1c4 /* TPM_RC_VALUE, bank empty */);
      got.forEach((p, i) => {
        values.set(p, out.digests[i]!); // !: parsePcrRead checked one digest per selected PCR
      });
      todo = todo.filter((p) => !values.has(p));
    }
    return { values, counters };
  }

  /** NV index public area, or undefined when the index is not defined. */
  async nvReadPublic(index: number, signal?: AbortSignal): Promise<NvPublic | undefined> {
    try {
      return parseNvReadPublic(await this.run("NV_ReadPublic", nvReadPublicCommand(index), signal));
    } catch (e) {
      if (e instanceof TpmError && (e.rc & 0xbf) === 0x8b) return undefined;
      throw e;
    }
  }

  private async nvChunk(signal?: AbortSignal): Promise<number> {
    const v = parseGetCapabilityProperty(await this.run("GetCapability", getCapabilityPropertyCommand(TPM_PT_NV_BUFFER_MAX), signal), TPM_PT_NV_BUFFER_MAX);
    return Math.min(v ?? 512, 1024);
  }

  /** Reads a whole NV index with owner authorization, in TPM_PT_NV_BUFFER_MAX chunks. */
  async nvReadAll(index: number, auth: number, signal?: AbortSignal): Promise<Uint8Array> {
    const pub = await this.nvReadPublic(index, signal);
    if (!pub) throw new TpmError("NV_ReadPublic", 0x18b);
    const chunk = await this.nvChunk(signal);
    const out = new Uint8Array(pub.dataSize);
    for (let off = 0; off < pub.dataSize; off += chunk) {
      const n = Math.min(chunk, pub.dataSize - off);
      out.set(parseNvRead(await this.run("NV_Read", nvReadCommand(auth, index, n, off), signal)), off);
    }
    return out;
  }

  async nvWrite(index: number, auth: number, data: Uint8Array, signal?: AbortSignal): Promise<void> {
    const chunk = await this.nvChunk(signal);
    for (let off = 0; off < data.length; off += chunk) await this.run("NV_Write", nvWriteCommand(auth, index, data.subarray(off, off + chunk), off), signal);
  }

  async nvDefineSpace(auth: number, pub: NvPublic, signal?: AbortSignal): Promise<void> {
    await this.run("NV_DefineSpace", nvDefineSpaceCommand(auth, pub), signal);
  }

  async nvUndefineSpace(auth: number, index: number, signal?: AbortSignal): Promise<void> {
    await this.run("NV_UndefineSpace", nvUndefineSpaceCommand(auth, index), signal);
  }

  async startPolicySession(type: number, signal?: AbortSignal): Promise<number> {
    return parseStartAuthSession(await this.run("StartAuthSession", startAuthSessionCommand(type), signal));
  }

  async policyPcr(session: number, pcrDigest: Uint8Array, sel: PcrBankSelection[], signal?: AbortSignal): Promise<void> {
    await this.run("PolicyPCR", policyPcrCommand(session, pcrDigest, sel), signal);
  }

  async certify(object: number, signer: number, signal?: AbortSignal): Promise<{ attest: Uint8Array; signature: Uint8Array }> {
    return parseCertify(await this.run("Certify", certifyCommand(object, signer), signal));
  }

  /** RSA_Decrypt (RSAES) authorized by a policy session. */
  async rsaDecrypt(key: number, session: number, ciphertext: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    return parseRsaDecrypt(await this.run("RSA_Decrypt", rsaDecryptCommand(key, policySessionAuth(session), ciphertext), signal));
  }

  /**
   * Closes the connection: commands still queued fail at once, a command in flight gets up to
   * `waitMs` to answer before the transport is closed under it (a stalled TPM cannot hold up a
   * shutdown), and closing the transport itself is bounded by the same time.
   */
  async close(waitMs = 1000): Promise<void> {
    this.closed = true;
    const bound = (p: Promise<unknown>) => {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]).finally(() => clearTimeout(timer));
    };
    await bound(this.tail);
    await bound(this.transport.close());
  }
}

export { ALG };
