/**
 * SNP, TDX and SNP_VTPM evidence through configfs-tsm, against a filesystem double with the
 * kernel's semantics and reports signed by test keys; the agent runs in-process (real gRPC on a
 * unix socket, grpc-js client) because the double lives in this process.
 */
import { createHash, randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import os from "node:os";
import path from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startAgent, DEFAULTS, type Agent } from "../../attestation-agent/agent.ts";
import { AttestationSchema as SnpAttestationSchema } from "../../attestation-agent/gen/sevsnp/sevsnp_pb.ts";
import { AttestationSchema } from "../../attestation-agent/gen/attest/attest_pb.ts";
import type { PlatformName } from "../../attestation-agent/platform.ts";
import { TsmClient } from "../../attestation-agent/tsm/report.ts";
import { CERT_GUID, buildCertTable } from "../../attestation-agent/tsm/snp.ts";
import { verifySnpAttestation } from "../../attestation-agent/verify/snp.ts";
import { verifyTdxQuote } from "../../attestation-agent/verify/tdx.ts";
import { verifyVtpmAttestation } from "../../attestation-agent/verify/tpm.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { FakeConfigFs } from "./fixtures/fake-configfs.ts";
import { makePckChain, makeSnpChain, signedSnpReport, signedTdxQuote, type PckChain, type SnpChain } from "./fixtures/evidence.ts";
import { ROOT as REPO, grpcJsClient } from "./helpers.ts";

const run = promisify(execFile);

const S = grpc.status;
const ROOT = "/sys/kernel/config/tsm/report"; // only a name inside the double

let dir: string;
let chain: SnpChain;
let pck: PckChain;
let swtpm: Swtpm;
let running: { agent: Agent; client: ReturnType<typeof grpcJsClient> }[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-tsm-"));
  [chain, pck, swtpm] = await Promise.all([makeSnpChain(), makePckChain(), startSwtpm()]);
});

afterEach(async () => {
  for (const r of running) {
    r.client.close();
    await r.agent.stop();
  }
  running = [];
});

afterAll(async () => {
  await swtpm?.stop();
  await rm(dir, { recursive: true, force: true });
});

function snpFs(): FakeConfigFs {
  const table = buildCertTable([
    [CERT_GUID.VCEK, chain.vcek],
    [CERT_GUID.ASK, chain.ask],
    [CERT_GUID.ARK, chain.ark],
  ]);
  return new FakeConfigFs(ROOT, "sev_guest", (inblob, vmpl) => ({ outblob: signedSnpReport(inblob, chain.vcekKey, { vmpl }), auxblob: table }));
}

function tdxFs(): FakeConfigFs {
  return new FakeConfigFs(ROOT, "tdx_guest", (inblob) => ({ outblob: signedTdxQuote(inblob, pck) }));
}

async function agentWith(fs: FakeConfigFs, platform: PlatformName, extra: Partial<typeof DEFAULTS> = {}) {
  const logs: string[] = [];
  const agent = await startAgent(
    { ...DEFAULTS, socket: path.join(dir, `a${running.length}-${randomBytes(3).toString("hex")}.sock`), tsmRoot: ROOT, tpm: path.join(dir, "no-tpm"), eventLog: path.join(dir, "none"), platform, ...extra },
    { configFs: fs, log: (m) => logs.push(m) },
  );
  const client = grpcJsClient(agent.server.server.address() as string);
  running.push({ agent, client });
  return { agent, client, logs };
}

describe("SNP via configfs-tsm", () => {
  it("auto-detects sev_guest, logs it once, and leaves no probe entry behind", async () => {
    const fs = snpFs();
    const { agent, logs } = await agentWith(fs, "auto");
    expect(agent.caps.name).toBe("snp");
    expect(logs.filter((l) => l.startsWith("platform "))).toEqual([expect.stringMatching(/^platform snp \(configfs-tsm provider sev_guest; no TPM at /)]);
    expect(fs.entries.size).toBe(0);
  });

  it("returns sevsnp.Attestation: zero-padded report_data, ASK and ARK in their fields, chain and signature verify", async () => {
    const fs = snpFs();
    const { client } = await agentWith(fs, "snp");
    const rd = randomBytes(20);
    const r = await client.fetchAttestation({ reportData: rd, platformType: "PLATFORM_TYPE_SNP" });
    expect(r.code).toBe(0);
    const att = fromBinary(SnpAttestationSchema, r.value!.quote);
    expect(Buffer.from(att.certificateChain!.askCert)).toEqual(chain.ask);
    expect(Buffer.from(att.certificateChain!.arkCert)).toEqual(chain.ark);
    expect(Buffer.from(att.certificateChain!.vcekCert)).toEqual(chain.vcek);
    expect(att.product?.name).toBe(2); // SEV_PRODUCT_GENOA from CPUID family 19h model 11h
    const padded = Buffer.concat([rd, Buffer.alloc(44)]);
    const v = verifySnpAttestation(r.value!.quote, { trustedArk: chain.ark, reportData: padded });
    expect(v.report.version).toBe(3);
    // One entry per request, removed afterwards; exactly one write (inblob) before the read.
    expect(fs.made).toHaveLength(1);
    expect(fs.removed).toEqual(fs.made);
    expect(fs.entries.size).toBe(0);
  });

  it("writes privlevel as ASCII decimal when --snp-vmpl is set; below the floor → INTERNAL, entry still removed", async () => {
    const fs = snpFs();
    const { client } = await agentWith(fs, "snp", { snpVmpl: 2 });
    const ok = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" });
    expect(fromBinary(SnpAttestationSchema, ok.value!.quote).report!.vmpl).toBe(2);
    fs.privlevelFloor = 3;
    const bad = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" });
    expect(bad.code).toBe(S.INTERNAL);
    expect(bad.details).toMatch(/write privlevel.*EINVAL/);
    expect(fs.entries.size).toBe(0);
  });

  it("retries EBUSY and then succeeds", async () => {
    const fs = snpFs();
    fs.busy = 2;
    const { client } = await agentWith(fs, "snp");
    const r = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" });
    expect(r.code).toBe(0);
    expect(fs.made).toHaveLength(3);
    expect(fs.entries.size).toBe(0);
  });

  it("a concurrent writer on the entry (generation mismatch every time) → ABORTED, entries removed", async () => {
    const fs = snpFs();
    fs.afterGenerate = (entry) => fs.touch(entry);
    const { client } = await agentWith(fs, "snp");
    const r = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" });
    expect(r.code).toBe(S.ABORTED);
    expect(r.details).toMatch(/generation/);
    expect(fs.entries.size).toBe(0);
  });

  it("the entry's generation unreadable after outblob → an error naming the step, not the entry's path; entries removed", async () => {
    const fs = snpFs();
    // The first read of `generation` answers; later ones fail as the kernel's would with the entry gone.
    const readFile = fs.readFile.bind(fs);
    let generationReads = 0;
    fs.readFile = async (file: string) => {
      if (file.endsWith("/generation") && ++generationReads > 1) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: "ENOENT" });
      return readFile(file);
    };
    const { client } = await agentWith(fs, "snp");
    const r = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" });
    expect(r.code).not.toBe(0);
    expect(r.details).toMatch(/read generation/);
    expect(r.details).not.toContain(ROOT);
    expect(fs.entries.size).toBe(0);
  });

  it("provider gone (mkdir ENXIO) → UNAVAILABLE", async () => {
    const fs = snpFs();
    const { client } = await agentWith(fs, "snp");
    fs.provider = undefined;
    const r = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" });
    expect(r.code).toBe(S.UNAVAILABLE);
    expect(r.details).toMatch(/ENXIO/);
  });

  it("the verifier rejects a tampered report and an untrusted ARK", async () => {
    const fs = snpFs();
    const { client } = await agentWith(fs, "snp");
    const r = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" });
    const att = fromBinary(SnpAttestationSchema, r.value!.quote);
    att.report!.measurement[0]! ^= 1;
    expect(() => verifySnpAttestation(att)).toThrow(/signature does not verify/);
    const other = await makePckChain();
    expect(() => verifySnpAttestation(r.value!.quote, { trustedArk: other.root })).toThrow(/not the trusted ARK/);
  });

  it("16 concurrent SNP callers each get their own report", async () => {
    const fs = snpFs();
    const { client } = await agentWith(fs, "snp");
    const rds = Array.from({ length: 16 }, () => randomBytes(64));
    const rs = await Promise.all(rds.map((reportData) => client.fetchAttestation({ reportData, platformType: "PLATFORM_TYPE_SNP" })));
    rs.forEach((r, i) => {
      verifySnpAttestation(r.value!.quote, { reportData: rds[i] });
    });
    expect(fs.entries.size).toBe(0);
  });
});

describe("TDX via configfs-tsm", () => {
  it("returns the raw quote; its signatures, QE binding and PCK chain verify; REPORTDATA is the padded report_data", async () => {
    const fs = tdxFs();
    const { client, agent } = await agentWith(fs, "auto");
    expect(agent.caps.name).toBe("tdx");
    const rd = randomBytes(64);
    const r = await client.fetchAttestation({ reportData: rd, platformType: "PLATFORM_TYPE_TDX" });
    expect(r.code).toBe(0);
    const q = verifyTdxQuote(r.value!.quote, { trustedRoot: pck.root, reportData: rd });
    expect(q.version).toBe(4);
    const bad = Buffer.from(r.value!.quote);
    bad[0x100]! ^= 1;
    expect(() => verifyTdxQuote(bad)).toThrow(/quote signature/);
    expect((await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" })).code).toBe(S.FAILED_PRECONDITION);
  });

  it("the verifier handles v5 quotes, and the attest CLI verifies SNP and TDX evidence files", async () => {
    const rd = randomBytes(64);
    const v5 = signedTdxQuote(rd, pck, 5);
    expect(verifyTdxQuote(v5, { trustedRoot: pck.root, reportData: rd }).version).toBe(5);
    const cli = path.join(REPO, "attestation-agent/verify/cli.ts");
    const files = { tdx: path.join(dir, "q.bin"), root: path.join(dir, "root.der"), snp: path.join(dir, "snp.bin"), ark: path.join(dir, "ark.der") };
    await writeFile(files.tdx, v5);
    await writeFile(files.root, pck.root);
    const tdx = JSON.parse((await run(process.execPath, [cli, "verify", "--type", "tdx", "--in", files.tdx, "--root", files.root, "--report-data", rd.toString("hex")])).stdout);
    expect(tdx).toMatchObject({ ok: true, version: 5, reportData: rd.toString("hex") });
    const fs = snpFs();
    const { client } = await agentWith(fs, "snp");
    const r = await client.fetchAttestation({ reportData: rd, platformType: "PLATFORM_TYPE_SNP" });
    await writeFile(files.snp, r.value!.quote);
    await writeFile(files.ark, chain.ark);
    const snp = JSON.parse((await run(process.execPath, [cli, "verify", "--type", "snp", "--in", files.snp, "--ark", files.ark, "--report-data", rd.toString("hex")])).stdout);
    expect(snp).toMatchObject({ ok: true, version: 3, reportData: rd.toString("hex") });
    const wrong = await run(process.execPath, [cli, "verify", "--type", "snp", "--in", files.snp, "--ark", files.root]).catch((e) => e);
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout)).toMatchObject({ ok: false, check: "chain" });
  });

  it("no host cert table: empty chain in the evidence, verifiable with certificates supplied to the CLI", async () => {
    const fs = new FakeConfigFs(ROOT, "sev_guest", (inblob) => ({ outblob: signedSnpReport(inblob, chain.vcekKey) }));
    const { client } = await agentWith(fs, "snp");
    const r = await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" });
    expect(r.code).toBe(0);
    const att = fromBinary(SnpAttestationSchema, r.value!.quote);
    expect(att.certificateChain?.vcekCert.length ?? 0).toBe(0);
    const cli = path.join(REPO, "attestation-agent/verify/cli.ts");
    const f = (n: string) => path.join(dir, n);
    await Promise.all([writeFile(f("bare.bin"), r.value!.quote), writeFile(f("v.der"), chain.vcek), writeFile(f("s.der"), chain.ask), writeFile(f("r.der"), chain.ark)]);
    const bare = await run(process.execPath, [cli, "verify", "--type", "snp", "--in", f("bare.bin")]).catch((e) => e);
    expect(JSON.parse(bare.stdout)).toMatchObject({ ok: false, check: "chain" });
    const ok = JSON.parse((await run(process.execPath, [cli, "verify", "--type", "snp", "--in", f("bare.bin"), "--vcek", f("v.der"), "--ask", f("s.der"), "--ark", f("r.der")])).stdout);
    expect(ok.ok).toBe(true);
  });

  it("the TsmClient refuses an inblob that is not exactly 64 bytes, and the double enforces the kernel's size rules", async () => {
    const fs = tdxFs();
    await expect(new TsmClient(ROOT, fs).getReport({ inblob: new Uint8Array(63) })).rejects.toThrow(/exactly 64/);
    const d = await fs.mkdtemp(`${ROOT}/x-`);
    await expect(fs.writeFile(`${d}/inblob`, new Uint8Array(65))).rejects.toMatchObject({ code: "EFBIG" });
    await fs.writeFile(`${d}/inblob`, new Uint8Array(10));
    await expect(fs.readFile(`${d}/outblob`)).rejects.toMatchObject({ code: "EINVAL" });
    await fs.rmdir(d);
  });
});

describe("SNP_VTPM", () => {
  it("binds the AK: the SNP REPORT_DATA is SHA3-512(report_data ‖ AK TPMT_PUBLIC), both parts verify", async () => {
    const fs = snpFs();
    const { client, agent } = await agentWith(fs, "auto", { tpm: swtpm.tpm });
    expect(agent.caps.name).toBe("snp-vtpm");
    const rd = randomBytes(64);
    const nonce = randomBytes(32);
    const r = await client.fetchAttestation({ reportData: rd, nonce, platformType: "PLATFORM_TYPE_SNP_VTPM" });
    expect(r.code).toBe(0);
    const att = fromBinary(AttestationSchema, r.value!.quote);
    verifyVtpmAttestation(att, nonce);
    expect(att.teeAttestation.case).toBe("sevSnpAttestation");
    const bound = createHash("sha3-512").update(rd).update(att.akPub).digest();
    verifySnpAttestation(att.teeAttestation.value as never, { trustedArk: chain.ark, reportData: bound });
    // VTPM and SNP alone also work on this platform.
    expect((await client.fetchAttestation({ nonce, platformType: "PLATFORM_TYPE_VTPM" })).code).toBe(0);
    expect((await client.fetchAttestation({ platformType: "PLATFORM_TYPE_SNP" })).code).toBe(0);
  });
});
