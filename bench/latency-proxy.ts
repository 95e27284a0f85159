/**
 * A latency-injecting HTTP proxy for sqld: buffers each request, waits `delayMs`, then forwards it
 * to sqld over a keep-alive agent, so every database round trip costs at least `delayMs` more.
 * It counts what it forwards (by method and path) and serves `GET /__stats`, `POST /__reset` and
 * `POST /__delay?ms=N` (change the delay, e.g. 0 to measure a request's unloaded cost on the same
 * path) for the benchmark. Listens on 127.0.0.1 only.
 *
 * As a script (what `bench/api.ts` does, so the proxy has its own event loop):
 *   node bench/latency-proxy.ts --target http://127.0.0.1:8080 --delay 30 [--port 0]
 * prints one JSON line `{"url":"http://127.0.0.1:PORT"}` once it listens, and stops on SIGTERM.
 */
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { parseArgs } from "node:util";

/** Requests forwarded since the last reset: the total and per `METHOD path`. */
export interface ProxyStats {
  requests: number;
  byPath: Record<string, number>;
}

export interface LatencyProxy {
  url: string;
  stats: () => ProxyStats;
  reset: () => void;
  stop: () => Promise<void>;
}

/** Starts the proxy in this process. */
export async function startLatencyProxy(opts: { target: string; delayMs: number; port?: number }): Promise<LatencyProxy> {
  const target = new URL(opts.target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let stats: ProxyStats = { requests: 0, byPath: {} };
  let delayMs = opts.delayMs;
  const reset = () => {
    stats = { requests: 0, byPath: {} };
  };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const key = `${req.method} ${(req.url ?? "/").split("?")[0]}`;
    stats.requests++;
    stats.byPath[key] = (stats.byPath[key] ?? 0) + 1;
    const headers = { ...req.headers, host: target.host, "content-length": String(body.length) };
    delete headers.connection;
    delete headers["transfer-encoding"];
    const up = request(
      { protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on("error", (e) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`latency proxy: ${e.message}`);
    });
    up.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/__stats") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats));
        return;
      }
      if (req.url === "/__reset") {
        reset();
        res.writeHead(204).end();
        return;
      }
      if (req.url?.startsWith("/__delay?")) {
        delayMs = Number(new URL(req.url, "http://x").searchParams.get("ms") ?? delayMs);
        res.writeHead(204).end();
        return;
      }
      const body = Buffer.concat(chunks);
      setTimeout(() => forward(req, res, body), delayMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(opts.port ?? 0, "127.0.0.1", () => ok());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => structuredClone(stats),
    reset,
    stop: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { target: { type: "string" }, delay: { type: "string", default: "30" }, port: { type: "string", default: "0" } } });
  if (!values.target) {
    console.error("usage: node bench/latency-proxy.ts --target http://127.0.0.1:PORT [--delay MS] [--port PORT]");
    process.exit(2);
  }
  const proxy = await startLatencyProxy({ target: values.target, delayMs: Number(values.delay), port: Number(values.port) });
  console.log(JSON.stringify({ url: proxy.url }));
  const stop = () => void proxy.stop().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
