/**
 * TpmClient against a real swtpm, with a transport wrapper that injects the TPM warning codes a
 * busy or self-testing TPM returns, and the gRPC codes device failures map to.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toConnectError } from "../../attestation-agent/service.ts";
import { TpmClient, TpmError } from "../../attestation-agent/tpm/client.ts";
import { ALG, CC, RC, Writer, command } from "../../attestation-agent/tpm/marshal.ts";
import { openTransport, TpmTransportError, type TpmTransport } from "../../attestation-agent/tpm/transport.ts";
import { VtpmAttester } from "../../attestation-agent/tpm/vtpm.ts";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";

let tpm: Swtpm;
beforeAll(async () => {
  tpm = await startSwtpm();
});
afterAll(async () => {
  await tpm?.stop();
});

/** Answers the first `times` commands with code `code` for command `cc`, then passes through. */
function injecting(inner: TpmTransport, cc: number, code: number, times: number) {
  const seen = { injected: 0, sent: 0 };
  const t: TpmTransport = {
    describe: inner.describe,
    async send(cmd) {
      if (Buffer.from(cmd).readUInt32BE(6) === cc && seen.injected < times) {
        seen.injected++;
        const res = Buffer.alloc(10);
        res.writeUInt16BE(0x8001, 0);
        res.writeUInt32BE(10, 2);
        res.writeUInt32BE(code, 6);
        return new Uint8Array(res);
      }
      seen.sent++;
      return inner.send(cmd);
    },
    close: () => inner.close(),
  };
  return { t, seen };
}

describe("TPM client", () => {
  it("retries TPM_RC_RETRY, YIELDED and TESTING and then quotes", async () => {
    for (const code of [RC.RETRY, RC.YIELDED, RC.TESTING]) {
      const { t, seen } = injecting(openTransport(tpm.tpm), CC.Quote, code, 3);
      const client = new TpmClient(t);
      const nonce = randomBytes(32);
      const att = await new VtpmAttester(client).attest(nonce);
      expect(seen.injected).toBe(3);
      expect(verifyVtpmAttestation(att, nonce).quotes).toHaveLength(2);
      await client.close();
    }
  });

  it("other TPM codes fail with a decoded message and map to INTERNAL; endless RETRY maps to UNAVAILABLE", async () => {
    const { t } = injecting(openTransport(tpm.tpm), CC.Quote, RC.FAILURE, 1);
    const client = new TpmClient(t);
    const err = await new VtpmAttester(client).attest(new Uint8Array(32)).catch((e) => e);
    expect(err).toBeInstanceOf(TpmError);
    expect(err.message).toBe("TPM2_Quote failed: 0x101 TPM_RC_FAILURE");
    expect(toConnectError(err, new AbortController().signal).code).toBe(Code.Internal);
    expect(toConnectError(new TpmError("Quote", RC.RETRY), new AbortController().signal).code).toBe(Code.Unavailable);
    expect(toConnectError(new TpmTransportError("x"), new AbortController().signal).code).toBe(Code.Unavailable);
    await client.close();
  });

  it("an aborted signal stops before the next command is sent", async () => {
    const { t, seen } = injecting(openTransport(tpm.tpm), 0, 0, 0);
    const client = new TpmClient(t);
    const ac = new AbortController();
    ac.abort(new Error("client went away"));
    await expect(client.getRandom(8, ac.signal)).rejects.toThrow("client went away");
    expect(seen.sent).toBe(0);
    expect(await client.getRandom(8)).toHaveLength(8);
    await client.close();
  });

  it("the event log is read with the PCR values: again when a PCR moved, not on every call", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agent-log-"));
    const file = path.join(dir, "binary_bios_measurements");
    await writeFile(file, "log as of boot");
    const client = new TpmClient(openTransport(tpm.tpm));
    const attester = new VtpmAttester(client, { eventLog: file });
    const log = async () => Buffer.from((await attester.attest(randomBytes(32))).eventLog).toString();
    expect(await log()).toBe("log as of boot");
    // Every event a log gains is an extend: unchanged PCRs mean the log read with them holds.
    await writeFile(file, "log as of boot + one event");
    expect(await log()).toBe("log as of boot");
    await client.run("PCR_Extend", command(0x182, [23], new Writer().u32(1).u16(ALG.SHA256).raw(randomBytes(32)).bytes(), true));
    expect(await log()).toBe("log as of boot + one event");
    await client.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("PCR values proven by a quote's digest are reused; a PCR extended in between is read again and reported", async () => {
    const counted = injecting(openTransport(tpm.tpm), 0, 0, 0);
    const reads = () => counted.seen.sent;
    const pcrReads = { n: 0 };
    const t: TpmTransport = { ...counted.t, send: (cmd) => (Buffer.from(cmd).readUInt32BE(6) === CC.PCR_Read && pcrReads.n++, counted.t.send(cmd)) };
    const client = new TpmClient(t);
    const attester = new VtpmAttester(client);
    const first = randomBytes(32);
    const a1 = verifyVtpmAttestation(await attester.attest(first), first);
    expect(pcrReads.n).toBe(6); // 2 banks × 3 chunks of 8 PCRs
    const second = randomBytes(32);
    verifyVtpmAttestation(await attester.attest(second), second);
    expect(pcrReads.n).toBe(6); // the quote's digest proved the values current: no PCR_Read
    // Extend SHA-256 PCR 16 behind the attester's back (TPM2_PCR_Extend, password session).
    const digest = randomBytes(32);
    await client.run("PCR_Extend", command(0x182, [16], new Writer().u32(1).u16(ALG.SHA256).raw(digest).bytes(), true));
    const third = randomBytes(32);
    const a3 = verifyVtpmAttestation(await attester.attest(third), third);
    expect(pcrReads.n).toBe(9); // only the SHA-256 bank was read again
    const pcr16 = (a: typeof a1) => Buffer.from(a.quotes.find((q) => q.bank === "sha256")!.pcrs.get(16)!);
    expect(pcr16(a3)).toEqual(createHash("sha256").update(pcr16(a1)).update(digest).digest());
    expect(reads()).toBeGreaterThan(0);
    await client.close();
  });
});
