/**
 * `npm run agent -- --socket PATH --tpm DEV|unix:PATH|tcp:HOST:PORT --tsm-root DIR
 *   --event-log FILE --platform auto|snp|tdx|vtpm|snp-vtpm|none` (each flag also from its
 * ATTESTATION_* environment variable; flags win). SIGTERM/SIGINT drain in-flight calls.
 */
import { parseArgs } from "node:util";
import { DEFAULTS, startAgent, type AgentConfig } from "./agent.ts";
import { PLATFORM_NAMES, type PlatformName } from "./platform.ts";

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
} as const;

function usage(msg?: string): never {
  if (msg) console.error(`attestation-agent: ${msg}`);
  console.error(`usage: npm run agent -- [--flag value]…\n${Object.entries(FLAGS).map(([f, e]) => `  --${f}  (env ${e})`).join("\n")}`);
  process.exit(2);
}

export function parseConfig(argv: string[], env: NodeJS.ProcessEnv): AgentConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options: { ...Object.fromEntries(Object.keys(FLAGS).map((k) => [k, { type: "string" as const }])), help: { type: "boolean" } }, strict: true }).values;
  } catch (e) {
    usage((e as Error).message);
  }
  if (values.help) usage();
  const get = (f: keyof typeof FLAGS) => (values[f] as string | undefined) ?? env[FLAGS[f]] ?? undefined;
  const int = (f: keyof typeof FLAGS, radix = 10) => {
    const v = get(f);
    if (v === undefined) return undefined;
    const n = Number.parseInt(v, radix);
    if (!Number.isFinite(n) || n < 0) usage(`--${f} must be a non-negative ${radix === 8 ? "octal " : ""}number`);
    return n;
  };
  const platform = (get("platform") ?? DEFAULTS.platform) as PlatformName;
  if (!PLATFORM_NAMES.includes(platform)) usage(`--platform must be one of ${PLATFORM_NAMES.join("|")}`);
  const vmpl = int("snp-vmpl");
  if (vmpl !== undefined && vmpl > 3) usage("--snp-vmpl must be 0-3");
  return {
    ...DEFAULTS,
    socket: get("socket") ?? DEFAULTS.socket,
    socketMode: int("socket-mode", 8) ?? DEFAULTS.socketMode,
    socketGroup: get("socket-group"),
    tpm: get("tpm") ?? DEFAULTS.tpm,
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
    callTimeoutMs: int("call-timeout-ms") ?? DEFAULTS.callTimeoutMs,
    tpmTimeoutMs: int("tpm-timeout-ms") ?? DEFAULTS.tpmTimeoutMs,
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
