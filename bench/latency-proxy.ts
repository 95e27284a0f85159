/**
 * A latency-injecting proxy for sqld, at the TCP level: every byte the client sends waits
 * `delayMs` before it goes on to sqld (in order, per connection); sqld's answers go straight back.
 * Each HTTP request therefore costs `delayMs` more, like a database `delayMs` away — the hold is
 * on time at the median to a few hundredths of a millisecond (bench/lib/alarm.ts; a `setTimeout`
 * proxy held 0.3–1 ms more, and more under load), and `/__stats` reports the holds — and,
 * like a network, the proxy adds next to no CPU on this machine: it parses nothing but the request
 * framing it needs to count requests (request line, `content-length` or chunked body sizes), never
 * rebuilds a request or an answer. (Its first form parsed and re-sent every request and answer with
 * `node:http`: ~0.6 ms of CPU per round trip, on the 2 cores the Worker and sqld share.)
 *
 * A control server beside it serves `GET /__stats` (requests forwarded since the last reset, by
 * `METHOD path`, and the p50 and p99 of how long delayed bytes were held), `POST /__reset` and `POST /__delay?ms=N` (change the delay, e.g. 0 to measure a
 * request's unloaded cost on the same path). Both listen on 127.0.0.1 only.
 *
 * As a script (what `bench/api.ts` does, so the proxy has its own event loop):
 *   node bench/latency-proxy.ts --target http://127.0.0.1:8080 --delay 30
 * prints one JSON line `{"url":"http://127.0.0.1:PORT","control":"http://127.0.0.1:PORT2"}` once
 * both listen, and stops on SIGTERM.
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { connect, createServer, type Server, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { nowMs, startAlarm } from "./lib/alarm.ts";

/** Requests forwarded since the last reset: the total and per `METHOD path`. */
export interface ProxyStats {
  requests: number;
  byPath: Record<string, number>;
  /** How long the bytes forwarded with a delay were held (ms, from arrival to the write): what the delay really was. */
  held: { writes: number; p50: number; p99: number };
}

export interface LatencyProxy {
  url: string;
  control: string;
  stats: () => ProxyStats;
  reset: () => void;
  setDelay: (ms: number) => void;
  stop: () => Promise<void>;
}

const CRLF2 = Buffer.from("\r\n\r\n");
/** A due time nearer than this is waited for in the loop, not with the alarm (ms). */
const SPIN_MS = 0.1;
const LF = 0x0a;

/**
 * Finds HTTP/1.1 request boundaries in a client's byte stream, chunk by chunk, and reports each
 * request's `METHOD path` as its head completes. Bodies are skipped by length (`content-length`, or
 * chunked sizes), never buffered.
 */
export class RequestFramer {
  private head: Buffer[] = [];
  private headBytes = 0;
  /** Body bytes still to skip (content-length), or chunked state. */
  private skip = 0;
  private chunked: "size" | "data" | "crlf" | "trailer" | null = null;
  private crlfLeft = 0;
  private line: Buffer[] = [];

  private readonly onRequest: (key: string) => void;

  constructor(onRequest: (key: string) => void) {
    this.onRequest = onRequest;
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        if (this.skip === 0 && this.chunked === "data") {
          this.chunked = "crlf";
          this.crlfLeft = 2;
        }
        continue;
      }
      if (this.chunked) {
        at = this.chunkedStep(chunk, at);
        continue;
      }
      // In a request head: look for its end, across chunk borders.
      const prev = this.headBytes;
      this.head.push(chunk.subarray(at));
      this.headBytes += chunk.length - at;
      const joined = this.head.length === 1 ? this.head[0]! : Buffer.concat(this.head);
      const end = joined.indexOf(CRLF2, Math.max(0, prev - 3));
      if (end < 0) {
        if (this.headBytes > 64 * 1024) throw new Error("request head over 64 KiB");
        this.head = [joined];
        return;
      }
      const consumed = end + 4 - prev;
      this.startBody(joined.subarray(0, end).toString("latin1"));
      this.head = [];
      this.headBytes = 0;
      at += consumed;
    }
  }

  private startBody(head: string): void {
    const lines = head.split("\r\n");
    const [method = "?", target = "/"] = lines[0]!.split(" ");
    this.onRequest(`${method} ${target.split("?")[0]}`);
    for (const l of lines.slice(1)) {
      const colon = l.indexOf(":");
      const name = l.slice(0, colon).trim().toLowerCase();
      const value = l.slice(colon + 1).trim();
      if (name === "content-length") this.skip = Number(value);
      else if (name === "transfer-encoding" && value.toLowerCase().includes("chunked")) this.chunked = "size";
    }
    if (this.chunked) this.skip = 0;
  }

  /** One step of a chunked body: a size line, the data (skipped), its CRLF, or the trailer. */
  private chunkedStep(chunk: Buffer, at: number): number {
    if (this.chunked === "crlf") {
      // The CRLF after a chunk's data, possibly split across chunks.
      const n = Math.min(this.crlfLeft, chunk.length - at);
      this.crlfLeft -= n;
      if (this.crlfLeft === 0) this.chunked = "size";
      return at + n;
    }
    // A size or trailer line ends at LF; its CR may sit at the end of the previous chunk.
    const nl = chunk.indexOf(LF, at);
    if (nl < 0) {
      this.line.push(chunk.subarray(at));
      return chunk.length;
    }
    this.line.push(chunk.subarray(at, nl));
    const text = Buffer.concat(this.line).toString("latin1").replace(/\r$/, "");
    this.line = [];
    if (this.chunked === "size") {
      const size = Number.parseInt(text.split(";")[0]!, 16);
      if (size === 0) this.chunked = "trailer";
      else {
        this.skip = size;
        this.chunked = "data";
      }
    } else if (text === "") {
      this.chunked = null; // the empty line that ends the trailer: the next request follows
    }
    return nl + 1;
  }
}

/** Starts the proxy in this process. */
export async function startLatencyProxy(opts: { target: string; delayMs: number }): Promise<LatencyProxy> {
  const target = new URL(opts.target);
  let counts = { requests: 0, byPath: {} as Record<string, number> };
  /** Hold times since the last reset (the first 100,000). */
  let holds: number[] = [];
  let delayMs = opts.delayMs;
  const stats = (): ProxyStats => {
    const h = holds.toSorted((a, b) => a - b);
    const q = (f: number) => h[Math.min(h.length - 1, Math.floor(f * h.length))] ?? Number.NaN;
    return { ...structuredClone(counts), held: { writes: h.length, p50: q(0.5), p99: q(0.99) } };
  };
  const reset = () => {
    counts = { requests: 0, byPath: {} };
    holds = [];
  };
  const sockets = new Set<Socket>();
  const count = (key: string) => {
    counts.requests++;
    counts.byPath[key] = (counts.byPath[key] ?? 0) + 1;
  };

  // Bytes wait in arrival order, across connections (the delay is the same for all, so the order
  // of arrival is the order of due times); each goes on `delayMs` after it came, on a timer
  // that is on time at the median to a few hundredths of a millisecond (bench/lib/alarm.ts).
  const queue: { at: number; due: number; upstream: Socket; chunk: Buffer }[] = [];
  let head = 0;
  const flush = () => {
    for (;;) {
      const now = nowMs();
      while (head < queue.length && queue[head]!.due <= now) {
        const { at, upstream, chunk } = queue[head++]!;
        if (holds.length < 100_000) holds.push(now - at);
        if (!upstream.destroyed) upstream.write(chunk);
      }
      if (head === queue.length) {
        queue.length = 0;
        head = 0;
        return;
      }
      // Closer than the alarm aims (it wakes this loop a little early about half the time): wait here.
      if (queue[head]!.due - now > SPIN_MS) return alarm.at(queue[head]!.due);
    }
  };
  const alarm = startAlarm(flush);

  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const framer = new RequestFramer(count);
    client.on("data", (chunk: Buffer) => {
      try {
        framer.push(chunk);
      } catch {
        client.destroy();
        upstream.destroy();
        return;
      }
      if (delayMs <= 0 && head === queue.length) {
        upstream.write(chunk);
        return;
      }
      const empty = head === queue.length;
      const at = nowMs();
      queue.push({ at, due: at + delayMs, upstream, chunk });
      if (empty) alarm.at(queue[head]!.due);
    });
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  });

  const control: HttpServer = createHttpServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/__stats") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats()));
      } else if (req.url === "/__reset") {
        reset();
        res.writeHead(204).end();
      } else if (req.url?.startsWith("/__delay?")) {
        delayMs = Number(new URL(req.url, "http://x").searchParams.get("ms") ?? delayMs);
        res.writeHead(204).end();
      } else {
        res.writeHead(404).end();
      }
    });
  });

  const listen = (s: Server | HttpServer) =>
    new Promise<number>((ok, fail) => {
      s.once("error", fail);
      s.listen(0, "127.0.0.1", () => ok((s.address() as { port: number }).port));
    });
  const port = await listen(server);
  const controlPort = await listen(control);
  return {
    url: `http://127.0.0.1:${port}`,
    control: `http://127.0.0.1:${controlPort}`,
    stats,
    reset,
    setDelay: (ms: number) => {
      delayMs = ms;
    },
    stop: async () => {
      for (const s of sockets) s.destroy();
      control.closeAllConnections();
      await Promise.all([new Promise((ok) => server.close(ok)), new Promise((ok) => control.close(ok)), alarm.stop()]);
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { target: { type: "string" }, delay: { type: "string", default: "30" } } });
  if (!values.target) {
    console.error("usage: node bench/latency-proxy.ts --target http://127.0.0.1:PORT [--delay MS]");
    process.exit(2);
  }
  const proxy = await startLatencyProxy({ target: values.target, delayMs: Number(values.delay) });
  console.log(JSON.stringify({ url: proxy.url, control: proxy.control }));
  const stop = () => void proxy.stop().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
