/** A cloud attestation token source (FetchCloudToken). */
export interface CloudTokenProvider {
  readonly name: string;
  /** Returns the token bytes for `nonce`; throws CloudError. */
  token(nonce: Uint8Array, signal: AbortSignal): Promise<Uint8Array>;
}

/** Why a token could not be fetched; `kind` selects the gRPC code. */
export class CloudError extends Error {
  override name = "CloudError";
  readonly kind: "invalid" | "unavailable" | "internal";
  /** What a client is told, without host paths (`message`, for the log, may name them). */
  readonly publicMessage: string;
  constructor(kind: "invalid" | "unavailable" | "internal", message: string, publicMessage = message) {
    super(message);
    this.kind = kind;
    this.publicMessage = publicMessage;
  }
}
