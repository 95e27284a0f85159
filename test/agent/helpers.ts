/** Shared test plumbing: the agent as a child process, and gRPC clients on its unix socket. */
import { spawn, type ChildProcess } from "node:child_process";
import { access } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AttestationService } from "../../attestation-agent/gen/attestation/v1/attestation_pb.ts";

export const ROOT = path.resolve(import.meta.dirname, "../..");

export interface AgentProcess {
  child: ChildProcess;
  socket: string;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `node attestation-agent/main.ts ARGS` (or another checkout's `main`) in its own process
 * group; resolves once it serves.
 */
export async function startAgentProcess(socket: string, args: string[], env: NodeJS.ProcessEnv = {}, main = path.join(ROOT, "attestation-agent/main.ts")): Promise<AgentProcess> {
  const child = spawn(process.execPath, [main, "--socket", socket, ...args], {
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const deadline = Date.now() + 20_000;
  while (!err.includes("serving attestation.v1")) {
    if (child.exitCode !== null) throw new Error(`agent exited ${child.exitCode}: ${err}`);
    if (Date.now() > deadline) throw new Error(`agent did not start: ${err}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  await access(socket);
  return {
    child,
    socket,
    stderr: () => err,
    async stop(signal = "SIGTERM") {
      // A process killed by a signal has exitCode null too: signalCode says it is gone.
      if (child.exitCode === null && child.signalCode === null && child.pid) {
        process.kill(-child.pid, signal);
        const t = setTimeout(() => child.exitCode === null && child.pid && process.kill(-child.pid, "SIGKILL"), 15_000);
        const code = await exited;
        clearTimeout(t);
        return code;
      }
      return child.exitCode;
    },
  };
}

/** Leaves a socket file at `socket` that nobody listens on, as a killed agent leaves it. */
export async function leftoverSocket(socket: string): Promise<void> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(socket, r));
  // the handle is closed without the server's close(), which would remove the file
  (s as unknown as { _handle: { close(): void } | null })._handle?.close();
}

const def = loader.loadSync(["attestation/v1/attestation.proto", "grpc/health/v1/health.proto"], {
  includeDirs: [path.join(ROOT, "proto")],
  bytes: Buffer,
  enums: String,
  longs: String,
  defaults: true,
});
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const pkg = grpc.loadPackageDefinition(def) as any;

export interface GrpcResult<T> {
  code: number;
  details?: string;
  value?: T;
}

/** A grpc-js client for AttestationService (proto loaded with proto/ as the only include path). */
export function grpcJsClient(socket: string) {
  const c = new pkg.attestation.v1.AttestationService(`unix://${socket}`, grpc.credentials.createInsecure());
  const health = new pkg.grpc.health.v1.Health(`unix://${socket}`, grpc.credentials.createInsecure());
  const unary =
    <T>(client: grpc.Client, m: string) =>
    (req: object, deadlineMs = 30_000): Promise<GrpcResult<T>> =>
      new Promise((resolve) =>
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        (client as any)[m](req, { deadline: Date.now() + deadlineMs }, (e: grpc.ServiceError | null, v: T) =>
          resolve(e ? { code: e.code, details: e.details } : { code: 0, value: v }),
        ),
      );
  return {
    raw: c as grpc.Client,
    fetchAttestation: unary<{ quote: Buffer }>(c, "FetchAttestation"),
    fetchCloudToken: unary<{ token: Buffer }>(c, "FetchCloudToken"),
    healthCheck: unary<{ status: string }>(health, "Check"),
    close() {
      c.close();
      health.close();
    },
  };
}

/** A Connect-ES gRPC client over the unix socket. */
export function connectClient(socket: string): Client<typeof AttestationService> {
  const transport = createGrpcTransport({ baseUrl: "http://localhost", nodeOptions: { createConnection: () => net.connect(socket) } });
  return createClient(AttestationService, transport);
}
