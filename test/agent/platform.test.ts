/**
 * Rule: platform detection (`--platform auto`) is bounded, and a TPM the operator configured
 * (`--tpm` or ATTESTATION_TPM) is part of the platform even when it does not answer at start:
 * VTPM calls get UNAVAILABLE until it answers, then evidence, without a restart. Only a TPM the
 * agent merely looked for (the default device) is left out when it does not answer.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CC } from "../../attestation-agent/tpm/marshal.ts";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { startTpmGate } from "./fixtures/tpm-gate.ts";
import { grpcJsClient, startAgentProcess } from "./helpers.ts";

const S = grpc.status;
let dir: string;
let tpm: Swtpm;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-platform-"));
  tpm = await startSwtpm();
});

afterAll(async () => {
  await tpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function attests(c: ReturnType<typeof grpcJsClient>): Promise<void> {
  const nonce = randomBytes(32);
  const r = await c.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
  expect(r.details).toBeUndefined();
  expect(r.code).toBe(0);
  verifyVtpmAttestation(r.value!.quote, nonce);
}

describe("auto detection with a configured TPM", () => {
  it("a configured TPM absent at start: platform vtpm, calls get UNAVAILABLE, and evidence once the TPM is there", async () => {
    const late = path.join(dir, "late-tpm.sock");
    const a = await startAgentProcess(path.join(dir, "absent.sock"), ["--tpm", `unix:${late}`, "--tsm-root", path.join(dir, "no-configfs")]);
    const c = grpcJsClient(a.socket);
    try {
      expect(a.stderr()).toMatch(/platform vtpm \(configfs-tsm provider none; TPM at unix:.* not answering at start/);
      const r = await c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" });
      expect([r.code, r.details]).toEqual([S.UNAVAILABLE, "TPM socket: connect ENOENT"]);
      await symlink(tpm.sock, late); // the TPM appears
      await attests(c);
    } finally {
      c.close();
      await a.stop();
    }
  });

  it("a configured TPM that does not answer at start: start-up is not held up, and calls get evidence once it answers", async () => {
    const gate = await startTpmGate(tpm.sock, dir);
    gate.hold(CC.GetRandom); // the detection probe waits at the TPM
    try {
      const a = await startAgentProcess(path.join(dir, "slow.sock"), ["--tpm", gate.tpm, "--tsm-root", path.join(dir, "no-configfs")]);
      const c = grpcJsClient(a.socket);
      try {
        expect(a.stderr()).toMatch(/platform vtpm \(configfs-tsm provider none; TPM at unix:.* not answering at start \(no answer within 2000 ms\)/);
        gate.release();
        await attests(c);
      } finally {
        c.close();
        await a.stop();
      }
    } finally {
      gate.release();
      await gate.close();
    }
  });
});
