/**
 * A tiny standalone Node HTTP server mounting the git engine's handlers over the in-memory
 * RefStore and the directory ObjectStore: `http://127.0.0.1:<port>/<repoId>.git/…`.
 * Used by the git CLI tests and by `npm run bench:git` (run as its own process there).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { GitLimits } from "../../functions/git/protocol/common.ts";
import type { PushResult } from "../../functions/git/protocol/receive-pack.ts";
import { serveGit } from "../../functions/git/http.ts";
import { DirectoryObjectStore } from "../../functions/git/storage/fs-store.ts";
import { MemoryRefStore } from "../../functions/git/storage/memory-ref-store.ts";
import type { RefStore } from "../../functions/git/storage/ref-store.ts";

export interface GitServer {
  url: string;
  refs: MemoryRefStore;
  objects: DirectoryObjectStore;
  pushes: PushResult[];
  /** ObjectStore calls by method since the start (tests bound storage reads per request). */
  storeCalls: Record<string, number>;
  /** Replaces the RefStore the handlers see (tests wrap it to stage races). */
  setRefStore(r: RefStore): void;
  setLimits(l: Partial<GitLimits>): void;
  close(): Promise<void>;
}

const REPO_PATH = /^\/([A-Za-z0-9_-]+?)(?:\.git)?(\/.*)$/;

/** Starts the server on a free port of 127.0.0.1. */
export async function startGitServer(opts: { dataDir: string; limits?: Partial<GitLimits>; port?: number }): Promise<GitServer> {
  const refs = new MemoryRefStore();
  const objects = new DirectoryObjectStore(opts.dataDir);
  const pushes: PushResult[] = [];
  const storeCalls: Record<string, number> = {};
  const counted = new Proxy(objects, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        storeCalls[String(prop)] = (storeCalls[String(prop)] ?? 0) + 1;
        return v.apply(target, args);
      };
    },
  });
  let refStore: RefStore = refs;
  let limits = opts.limits ?? {};
  const listener = getRequestListener(async (req: Request) => {
    const m = REPO_PATH.exec(new URL(req.url).pathname);
    if (!m) return new Response("Not found\n", { status: 404 });
    return serveGit({ repoId: m[1]!, objects: counted, refs: refStore, limits }, req, m[2]!, (r) => {
      pushes.push(r);
    });
  });
  const server: Server = createServer(listener);
  await new Promise<void>((ok) => server.listen(opts.port ?? 0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refs,
    objects,
    pushes,
    storeCalls,
    setRefStore: (r) => {
      refStore = r;
    },
    setLimits: (l) => {
      limits = l;
    },
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

// `node test/git/server.ts <dataDir> [port]`: run alone (the benchmark measures its memory)
if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await startGitServer({ dataDir: process.argv[2] ?? "./.data", port: Number(process.argv[3] ?? 0), limits: { maxPackBytes: 1024 * 1024 * 1024 } });
  process.stdout.write(`${s.url}\n`);
  // one JSON line per push: what the benchmark reports as RefStore round trips
  const seen = { n: 0 };
  setInterval(() => {
    while (seen.n < s.pushes.length) process.stdout.write(`${JSON.stringify({ push: seen.n, refStoreCalls: s.pushes[seen.n++]!.refStoreCalls })}\n`);
  }, 50).unref();
}
