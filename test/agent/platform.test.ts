/**
 * Rule: platform detection (`--platform auto`) is bounded, and a TPM the operator configured
 * (`--tpm` or ATTESTATION_TPM) is part of the platform even when it does not answer at start:
 * VTPM calls get UNAVAILABLE until it answers, then evidence, without a restart. The default
 * device, which the agent merely looks for, is kept when it is there but slow to answer the probe,
 * and left out when it is absent.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULTS, startAgent } from "../../attestation-agent/agent.ts";
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

describe("auto detection of the default TPM", () => {
  it("a device that is there but does not answer the probe in time stays in the platform (calls get evidence once it answers); an absent one is left out", async () => {
    const gate = await startTpmGate(tpm.sock, dir);
    gate.hold(CC.GetRandom);
    const logs: string[] = [];
    const base = { ...DEFAULTS, tsmRoot: path.join(dir, "no-configfs"), eventLog: path.join(dir, "none"), tpmConfigured: false };
    const slow = await startAgent({ ...base, socket: path.join(dir, "default-slow.sock"), tpm: gate.tpm }, { log: (m) => logs.push(m) });
    const c = grpcJsClient(slow.server.server.address() as string);
    try {
      expect(slow.caps.name).toBe("vtpm");
      expect(logs).toContainEqual(expect.stringMatching(/^platform vtpm \(.*not answering at start \(no answer within 2000 ms\)/));
      gate.release();
      await attests(c);
    } finally {
      c.close();
      await slow.stop();
      gate.release();
      await gate.close();
    }
    const absent = await startAgent({ ...base, socket: path.join(dir, "default-absent.sock"), tpm: path.join(dir, "no-tpmrm0") }, { log: (m) => logs.push(m) });
    try {
      expect(absent.caps.name).toBe("none");
      expect(logs.at(-2)).toMatch(/^platform none \(configfs-tsm provider none; no TPM at .*ENOENT/);
    } finally {
      await absent.stop();
    }
  });
});

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

  it("a configured TPM device node that does not exist: this machine has no TPM — platform none, VTPM calls FAILED_PRECONDITION (not UNAVAILABLE, which clients retry)", async () => {
    const a = await startAgentProcess(path.join(dir, "nodev.sock"), ["--tpm", path.join(dir, "no-such-tpmrm0"), "--tsm-root", path.join(dir, "no-configfs")]);
    const c = grpcJsClient(a.socket);
    try {
      expect(a.stderr()).toMatch(/platform none \(configfs-tsm provider none; no TPM at /);
      const r = await c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" });
      expect(r.code).toBe(S.FAILED_PRECONDITION);
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
