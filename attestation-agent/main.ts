/**
 * `npm run agent -- --socket PATH --tpm DEV|unix:PATH|tcp:HOST:PORT --tsm-root DIR
 *   --event-log FILE --platform auto|snp|tdx|vtpm|snp-vtpm|none --protocols grpc,grpc-web,connect …`
 * (each flag also from its ATTESTATION_* environment variable; flags win; the full list is in
 * docs/attestation-agent.md). SIGTERM/SIGINT drain in-flight calls.
 */
import { parseArgs } from "node:util";
import { DEFAULTS, startAgent, type AgentConfig } from "./agent.ts";
import { PLATFORM_NAMES, type PlatformName } from "./platform.ts";
import { PROTOCOLS, type Protocol } from "./server.ts";

const FLAGS = {
  socket: "ATTESTATION_SOCKET",
  "socket-mode": "ATTESTATION_SOCKET_MODE",
  "socket-group": "ATTESTATION_SOCKET_GROUP",
  tpm: "ATTESTATION_TPM",
  "tsm-root": "ATTESTATION_TSM_ROOT",
  "event-log": "ATTESTATION_EVENT_LOG",
  platform: "ATTESTATION_PLATFORM",
  "snp-vmpl": "ATTESTATION_SNP_VMPL",
  "gcp-launcher-socket": "ATTESTATION_GCP_LAUNCHER_SOCKET",
  "gcp-audience": "ATTESTATION_GCP_AUDIENCE",
  "gcp-token-type": "ATTESTATION_GCP_TOKEN_TYPE",
  "azure-maa-url": "ATTESTATION_AZURE_MAA_URL",
  "azure-imds-url": "ATTESTATION_AZURE_IMDS_URL",
  "azure-hcl-wait-ms": "ATTESTATION_AZURE_HCL_WAIT_MS",
  "call-timeout-ms": "ATTESTATION_CALL_TIMEOUT_MS",
  "tpm-timeout-ms": "ATTESTATION_TPM_TIMEOUT_MS",
  protocols: "ATTESTATION_PROTOCOLS",
  "default-deadline-ms": "ATTESTATION_DEFAULT_DEADLINE_MS",
  "max-queued-calls": "ATTESTATION_MAX_QUEUED_CALLS",
  "max-request-bytes": "ATTESTATION_MAX_REQUEST_BYTES",
  "header-timeout-ms": "ATTESTATION_HEADER_TIMEOUT_MS",
  "request-timeout-ms": "ATTESTATION_REQUEST_TIMEOUT_MS",
  "idle-timeout-ms": "ATTESTATION_IDLE_TIMEOUT_MS",
  "max-connections": "ATTESTATION_MAX_CONNECTIONS",
} as const;

function usage(msg?: string): never {
  if (msg) console.error(`attestation-agent: ${msg}`);
  console.error(`usage: npm run agent -- [--flag value]…\n${Object.entries(FLAGS).map(([f, e]) => `  --${f}  (env ${e})`).join("\n")}`);
  process.exit(2);
}

/** The largest whole number a numeric flag takes (Node's timers stop at 2^31 - 1 ms). */
const MAX_INT = 2 ** 31 - 1;

export function parseConfig(argv: string[], env: NodeJS.ProcessEnv): AgentConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options: { ...Object.fromEntries(Object.keys(FLAGS).map((k) => [k, { type: "string" as const }])), help: { type: "boolean" } }, strict: true }).values;
  } catch (e) {
    usage((e as Error).message);
  }
  if (values.help) usage();
  const get = (f: keyof typeof FLAGS) => (values[f] as string | undefined) ?? env[FLAGS[f]] ?? undefined;
  // Whole values only: parseInt would take "660abc" as 660 and "0o660" as 0. At most 2^31 - 1: a
  // timer past it fires after 1 ms in Node, so "a very long timeout" would end every call at once.
  const int = (f: keyof typeof FLAGS) => {
    const v = get(f);
    if (v === undefined) return undefined;
    if (!/^\d{1,15}$/.test(v) || Number(v) > MAX_INT) usage(`--${f} must be an integer 0-${MAX_INT}, got "${v}"`);
    return Number(v);
  };
  /** Permission bits only: no setuid, setgid or sticky bit. */
  const mode = (f: keyof typeof FLAGS) => {
    const v = get(f);
    if (v === undefined) return undefined;
    const m = /^(?:0o)?([0-7]{1,4})$/.exec(v);
    const n = m ? Number.parseInt(m[1]!, 8) : Number.NaN; // !: the group always participates
    if (!(n <= 0o777)) usage(`--${f} must be an octal mode 0-0777 (e.g. 660 or 0o660), got "${v}"`);
    return n;
  };
  const platform = (get("platform") ?? DEFAULTS.platform) as PlatformName;
  if (!PLATFORM_NAMES.includes(platform)) usage(`--platform must be one of ${PLATFORM_NAMES.join("|")}`);
  const positive = (f: keyof typeof FLAGS) => {
    const v = get(f);
    if (v !== undefined && (!/^\d{1,15}$/.test(v) || Number(v) === 0 || Number(v) > MAX_INT)) usage(`--${f} must be an integer 1-${MAX_INT}, got "${v}"`);
    const n = int(f);
    return n;
  };
  const protocols = (get("protocols") ?? PROTOCOLS.join(",")).split(",").map((p) => p.trim()).filter(Boolean) as Protocol[];
  const unknown = protocols.filter((p) => !PROTOCOLS.includes(p));
  if (unknown.length > 0 || protocols.length === 0) usage(`--protocols takes a comma-separated subset of ${PROTOCOLS.join(",")}`);
  const vmpl = int("snp-vmpl");
  if (vmpl !== undefined && vmpl > 3) usage(`--snp-vmpl must be an integer 0-3, got "${vmpl}"`);
  return {
    ...DEFAULTS,
    socket: get("socket") ?? DEFAULTS.socket,
    socketMode: mode("socket-mode") ?? DEFAULTS.socketMode,
    socketGroup: get("socket-group"),
    tpm: get("tpm") ?? DEFAULTS.tpm,
    tpmConfigured: get("tpm") !== undefined,
    tsmRoot: get("tsm-root") ?? DEFAULTS.tsmRoot,
    eventLog: get("event-log") ?? DEFAULTS.eventLog,
    platform,
    snpVmpl: vmpl,
    gcpLauncherSocket: get("gcp-launcher-socket"),
    gcpAudience: get("gcp-audience"),
    gcpTokenType: get("gcp-token-type"),
    azureMaaUrl: get("azure-maa-url"),
    azureImdsUrl: get("azure-imds-url"),
    azureHclWaitMs: int("azure-hcl-wait-ms"),
    callTimeoutMs: positive("call-timeout-ms") ?? DEFAULTS.callTimeoutMs,
    tpmTimeoutMs: positive("tpm-timeout-ms") ?? DEFAULTS.tpmTimeoutMs,
    protocols,
    defaultDeadlineMs: positive("default-deadline-ms") ?? DEFAULTS.defaultDeadlineMs,
    maxQueuedCalls: positive("max-queued-calls") ?? DEFAULTS.maxQueuedCalls,
    limits: {
      maxRequestBytes: positive("max-request-bytes") ?? DEFAULTS.limits.maxRequestBytes,
      headerTimeoutMs: positive("header-timeout-ms") ?? DEFAULTS.limits.headerTimeoutMs,
      requestTimeoutMs: positive("request-timeout-ms") ?? DEFAULTS.limits.requestTimeoutMs,
      idleTimeoutMs: positive("idle-timeout-ms") ?? DEFAULTS.limits.idleTimeoutMs,
      maxConnections: positive("max-connections") ?? DEFAULTS.limits.maxConnections,
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = parseConfig(process.argv.slice(2), process.env);
  const agent = await startAgent(config).catch((e) => {
    console.error(`attestation-agent: cannot start: ${(e as Error).message}`);
    process.exit(1);
  });
  let stopping = false;
  const stop = (sig: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`attestation-agent: ${sig}: draining`);
    agent.stop().then(
      () => process.exit(0),
      (e) => {
        console.error(`attestation-agent: shutdown: ${(e as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}
