/** The generated code matches proto/ + buf.gen.yaml, and any gRPC tool loads the proto with proto/ alone. */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as loader from "@grpc/proto-loader";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./helpers.ts";

const run = promisify(execFile);
let out: string | undefined;
afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

async function files(dir: string): Promise<string[]> {
  const all = await readdir(dir, { recursive: true, withFileTypes: true });
  return all.filter((d) => d.isFile()).map((d) => path.relative(dir, path.join(d.parentPath, d.name))).sort();
}

describe("proto and generated code", () => {
  it("attestation-agent/gen is exactly what `buf generate` produces (fails when stale)", async () => {
    out = await mkdtemp(path.join(os.tmpdir(), "agent-gen-"));
    const bin = path.join(ROOT, "node_modules/.bin");
    await run(path.join(bin, "buf"), ["generate", "--template", "buf.gen.yaml", "-o", out], { cwd: ROOT, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    const fresh = path.join(out, "attestation-agent/gen");
    const committed = path.join(ROOT, "attestation-agent/gen");
    const names = await files(fresh);
    expect(await files(committed)).toEqual(names);
    for (const n of names) expect(await readFile(path.join(committed, n), "utf8"), n).toBe(await readFile(path.join(fresh, n), "utf8"));
  });

  it("loads with proto/ as the only include path and keeps the spec's wire shape", () => {
    const def = loader.loadSync("attestation/v1/attestation.proto", { includeDirs: [path.join(ROOT, "proto")], keepCase: true });
    const svc = def["attestation.v1.AttestationService"] as Record<string, { path: string }>;
    expect(Object.keys(svc).sort()).toEqual(["FetchAttestation", "FetchCloudToken"]);
    expect(svc.FetchAttestation!.path).toBe("/attestation.v1.AttestationService/FetchAttestation");
    const req = def["attestation.v1.AttestationRequest"] as { type: { field: { name: string; number: number }[] } };
    expect(req.type.field.map((f) => [f.name, f.number])).toEqual([["report_data", 1], ["nonce", 2], ["platform_type", 3]]);
    const en = def["attestation.v1.PlatformType"] as { type: { value: { name: string; number: number }[] } };
    expect(en.type.value.map((v) => [v.name, v.number])).toEqual([
      ["PLATFORM_TYPE_UNSPECIFIED", 0], ["PLATFORM_TYPE_SNP", 1], ["PLATFORM_TYPE_TDX", 2], ["PLATFORM_TYPE_VTPM", 3],
      ["PLATFORM_TYPE_SNP_VTPM", 4], ["PLATFORM_TYPE_CLOUD", 5], ["PLATFORM_TYPE_NO_CC", 6],
    ]);
    // The evidence schemas keep go-tpm-tools / go-sev-guest field numbers.
    const ev = loader.loadSync("attest/attest.proto", { includeDirs: [path.join(ROOT, "proto")], keepCase: true });
    const att = ev["attest.Attestation"] as { type: { field: { name: string; number: number }[] } };
    expect(att.type.field.map((f) => [f.name, f.number])).toEqual(expect.arrayContaining([["ak_pub", 1], ["quotes", 2], ["event_log", 3], ["sev_snp_attestation", 8]]));
    const chain = ev["sevsnp.CertificateChain"] as { type: { field: { name: string; number: number }[] } };
    expect(chain.type.field.map((f) => [f.name, f.number])).toEqual(expect.arrayContaining([["vcek_cert", 1], ["ask_cert", 2], ["ark_cert", 3], ["vlek_cert", 6]]));
  });
});
