/**
 * `npm run attest -- fetch --socket PATH --platform vtpm|snp|tdx|snp-vtpm [--nonce HEX] [--report-data HEX] [--out FILE]`
 * `npm run attest -- token --socket PATH --nonce HEX [--out FILE]`
 * `npm run attest -- verify --type vtpm|snp|tdx|snp-vtpm [--in FILE|-] [--nonce HEX] [--report-data HEX] [--ak-sha256 HEX] [--banks sha256,…] [--ark FILE] [--ask FILE] [--vcek FILE] [--root FILE] [--tpm2-dir DIR]`
 * (--ask/--vcek supply certificates the host did not put in the evidence, e.g. fetched from AMD KDS.)
 * fetch/token call the agent with a Connect-ES client (Connect protocol, binary, HTTP/1.1) and
 * write the bytes to --out, or base64 to stdout, which `verify` reads when --in is absent
 * (`verify` also takes curl's Connect JSON answer). Relative paths are the caller's (INIT_CWD under npm).
 * Exit codes: 0 ok, 1 a verification check failed, 2 usage, 3 the agent could not be reached or refused.
 */
import { createHash, createPublicKey } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { fromBinary } from "@bufbuild/protobuf";
import { AttestationSchema } from "../gen/attest/attest_pb.ts";
import { ALG, HASHES, rsaPublicJwk } from "../tpm/marshal.ts";
import { AttestationService, PlatformType } from "../gen/attestation/v1/attestation_pb.ts";
import type { Attestation as SnpAttestation } from "../gen/sevsnp/sevsnp_pb.ts";
import { verifySnpAttestation } from "./snp.ts";
import { verifyTdxQuote } from "./tdx.ts";
import { replayEventLog, VerifyError, verifyVtpmAttestation } from "./tpm.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const pad = (b: Buffer, n: number) => Buffer.concat([b, Buffer.alloc(Math.max(0, n - b.length))]);
const TYPES: Record<string, PlatformType> = { vtpm: PlatformType.VTPM, snp: PlatformType.SNP, tdx: PlatformType.TDX, "snp-vtpm": PlatformType.SNP_VTPM };

/** Verifies evidence of `type`; returns a JSON-able summary or throws VerifyError. */
export async function verifyEvidence(
  type: string,
  bytes: Uint8Array,
  o: { nonce?: Buffer; reportData?: Buffer; ark?: Buffer; ask?: Buffer; vcek?: Buffer; root?: Buffer; akSha256?: Buffer; banks?: number[] },
) {
  const nonce = pad(o.nonce ?? Buffer.alloc(0), 32);
  const rd = o.reportData ? pad(o.reportData, 64) : undefined;
  switch (type) {
    case "vtpm":
    case "snp-vtpm": {
      // every bank asked for must be quoted (sha256 unless told): evidence with a bank taken out fails
      const v = verifyVtpmAttestation(bytes, nonce, { requireBanks: o.banks ?? [ALG.SHA256] });
      const ak = createHash("sha256").update(v.attestation.akPub).digest();
      // The quotes prove only that the evidence's own AK signed them; which machine that AK lives in
      // is what a pin (enrolled AK) or, for snp-vtpm, the SEV-SNP report binding it says.
      if (o.akSha256 && !ak.equals(o.akSha256)) throw new VerifyError("ak", `the AK is ${hex(ak)}, not the pinned ${hex(o.akSha256)}`);
      const out: Record<string, unknown> = {
        type,
        ak: hex(ak),
        akPinned: !!o.akSha256,
        quotes: v.quotes.map((q) => ({ bank: q.bank, pcrDigest: hex(q.info.pcrDigest), pcrs: Object.fromEntries([...q.pcrs].map(([i, d]) => [i, hex(d)])) })),
        eventLogBytes: v.attestation.eventLog.length,
        // the log as the quotes confirm it: replayed PCRs, or why it was not replayed
        eventLog: replayEventLog(v.attestation.eventLog, v.quotes),
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

/** The agent could not be reached, or answered with an error; exit code 3. */
export class AgentCallError extends Error {
  override name = "AgentCallError";
}

/** What to do about each status code, shown after the agent's own message. */
const HINTS: Partial<Record<Code, string>> = {
  [Code.Canceled]: "the call was cancelled",
  [Code.Unknown]: "the agent failed in an unexpected way; see its log",
  [Code.InvalidArgument]: "the request is malformed (report data ≤ 64 bytes, nonce ≤ 32 bytes, a platform type with evidence)",
  [Code.DeadlineExceeded]: "the call took longer than its deadline; the TPM or TSM may be slow or busy",
  [Code.NotFound]: "the agent does not know what was asked for",
  [Code.AlreadyExists]: "already exists",
  [Code.PermissionDenied]: "the agent refused this caller",
  [Code.ResourceExhausted]: "the agent is busy (too many calls waiting for the device) or the request is too large; retry later",
  [Code.FailedPrecondition]: "this machine cannot produce that evidence, or no cloud provider is configured",
  [Code.Aborted]: "another writer raced the report; retry",
  [Code.OutOfRange]: "a value is out of range",
  [Code.Unimplemented]: "the agent does not serve this method or protocol (an older agent, or --protocols turned Connect off)",
  [Code.Internal]: "the device returned an error or malformed evidence; see the agent's log",
  [Code.Unavailable]: "the TPM, TSM or cloud provider is unreachable or busy; retry later",
  [Code.DataLoss]: "data loss",
  [Code.Unauthenticated]: "the agent requires credentials",
};

/** One line for a failed call: the socket problem, or the agent's code, message and a hint. */
export function describeCallError(e: unknown, socket: string): string {
  const err = ConnectError.from(e);
  const errno = (err.cause as NodeJS.ErrnoException | undefined)?.code;
  if (errno === "ENOENT") return `no agent socket at ${socket}: is the agent running? (--socket, ATTESTATION_SOCKET)`;
  if (errno === "EACCES" || errno === "EPERM") return `permission denied on ${socket}: run as a member of the socket's group (agent --socket-group) or as its owner`;
  if (errno === "ECONNREFUSED") return `nothing listens on ${socket}: a socket file left by an agent that is gone?`;
  if (errno === "ENOTSOCK") return `${socket} is not a unix socket`;
  const name = Code[err.code] ?? String(err.code);
  const hint = HINTS[err.code];
  return `agent answered ${name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase()} (${err.code}): ${err.rawMessage}${hint ? ` — ${hint}` : ""}`;
}

/** A Connect-ES client on the agent's unix socket. */
export function agentClient(socket: string) {
  const transport = createConnectTransport({ baseUrl: "http://localhost", httpVersion: "1.1", useBinaryFormat: true, nodeOptions: { socketPath: socket } });
  return createClient(AttestationService, transport);
}

async function callAgent<T>(socket: string, call: () => Promise<T>): Promise<T> {
  const st = await stat(socket).catch((e: NodeJS.ErrnoException) => {
    throw new AgentCallError(describeCallError(new ConnectError(e.message, Code.Unavailable, undefined, undefined, e), socket));
  });
  if (!st.isSocket()) throw new AgentCallError(`${socket} is not a unix socket`);
  try {
    return await call();
  } catch (e) {
    throw new AgentCallError(describeCallError(e, socket));
  }
}

/**
 * Evidence as `verify` accepts it: raw bytes, base64 text (what `fetch` prints), or the Connect
 * JSON answer `{"quote": "…"}` (what `curl` gets). Lines npm prints before a script's own output
 * ("> pkg@version name", "> command") are skipped, so
 * `npm run attest -- fetch … | npm run attest -- verify …` works without `-s`.
 */
export function decodeEvidence(buf: Buffer): Uint8Array {
  const text = buf.toString("latin1");
  if (!/^[\x20-\x7e\r\n\t]*$/.test(text)) return new Uint8Array(buf);
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "" && !l.startsWith("> "));
  let b64 = lines.join("");
  if (b64.startsWith("{")) {
    try {
      b64 = String(JSON.parse(b64).quote ?? "");
    } catch {
      throw new VerifyError("usage", "evidence is JSON but not a FetchAttestation answer");
    }
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length === 0) throw new VerifyError("usage", "no evidence: neither bytes, base64, nor {\"quote\": …}");
  return new Uint8Array(Buffer.from(b64, "base64"));
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Files tpm2_checkquote reads: the AK as PEM and, per bank, the TPMS_ATTEST and TPMT_SIGNATURE. */
async function writeTpm2Files(dir: string, evidence: Uint8Array): Promise<void> {
  const att = fromBinary(AttestationSchema, evidence);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "ak.pem"), createPublicKey({ key: rsaPublicJwk(att.akPub), format: "jwk" }).export({ type: "spki", format: "pem" }));
  for (const q of att.quotes) {
    const bank = HASHES[q.pcrs?.hash ?? 0]?.name ?? `alg-${q.pcrs?.hash}`;
    await writeFile(path.join(dir, `quote-${bank}.msg`), q.quote);
    await writeFile(path.join(dir, `quote-${bank}.sig`), q.rawSig);
  }
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const { values: v } = parseArgs({
    args: rest,
    options: {
      socket: { type: "string" }, platform: { type: "string" }, type: { type: "string" }, in: { type: "string" }, out: { type: "string" },
      nonce: { type: "string" }, "report-data": { type: "string" }, ark: { type: "string" }, ask: { type: "string" }, vcek: { type: "string" }, root: { type: "string" },
      "timeout-ms": { type: "string" }, "tpm2-dir": { type: "string" }, "ak-sha256": { type: "string" }, banks: { type: "string" },
    },
  });
  const fromHex = (s: string | undefined, what: string) => {
    if (s === undefined) return undefined;
    if (!/^([0-9a-fA-F]{2})*$/.test(s)) throw new VerifyError("usage", `--${what} must be hex`);
    return Buffer.from(s, "hex");
  };
  // `npm run` runs scripts in the package root; paths are the caller's, relative to where npm was invoked.
  const file = (f: string) => path.resolve(process.env.INIT_CWD ?? process.cwd(), f);
  const cert = async (f: string | undefined) => (f ? readFile(file(f)) : undefined);
  const timeoutMs = Number(v["timeout-ms"] ?? 10_000);
  const output = async (bytes: Uint8Array) => {
    if (v.out) await writeFile(file(v.out), bytes);
    else process.stdout.write(Buffer.from(bytes).toString("base64") + "\n");
  };
  if (cmd === "fetch") {
    if (!v.socket || !v.platform || !(v.platform in TYPES)) throw new VerifyError("usage", "fetch needs --socket PATH and --platform vtpm|snp|tdx|snp-vtpm");
    const req = { platformType: TYPES[v.platform], nonce: fromHex(v.nonce, "nonce"), reportData: fromHex(v["report-data"], "report-data") };
    const res = await callAgent(v.socket, () => agentClient(v.socket!).fetchAttestation(req, { timeoutMs }));
    await output(res.quote);
    return 0;
  }
  if (cmd === "token") {
    if (!v.socket || v.nonce === undefined) throw new VerifyError("usage", "token needs --socket PATH and --nonce HEX");
    const nonce = fromHex(v.nonce, "nonce");
    const res = await callAgent(v.socket, () => agentClient(v.socket!).fetchCloudToken({ nonce }, { timeoutMs }));
    if (v.out) await writeFile(file(v.out), res.token);
    else process.stdout.write(Buffer.from(res.token).toString("utf8") + "\n");
    return 0;
  }
  if (cmd === "verify") {
    if (!v.type) throw new VerifyError("usage", "verify needs --type vtpm|snp|tdx|snp-vtpm and --in FILE (or evidence on stdin)");
    const bytes = decodeEvidence(v.in && v.in !== "-" ? await readFile(file(v.in)) : await readStdin());
    const akSha256 = fromHex(v["ak-sha256"], "ak-sha256");
    if (akSha256 && akSha256.length !== 32) throw new VerifyError("usage", "--ak-sha256 must be 32 bytes of hex (the `ak` a verify printed)");
    const banks = v.banks?.split(",").map((b) => {
      const alg = Object.entries(HASHES).find(([, h]) => h.name === b.trim())?.[0];
      if (alg === undefined) throw new VerifyError("usage", `--banks: unknown bank ${b} (sha1, sha256, sha384, sha512)`);
      return Number(alg);
    });
    const summary = await verifyEvidence(v.type, bytes, {
      nonce: fromHex(v.nonce, "nonce"),
      reportData: fromHex(v["report-data"], "report-data"),
      ark: await cert(v.ark),
      ask: await cert(v.ask),
      vcek: await cert(v.vcek),
      root: await cert(v.root),
      akSha256,
      banks,
    });
    if (v.type === "vtpm" && !akSha256) {
      console.error("attest: the AK is not pinned (--ak-sha256): the quotes are consistent and bound to the nonce, but nothing ties their AK to a machine");
    }
    if (v["tpm2-dir"] && (v.type === "vtpm" || v.type === "snp-vtpm")) await writeTpm2Files(file(v["tpm2-dir"]), bytes);
    console.log(JSON.stringify({ ok: true, ...summary }, null, 2));
    return 0;
  }
  throw new VerifyError("usage", "usage: attest fetch|token|verify …");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      if (e instanceof AgentCallError) {
        console.error(`attest: ${e.message}`);
        process.exit(3);
      }
      console.log(JSON.stringify({ ok: false, check: (e as VerifyError).check ?? "error", error: (e as Error).message }));
      process.exit((e as VerifyError).check === "usage" ? 2 : 1);
    },
  );
}
