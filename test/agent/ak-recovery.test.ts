/**
 * Rule: the AK at 0x81008F01 is read again when a quote says it is not the key the agent cached —
 * a signature that does not verify under the cached AK (TPM2_Clear changed the owner seed, so the
 * same template now makes another key) or a Quote the TPM refuses (another key, or none, at the
 * handle). The call is retried once with the key as start-up would take it: the one at the handle
 * if it matches the AK template, else a new AK. Against a real swtpm the test changes behind the
 * running agent's back.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TpmClient } from "../../attestation-agent/tpm/client.ts";
import { AK_RSA_PERSISTENT_HANDLE, RH, akTemplateRsa, publicMatchesTemplate } from "../../attestation-agent/tpm/marshal.ts";
import { openTransport } from "../../attestation-agent/tpm/transport.ts";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { startTpmGate, type TpmGate } from "./fixtures/tpm-gate.ts";
import { grpcJsClient, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
let dir: string;
let tpm: Swtpm;
let gate: TpmGate;
let agent: AgentProcess;
let client: ReturnType<typeof grpcJsClient>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-ak-"));
  tpm = await startSwtpm();
  gate = await startTpmGate(tpm.sock, dir);
  agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--platform", "vtpm", "--tpm", gate.tpm]);
  client = grpcJsClient(agent.socket);
});

afterAll(async () => {
  client?.close();
  await agent?.stop();
  await gate?.close();
  await tpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A VTPM call that must succeed; returns the AK public area its evidence carries. */
async function akOfCall(): Promise<Buffer> {
  const nonce = randomBytes(32);
  const r = await client.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
  expect(r.details).toBeUndefined();
  expect(r.code).toBe(0);
  return Buffer.from(verifyVtpmAttestation(r.value!.quote, nonce).attestation.akPub);
}

/** Runs `fn` on swtpm directly while the agent is disconnected (swtpm serves one client at a time). */
async function behindTheAgentsBack(fn: () => Promise<void>): Promise<void> {
  await gate.drop();
  await fn();
}

describe("a stale cached AK", () => {
  it("TPM2_Clear and a new AK from the same template at 0x81008F01: the next call reads it again and succeeds with it", async () => {
    const before = await akOfCall();
    let made!: Buffer;
    await behindTheAgentsBack(async () => {
      await run("tpm2_clear", ["-T", tpm.tcti, "-c", "p"]);
      const t = new TpmClient(openTransport(tpm.tpm));
      try {
        const k = await t.createPrimary(RH.OWNER, akTemplateRsa());
        await t.evictControl(RH.OWNER, k.handle, AK_RSA_PERSISTENT_HANDLE);
        await t.flush(k.handle);
        made = Buffer.from(k.publicArea);
      } finally {
        await t.close();
      }
    });
    expect(made.equals(before)).toBe(false); // the owner seed changed: another key
    expect((await akOfCall()).equals(made)).toBe(true);
    expect(agent.stderr()).toMatch(/not the AK read before/);
  });

  it("a key that is not an AK at 0x81008F01: the next call replaces it with a new AK and succeeds", async () => {
    const before = await akOfCall();
    await behindTheAgentsBack(async () => {
      const ctx = path.join(dir, "storage.ctx");
      await run("tpm2_evictcontrol", ["-T", tpm.tcti, "-C", "o", "-c", `0x${AK_RSA_PERSISTENT_HANDLE.toString(16)}`]);
      await run("tpm2_createprimary", ["-T", tpm.tcti, "-C", "o", "-c", ctx]); // an RSA storage key
      await run("tpm2_evictcontrol", ["-T", tpm.tcti, "-C", "o", "-c", ctx, `0x${AK_RSA_PERSISTENT_HANDLE.toString(16)}`]);
      await run("tpm2_flushcontext", ["-T", tpm.tcti, "-t"]);
    });
    const after = await akOfCall();
    expect(publicMatchesTemplate(after, akTemplateRsa())).toBe(true);
    expect(after.equals(before)).toBe(true); // same seed, same template: the same key again
  });
});
