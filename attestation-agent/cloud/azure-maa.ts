/**
 * Azure MAA: picks the SNP or TDX flow from the HCL report type in the vTPM (NV 0x01400001),
 * read once on the first token request.
 */
import { TpmError, type TpmClient } from "../tpm/client.ts";
import { RH } from "../tpm/marshal.ts";
import { AzureTdxProvider, HCL_REPORT_NV, HCL_REPORT_TYPE, parseHclReport } from "./azure.ts";
import { AzureSnpProvider } from "./azure-snp.ts";
import { CloudError, type CloudTokenProvider } from "./provider.ts";

export interface AzureMaaOptions {
  tpm: TpmClient;
  maaUrl: string;
  imdsUrl: string;
  hclWaitMs?: number;
  eventLog?: string;
}

export class AzureMaaProvider implements CloudTokenProvider {
  readonly name = "azure-maa";
  private readonly snp: AzureSnpProvider;
  private readonly tdx: AzureTdxProvider;
  private readonly tpm: TpmClient;
  private kind: Promise<CloudTokenProvider> | undefined;

  constructor(o: AzureMaaOptions) {
    this.tpm = o.tpm;
    this.snp = new AzureSnpProvider({ tpm: o.tpm, maaUrl: o.maaUrl, imdsUrl: o.imdsUrl, eventLog: o.eventLog });
    this.tdx = new AzureTdxProvider({ tpm: o.tpm, maaUrl: o.maaUrl, imdsUrl: o.imdsUrl, hclWaitMs: o.hclWaitMs });
  }

  private detect(signal: AbortSignal): Promise<CloudTokenProvider> {
    this.kind ??= this.tpm
      .nvReadAll(HCL_REPORT_NV, RH.OWNER, signal)
      .then((raw) => (parseHclReport(raw).reportType === HCL_REPORT_TYPE.TDX ? this.tdx : this.snp))
      .catch((e) => {
        this.kind = undefined;
        if (e instanceof TpmError && (e.rc & 0xbf) === 0x8b) throw new CloudError("unavailable", "no Azure HCL report in the vTPM: not an Azure confidential VM");
        throw e;
      });
    return this.kind;
  }

  async token(nonce: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    return (await this.detect(signal)).token(nonce, signal);
  }
}
