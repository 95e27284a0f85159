/**
 * The agent's gRPC server: Connect-ES `connectNodeAdapter` (gRPC protocol only) on a node:http2
 * h2c server bound to a unix socket, with the standard health and reflection services, a
 * trailers-only UNIMPLEMENTED for unknown paths, and a draining shutdown.
 */
import { chmod, chown, readFile, unlink } from "node:fs/promises";
import http2 from "node:http2";
import { create, toBinary, type DescFile } from "@bufbuild/protobuf";
import { createRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { AttestationService, file_attestation_v1_attestation } from "./gen/attestation/v1/attestation_pb.ts";
import { file_attest_attest } from "./gen/attest/attest_pb.ts";
import { Health, HealthCheckResponse_ServingStatus as Status, file_grpc_health_v1_health, type HealthCheckRequest } from "./gen/grpc/health/v1/health_pb.ts";
import * as reflV1 from "./gen/grpc/reflection/v1/reflection_pb.ts";
import * as reflV1alpha from "./gen/grpc/reflection/v1alpha/reflection_pb.ts";

const SERVICE_NAME = AttestationService.typeName;

export interface ServerOptions {
  socket: string;
  /** Octal permission bits for the socket; default 0o660. */
  mode?: number;
  /** Group name or numeric gid to own the socket. */
  group?: string;
  attestation: ServiceImpl<typeof AttestationService>;
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
    },
  };
}

/** The descriptors reflection serves: every file the agent's services use. */
const FILES: DescFile[] = [file_attestation_v1_attestation, file_attest_attest, file_grpc_health_v1_health, reflV1.file_grpc_reflection_v1_reflection, reflV1alpha.file_grpc_reflection_v1alpha_reflection];
const REGISTRY = createRegistry(...FILES);
const FILES_BY_NAME = new Map<string, DescFile>();
const indexFile = (f: DescFile) => {
  if (FILES_BY_NAME.has(f.proto.name)) return;
  FILES_BY_NAME.set(f.proto.name, f);
  f.dependencies.forEach(indexFile);
};
FILES.forEach(indexFile);
const SERVICES = [SERVICE_NAME, Health.typeName, reflV1.ServerReflection.typeName, reflV1alpha.ServerReflection.typeName];

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
      // A method symbol is Service.Method: fall back to its service.
      const d = REGISTRY.get(sym) ?? REGISTRY.get(sym.slice(0, Math.max(0, sym.lastIndexOf("."))));
      return d && "file" in d ? files(d.file) : err(Code.NotFound, `symbol not found: ${sym}`);
    }
    case "allExtensionNumbersOfType":
      return REGISTRY.getMessage(m.value as string)
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

/** gRPC trailers-only answer for paths no service owns (Connect would send a bare HTTP 404). */
function unimplemented(_req: unknown, res: http2.Http2ServerResponse) {
  const path = res.req.url;
  res.stream.respond(
    { ":status": 200, "content-type": "application/grpc", "grpc-status": String(Code.Unimplemented), "grpc-message": encodeURIComponent(`unknown method ${path}`) },
    { endStream: true },
  );
}

export interface AgentServer {
  server: http2.Http2Server;
  health: HealthState;
  /** Stops accepting calls, lets in-flight calls finish (up to `graceMs`), then closes. */
  shutdown(graceMs?: number): Promise<void>;
}

export async function startServer(opts: ServerOptions): Promise<AgentServer> {
  const health = new HealthState();
  const routes = (r: ConnectRouter) => {
    r.service(AttestationService, opts.attestation);
    r.service(Health, healthService(health));
    r.service(reflV1.ServerReflection, reflectionService(reflV1.ServerReflection, reflV1.ServerReflectionResponseSchema));
    r.service(reflV1alpha.ServerReflection, reflectionService(reflV1alpha.ServerReflection, reflV1alpha.ServerReflectionResponseSchema));
  };
  const handler = connectNodeAdapter({ routes, grpc: true, grpcWeb: false, connect: false, fallback: unimplemented as never });
  let inflight = 0;
  let idle: (() => void) | undefined;
  const server = http2.createServer((req, res) => {
    inflight++;
    res.once("close", () => {
      if (--inflight === 0) idle?.();
    });
    patchGrpcMessage(res.stream);
    handler(req, res);
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  // A crash leaves the socket file behind; remove a stale one before binding.
  await unlink(opts.socket).catch((e) => {
    if (e.code !== "ENOENT") throw e;
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.socket, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await chmod(opts.socket, opts.mode ?? 0o660);
  if (opts.group) await chown(opts.socket, -1, await gidOf(opts.group));

  return {
    server,
    health,
    async shutdown(graceMs = 10_000) {
      health.draining = true;
      health.setServing(false);
      const closed = new Promise<void>((r) => server.close(() => r()));
      // GOAWAY: clients stop opening streams on these connections; open streams continue.
      for (const s of sessions) s.close();
      if (inflight > 0) {
        opts.log?.(`draining ${inflight} in-flight call(s)`);
        await Promise.race([new Promise<void>((r) => (idle = r)), new Promise((r) => setTimeout(r, graceMs).unref())]);
      }
      for (const s of sessions) s.destroy();
      await closed;
    },
  };
}
