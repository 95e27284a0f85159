/**
 * The Node hop of outbound deliveries (`outbound.ts`): node:http(s) with the name resolved once per
 * connection and every resolved address checked against the allow list before connecting, so a
 * name that points at an internal address (or rebinds to one) is refused.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { isAllowedAddress } from "./hosts.ts";
import { OutboundError, type Hop, type OutboundResponse } from "./outbound.ts";

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that answers only the addresses the allow list admits for `hostname`. */
function guardedLookup(allowList: readonly string[]) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const ok = addresses.filter((a) => isAllowedAddress(hostname, a.address, allowList));
      if (!ok.length) return callback(new OutboundError(`webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deliver to ${hostname} is blocked`), []);
      if (options.all) return callback(null, ok);
      return callback(null, ok[0]!.address, ok[0]!.family); // !: ok is not empty
    });
  };
}

export const nodeHop: Hop = (req, opts) =>
  new Promise<OutboundResponse>((resolve, reject) => {
    const url = new URL(req.url);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    // An address literal is not looked up: it is checked as it is.
    if (isIP(host) && !isAllowedAddress(host, host, opts.allowList)) {
      reject(new OutboundError(`webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deliver to ${url.host} is blocked`));
      return;
    }
    const body = req.method === "GET" || req.method === "HEAD" ? null : Buffer.from(req.body, "utf8");
    const headers: Record<string, string> = { ...req.headers };
    if (body) headers["Content-Length"] = String(body.length);
    const r = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
      method: req.method,
      headers,
      signal: opts.signal,
      lookup: guardedLookup(opts.allowList) as never,
      agent: false,
    });
    r.on("error", (err) => reject(err instanceof OutboundError ? err : (err as Error & { cause?: unknown }).cause instanceof OutboundError ? (err as { cause: OutboundError }).cause : err));
    r.on("response", (res: IncomingMessage) => {
      const parts: Buffer[] = [];
      let kept = 0;
      res.on("data", (chunk: Buffer) => {
        if (kept < opts.maxBody) {
          const part = chunk.subarray(0, opts.maxBody - kept);
          parts.push(part);
          kept += part.length;
        }
      });
      res.on("error", reject);
      res.on("end", () => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
        resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(parts).toString("utf8") });
      });
    });
    r.end(body ?? undefined);
  });
nodeHop.checksAddresses = true;
