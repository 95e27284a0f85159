/**
 * Wires configuration to devices and the server: opens the TPM transport, the configfs-tsm
 * client and the cloud provider, detects (or takes) the platform, logs it once, and serves.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { AzureMaaProvider } from "./cloud/azure-maa.ts";
import { GcpLauncherProvider } from "./cloud/gcp.ts";
import type { CloudTokenProvider } from "./cloud/provider.ts";
import { detect, fromName, type Capabilities, type PlatformName } from "./platform.ts";
import { DEFAULT_LIMITS, PROTOCOLS, startServer, type AgentServer, type Protocol, type ServerLimits } from "./server.ts";
import { DEFAULT_DEADLINE_MS, DEFAULT_MAX_QUEUED_CALLS, createAttestationService } from "./service.ts";
import { TpmClient } from "./tpm/client.ts";
import { openTransport } from "./tpm/transport.ts";
import { VtpmAttester } from "./tpm/vtpm.ts";
import { TsmClient, type ConfigFs } from "./tsm/report.ts";

export interface AgentConfig {
  socket: string;
  socketMode: number;
  socketGroup?: string;
  tpm: string;
  /** `--tpm` (or ATTESTATION_TPM) was given: detection keeps the TPM even if it does not answer at start. */
  tpmConfigured?: boolean;
  tsmRoot: string;
  eventLog: string;
  platform: PlatformName;
  snpVmpl?: number;
  gcpLauncherSocket?: string;
  gcpAudience?: string;
  gcpTokenType?: string;
  azureMaaUrl?: string;
  azureImdsUrl?: string;
  azureHclWaitMs?: number;
  callTimeoutMs: number;
  tpmTimeoutMs: number;
  /** Protocols served on the socket (gRPC, gRPC-Web, Connect). */
  protocols: readonly Protocol[];
  /** Deadline of a call whose client set none. */
  defaultDeadlineMs: number;
  /** Calls running or waiting for a device at once; beyond it RESOURCE_EXHAUSTED. */
  maxQueuedCalls: number;
  limits: ServerLimits;
}

export const DEFAULTS: AgentConfig = {
  socket: "/run/attestation-agent/attestation.sock",
  socketMode: 0o660,
  tpm: "/dev/tpmrm0",
  tsmRoot: "/sys/kernel/config/tsm/report",
  eventLog: "/sys/kernel/security/tpm0/binary_bios_measurements",
  platform: "auto",
  callTimeoutMs: 60_000,
  tpmTimeoutMs: 30_000,
  protocols: PROTOCOLS,
  defaultDeadlineMs: DEFAULT_DEADLINE_MS,
  maxQueuedCalls: DEFAULT_MAX_QUEUED_CALLS,
  limits: DEFAULT_LIMITS,
};

export interface Agent {
  caps: Capabilities;
  server: AgentServer;
  tpm?: TpmClient;
  /** Drains calls, closes the server and the TPM connection. */
  stop(graceMs?: number): Promise<void>;
}

/** Builds the cloud provider the operator configured; none means FetchCloudToken → FAILED_PRECONDITION. */
export function cloudProvider(c: AgentConfig, tpm: TpmClient | undefined): CloudTokenProvider | undefined {
  if (c.gcpLauncherSocket && c.azureMaaUrl) throw new Error("configure one cloud provider: GCP launcher or Azure MAA, not both");
  if (c.gcpLauncherSocket) return new GcpLauncherProvider({ socketPath: c.gcpLauncherSocket, audience: c.gcpAudience ?? "", tokenType: c.gcpTokenType });
  if (c.azureMaaUrl) {
    if (!tpm) throw new Error("Azure MAA needs the vTPM (--tpm)");
    return new AzureMaaProvider({ tpm, maaUrl: c.azureMaaUrl, imdsUrl: c.azureImdsUrl ?? AZURE_IMDS, hclWaitMs: c.azureHclWaitMs, eventLog: c.eventLog });
  }
  return undefined;
}

/** Azure's instance metadata service; used only when Azure MAA is configured. */
export const AZURE_IMDS = "http://169.254.169.254";

export async function startAgent(c: AgentConfig, deps: { configFs?: ConfigFs; log?: (m: string) => void } = {}): Promise<Agent> {
  const log = deps.log ?? ((m: string) => console.error(`attestation-agent: ${m}`));
  const tsm = new TsmClient(c.tsmRoot, deps.configFs);
  const wantTpm = c.platform === "auto" || c.platform === "vtpm" || c.platform === "snp-vtpm" || !!c.azureMaaUrl;
  const tpm = wantTpm ? new TpmClient(openTransport(c.tpm, c.tpmTimeoutMs)) : undefined;
  const caps = c.platform === "auto" ? await detect(tsm, tpm, undefined, c.tpmConfigured) : fromName(c.platform);
  log(`platform ${caps.name} (${caps.detail})`);
  if (c.azureMaaUrl || c.gcpLauncherSocket) log(`cloud tokens from ${c.azureMaaUrl ? `Azure MAA ${c.azureMaaUrl}` : `GCP launcher ${c.gcpLauncherSocket}`}`);
  const vtpm = caps.tpm && tpm ? new VtpmAttester(tpm, { eventLog: c.eventLog, log }) : undefined;
  const keepTpm = !!vtpm || !!c.azureMaaUrl;
  if (!keepTpm && tpm) await tpm.close();
  const cloud = cloudProvider(c, keepTpm ? tpm : undefined);
  const stopping = new AbortController();
  const attestation = createAttestationService({
    caps,
    vtpm,
    tsm: caps.snp || caps.tdx ? tsm : undefined,
    snpPrivilege: c.snpVmpl,
    cloud,
    callTimeoutMs: c.callTimeoutMs,
    defaultDeadlineMs: c.defaultDeadlineMs,
    maxQueuedCalls: c.maxQueuedCalls,
    stopping: stopping.signal,
    log,
  });
  const server = await startServer({ socket: c.socket, mode: c.socketMode, group: c.socketGroup, attestation, protocols: c.protocols, limits: c.limits, log });
  log(`serving attestation.v1.AttestationService on unix:${c.socket} (${c.protocols.join(", ")}; HTTP/2 and HTTP/1.1)`);
  return {
    caps,
    server,
    tpm: keepTpm ? tpm : undefined,
    async stop(graceMs) {
      // Calls still at a device when the grace ends are answered UNAVAILABLE, in their own protocol.
      await server.shutdown(graceMs, () => stopping.abort(new ConnectError("the agent is shutting down", Code.Unavailable)));
      // Bounded: a command stuck at the TPM is abandoned, not waited for.
      if (keepTpm) await tpm!.close();
    },
  };
}
