/**
 * The direct path for the common gRPC call: a unary AttestationService method over HTTP/2, binary
 * protobuf, no compression, one well-formed request message. It answers exactly as the Connect-ES
 * gRPC handler does (same service implementation, same HandlerContext, deadline from
 * `grpc-timeout`, headers, trailers and status encoding) without Connect's stream pipeline, which
 * cost the agent about as much CPU as the vTPM work it wraps. Anything else — another content
 * type or encoding, a malformed, oversized or compressed request, a deadline Connect would reject —
 * goes to Connect-ES with the bytes read so far, so its answer is Connect's own.
 */
import type http2 from "node:http2";
import { create, fromBinary, isMessage, toBinary, type DescMethodUnary } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, createHandlerContext, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { AttestationService } from "./gen/attestation/v1/attestation_pb.ts";

type UnaryImpl = (input: unknown, ctx: HandlerContext) => Promise<unknown>;
interface Route {
  method: DescMethodUnary;
  impl: UnaryImpl;
}

/** Hands a request to Connect-ES, its body starting with `read` and continuing from `rest`. */
export type Delegate = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, read: Uint8Array[], rest: AsyncIterator<Uint8Array> | undefined) => void;

export interface DirectOptions {
  /** Largest request message (Connect's `readMaxBytes`). */
  readMaxBytes: number;
  delegate: Delegate;
  /** Last touch of the trailers before they are sent (grpc-message encoding). */
  finishTrailers: (trailers: Record<string, string>) => void;
  log?: (msg: string) => void;
}

/** What the request headers said. */
interface Call {
  timeoutMs: number | undefined;
  header: Headers;
}

const CONTENT_TYPE = /^application\/grpc(?:\+proto)?$/i;
/** Connect's grpc-timeout grammar; longer than a timer can wait is left to Connect. */
const TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Ends a finished call's context (stops its deadline timer); made once, not per call. */
const FINISHED = new ConnectError("call finished", Code.Canceled);

/** The unary methods of AttestationService by request path, or undefined for other paths. */
export function unaryRoutes(impl: ServiceImpl<typeof AttestationService>): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const method of AttestationService.methods) {
    if (method.methodKind !== "unary") continue;
    const fn = (impl as Record<string, unknown>)[method.localName];
    if (typeof fn !== "function") continue;
    routes.set(`/${AttestationService.typeName}/${method.name}`, { method: method as DescMethodUnary, impl: fn.bind(impl) as UnaryImpl });
  }
  return routes;
}

/** `grpc-timeout` in ms; undefined when absent; null when Connect should judge it. */
function timeoutOf(v: string | string[] | undefined): number | undefined | null {
  if (v === undefined) return undefined;
  const m = typeof v === "string" ? TIMEOUT.exec(v) : null;
  if (!m) return null;
  const ms = UNIT_MS[m[2]] * Number.parseInt(m[1], 10);
  return ms > 0 && ms <= MAX_TIMER_MS ? ms : null;
}

/** Request headers as Connect gives them to a handler (pseudo-headers left out). */
function webHeaders(h: http2.IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(h)) {
    if (k.startsWith(":") || v === undefined) continue;
    if (Array.isArray(v)) for (const e of v) out.append(k, e);
    else out.append(k, String(v));
  }
  return out;
}

function nodeHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

/**
 * Serves `req` if it is a plain unary gRPC call to one of `routes`; returns false (having touched
 * nothing) when the request is not one, so the caller hands it to Connect-ES.
 */
export function serveUnaryGrpc(
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  routes: Map<string, Route>,
  opts: DirectOptions,
): boolean {
  const route = routes.get(req.url);
  if (!route || req.method !== "POST" || !req.authority) return false;
  const h = req.headers;
  if (!CONTENT_TYPE.test(h["content-type"] ?? "")) return false;
  const enc = h["grpc-encoding"];
  if (enc !== undefined && enc !== "identity") return false;
  const timeoutMs = timeoutOf(h["grpc-timeout"]);
  if (timeoutMs === null) return false;
  let header: Headers;
  try {
    header = webHeaders(h);
  } catch {
    return false; // a header value Headers refuses: Connect-ES answers it
  }
  readAndServe(req, res, route, { timeoutMs, header }, opts).catch((e) => {
    opts.log?.(`gRPC call ${req.url} failed: ${(e as Error).message}`);
    res.stream.destroy();
  });
  return true;
}

async function readAndServe(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, route: Route, call: Call, opts: DirectOptions): Promise<void> {
  // Read through one iterator that is never returned early: returning it would destroy the
  // stream, and Connect may need the rest of it.
  const it = (req as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  const read: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let r: IteratorResult<Uint8Array>;
    try {
      r = await it.next();
    } catch {
      // The stream was reset or timed out (--request-timeout-ms) mid-request: nobody to answer.
      if (res.stream.destroyed) return;
      return opts.delegate(req, res, read, undefined);
    }
    if (r.done) break;
    read.push(r.value);
    size += r.value.length;
    // Longer than one message may be: Connect reads on and answers RESOURCE_EXHAUSTED.
    if (size > 5 + opts.readMaxBytes) return opts.delegate(req, res, read, it);
  }
  const body = read.length === 1 ? read[0] : Buffer.concat(read);
  const len = size >= 5 ? new DataView(body.buffer, body.byteOffset, body.length).getUint32(1) : -1;
  let input: unknown;
  try {
    // Exactly one envelope, not compressed, within the limit, that parses: anything else is Connect's to answer.
    if (body[0] !== 0 || len < 0 || size !== 5 + len || len > opts.readMaxBytes) throw new Error("not a plain message");
    input = fromBinary(route.method.input, body.subarray(5));
  } catch {
    return opts.delegate(req, res, read, undefined);
  }
  await answer(req, res, route, input, call, opts.finishTrailers);
}

async function answer(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, route: Route, input: unknown, call: Call, finishTrailers: (t: Record<string, string>) => void): Promise<void> {
  // The client going away (RST_STREAM, connection closed) before the answer cancels the call.
  const gone = new AbortController();
  let answered = false;
  res.once("close", () => {
    if (!answered) gone.abort(new ConnectError(`http/2 stream closed with error code ${req.stream.rstCode ?? 0}`, Code.Canceled));
  });
  const ctx = createHandlerContext({
    service: AttestationService,
    method: route.method,
    protocolName: "grpc",
    requestMethod: "POST",
    url: `http://${req.authority}${req.url}`,
    timeoutMs: call.timeoutMs,
    requestSignal: gone.signal,
    requestHeader: call.header,
    responseHeader: { "content-type": "application/grpc+proto" },
    responseTrailer: { "grpc-status": "0" },
    contextValues: createContextValues(),
  });
  let message: Uint8Array | undefined;
  try {
    const out = await route.impl(input, ctx);
    const msg = isMessage(out, route.method.output) ? out : create(route.method.output, out as never);
    const bytes = toBinary(route.method.output, msg);
    message = new Uint8Array(5 + bytes.length);
    new DataView(message.buffer).setUint32(1, bytes.length);
    message.set(bytes, 5);
  } catch (e) {
    // As Connect's gRPC handler: a ConnectError as it is, anything else as INTERNAL.
    setTrailerStatus(ctx.responseTrailer, e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e));
  }
  answered = true;
  if (!res.stream.destroyed) {
    const trailers = nodeHeaders(ctx.responseTrailer);
    finishTrailers(trailers);
    res.writeHead(200, nodeHeaders(ctx.responseHeader));
    res.addTrailers(trailers);
    if (message) res.end(message);
    else res.end();
  }
  ctx.abort(FINISHED);
}
