/** A Go grpc-go client (Debian's golang-google-grpc-dev, built offline) against the agent process on swtpm. */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { fromBinary } from "@bufbuild/protobuf";
import { AttestationSchema } from "../../attestation-agent/gen/attest/attest_pb.ts";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { ROOT, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
let dir: string;
let bin: string;
let tpm: Swtpm;
let agent: AgentProcess;
let eventLog: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-go-"));
  bin = path.join(dir, "client");
  const [t] = await Promise.all([startSwtpm(), run("bash", [path.join(ROOT, "scripts/agent-go-client.sh"), bin])]);
  tpm = t;
  eventLog = randomBytes(5000);
  await writeFile(path.join(dir, "binary_bios_measurements"), eventLog);
  agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--tpm", tpm.tpm, "--tsm-root", path.join(dir, "none"), "--event-log", path.join(dir, "binary_bios_measurements")]);
});

afterAll(async () => {
  await agent?.stop();
  await tpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function goCall(args: string[]): Promise<{ code: number; message?: string; hex?: string }> {
  const { stdout } = await run(bin, ["-socket", agent.socket, ...args]);
  return JSON.parse(stdout);
}

describe("grpc-go client", () => {
  it("gets a vTPM attestation that verifies and carries the event log byte for byte", async () => {
    const nonce = randomBytes(32);
    const r = await goCall(["-platform", "3", "-nonce", nonce.toString("hex")]);
    expect(r.code).toBe(0);
    const bytes = Buffer.from(r.hex!, "hex");
    expect(verifyVtpmAttestation(bytes, nonce).quotes).toHaveLength(2);
    expect(Buffer.from(fromBinary(AttestationSchema, bytes).eventLog)).toEqual(eventLog);
  });

  it("-bench (bench/agent.ts's caller): seq and conc commands over one connection, every call with its own nonce, each answer verifying", async () => {
    const child = execFile(bin, ["-bench", "-socket", agent.socket]);
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
    });
    child.stdin!.end("seq 2\nconc 3 2\n");
    await new Promise((resolve) => child.once("exit", resolve));
    const lines = out.trim().split("\n").map((l) => JSON.parse(l) as { code?: number; nonce?: string; hex?: string; ms?: number; done?: boolean; wallMs?: number });
    expect(lines.map((l) => (l.done ? "done" : "call"))).toEqual(["call", "call", "done", "call", "call", "call", "call", "call", "call", "done"]);
    const calls = lines.filter((l) => !l.done);
    expect(new Set(calls.map((c) => c.nonce)).size).toBe(8);
    for (const c of calls) {
      expect([c.code, c.ms! > 0]).toEqual([0, true]);
      expect(verifyVtpmAttestation(Buffer.from(c.hex!, "hex"), Buffer.from(c.nonce!, "hex")).quotes).toHaveLength(2);
    }
  });

  it("sees the same status codes: INVALID_ARGUMENT, FAILED_PRECONDITION, UNIMPLEMENTED", async () => {
    expect(await goCall(["-platform", "3", "-nonce", "00".repeat(33)])).toMatchObject({ code: 3, message: expect.stringMatching(/nonce is 33 bytes/) });
    expect(await goCall(["-platform", "1"])).toMatchObject({ code: 9, message: expect.stringMatching(/not available/) });
    expect(await goCall(["-platform", "0"])).toMatchObject({ code: 3 });
    expect(await goCall(["-method", "FetchCloudToken", "-nonce", "00".repeat(16)])).toMatchObject({ code: 9 });
    expect(await goCall(["-method", "FetchAzureToken"])).toMatchObject({ code: 12, message: expect.stringMatching(/unknown method \/attestation.v1.AttestationService\/FetchAzureToken/) });
  });
});
