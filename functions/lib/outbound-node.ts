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
import { bodyError, OutboundError, type Hop, type OutboundResponse } from "./outbound.ts";

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
    let responded = false;
    r.on("error", (err) => {
      if (responded) return; // the answer's own handlers record it
      reject(err instanceof OutboundError ? err : (err as Error & { cause?: unknown }).cause instanceof OutboundError ? (err as { cause: OutboundError }).cause : err);
    });
    r.on("response", (res: IncomingMessage) => {
      responded = true;
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
      const parts: Buffer[] = [];
      let kept = 0;
      let done = false;
      const finish = (body: string) => {
        if (done) return;
        done = true;
        resolve({ status: res.statusCode ?? 0, headers: out, body });
      };
      res.on("data", (chunk: Buffer) => {
        if (done) return;
        const part = chunk.subarray(0, opts.maxBody - kept);
        parts.push(part);
        kept += part.length;
        // what a delivery keeps is all it reads: the rest of an answer (one without end) is not waited for
        if (kept >= opts.maxBody) {
          finish(Buffer.concat(parts).toString("utf8"));
          res.destroy();
        }
      });
      res.on("end", () => finish(Buffer.concat(parts).toString("utf8")));
      // the headers came: a body that fails or runs out of time is recorded with them, as Go's client does
      res.on("close", () => finish(`read body: ${bodyError(opts.signal, "the connection closed")}`));
      res.on("error", (err) => finish(`read body: ${bodyError(opts.signal, err.message)}`));
    });
    r.end(body ?? undefined);
  });
nodeHop.checksAddresses = true;
