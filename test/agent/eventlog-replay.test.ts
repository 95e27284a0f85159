/**
 * Rule: verify replays a crypto-agile event log against the quoted PCRs. The agent returns the log
 * it read; a log that reproduces every PCR it extends is reported replayed, one that does not (a
 * digest changed, an event added) fails with check `eventlog`, a truncated one too. A firmware PCR
 * (0-7) that is not at its initial value and that the log has no event for fails too (its events
 * were removed, or the log is only a header); any other such PCR is reported `unexplained`. Bytes
 * that are not a TCG event log fail. A SHA-1-only legacy log is replayed the same way against the
 * sha1 quote; an empty log, or a legacy log without a sha1 quote, is reported as not replayed.
 * Against a real swtpm whose PCRs 4, 16 and 23 the test extends exactly as its log says.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationSchema } from "../../attestation-agent/gen/attest/attest_pb.ts";
import { verifyEvidence } from "../../attestation-agent/verify/cli.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { grpcJsClient, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
let dir: string;
let tpm: Swtpm;
let agent: AgentProcess;
let client: ReturnType<typeof grpcJsClient>;

const SHA1 = 0x0004;
const SHA256 = 0x000b;
/** The events the test extends and logs: PCR, sha1 digest, sha256 digest. */
const EVENTS = [
  { pcr: 4, sha1: "aa".repeat(20), sha256: "bb".repeat(32) },
  { pcr: 16, sha1: "11".repeat(20), sha256: "22".repeat(32) },
  { pcr: 23, sha1: "33".repeat(20), sha256: "44".repeat(32) },
  { pcr: 16, sha1: "55".repeat(20), sha256: "66".repeat(32) },
];

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};

/** A crypto-agile log (TCG PFP): the Spec ID Event03 header for sha1 and sha256, then `events` as TCG_PCR_EVENT2 (type EV_IPL). */
function eventLog(events: typeof EVENTS): Buffer {
  const spec = Buffer.concat([Buffer.from("Spec ID Event03\0", "latin1"), u32(0), Buffer.from([0, 2, 0, 2]), u32(2), u16(SHA1), u16(20), u16(SHA256), u16(32), Buffer.from([0])]);
  const header = Buffer.concat([u32(0), u32(3), Buffer.alloc(20), u32(spec.length), spec]);
  const records = events.map((e) =>
    Buffer.concat([u32(e.pcr), u32(0xd), u32(2), u16(SHA1), Buffer.from(e.sha1, "hex"), u16(SHA256), Buffer.from(e.sha256, "hex"), u32(4), Buffer.from("boot")]),
  );
  return Buffer.concat([header, ...records]);
}

/** A SHA-1-only legacy log (TCG_PCR_EVENT records, no Spec ID Event03) of `events`. */
function legacyLog(events: typeof EVENTS): Buffer {
  return Buffer.concat(events.map((e) => Buffer.concat([u32(e.pcr), u32(0xd), Buffer.from(e.sha1, "hex"), u32(4), Buffer.from("boot")])));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-eventlog-"));
  tpm = await startSwtpm();
  // swtpm serves one client at a time: the extends happen before the agent connects
  for (const e of EVENTS) await run("tpm2_pcrextend", ["-T", tpm.tcti, `${e.pcr}:sha1=${e.sha1},sha256=${e.sha256}`]);
  const log = path.join(dir, "binary_bios_measurements");
  await writeFile(log, eventLog(EVENTS));
  agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--platform", "vtpm", "--tpm", tpm.tpm, "--event-log", log]);
  client = grpcJsClient(agent.socket);
});

afterAll(async () => {
  client?.close();
  await agent?.stop();
  await tpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Fresh evidence for a random nonce, and a verify of it (or of it with its log replaced). */
async function evidence() {
  const nonce = randomBytes(32);
  const r = await client.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" });
  expect(r.code).toBe(0);
  return { nonce, bytes: r.value!.quote as Uint8Array };
}
async function verifyWithLog(log: Buffer | null, opts: { withoutBank?: number } = {}) {
  const { nonce, bytes } = await evidence();
  const att = fromBinary(AttestationSchema, bytes);
  if (log) att.eventLog = log;
  if (opts.withoutBank !== undefined) att.quotes = att.quotes.filter((q) => q.pcrs!.hash !== opts.withoutBank);
  return verifyEvidence("vtpm", toBinary(AttestationSchema, att), { nonce }).then(
    (s) => s.eventLog,
    (e: Error & { check?: string }) => `${e.check}: ${e.message}`,
  );
}

describe("verify replays the event log against the quoted PCRs", () => {
  it("the agent's log reproduces PCRs 4, 16 and 23 in both banks: replayed, nothing unexplained", async () => {
    expect(await verifyWithLog(null)).toEqual({ replayed: [4, 16, 23], unexplained: [] });
  });

  it("a changed digest or an added event fails with check eventlog; a truncated log too", async () => {
    const changed = EVENTS.map((e, i) => (i === 2 ? { ...e, sha256: "45".repeat(32) } : e));
    expect(await verifyWithLog(eventLog(changed))).toMatch(/^eventlog: .*sha256 PCR 23 replayed from the event log/);
    expect(await verifyWithLog(eventLog([...EVENTS, { pcr: 16, sha1: "77".repeat(20), sha256: "88".repeat(32) }]))).toMatch(/^eventlog: .*PCR 16 replayed/);
    expect(await verifyWithLog(eventLog(EVENTS).subarray(0, eventLog(EVENTS).length - 10))).toMatch(/^eventlog: .*truncated/);
  });

  it("every event of a firmware PCR removed, or a header-only log, fails with check eventlog: PCR 4 is extended and the log does not say how", async () => {
    expect(await verifyWithLog(eventLog(EVENTS.filter((e) => e.pcr !== 4)))).toMatch(/^eventlog: .*PCR 4 is not its initial value and the event log has no event for it/);
    expect(await verifyWithLog(eventLog([]))).toMatch(/^eventlog: .*PCR 4 is not its initial value/);
  });

  it("every event of an OS PCR removed: the rest is replayed and the PCR is reported unexplained", async () => {
    expect(await verifyWithLog(eventLog(EVENTS.filter((e) => e.pcr !== 23)))).toEqual({ replayed: [4, 16], unexplained: [23] });
  });

  it("bytes that are not a TCG event log fail with check eventlog", async () => {
    expect(await verifyWithLog(Buffer.alloc(100, 7))).toMatch(/^eventlog: .*not a TCG event log/);
    expect(await verifyWithLog(Buffer.from("arbitrary text, not an event log at all, long enough to read a header"))).toMatch(/^eventlog: .*not a TCG event log/);
    expect(await verifyWithLog(legacyLog(EVENTS).subarray(0, 40))).toMatch(/^eventlog: .*not a TCG event log/);
  });

  it("a SHA-1-only legacy log is replayed against the sha1 quote: reproduced, changed, or missing a firmware PCR's events", async () => {
    expect(await verifyWithLog(legacyLog(EVENTS))).toEqual({ replayed: [4, 16, 23], unexplained: [] });
    const changed = EVENTS.map((e, i) => (i === 2 ? { ...e, sha1: "34".repeat(20) } : e));
    expect(await verifyWithLog(legacyLog(changed))).toMatch(/^eventlog: .*sha1 PCR 23 replayed from the event log/);
    expect(await verifyWithLog(legacyLog(EVENTS.filter((e) => e.pcr !== 4)))).toMatch(/^eventlog: .*sha1 PCR 4 is not its initial value/);
    expect(await verifyWithLog(legacyLog(EVENTS.filter((e) => e.pcr !== 23)))).toEqual({ replayed: [4, 16], unexplained: [23] });
    // Firmware ends some legacy logs with an informational EV_NO_ACTION record at PCR index 0xFFFFFFFF
    // (go-attestation's option_rom_eventlog): still a log, and it extends nothing.
    const noAction = Buffer.concat([u32(0xffffffff), u32(3), Buffer.alloc(20), u32(4), Buffer.from("note")]);
    expect(await verifyWithLog(Buffer.concat([legacyLog(EVENTS), noAction]))).toEqual({ replayed: [4, 16, 23], unexplained: [] });
    // any other record type there is not
    const bad = Buffer.concat([u32(0xffffffff), u32(0xd), Buffer.alloc(20), u32(4), Buffer.from("note")]);
    expect(await verifyWithLog(Buffer.concat([legacyLog(EVENTS), bad]))).toMatch(/^eventlog: .*not a TCG event log: PCR index 4294967295/);
  });

  it("an empty log, or a SHA-1-only legacy log with no sha1 quote to replay it against, is reported as not replayed", async () => {
    expect(await verifyWithLog(Buffer.alloc(0))).toEqual({ notReplayed: "no event log" });
    expect(await verifyWithLog(legacyLog(EVENTS), { withoutBank: SHA1 })).toEqual({ notReplayed: "a SHA-1-only legacy event log (no Spec ID Event03) and no sha1 quote to replay it against" });
  });
});
