/**
 * FetchCloudToken with Azure MAA (TDX CVM flow) against swtpm holding a synthetic HCL report at
 * NV 0x01400001, and fake IMDS (`/acc/tdquote`) and MAA (`/attest/TdxVm`) servers on loopback.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HCL_REPORT_TYPE, azureReportData, buildHclReport } from "../../attestation-agent/cloud/azure.ts";
import { verifyTdxQuote } from "../../attestation-agent/verify/tdx.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { makePckChain, signedTdxQuote, type PckChain } from "./fixtures/evidence.ts";
import { grpcJsClient, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
let dir: string;
let tpm: Swtpm;
let pck: PckChain;
let agent: AgentProcess;
let client: ReturnType<typeof grpcJsClient>;
let imds: http.Server;
let maa: http.Server;
const nonce = randomBytes(32);
const staleNonce = randomBytes(32);
const seen: { imdsMetadata?: string; maaBody?: Record<string, unknown>; maaPath?: string } = {};
const TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJ4LW1zLWF0dGVzdGF0aW9uLXR5cGUiOiJ0ZHh2bSJ9.c2ln";

function jsonServer(handler: (path: string, body: Record<string, unknown>, req: http.IncomingMessage) => [number, unknown]): Promise<http.Server> {
  const s = http.createServer((req, res) => {
    let data = "";
    req.on("data", (c) => (data += c));
    req.on("end", () => {
      const [code, out] = handler(req.url ?? "", JSON.parse(data || "{}"), req);
      res.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify(out));
    });
  });
  return new Promise((r) => s.listen(0, "127.0.0.1", () => r(s)));
}
const url = (s: http.Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-azure-"));
  [tpm, pck] = await Promise.all([startSwtpm(), makePckChain()]);
  // What the Azure paravisor would have produced for our nonce: runtime claims with the user data,
  // and a TD report whose REPORTDATA[0:32] is SHA-256 of those claims.
  const claims = Buffer.from(JSON.stringify({ keys: [{ kid: "HCLAkPub", kty: "RSA" }], "vm-configuration": { "tpm-enabled": true }, "user-data": Buffer.from(azureReportData(nonce)).toString("hex").toUpperCase() }));
  const td = Buffer.alloc(0x400);
  createHash("sha256").update(claims).digest().copy(td, 0x80);
  await writeFile(path.join(dir, "hcl.bin"), buildHclReport(HCL_REPORT_TYPE.TDX, td, claims));
  const hcl = await readFile(path.join(dir, "hcl.bin"));
  await run("tpm2_nvdefine", ["-T", tpm.tcti, "-C", "o", "-s", String(hcl.length), "-a", "ownerread|ownerwrite", "0x01400001"]);
  await run("tpm2_nvwrite", ["-T", tpm.tcti, "-C", "o", "-i", path.join(dir, "hcl.bin"), "0x01400001"]);

  imds = await jsonServer((p, body, req) => {
    seen.imdsMetadata = req.headers.metadata as string;
    if (p !== "/acc/tdquote") return [404, {}];
    const report = Buffer.from(body.report as string, "base64url");
    return [200, { quote: Buffer.from(signedTdxQuote(report.subarray(0x80, 0xc0), pck)).toString("base64url") }];
  });
  maa = await jsonServer((p, body) => {
    seen.maaPath = p;
    seen.maaBody = body;
    const q = verifyTdxQuote(Buffer.from(body.quote as string, "base64url"), { trustedRoot: pck.rootPem });
    const rt = Buffer.from((body.runtimeData as { data: string }).data, "base64url");
    if (!createHash("sha256").update(rt).digest().equals(Buffer.from(q.reportData.subarray(0, 32)))) return [400, { error: "runtime data not bound" }];
    return [200, { token: TOKEN }];
  });
  agent = await startAgentProcess(path.join(dir, "agent.sock"), [
    "--platform", "none", "--tpm", tpm.tpm, "--azure-maa-url", url(maa), "--azure-imds-url", url(imds), "--azure-hcl-wait-ms", "0",
  ]);
  client = grpcJsClient(agent.socket);
});

afterAll(async () => {
  client?.close();
  await agent?.stop();
  await tpm?.stop();
  imds?.close();
  maa?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("FetchCloudToken via Azure MAA (TDX CVM)", () => {
  it("writes the report data to NV 0x01400002, reads the HCL report at 0x01400001, gets a quote from IMDS and the token from MAA", async () => {
    const r = await client.fetchCloudToken({ nonce });
    expect(r.code).toBe(0);
    expect(r.value!.token.toString()).toBe(TOKEN);
    expect(seen.imdsMetadata).toBe("true");
    expect(seen.maaPath).toBe("/attest/TdxVm?api-version=2025-06-01");
    expect(seen.maaBody).toMatchObject({ nonce: nonce.toString("base64url"), runtimeData: { dataType: "JSON" } });
  });

  it("a stale HCL report (it carries another nonce's report data) → UNAVAILABLE, nothing sent to MAA", async () => {
    seen.maaBody = undefined;
    const r = await client.fetchCloudToken({ nonce: staleNonce });
    expect(r.code).toBe(grpc.status.UNAVAILABLE);
    expect(r.details).toMatch(/stale HCL report/);
    expect(seen.maaBody).toBeUndefined();
  });

  it("after the agent stops: NV 0x01400002 holds SHA-256(nonce) ‖ 0³² from the last call, owner read/write", async () => {
    client.close();
    await agent.stop();
    const out = path.join(dir, "ud.bin");
    await run("tpm2_nvread", ["-T", tpm.tcti, "-C", "o", "-o", out, "0x01400002"]);
    const ud = await readFile(out);
    expect(ud).toHaveLength(64);
    expect(ud.subarray(32)).toEqual(Buffer.alloc(32));
    expect(ud.subarray(0, 32)).toEqual(createHash("sha256").update(staleNonce).digest()); // the stale call wrote last
  });
});
