/**
 * The agent's server: one unix socket, one Connect-ES router served as gRPC, gRPC-Web and the
 * Connect protocol (JSON and binary), over HTTP/2 cleartext and HTTP/1.1. Each connection's first
 * bytes pick the server: the HTTP/2 connection preface goes to node:http2, anything else to
 * node:http. Health and reflection services, an UNIMPLEMENTED in each protocol's own shape for
 * unknown paths, limits against misbehaving clients, and a draining shutdown.
 */
import { chmod, chown, lstat, readFile, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { create, toBinary, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createConnectRouter, type ConnectRouter, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, connectNodeAdapter, universalRequestFromNodeRequest, universalResponseToNodeResponse, type ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import { AttestationService, file_attestation_v1_attestation } from "./gen/attestation/v1/attestation_pb.ts";
import { file_attest_attest } from "./gen/attest/attest_pb.ts";
import { Health, HealthCheckResponse_ServingStatus as Status, file_grpc_health_v1_health, type HealthCheckRequest } from "./gen/grpc/health/v1/health_pb.ts";
import * as reflV1 from "./gen/grpc/reflection/v1/reflection_pb.ts";
import * as reflV1alpha from "./gen/grpc/reflection/v1alpha/reflection_pb.ts";
import { clampTimeouts, serveUnaryGrpc, unaryRoutes, type Delegate } from "./grpc-unary.ts";

const SERVICE_NAME = AttestationService.typeName;

/** The RPC protocols the agent can serve; each can be turned off. */
export const PROTOCOLS = ["grpc", "grpc-web", "connect"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** Bounds that keep one misbehaving client from wedging the agent (see docs/attestation-agent.md). */
export interface ServerLimits {
  /** Largest request message accepted (after decompression); larger → RESOURCE_EXHAUSTED. */
  maxRequestBytes: number;
  /** A new connection must finish its first request headers within this time. */
  headerTimeoutMs: number;
  /** A request must arrive completely (headers and body) within this time. */
  requestTimeoutMs: number;
  /** A connection with no call in flight is closed after this long; so is one whose client stops reading a finished response. */
  idleTimeoutMs: number;
  /** Connections open at once; more are closed on arrival. */
  maxConnections: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxRequestBytes: 64 * 1024,
  headerTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  maxConnections: 256,
};

export interface ServerOptions {
  socket: string;
  /** Octal permission bits for the socket; default 0o660. */
  mode?: number;
  /** Group name or numeric gid to own the socket. */
  group?: string;
  attestation: ServiceImpl<typeof AttestationService>;
  /** Protocols served; default all three. */
  protocols?: readonly Protocol[];
  limits?: Partial<ServerLimits>;
  log?: (msg: string) => void;
}

/** Resolves a group name through /etc/group (or takes a numeric gid). */
async function gidOf(group: string): Promise<number> {
  if (/^\d+$/.test(group)) return Number(group);
  const line = (await readFile("/etc/group", "utf8")).split("\n").find((l) => l.split(":")[0] === group);
  if (!line) throw new Error(`unknown group ${group}`);
  return Number(line.split(":")[2]);
}

/** Health status of the whole server ("") and of the attestation service. */
class HealthState {
  serving = true;
  draining = false;
  private waiters = new Set<() => void>();
  status(service: string): Status | undefined {
    if (service !== "" && service !== SERVICE_NAME) return undefined;
    return this.serving ? Status.SERVING : Status.NOT_SERVING;
  }
  setServing(v: boolean) {
    this.serving = v;
    for (const w of this.waiters) w();
    this.waiters.clear();
  }
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((r) => {
      const done = () => {
        this.waiters.delete(done);
        r();
      };
      this.waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

function healthService(state: HealthState): ServiceImpl<typeof Health> {
  return {
    check(req: HealthCheckRequest) {
      const s = state.status(req.service);
      if (s === undefined) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      return { status: s };
    },
    list() {
      return { statuses: { "": { status: state.status("")! }, [SERVICE_NAME]: { status: state.status(SERVICE_NAME)! } } };
    },
    async *watch(req: HealthCheckRequest, ctx: HandlerContext) {
      let last: Status | undefined = -1 as Status;
      while (!ctx.signal.aborted) {
        const s = state.status(req.service) ?? Status.SERVICE_UNKNOWN;
        if (s !== last) yield { status: s };
        last = s;
        if (state.draining) return;
        await state.changed(ctx.signal);
      }
      // The client's deadline (or cancel) ended the watch: say so, as grpc-go's health server does,
      // instead of an OK that reads as "the server ended the watch" and makes watchers reconnect at once.
      const reason = ctx.signal.reason;
      throw reason instanceof ConnectError ? reason : new ConnectError("watch ended by the client's deadline", Code.DeadlineExceeded);
    },
  };
}

/** The descriptors reflection serves: every file the agent's services use. */
const FILES: DescFile[] = [file_attestation_v1_attestation, file_attest_attest, file_grpc_health_v1_health, reflV1.file_grpc_reflection_v1_reflection, reflV1alpha.file_grpc_reflection_v1alpha_reflection];
const FILES_BY_NAME = new Map<string, DescFile>();
/** Every message (nested and map entries included), enum, service and method of every file served, to its file. */
const SYMBOLS = new Map<string, DescFile>();
/** The fully-qualified names of the message types among SYMBOLS. */
const MESSAGES = new Set<string>();
const indexFile = (f: DescFile) => {
  if (FILES_BY_NAME.has(f.proto.name)) return;
  FILES_BY_NAME.set(f.proto.name, f);
  const pkg = f.proto.package ? `${f.proto.package}.` : "";
  type Msg = (typeof f.proto.messageType)[number];
  type Enum = (typeof f.proto.enumType)[number];
  // Every name protobuf defines, as grpc-go's registry resolves them: enum values are siblings of
  // their enum (C++ scoping), fields and oneofs belong to their message.
  const walk = (prefix: string, msgs: Msg[], enums: Enum[]) => {
    for (const e of enums) {
      SYMBOLS.set(`${prefix}${e.name}`, f);
      for (const v of e.value) SYMBOLS.set(`${prefix}${v.name}`, f);
    }
    for (const m of msgs) {
      SYMBOLS.set(`${prefix}${m.name}`, f);
      MESSAGES.add(`${prefix}${m.name}`);
      for (const field of m.field) SYMBOLS.set(`${prefix}${m.name}.${field.name}`, f);
      for (const o of m.oneofDecl) SYMBOLS.set(`${prefix}${m.name}.${o.name}`, f);
      walk(`${prefix}${m.name}.`, m.nestedType, m.enumType);
    }
  };
  walk(pkg, f.proto.messageType, f.proto.enumType);
  for (const svc of f.proto.service) {
    SYMBOLS.set(`${pkg}${svc.name}`, f);
    for (const method of svc.method) SYMBOLS.set(`${pkg}${svc.name}.${method.name}`, f);
  }
  f.dependencies.forEach(indexFile);
};
FILES.forEach(indexFile);
const SERVICES = [SERVICE_NAME, Health.typeName, reflV1.ServerReflection.typeName, reflV1alpha.ServerReflection.typeName];

/** Request paths of the served methods whose requests are streams (reflection's bidi stream). */
const STREAMING_REQUEST_PATHS = new Set(
  [AttestationService, Health, reflV1.ServerReflection, reflV1alpha.ServerReflection].flatMap((svc) =>
    svc.methods.filter((m) => m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming").map((m) => `/${svc.typeName}/${m.name}`),
  ),
);

/** A file and its transitive imports, serialized, dependencies after the file (as grpc-go does). */
function fileWithDeps(f: DescFile): Uint8Array[] {
  const seen = new Set<string>();
  const out: Uint8Array[] = [];
  const walk = (d: DescFile) => {
    if (seen.has(d.name)) return;
    seen.add(d.name);
    out.push(toBinary(FileDescriptorProtoSchema, d.proto));
    d.dependencies.forEach(walk);
  };
  walk(f);
  return out;
}

type ReflReq = { host: string; messageRequest: { case: string | undefined; value?: unknown } };

/** Answers one reflection request with a v1-shaped plain object (v1alpha has the same shape). */
function reflect(req: ReflReq) {
  const base = { validHost: req.host, originalRequest: req };
  const err = (code: Code, msg: string) => ({ ...base, messageResponse: { case: "errorResponse" as const, value: { errorCode: code, errorMessage: msg } } });
  const files = (f: DescFile) => ({ ...base, messageResponse: { case: "fileDescriptorResponse" as const, value: { fileDescriptorProto: fileWithDeps(f) } } });
  const m = req.messageRequest;
  switch (m.case) {
    case "listServices":
      return { ...base, messageResponse: { case: "listServicesResponse" as const, value: { service: SERVICES.map((name) => ({ name })) } } };
    case "fileByFilename": {
      const f = FILES_BY_NAME.get(m.value as string);
      return f ? files(f) : err(Code.NotFound, `file not found: ${m.value}`);
    }
    case "fileContainingSymbol": {
      const sym = m.value as string;
      const f = SYMBOLS.get(sym);
      return f ? files(f) : err(Code.NotFound, `symbol not found: ${sym}`);
    }
    case "allExtensionNumbersOfType":
      return MESSAGES.has(m.value as string)
        ? { ...base, messageResponse: { case: "allExtensionNumbersResponse" as const, value: { baseTypeName: m.value as string, extensionNumber: [] } } }
        : err(Code.NotFound, `type not found: ${m.value}`);
    case "fileContainingExtension":
      return err(Code.NotFound, "no extensions are registered");
    default:
      return err(Code.InvalidArgument, "empty reflection request");
  }
}

function reflectionService<S extends typeof reflV1.ServerReflection | typeof reflV1alpha.ServerReflection>(svc: S, respSchema: typeof reflV1.ServerReflectionResponseSchema | typeof reflV1alpha.ServerReflectionResponseSchema) {
  return {
    async *serverReflectionInfo(reqs: AsyncIterable<ReflReq>) {
      for await (const r of reqs) yield create(respSchema as typeof reflV1.ServerReflectionResponseSchema, reflect(r) as never);
    },
  } as unknown as ServiceImpl<S>;
}

/**
 * grpc-message as the gRPC spec encodes it: percent-encode only bytes outside 0x20-0x7E and "%".
 * (Connect uses encodeURIComponent, which grpc-js, decoding with decodeURI, shows half-encoded.)
 */
export function encodeGrpcMessage(msg: string): string {
  let out = "";
  for (const byte of Buffer.from(msg, "utf8")) out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  return out;
}

function respecGrpcMessage(headers: http2.OutgoingHttpHeaders | undefined): void {
  const m = headers?.["grpc-message"];
  if (typeof m !== "string") return;
  let text = m;
  try {
    text = decodeURIComponent(m);
  } catch {
    return;
  }
  headers!["grpc-message"] = encodeGrpcMessage(text);
}

/** Rewrites grpc-message in whatever header block carries it (trailers, or a trailers-only response). */
function patchGrpcMessage(stream: http2.ServerHttp2Stream): void {
  const respond = stream.respond.bind(stream);
  stream.respond = (headers, options) => {
    if (headers && !Array.isArray(headers)) respecGrpcMessage(headers as http2.OutgoingHttpHeaders);
    respond(headers, options);
  };
  const sendTrailers = stream.sendTrailers.bind(stream);
  stream.sendTrailers = (headers) => {
    respecGrpcMessage(headers);
    sendTrailers(headers);
  };
}

type Res = ServerResponse | http2.Http2ServerResponse;
type Req = IncomingMessage | http2.Http2ServerRequest;

/** Which protocol a request speaks, from its Content-Type (as Connect-ES negotiates it). */
export function protocolOf(contentType: string | undefined): Protocol {
  const ct = (contentType ?? "").toLowerCase();
  if (ct.startsWith("application/grpc-web")) return "grpc-web";
  if (ct.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/** Answers with `code` in the request's own protocol, without touching the router. */
function refuse(req: Req, res: Res, protocol: Protocol, code: Code, message: string, httpStatus?: number): void {
  if (protocol === "grpc" && "stream" in res) {
    // gRPC trailers-only: one HEADERS frame with END_STREAM (writeHead + end would send no trailers).
    res.stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": String(code), "grpc-message": encodeGrpcMessage(message) }, { endStream: true });
    return;
  }
  if (protocol === "grpc-web" || protocol === "grpc") {
    // gRPC-Web trailers-only: the status rides in the headers of an empty 200 response.
    (res as ServerResponse).writeHead(httpStatus ?? 200, { "content-type": "application/grpc-web+proto", "grpc-status": String(code), "grpc-message": encodeGrpcMessage(message) });
    res.end();
    return;
  }
  const body = JSON.stringify({ code: CODE_NAMES[code], message });
  (res as ServerResponse).writeHead(httpStatus ?? CONNECT_HTTP_STATUS[code] ?? 500, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
  void req;
}

/** Connect's lower_snake code names (connect-es `codeToString`). */
const CODE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(Code)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [v, k.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase()]),
);

/** HTTP status per code, from the Connect protocol specification. */
export const CONNECT_HTTP_STATUS: Record<number, number> = {
  [Code.Canceled]: 499, [Code.Unknown]: 500, [Code.InvalidArgument]: 400, [Code.DeadlineExceeded]: 504, [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409, [Code.PermissionDenied]: 403, [Code.ResourceExhausted]: 429, [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409, [Code.OutOfRange]: 400, [Code.Unimplemented]: 501, [Code.Internal]: 500, [Code.Unavailable]: 503,
  [Code.DataLoss]: 500, [Code.Unauthenticated]: 401,
};

/** After the shutdown grace, how long answers of the calls it ended get to go out before connections close. */
const FLUSH_MS = 1000;

/** The HTTP/2 connection preface (RFC 9113 §3.4); every h2c-with-prior-knowledge client starts with it. */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export interface AgentServer {
  /** The listening socket (both HTTP versions). */
  server: net.Server;
  health: HealthState;
  /** Calls (requests) in flight, over both HTTP versions. */
  inflight(): number;
  /**
   * Stops accepting calls, lets in-flight calls finish (up to `graceMs`), then calls `graceEnded`
   * (which makes the calls still open answer), gives their answers up to FLUSH_MS, and closes.
   */
  shutdown(graceMs?: number, graceEnded?: () => void): Promise<void>;
}

/**
 * Makes the socket path free to bind: nothing there, or a crash's leftover — a socket nobody
 * listens on — which is removed. A live socket (another agent) or anything that is not a socket is
 * left as it is, and start-up stops: removing it would take over a running agent or delete a file.
 */
async function claimSocketPath(socket: string): Promise<void> {
  const st = await lstat(socket).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return null;
    throw e;
  });
  if (!st) {
    // listen() would say EACCES for a missing directory, even to root
    const parent = await stat(dirname(socket)).catch(() => null);
    if (!parent?.isDirectory()) throw new Error(`the directory of ${socket} does not exist: create it (systemd's RuntimeDirectory= does) or choose another --socket path`);
    return;
  }
  if (!st.isSocket()) throw new Error(`${socket} exists and is not a socket: not removed (choose another --socket path)`);
  const live = await new Promise<boolean>((resolve) => {
    const c = net.connect(socket, () => {
      c.destroy();
      resolve(true);
    });
    c.on("error", () => resolve(false));
  });
  if (live) throw new Error(`another process is serving on ${socket}: not taken over`);
  await unlink(socket).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== "ENOENT") throw e;
  });
}

export async function startServer(opts: ServerOptions): Promise<AgentServer> {
  const limits: ServerLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const enabled = new Set<Protocol>(opts.protocols ?? PROTOCOLS);
  if (enabled.size === 0) throw new Error("at least one protocol must be enabled");
  const health = new HealthState();
  const routes = (r: ConnectRouter) => {
    r.service(AttestationService, opts.attestation);
    r.service(Health, healthService(health));
    r.service(reflV1.ServerReflection, reflectionService(reflV1.ServerReflection, reflV1.ServerReflectionResponseSchema));
    r.service(reflV1alpha.ServerReflection, reflectionService(reflV1alpha.ServerReflection, reflV1alpha.ServerReflectionResponseSchema));
  };
  const fallback = (req: Req, res: Res) => {
    const protocol = protocolOf(req.headers["content-type"]);
    refuse(req, res, protocol, Code.Unimplemented, `unknown method ${req.url}`, protocol === "connect" ? 404 : undefined);
  };
  const adapterOptions: ConnectNodeAdapterOptions = {
    routes,
    grpc: enabled.has("grpc"),
    grpcWeb: enabled.has("grpc-web"),
    connect: enabled.has("connect"),
    readMaxBytes: limits.maxRequestBytes,
    acceptCompression: [compressionGzip, compressionBrotli],
    // Compressed requests are still accepted; answers are never compressed: on a local socket
    // gzip only costs CPU on both ends (it was ~10 % of the agent's time per vTPM call).
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    fallback: fallback as never,
  };
  const adapter = connectNodeAdapter(adapterOptions);
  // Unary AttestationService calls over gRPC take the direct path (grpc-unary.ts); what it does
  // not take goes to these same Connect handlers, with the request bytes it already read.
  const direct = unaryRoutes(opts.attestation);
  const router = createConnectRouter(adapterOptions);
  routes(router);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, h]));
  const delegate: Delegate = (req, res, read, rest) => {
    const handler = handlers.get(req.url)!;
    patchGrpcMessage(res.stream);
    async function* body() {
      yield* read;
      if (rest) for (let r = await rest.next(); !r.done; r = await rest.next()) yield r.value;
    }
    const uReq = { ...universalRequestFromNodeRequest(req, res, undefined, undefined), body: body() };
    handler(uReq)
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((e) => opts.log?.(`handler for ${req.url} failed: ${(e as Error).message}`));
  };
  const directOptions = { readMaxBytes: limits.maxRequestBytes, delegate, finishTrailers: respecGrpcMessage, log: opts.log };

  let inflight = 0;
  let idle: (() => void) | undefined;
  let draining = false;
  const track = (res: Res) => {
    inflight++;
    res.once("close", () => {
      if (--inflight === 0) idle?.();
    });
  };

  /** Both HTTP versions end here: protocol switch, then the router. */
  const handle = (req: Req, res: Res) => {
    track(res);
    clampTimeouts(req.headers);
    const protocol = protocolOf(req.headers["content-type"]);
    const h1 = !("stream" in res);
    if (h1 && draining) res.setHeader("connection", "close");
    // A client that stops reading a finished response does not hold the connection forever.
    const end = res.end.bind(res) as (...a: unknown[]) => Res;
    (res as { end: (...a: unknown[]) => Res }).end = (...a: unknown[]) => {
      const timer = setTimeout(() => (h1 ? (res as ServerResponse).socket?.destroy() : (res as http2.Http2ServerResponse).stream.close(http2.constants.NGHTTP2_CANCEL)), limits.idleTimeoutMs).unref();
      res.once(h1 ? "finish" : "close", () => clearTimeout(timer));
      res.once("close", () => clearTimeout(timer));
      return end(...a);
    };
    if (!enabled.has(protocol)) return refuse(req, res, protocol, Code.Unimplemented, `the ${protocol} protocol is turned off on this agent`);
    // gRPC is defined over HTTP/2 only; HTTP/1.1 clients have gRPC-Web and Connect.
    if (h1 && protocol === "grpc") {
      const msg = "gRPC needs HTTP/2; over HTTP/1.1 use gRPC-Web or Connect";
      (res as ServerResponse).writeHead(505, { "content-type": "text/plain", "grpc-status": String(Code.Unimplemented), "grpc-message": msg });
      return void res.end(`${msg}\n`);
    }
    if (!h1 && protocol === "grpc" && serveUnaryGrpc(req as http2.Http2ServerRequest, res as http2.Http2ServerResponse, direct, directOptions)) return;
    if (!h1) patchGrpcMessage((res as http2.Http2ServerResponse).stream);
    try {
      adapter(req as never, res as never);
    } catch (e) {
      // e.g. an HTTP/1.0 request without Host: Connect cannot build the URL.
      refuse(req, res, protocol, Code.InvalidArgument, `bad request: ${(e as Error).message}`);
    }
  };

  const h2 = http2.createServer({ settings: { maxConcurrentStreams: 100, maxHeaderListSize: 16 * 1024 }, maxSessionMemory: 10 }, handle);
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (s) => {
    sessions.add(s);
    let streams = 0;
    // A connection that completes the preface but never opens a stream is one that never sends a
    // request: it gets the header timeout, as a connection that sends nothing (not the idle one).
    const firstStream = setTimeout(() => s.destroy(), limits.headerTimeoutMs).unref();
    s.once("close", () => clearTimeout(firstStream));
    s.on("stream", (stream, headers) => {
      clearTimeout(firstStream);
      streams++;
      const cancel = () => {
        const st = stream.state?.state;
        if (st !== http2.constants.NGHTTP2_STREAM_STATE_HALF_CLOSED_REMOTE && st !== http2.constants.NGHTTP2_STREAM_STATE_CLOSED) stream.close(http2.constants.NGHTTP2_CANCEL);
      };
      // A streaming request (reflection) stays open while it exchanges messages: it is bounded by
      // the idle timeout (nothing read or written for that long), not by the request timeout.
      const streaming = STREAMING_REQUEST_PATHS.has(String(headers[":path"]));
      if (streaming) stream.setTimeout(limits.idleTimeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      // Any other client must finish sending its request in time (a half-sent request holds a stream).
      const timer = streaming ? undefined : setTimeout(cancel, limits.requestTimeoutMs).unref();
      stream.once("close", () => {
        streams--;
        clearTimeout(timer);
      });
    });
    // Idle connections (no open stream) are closed with GOAWAY; long calls keep theirs.
    s.setTimeout(limits.idleTimeoutMs, () => {
      if (streams === 0) s.close();
    });
    s.once("close", () => sessions.delete(s));
  });
  h2.on("sessionError", () => {});

  const h1 = http.createServer(
    {
      headersTimeout: limits.headerTimeoutMs,
      requestTimeout: Math.max(limits.requestTimeoutMs, limits.headerTimeoutMs),
      keepAliveTimeout: limits.idleTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headerTimeoutMs / 4))),
      maxHeaderSize: 16 * 1024,
    },
    handle,
  );
  // node:http checks header/request timeouts only on servers that emitted 'listening'; this one
  // receives its connections from the sniffing listener below.
  h1.emit("listening");

  const sockets = new Set<net.Socket>();
  const listener = net.createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    // A connection that never says which HTTP version it speaks is dropped.
    const timer = setTimeout(() => socket.destroy(), limits.headerTimeoutMs).unref();
    let head: Buffer = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      head = head.length === 0 ? d : Buffer.concat([head, d]);
      const n = Math.min(head.length, PREFACE.length);
      const isH2 = head.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isH2 && head.length < PREFACE.length) return; // a prefix of the preface: wait for more
      clearTimeout(timer);
      socket.off("data", onData);
      socket.pause();
      socket.unshift(head);
      if (isH2) h2.emit("connection", socket); // the session reads what is buffered, then the socket
      else {
        h1.emit("connection", socket);
        socket.resume(); // node:http consumes the handle directly; resuming hands it the buffered bytes first
      }
    };
    socket.on("data", onData);
  });
  listener.maxConnections = limits.maxConnections;

  await claimSocketPath(opts.socket);
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(opts.socket, () => {
      listener.off("error", reject);
      resolve();
    });
  });
  await chmod(opts.socket, opts.mode ?? 0o660);
  if (opts.group) await chown(opts.socket, -1, await gidOf(opts.group));

  return {
    server: listener,
    health,
    inflight: () => inflight,
    async shutdown(graceMs = 10_000, graceEnded?: () => void) {
      draining = true;
      health.draining = true;
      health.setServing(false);
      const closed = new Promise<void>((r) => listener.close(() => r()));
      // GOAWAY: clients stop opening streams on these connections; open streams continue.
      for (const s of sessions) s.close();
      h1.closeIdleConnections();
      const settled = (ms: number) => Promise.race([new Promise<void>((r) => (idle = r)), new Promise((r) => setTimeout(r, ms).unref())]);
      if (inflight > 0) {
        opts.log?.(`draining ${inflight} in-flight call(s)`);
        await settled(graceMs);
      }
      if (inflight > 0) {
        opts.log?.(`grace of ${graceMs} ms over: ending ${inflight} call(s) still open`);
        graceEnded?.();
        await settled(FLUSH_MS);
      }
      for (const s of sessions) s.destroy();
      for (const s of sockets) s.destroy();
      h1.close();
      await closed;
    },
  };
}
