/**
 * Wires configuration to devices and the server: opens the TPM transport, the configfs-tsm
 * client and the cloud provider, detects (or takes) the platform, logs it once, and serves.
 */
import { GcpLauncherProvider } from "./cloud/gcp.ts";
import type { CloudTokenProvider } from "./cloud/provider.ts";
import { detect, fromName, type Capabilities, type PlatformName } from "./platform.ts";
import { startServer, type AgentServer } from "./server.ts";
import { createAttestationService } from "./service.ts";
import { TpmClient } from "./tpm/client.ts";
import { openTransport } from "./tpm/transport.ts";
import { VtpmAttester } from "./tpm/vtpm.ts";
import { TsmClient, type ConfigFs } from "./tsm/report.ts";

export interface AgentConfig {
  socket: string;
  socketMode: number;
  socketGroup?: string;
  tpm: string;
  tsmRoot: string;
  eventLog: string;
  platform: PlatformName;
  snpVmpl?: number;
  gcpLauncherSocket?: string;
  gcpAudience?: string;
  gcpTokenType?: string;
  callTimeoutMs: number;
  tpmTimeoutMs: number;
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
};

export interface Agent {
  caps: Capabilities;
  server: AgentServer;
  tpm?: TpmClient;
  /** Drains calls, closes the server and the TPM connection. */
  stop(graceMs?: number): Promise<void>;
}

/** Builds the cloud provider the operator configured; none means FetchCloudToken → FAILED_PRECONDITION. */
export function cloudProvider(c: AgentConfig): CloudTokenProvider | undefined {
  if (c.gcpLauncherSocket) return new GcpLauncherProvider({ socketPath: c.gcpLauncherSocket, audience: c.gcpAudience ?? "", tokenType: c.gcpTokenType });
  return undefined;
}

export async function startAgent(c: AgentConfig, deps: { configFs?: ConfigFs; log?: (m: string) => void } = {}): Promise<Agent> {
  const log = deps.log ?? ((m: string) => console.error(`attestation-agent: ${m}`));
  const tsm = new TsmClient(c.tsmRoot, deps.configFs);
  const wantTpm = c.platform === "auto" || c.platform === "vtpm" || c.platform === "snp-vtpm";
  const tpm = wantTpm ? new TpmClient(openTransport(c.tpm, c.tpmTimeoutMs)) : undefined;
  const caps = c.platform === "auto" ? await detect(tsm, tpm) : fromName(c.platform);
  log(`platform ${caps.name} (${caps.detail})`);
  const vtpm = caps.tpm && tpm ? new VtpmAttester(tpm, { eventLog: c.eventLog, log }) : undefined;
  if (!vtpm && tpm) await tpm.close();
  const attestation = createAttestationService({
    caps,
    vtpm,
    tsm: caps.snp || caps.tdx ? tsm : undefined,
    snpPrivilege: c.snpVmpl,
    cloud: cloudProvider(c),
    callTimeoutMs: c.callTimeoutMs,
  });
  const server = await startServer({ socket: c.socket, mode: c.socketMode, group: c.socketGroup, attestation, log });
  log(`serving attestation.v1.AttestationService on unix:${c.socket}`);
  return {
    caps,
    server,
    tpm: vtpm ? tpm : undefined,
    async stop(graceMs) {
      await server.shutdown(graceMs);
      if (vtpm) await tpm!.close();
    },
  };
}
