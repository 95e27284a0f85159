/**
 * GCP Confidential Space: the launcher's TEE server on a unix socket (HTTP/1.1).
 * `POST /v1/token` with `{audience, token_type, nonces}`; the reply body is the raw JWT.
 * Nonces are strings to the launcher (10-74 characters each), so the request nonce is sent
 * as lowercase hex: 5 to 37 bytes. An empty nonce sends no nonces.
 */
import http from "node:http";
import { errnoOf } from "../tpm/transport.ts";
import { CloudError, type CloudTokenProvider } from "./provider.ts";

export const GCP_MIN_NONCE_BYTES = 5;
export const GCP_MAX_NONCE_BYTES = 37;
const MAX_TOKEN_BYTES = 64 * 1024;

export interface GcpOptions {
  socketPath: string;
  audience: string;
  tokenType?: string;
  timeoutMs?: number;
}

export class GcpLauncherProvider implements CloudTokenProvider {
  readonly name = "gcp-confidential-space";
  private readonly opts: Required<GcpOptions>;
  constructor(opts: GcpOptions) {
    if (!opts.audience) throw new Error("GCP Confidential Space needs an audience (--gcp-audience)");
    if (Buffer.byteLength(opts.audience) > 512) throw new Error("GCP audience is longer than 512 bytes");
    this.opts = { tokenType: "OIDC", timeoutMs: 10_000, ...opts };
  }

  token(nonce: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    if (nonce.length > 0 && (nonce.length < GCP_MIN_NONCE_BYTES || nonce.length > GCP_MAX_NONCE_BYTES))
      return Promise.reject(new CloudError("invalid", `nonce must be empty or ${GCP_MIN_NONCE_BYTES}-${GCP_MAX_NONCE_BYTES} bytes for Confidential Space, got ${nonce.length}`));
    const body: Record<string, unknown> = { audience: this.opts.audience, token_type: this.opts.tokenType };
    if (nonce.length > 0) body.nonces = [Buffer.from(nonce).toString("hex")];
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          socketPath: this.opts.socketPath,
          path: "/v1/token",
          method: "POST",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
          signal: AbortSignal.any([signal, AbortSignal.timeout(this.opts.timeoutMs)]),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let n = 0;
          res.on("data", (c: Buffer) => {
            n += c.length;
            if (n > MAX_TOKEN_BYTES) req.destroy(new CloudError("internal", "launcher reply larger than 64 KiB"));
            else chunks.push(c);
          });
          res.on("end", () => {
            const text = Buffer.concat(chunks);
            const status = res.statusCode ?? 0;
            if (status === 200 && text.length > 0) return resolve(new Uint8Array(text));
            const msg = `Confidential Space launcher answered ${status}: ${text.toString("utf8").trim().slice(0, 200)}`;
            reject(new CloudError(status === 400 ? "invalid" : status >= 500 ? "unavailable" : "internal", msg));
          });
          res.on("error", (e) => reject(e instanceof CloudError ? e : new CloudError("unavailable", `launcher reply: ${e.message}`)));
        },
      );
      req.on("error", (e) => {
        if (e instanceof CloudError) return reject(e);
        if (signal.aborted) return reject(signal.reason);
        reject(new CloudError("unavailable", `Confidential Space launcher at ${this.opts.socketPath}: ${e.message}`, `Confidential Space launcher: ${errnoOf(e)}`));
      });
      req.end(payload);
    });
  }
}
