/**
 * What this machine can attest: detected once at start (configfs-tsm provider, TPM presence),
 * or forced with `--platform`.
 */
import type { TpmClient } from "./tpm/client.ts";
import type { TsmClient } from "./tsm/report.ts";
import { DeviceTransport } from "./tpm/transport.ts";

export type PlatformName = "auto" | "snp" | "tdx" | "vtpm" | "snp-vtpm" | "none";
export const PLATFORM_NAMES: readonly PlatformName[] = ["auto", "snp", "tdx", "vtpm", "snp-vtpm", "none"];

/** The evidence sources available for the process lifetime. */
export interface Capabilities {
  name: Exclude<PlatformName, "auto">;
  snp: boolean;
  tdx: boolean;
  tpm: boolean;
  /** What detection saw, for the start-up log line. */
  detail: string;
}

export function fromName(name: Exclude<PlatformName, "auto">, detail = "forced with --platform"): Capabilities {
  return {
    name,
    snp: name === "snp" || name === "snp-vtpm",
    tdx: name === "tdx",
    tpm: name === "vtpm" || name === "snp-vtpm",
    detail,
  };
}

/**
 * Probes the configfs-tsm provider and the TPM (bounded by `timeoutMs`). A TPM that is there but
 * does not answer within the bound, or one the operator configured (`tpmConfigured`) whatever the
 * probe says, counts: its calls get UNAVAILABLE until it answers, instead of the platform leaving
 * it out for the process's life. An unconfigured TPM that cannot be reached does not, nor a
 * configured device node that does not exist (the machine has no TPM).
 */
export async function detect(tsm: TsmClient, tpm: TpmClient | undefined, timeoutMs = 2000, tpmConfigured = false): Promise<Capabilities> {
  const provider = await tsm.provider();
  let tpmOk = false;
  let tpmWhy = "no TPM configured";
  if (tpm) {
    const slow = new Error(`no answer within ${timeoutMs} ms`);
    try {
      await Promise.race([tpm.getRandom(1), new Promise((_, rej) => setTimeout(() => rej(slow), timeoutMs).unref())]);
      tpmOk = true;
      tpmWhy = `TPM at ${tpm.transport.describe}`;
    } catch (e) {
      // A TPM that is there but slow (still starting) counts; one that cannot be reached only if
      // configured — but a device node that does not exist means this machine has no TPM (a
      // fleet-wide --tpm on machines without one): left out, FAILED_PRECONDITION, not UNAVAILABLE
      // that clients would retry for good. A socket may still appear (swtpm starting).
      const noDevice = tpm.transport instanceof DeviceTransport && /\bENOENT\b/.test((e as Error).message);
      tpmOk = (tpmConfigured && !noDevice) || e === slow;
      tpmWhy = tpmOk
        ? `TPM at ${tpm.transport.describe} not answering at start (${(e as Error).message}): VTPM calls get UNAVAILABLE until it answers`
        : `no TPM at ${tpm.transport.describe} (${(e as Error).message})`;
    }
  }
  const snp = provider === "sev_guest";
  const tdx = provider === "tdx_guest";
  const name = snp && tpmOk ? "snp-vtpm" : snp ? "snp" : tdx ? "tdx" : tpmOk ? "vtpm" : "none";
  return { name, snp, tdx, tpm: tpmOk, detail: `configfs-tsm provider ${provider ?? "none"}; ${tpmWhy}` };
}
