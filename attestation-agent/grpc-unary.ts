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

/** A handler context that the direct path ends itself (Connect's `createHandlerContext`). */
type CallContext = ReturnType<typeof createHandlerContext>;

/** The request body as read: every chunk, and why reading stopped. */
interface Body {
  read: Uint8Array[];
  size: number;
  /** "end": all of it; "more": past the limit, the rest unread; "failed": the stream closed first. */
  outcome: "end" | "more" | "failed";
}

const CONTENT_TYPE = /^application\/grpc(?:\+proto)?$/i;
/** Connect's grpc-timeout grammar; longer than a timer can wait is left to Connect. */
const TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };
const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * A caller's deadline beyond ~24.8 days (gRPC allows 8 digits of hours, Connect 10 of
 * milliseconds) is made that long, for every protocol before dispatch: the call is capped by
 * --call-timeout-ms anyway, and a longer value would make Connect's timer fire at once.
 */
export function clampTimeouts(h: http2.IncomingHttpHeaders): void {
  const grpcTimeout = h["grpc-timeout"];
  const m = typeof grpcTimeout === "string" ? TIMEOUT.exec(grpcTimeout) : null;
  if (m && Number(m[1]) * UNIT_MS[m[2]!]! > MAX_TIMER_MS) h["grpc-timeout"] = `${Math.floor(MAX_TIMER_MS / 1000)}S`; // !: TIMEOUT's groups
  const connectTimeout = h["connect-timeout-ms"];
  // the Connect protocol allows 10 digits; a longer value stays Connect's to refuse
  if (typeof connectTimeout === "string" && /^\d{1,10}$/.test(connectTimeout) && Number(connectTimeout) > MAX_TIMER_MS) h["connect-timeout-ms"] = String(MAX_TIMER_MS);
}

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
  const ms = UNIT_MS[m[2]!]! * Number.parseInt(m[1]!, 10); // !: both groups always participate, and TIMEOUT admits only UNIT_MS's keys
  return ms > 0 && ms <= MAX_TIMER_MS ? ms : null;
}

/** Request headers as Connect gives them to a handler (pseudo-headers left out, repeated ones appended). */
function headerPairs(h: http2.IncomingHttpHeaders): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(h)) {
    if (k.startsWith(":") || v === undefined) continue;
    if (Array.isArray(v)) for (const e of v) out.push([k, e]);
    else out.push([k, String(v)]);
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
    header = new Headers(headerPairs(h));
  } catch {
    return false; // a header value Headers refuses: Connect-ES answers it
  }
  // The client going away (RST_STREAM, connection closed) before the answer cancels the call.
  const gone = new AbortController();
  // As Connect's gRPC handler: the context (and its deadline) starts with the request.
  const ctx = createHandlerContext({
    service: AttestationService,
    method: route.method,
    protocolName: "grpc",
    requestMethod: "POST",
    url: `http://${req.authority}${req.url}`,
    timeoutMs,
    requestSignal: gone.signal,
    requestHeader: header,
    responseHeader: { "content-type": "application/grpc+proto" },
    responseTrailer: { "grpc-status": "0" },
    contextValues: createContextValues(),
  });
  const call = { answered: false };
  res.once("close", () => {
    if (!call.answered) gone.abort(new ConnectError(`http/2 stream closed with error code ${req.stream.rstCode ?? 0}`, Code.Canceled));
    // Ends the context (stops its deadline timer) once the answer is out, not on the answer's way out.
    ctx.abort(FINISHED);
  });
  readBody(req, 5 + opts.readMaxBytes)
    .then((body) => serve(req, res, route, ctx, call, body, opts))
    .catch((e) => {
      opts.log?.(`gRPC call ${req.url} failed: ${(e as Error).message}`);
      res.stream.destroy();
    });
  return true;
}

/**
 * Reads the request body with 'data' events (lighter than the stream's async iterator), stopping
 * once it is longer than `max`: the rest stays in the stream for Connect.
 */
function readBody(req: http2.Http2ServerRequest, max: number): Promise<Body> {
  return new Promise((resolve) => {
    const read: Uint8Array[] = [];
    let size = 0;
    const stop = (outcome: Body["outcome"]) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      resolve({ read, size, outcome });
    };
    const onData = (d: Buffer) => {
      read.push(d);
      size += d.length;
      if (size > max) {
        req.pause();
        stop("more");
      }
    };
    const onEnd = () => stop("end");
    // Reset or timed out (--request-timeout-ms) mid-request.
    const onClose = () => stop("failed");
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("close", onClose);
  });
}

async function serve(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, route: Route, ctx: CallContext, call: { answered: boolean }, body: Body, opts: DirectOptions): Promise<void> {
  const { read, size } = body;
  const delegate = (rest: AsyncIterator<Uint8Array> | undefined) => {
    ctx.abort(FINISHED);
    opts.delegate(req, res, read, rest);
  };
  // Nobody to answer.
  if (body.outcome === "failed" && res.stream.destroyed) return ctx.abort(FINISHED);
  // Longer than one message may be: Connect reads on and answers RESOURCE_EXHAUSTED.
  if (body.outcome === "more") return delegate((req as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]());
  if (body.outcome === "failed") return delegate(undefined);
  const bytes = read.length === 1 ? read[0]! : Buffer.concat(read); // !: length 1
  const len = size >= 5 ? new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getUint32(1) : -1;
  let input: unknown;
  try {
    // Exactly one envelope, not compressed, within the limit, that parses: anything else is Connect's to answer.
    if (bytes[0] !== 0 || len < 0 || size !== 5 + len || len > opts.readMaxBytes) throw new Error("not a plain message");
    input = fromBinary(route.method.input, bytes.subarray(5));
  } catch {
    return delegate(undefined);
  }
  await answer(res, route, input, ctx, call, opts.finishTrailers);
}

async function answer(res: http2.Http2ServerResponse, route: Route, input: unknown, ctx: CallContext, call: { answered: boolean }, finishTrailers: (t: Record<string, string>) => void): Promise<void> {
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
  call.answered = true;
  if (res.stream.destroyed) return;
  const trailers = nodeHeaders(ctx.responseTrailer);
  finishTrailers(trailers);
  res.writeHead(200, nodeHeaders(ctx.responseHeader));
  res.addTrailers(trailers);
  if (message) res.end(message);
  else res.end();
}
