/**
 * FetchCloudToken against a fake GCP Confidential Space launcher (HTTP/1.1 on a unix socket,
 * validating requests the way the launcher does), with the agent as a process.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcJsClient, startAgentProcess, type AgentProcess } from "./helpers.ts";

const S = grpc.status;
let dir: string;
let launcher: http.Server;
let agent: AgentProcess;
let client: ReturnType<typeof grpcJsClient>;
const seen: Record<string, unknown>[] = [];
let mode: "ok" | "500" = "ok";

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-cloud-"));
  const sock = path.join(dir, "teeserver.sock");
  launcher = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const fail = (code: number, msg: string) => res.writeHead(code, { "content-type": "text/plain" }).end(msg);
      if (req.method !== "POST" || req.url !== "/v1/token") return fail(404, "not found");
      if (mode === "500") return fail(500, "verifier unreachable");
      let j: Record<string, unknown>;
      try {
        j = JSON.parse(body);
      } catch {
        return fail(400, "bad json");
      }
      seen.push(j);
      const known = new Set(["audience", "token_type", "nonces"]);
      if (Object.keys(j).some((k) => !known.has(k))) return fail(400, "unknown field");
      if (typeof j.audience !== "string" || !j.audience) return fail(400, "audience required");
      if (!["OIDC", "PKI", "AWS_PRINCIPALTAGS"].includes(j.token_type as string)) return fail(400, "token_type required");
      const nonces = (j.nonces as string[] | undefined) ?? [];
      if (nonces.length > 6 || nonces.some((n) => n.length < 10 || n.length > 74)) return fail(400, "bad nonces");
      res.writeHead(200, { "content-type": "text/html" }).end(`eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({ aud: j.audience, eat_nonce: nonces })).toString("base64url")}.c2ln`);
    });
  });
  await new Promise<void>((r) => launcher.listen(sock, r));
  agent = await startAgentProcess(path.join(dir, "agent.sock"), ["--platform", "none"], {
    ATTESTATION_GCP_LAUNCHER_SOCKET: sock,
    ATTESTATION_GCP_AUDIENCE: "https://relying-party.test",
    ATTESTATION_GCP_TOKEN_TYPE: "PKI",
  });
  client = grpcJsClient(agent.socket);
});

afterAll(async () => {
  client?.close();
  await agent?.stop();
  await new Promise((r) => launcher?.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe("FetchCloudToken via the Confidential Space launcher", () => {
  it("returns the launcher's JWT byte for byte, nonce as hex, configured audience and token type", async () => {
    const nonce = randomBytes(32);
    const r = await client.fetchCloudToken({ nonce });
    expect(r.code).toBe(0);
    expect(seen.at(-1)).toEqual({ audience: "https://relying-party.test", token_type: "PKI", nonces: [nonce.toString("hex")] });
    const claims = JSON.parse(Buffer.from(r.value!.token.toString().split(".")[1]!, "base64url").toString());
    expect(claims.eat_nonce).toEqual([nonce.toString("hex")]);
  });

  it("an empty nonce sends no nonces", async () => {
    const r = await client.fetchCloudToken({});
    expect(r.code).toBe(0);
    expect(seen.at(-1)).toEqual({ audience: "https://relying-party.test", token_type: "PKI" });
  });

  it("a nonce the launcher cannot take (38 bytes → 76 hex chars) → INVALID_ARGUMENT without calling it", async () => {
    const before = seen.length;
    const r = await client.fetchCloudToken({ nonce: randomBytes(38) });
    expect(r.code).toBe(S.INVALID_ARGUMENT);
    expect(r.details).toMatch(/5-37 bytes/);
    expect(seen.length).toBe(before);
  });

  it("launcher failure (500) → UNAVAILABLE with its message", async () => {
    mode = "500";
    try {
      const r = await client.fetchCloudToken({ nonce: randomBytes(16) });
      expect(r.code).toBe(S.UNAVAILABLE);
      expect(r.details).toMatch(/500.*verifier unreachable/);
    } finally {
      mode = "ok";
    }
  });

  it("no launcher on the socket → UNAVAILABLE naming the error code, not the socket path (which goes to the agent's log); FetchAttestation on platform none → FAILED_PRECONDITION", async () => {
    const a = await startAgentProcess(path.join(dir, "agent2.sock"), ["--platform", "none", "--gcp-launcher-socket", path.join(dir, "absent.sock"), "--gcp-audience", "x"]);
    const c = grpcJsClient(a.socket);
    try {
      const r = await c.fetchCloudToken({ nonce: randomBytes(16) });
      expect(r.code).toBe(S.UNAVAILABLE);
      expect(r.details).toBe("Confidential Space launcher: connect ENOENT");
      expect(a.stderr()).toContain(path.join(dir, "absent.sock"));
      expect((await c.fetchAttestation({ platformType: "PLATFORM_TYPE_VTPM" })).code).toBe(S.FAILED_PRECONDITION);
    } finally {
      c.close();
      await a.stop();
    }
  });
});
