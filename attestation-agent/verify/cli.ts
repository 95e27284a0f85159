/**
 * `npm run attest -- fetch --socket PATH --platform vtpm|snp|tdx|snp-vtpm [--nonce HEX] [--report-data HEX] [--out FILE]`
 * `npm run attest -- verify --type vtpm|snp|tdx|snp-vtpm --in FILE [--nonce HEX] [--report-data HEX] [--ark FILE] [--ask FILE] [--vcek FILE] [--root FILE]`
 * (--ask/--vcek supply certificates the host did not put in the evidence, e.g. fetched from AMD KDS.)
 * Fetch prints or writes the evidence bytes; verify prints a JSON summary and exits 0, or 1 with the failed check.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import net from "node:net";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AttestationService, PlatformType } from "../gen/attestation/v1/attestation_pb.ts";
import type { Attestation as SnpAttestation } from "../gen/sevsnp/sevsnp_pb.ts";
import { verifySnpAttestation } from "./snp.ts";
import { verifyTdxQuote } from "./tdx.ts";
import { VerifyError, verifyVtpmAttestation } from "./tpm.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const pad = (b: Buffer, n: number) => Buffer.concat([b, Buffer.alloc(Math.max(0, n - b.length))]);
const TYPES: Record<string, PlatformType> = { vtpm: PlatformType.VTPM, snp: PlatformType.SNP, tdx: PlatformType.TDX, "snp-vtpm": PlatformType.SNP_VTPM };

/** Verifies evidence of `type`; returns a JSON-able summary or throws VerifyError. */
export async function verifyEvidence(type: string, bytes: Uint8Array, o: { nonce?: Buffer; reportData?: Buffer; ark?: Buffer; ask?: Buffer; vcek?: Buffer; root?: Buffer }) {
  const nonce = pad(o.nonce ?? Buffer.alloc(0), 32);
  const rd = o.reportData ? pad(o.reportData, 64) : undefined;
  switch (type) {
    case "vtpm":
    case "snp-vtpm": {
      const v = verifyVtpmAttestation(bytes, nonce);
      const out: Record<string, unknown> = {
        type,
        ak: hex(createHash("sha256").update(v.attestation.akPub).digest()),
        quotes: v.quotes.map((q) => ({ bank: q.bank, pcrDigest: hex(q.info.pcrDigest), pcrs: Object.fromEntries([...q.pcrs].map(([i, d]) => [i, hex(d)])) })),
        eventLogBytes: v.attestation.eventLog.length,
      };
      if (type === "snp-vtpm") {
        const tee = v.attestation.teeAttestation;
        if (tee.case !== "sevSnpAttestation") throw new VerifyError("tee", "no SEV-SNP attestation in field 8");
        const bound = createHash("sha3-512").update(rd ?? Buffer.alloc(64)).update(v.attestation.akPub).digest();
        const s = verifySnpAttestation(tee.value as SnpAttestation, { trustedArk: o.ark, ask: o.ask, vcek: o.vcek, reportData: bound });
        out.snp = { measurement: hex(s.report.measurement), vmpl: s.report.vmpl, akBound: true };
      }
      return out;
    }
    case "snp": {
      const s = verifySnpAttestation(bytes, { trustedArk: o.ark, ask: o.ask, vcek: o.vcek, reportData: rd });
      return { type, version: s.report.version, vmpl: s.report.vmpl, measurement: hex(s.report.measurement), reportData: hex(s.report.reportData), chipId: hex(s.report.chipId) };
    }
    case "tdx": {
      const q = verifyTdxQuote(bytes, { trustedRoot: o.root, reportData: rd });
      return { type, version: q.version, mrtd: hex(q.body.subarray(136, 184)), reportData: hex(q.reportData) };
    }
  }
  throw new VerifyError("usage", `unknown evidence type ${type}`);
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const { values: v } = parseArgs({
    args: rest,
    options: {
      socket: { type: "string" }, platform: { type: "string" }, type: { type: "string" }, in: { type: "string" }, out: { type: "string" },
      nonce: { type: "string" }, "report-data": { type: "string" }, ark: { type: "string" }, ask: { type: "string" }, vcek: { type: "string" }, root: { type: "string" },
    },
  });
  const fromHex = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, "hex"));
  const cert = async (f: string | undefined) => (f ? readFile(f) : undefined);
  if (cmd === "fetch") {
    if (!v.socket || !v.platform || !(v.platform in TYPES)) throw new VerifyError("usage", "fetch needs --socket and --platform vtpm|snp|tdx|snp-vtpm");
    const transport = createGrpcTransport({ baseUrl: "http://localhost", nodeOptions: { createConnection: () => net.connect(v.socket!) } });
    const res = await createClient(AttestationService, transport).fetchAttestation(
      { platformType: TYPES[v.platform], nonce: fromHex(v.nonce), reportData: fromHex(v["report-data"]) },
      { timeoutMs: 10_000 },
    );
    if (v.out) await writeFile(v.out, res.quote);
    else process.stdout.write(Buffer.from(res.quote).toString("base64") + "\n");
    return 0;
  }
  if (cmd === "verify") {
    if (!v.type || !v.in) throw new VerifyError("usage", "verify needs --type and --in");
    const summary = await verifyEvidence(v.type, new Uint8Array(await readFile(v.in)), { nonce: fromHex(v.nonce), reportData: fromHex(v["report-data"]), ark: await cert(v.ark), ask: await cert(v.ask), vcek: await cert(v.vcek), root: await cert(v.root) });
    console.log(JSON.stringify({ ok: true, ...summary }, null, 2));
    return 0;
  }
  throw new VerifyError("usage", "usage: attest fetch|verify …");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.log(JSON.stringify({ ok: false, check: (e as VerifyError).check ?? "error", error: (e as Error).message }));
      process.exit((e as VerifyError).check === "usage" ? 2 : 1);
    },
  );
}
