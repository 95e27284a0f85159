/**
 * Outbound HTTP for webhook deliveries: one request, redirects followed hop by hop (at most 10, as
 * Go's client), every hop's target checked against `[webhook] ALLOWED_HOST_LIST` before it is
 * reached, the whole exchange bounded by one deadline and the answer's body read up to a cap.
 * How a hop is sent is the runtime's: `fetch` on the Worker (Cloudflare's edge reaches no private
 * address anyway), node:http with the resolved address checked at connect time on Node
 * (`outbound-node.ts`), so a name that resolves to an internal address is refused (DNS rebinding).
 */
import { isAllowedHost } from "./hosts.ts";

export interface OutboundRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface HopOptions {
  signal: AbortSignal;
  allowList: readonly string[];
  /** The most answer-body bytes kept; the rest is read and dropped. */
  maxBody: number;
}

/** One request, no redirect followed. */
export interface Hop {
  (req: OutboundRequest, opts: HopOptions): Promise<OutboundResponse>;
  /**
   * The hop checks the address it connects to against the allow list (Node: every resolved
   * address): then a host name is not judged by its form first (`intranet-ci` may resolve to an
   * address the list admits, as Gitea's dial-time check finds).
   */
  checksAddresses?: boolean;
}

/** A refused or failed delivery: its message is what the delivery records. */
export class OutboundError extends Error {
  override name = "OutboundError";
}

const MAX_REDIRECTS = 10;
export const MAX_RESPONSE_BODY = 64 * 1024;

const blocked = (url: string) =>
  new OutboundError(`webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deliver to ${new URL(url).host} is blocked`);

/** Sends `req`, following redirects as Go's http.Client does; throws OutboundError when refused, failed or out of time. */
export async function send(hop: Hop, req: OutboundRequest, opts: { timeoutMs: number; allowList: readonly string[] }): Promise<OutboundResponse> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let cur = req;
  for (let i = 0; ; i++) {
    if (!/^https?:$/.test(new URL(cur.url).protocol)) throw new OutboundError(`unsupported protocol scheme in ${cur.url}`);
    if (!hop.checksAddresses && !isAllowedHost(cur.url, opts.allowList)) throw blocked(cur.url);
    let res: OutboundResponse;
    try {
      res = await hop(cur, { signal, allowList: opts.allowList, maxBody: MAX_RESPONSE_BODY });
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      if (signal.aborted) throw new OutboundError(`${cur.method} ${cur.url}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
      throw new OutboundError(`${cur.method} ${cur.url}: ${(err as Error).message}`);
    }
    const location = res.headers.location;
    if (![301, 302, 303, 307, 308].includes(res.status) || !location) return res;
    if (i === MAX_REDIRECTS - 1) throw new OutboundError(`${cur.method} ${cur.url}: stopped after ${MAX_REDIRECTS} redirects`);
    const next = new URL(location, cur.url).toString();
    // Go: 301/302/303 turn a POST into a GET without a body; 307/308 repeat the request.
    const keep = res.status === 307 || res.status === 308;
    const headers = { ...cur.headers };
    if (!keep) {
      delete headers["Content-Type"];
      delete headers["Content-Length"];
    }
    // Go drops credentials on a redirect to another host.
    if (new URL(next).host !== new URL(cur.url).host) delete headers.Authorization;
    cur = { method: keep || cur.method === "GET" || cur.method === "HEAD" ? cur.method : "GET", url: next, headers, body: keep ? cur.body : "" };
  }
}

/** The Worker's hop: `fetch` without following redirects. */
export const fetchHop: Hop = async (req, opts) => {
  const res = await fetch(req.url, {
    method: req.method,
    headers: req.headers,
    body: req.method === "GET" || req.method === "HEAD" ? undefined : req.body,
    redirect: "manual",
    signal: opts.signal,
  });
  const headers: Record<string, string> = {};
  // Set-Cookie comes once per cookie: joined as node:http joins repeated fields.
  res.headers.forEach((v, k) => {
    const key = k.toLowerCase();
    headers[key] = key in headers ? `${headers[key]}, ${v}` : v;
  });
  let body: string;
  try {
    body = await readCapped(res.body, opts.maxBody);
  } catch (err) {
    // the headers came: a body that fails or runs out of time is recorded with them, as Go's client does
    body = `read body: ${bodyError(opts.signal, (err as Error).message)}`;
  }
  return { status: res.status, headers, body };
};

/** Why an answer's body could not be read: Go's words for a deadline, else the failure's. */
export const bodyError = (signal: AbortSignal, message: string) => (signal.aborted ? "context deadline exceeded (Client.Timeout or context cancellation while reading body)" : message);

/** A body's first `max` bytes as text; the rest is not read (an answer without end is not waited for). */
async function readCapped(body: ReadableStream<Uint8Array> | null, max: number): Promise<string> {
  if (!body) return "";
  const parts: Uint8Array[] = [];
  let kept = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const part = chunk.subarray(0, max - kept);
    parts.push(part);
    kept += part.length;
    if (kept >= max) break; // leaving the loop cancels the stream
  }
  const all = new Uint8Array(kept);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return new TextDecoder().decode(all);
}
