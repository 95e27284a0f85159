/**
 * The worker thread that owns an embedded replica's sync handle (issue 9 B.7). libSQL's sync is a
 * synchronous native call that waits for the primary over the network (two HTTP requests:
 * `ReplicationLog/Hello` and `ReplicationLog/BatchLogEntries`); run on the server's own thread it
 * would stop every request for that long. Here it only stops this thread.
 *
 * Messages in: `{ type: "sync", id }`, `{ type: "close" }`. Out: `{ type: "ready" }` after the
 * replica is opened, then `{ id, ok: true, frameNo }` or `{ id, ok: false, message }` per sync.
 */
import { createClient, type Client } from "@libsql/client";
import { parentPort, workerData } from "node:worker_threads";

export interface SyncerData {
  path: string;
  syncUrl: string;
  authToken?: string;
}

export type SyncerReply = { type: "ready" } | { type: "failed"; message: string } | { id: number; ok: true; frameNo: number | null } | { id: number; ok: false; message: string };

const port = parentPort!;
const { path, syncUrl, authToken } = workerData as SyncerData;
const post = (reply: SyncerReply) => port.postMessage(reply);
const message = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0]!; // !: split returns at least one part

let client: Client;
try {
  // The server writes through its own connection to the primary; this handle only pulls frames.
  client = createClient({ url: `file:${path}`, syncUrl, authToken, readYourWrites: false });
  post({ type: "ready" });
} catch (e) {
  post({ type: "failed", message: message(e) });
  port.close();
}

port.on("message", async (msg: { type: "sync"; id: number } | { type: "close" }) => {
  if (msg.type === "close") {
    client?.close();
    port.close();
    return;
  }
  try {
    const replicated = await client.sync();
    post({ id: msg.id, ok: true, frameNo: replicated?.frame_no ?? null });
  } catch (e) {
    post({ id: msg.id, ok: false, message: message(e) });
  }
});
