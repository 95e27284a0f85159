/**
 * FetchCloudToken with Azure MAA on an SEV-SNP CVM: swtpm provisioned like Azure's vTPM (AK at
 * 0x81000003, AK cert at NV 0x01C101D0, HCL report with a test-signed SNP report at 0x01400001),
 * a fake IMDS THIM endpoint and a fake MAA that verifies the evidence and answers with a token
 * encrypted to the agent's PCR-bound TPM key, which the agent decrypts in the TPM.
 */
import { execFile } from "node:child_process";
import { X509Certificate, constants, createCipheriv, createHash, createPublicKey, publicEncrypt, randomBytes, verify } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HCL_REPORT_TYPE, buildHclReport } from "../../attestation-agent/cloud/azure.ts";
import { parseEventLog } from "../../attestation-agent/cloud/eventlog.ts";
import { ALG, Reader, objectName, parseAttest, rsaPublicJwk } from "../../attestation-agent/tpm/marshal.ts";
import { verifySnpReportSignature } from "../../attestation-agent/verify/snp.ts";
import { startSwtpm, type Swtpm } from "../../scripts/agent-swtpm.ts";
import { eventLog, makeSnpChain, signedSnpReport, type SnpChain } from "./fixtures/evidence.ts";
import { grpcJsClient, startAgentProcess, type AgentProcess } from "./helpers.ts";

const run = promisify(execFile);
let dir: string;
let tpm: Swtpm;
let chain: SnpChain;
let agent: AgentProcess;
let client: ReturnType<typeof grpcJsClient>;
let imds: http.Server;
let maa: http.Server;
const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJ4LW1zLWF0dGVzdGF0aW9uLXR5cGUiOiJzZXZzbnB2bSJ9.c2lnbmF0dXJl";
const seen: { info?: Record<string, any>; checks?: Record<string, boolean> } = {}; // eslint-disable-line @typescript-eslint/no-explicit-any

const b64 = (s: string) => Buffer.from(s, "base64");

/** The part of MAA's AzureGuest checks a fake can make, then MAA's encrypted answer. */
function maaAnswer(body: { AttestationInfo: string }): [number, unknown] {
  const info = JSON.parse(Buffer.from(body.AttestationInfo, "base64url").toString());
  seen.info = info;
  const t = info.TpmInfo;
  const akPub = b64(t.AikPub).subarray(2);
  const ak = createPublicKey({ key: rsaPublicJwk(akPub), format: "jwk" });
  const quote = b64(t.PcrQuote);
  const q = parseAttest(quote);
  const pcrs: Buffer[] = t.PCRs.map((p: { Digest: string }) => b64(p.Digest));
  const certInfo = b64(t.EncKeyCertifyInfo);
  const encPub = b64(t.EncKeyPub).subarray(2);
  // TPMS_ATTEST of a certify: magic, type 0x8017, signer, extraData, clock, fw, then the certified name.
  const r = new Reader(certInfo);
  r.u32();
  const certType = r.u16();
  r.tpm2b();
  r.tpm2b();
  r.raw(17 + 8);
  const certifiedName = r.tpm2b();
  const proof = JSON.parse(b64(info.IsolationInfo.Evidence.Proof).toString());
  const report = Buffer.from(proof.SnpReport, "base64url");
  const pems = b64(proof.VcekCertChain).toString().match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
  let snpOk = true;
  try {
    verifySnpReportSignature(report, new X509Certificate(pems[0]));
  } catch {
    snpOk = false;
  }
  const runtime = b64(info.IsolationInfo.Evidence.RunTimeData);
  seen.checks = {
    quoteSignature: verify("sha256", quote, ak, b64(t.PcrSignature)),
    quoteNonce: Buffer.from(q.extraData).equals(b64(info.ClientPayload.nonce)),
    pcrDigest: createHash("sha256").update(Buffer.concat(pcrs)).digest().equals(Buffer.from(q.pcrDigest)),
    certifySignature: verify("sha256", certInfo, ak, b64(t.EncKeyCertifyInfoSignature)),
    certifiedKeyIsEncKey: certType === 0x8017 && Buffer.from(certifiedName).equals(Buffer.from(objectName(encPub))),
    snpReportSignature: snpOk,
    runtimeBound: createHash("sha256").update(runtime).digest().equals(report.subarray(0x50, 0x70)),
    chainHasAskAndArk: pems.length === 3,
    eventLogStripped: parseEventLog(b64(info.TcgLogs)).every((e) => e.pcr <= 7 && [...e.digests.keys()].join() === String(ALG.SHA256)),
  };
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(Buffer.from("Transport Key"));
  const ct = Buffer.concat([c.update(JWT), c.final()]);
  const encKey = createPublicKey({ key: rsaPublicJwk(encPub), format: "jwk" });
  const envelope = {
    Jwt: ct.toString("base64"),
    EncryptedInnerKey: publicEncrypt({ key: encKey, padding: constants.RSA_PKCS1_PADDING }, key).toString("base64"),
    EncryptionParams: { Iv: iv.toString("base64") },
    AuthenticationData: c.getAuthTag().toString("base64"),
  };
  return [200, { token: Buffer.from(JSON.stringify(envelope)).toString("base64url") }];
}

function server(handler: (req: http.IncomingMessage, body: string) => [number, unknown]): Promise<http.Server> {
  const s = http.createServer((req, res) => {
    let data = "";
    req.on("data", (c) => (data += c));
    req.on("end", () => {
      const [code, out] = handler(req, data);
      res.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify(out));
    });
  });
  return new Promise((r) => s.listen(0, "127.0.0.1", () => r(s)));
}
const url = (s: http.Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

async function nvStore(index: string, data: Buffer) {
  const f = path.join(dir, `${index}.bin`);
  await writeFile(f, data);
  await run("tpm2_nvdefine", ["-T", tpm.tcti, "-C", "o", "-s", String(data.length), "-a", "ownerread|ownerwrite", index]);
  await run("tpm2_nvwrite", ["-T", tpm.tcti, "-C", "o", "-i", f, index]);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-azsnp-"));
  [tpm, chain] = await Promise.all([startSwtpm(), makeSnpChain()]);
  // Azure's vTPM provisioning, done by the test before the agent connects (swtpm serves one client).
  const ctx = path.join(dir, "ak.ctx");
  await run("tpm2_createprimary", ["-T", tpm.tcti, "-C", "o", "-g", "sha256", "-G", "rsa2048:rsassa-sha256:null", "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign", "-c", ctx]);
  await run("tpm2_evictcontrol", ["-T", tpm.tcti, "-C", "o", "-c", ctx, "0x81000003"]);
  await run("tpm2_flushcontext", ["-T", tpm.tcti, "-t"]);
  await nvStore("0x01C101D0", chain.vcek); // any DER certificate stands in for Azure's AK certificate
  const claims = Buffer.from(JSON.stringify({ keys: [{ kid: "HCLAkPub", kty: "RSA" }], "vm-configuration": { "secure-boot": true, "tpm-enabled": true } }));
  const report = signedSnpReport(createHash("sha256").update(claims).digest(), chain.vcekKey, { vmpl: 0 });
  await nvStore("0x01400001", Buffer.from(buildHclReport(HCL_REPORT_TYPE.SNP, report, claims)));
  await writeFile(path.join(dir, "eventlog.bin"), eventLog([
    { pcr: 0, type: 8, data: Buffer.from("S-CRTM version") },
    { pcr: 9, type: 13, data: Buffer.from("kernel command line") },
    { pcr: 4, type: 0x80000003, data: Buffer.from("boot loader") },
  ]));

  imds = await server((req) => {
    if (req.url !== "/metadata/THIM/amd/certification" || req.headers.metadata !== "True") return [404, {}];
    return [200, { vcekCert: chain.pem.vcek, certificateChain: chain.pem.ask + chain.pem.ark }];
  });
  maa = await server((req, body) => (req.url === "/attest/AzureGuest?api-version=2020-10-01" ? maaAnswer(JSON.parse(body)) : [404, {}]));
  agent = await startAgentProcess(path.join(dir, "agent.sock"), [
    "--platform", "none", "--tpm", tpm.tpm, "--event-log", path.join(dir, "eventlog.bin"), "--azure-maa-url", url(maa), "--azure-imds-url", url(imds),
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

describe("FetchCloudToken via Azure MAA (SEV-SNP CVM)", () => {
  it("sends verifiable evidence and decrypts MAA's answer in the TPM under its PCR policy", async () => {
    const nonce = randomBytes(32);
    const r = await client.fetchCloudToken({ nonce });
    expect(r.details).toBeUndefined();
    expect(r.code).toBe(0);
    expect(r.value!.token.toString()).toBe(JWT);
    expect(seen.checks).toEqual({
      quoteSignature: true, quoteNonce: true, pcrDigest: true, certifySignature: true, certifiedKeyIsEncKey: true,
      snpReportSignature: true, runtimeBound: true, chainHasAskAndArk: true, eventLogStripped: true,
    });
    expect(seen.info).toMatchObject({ AttestationProtocolVersion: "2.0", IsolationInfo: { Type: "SevSnp" }, TpmInfo: { PcrSet: [...Array(24).keys()] } });
    expect(parseEventLog(b64(seen.info!.TcgLogs)).map((e) => e.pcr)).toEqual([0, 4]);
  });

  it("a nonce over 32 bytes → INVALID_ARGUMENT", async () => {
    const r = await client.fetchCloudToken({ nonce: randomBytes(33) });
    expect(r.code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it("leaves no transient objects or sessions behind", async () => {
    client.close();
    await agent.stop();
    for (const cap of ["handles-transient", "handles-loaded-session"]) {
      const { stdout } = await run("tpm2_getcap", ["-T", tpm.tcti, cap]);
      expect(stdout.trim(), cap).toBe("");
    }
  });
});
