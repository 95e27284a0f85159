/**
 * The RPC floor for `npm run bench:agent`: the least a gRPC answer over node:http2 costs, served
 * the way the agent serves it (a separate Node process, a unix socket, HEADERS + one DATA frame +
 * trailers), with none of the agent's code. Every POST is answered with the same
 * AttestationResponse (a 3 KB quote); with `--tpm`, only after the 2 TPM2_Quote commands the agent
 * sends per call (one per bank, back to back), so the client waits on a device as it does for the
 * agent. Run as `node bench/lib/agent-floor.ts SOCKET [--tpm unix:PATH]`; prints "ready".
 */
import { randomBytes } from "node:crypto";
import { unlink } from "node:fs/promises";
import http2 from "node:http2";
import { parseArgs } from "node:util";
import { create, toBinary } from "@bufbuild/protobuf";
import { AttestationResponseSchema } from "../../attestation-agent/gen/attestation/v1/attestation_pb.ts";
import { TpmClient } from "../../attestation-agent/tpm/client.ts";
import { PCR_COUNT } from "../../attestation-agent/tpm/marshal.ts";
import { openTransport } from "../../attestation-agent/tpm/transport.ts";
import { VtpmAttester } from "../../attestation-agent/tpm/vtpm.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { tpm: { type: "string" } } });
const socket = positionals[0];
const ALL = Array.from({ length: PCR_COUNT }, (_, i) => i);

/** The device work of one call: nothing, or the 2 quotes. */
let work = async () => {};
if (values.tpm) {
  const tpm = new TpmClient(openTransport(values.tpm));
  const attester = new VtpmAttester(tpm);
  const ak = await attester.ak();
  const banks = await attester.banks();
  work = async () => {
    for (const alg of banks) await tpm.quote(ak.handle, randomBytes(32), [{ alg, pcrs: ALL }]);
  };
}

const message = toBinary(AttestationResponseSchema, create(AttestationResponseSchema, { quote: new Uint8Array(3000).fill(7) }));
const frame = Buffer.alloc(5 + message.length);
frame.writeUInt32BE(message.length, 1);
frame.set(message, 5);

const server = http2.createServer();
server.on("stream", (stream) => {
  stream.on("data", () => {});
  stream.once("end", () => {
    work().then(() => {
      stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(frame);
    });
  });
});
await unlink(socket!).catch(() => {});
server.listen(socket, () => console.error("ready"));
