/**
 * The benchmark's latency proxy (bench/latency-proxy.ts): it counts the database round trips the
 * Worker rows report, so its request framing must count every request exactly once however TCP
 * splits the bytes, and every request must wait the delay before it reaches the server.
 */
import { createServer, request, Agent, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RequestFramer, startLatencyProxy, type LatencyProxy } from "../../bench/latency-proxy.ts";
import { nowMs, startAlarm } from "../../bench/lib/alarm.ts";

const fixed = (path: string, body: string) => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const chunked = (path: string, parts: string[], trailer = "") =>
  `POST ${path}?a=1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${parts.map((p) => `${Buffer.byteLength(p).toString(16)};ext=1\r\n${p}\r\n`).join("")}0\r\n${trailer}\r\n`;
const bodiless = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

/** Bodies that look like request heads, so a framer that does not skip bodies miscounts. */
const tricky = `{"sql":"GET /x HTTP/1.1\\r\\n\\r\\n","x":"\r\n\r\nPOST /v2/pipeline HTTP/1.1\r\n\r\n"}`;
const stream = [fixed("/v2/pipeline", tricky), bodiless("/health"), chunked("/v2/pipeline", ["ab", tricky, "c"], "X-Trailer: 1\r\n"), fixed("/v2/pipeline", ""), chunked("/v3/pipeline", [])].join("");
const expected = ["POST /v2/pipeline", "GET /health", "POST /v2/pipeline", "POST /v2/pipeline", "POST /v3/pipeline"];

describe("the latency proxy's request framing", () => {
  it("counts each request once: content-length, chunked with extensions and trailers, no body", () => {
    const seen: string[] = [];
    new RequestFramer((k) => seen.push(k)).push(Buffer.from(stream));
    expect(seen).toEqual(expected);
  });

  it("counts the same whatever the split: every cut into two pieces, and byte by byte", () => {
    const bytes = Buffer.from(stream);
    for (let cut = 1; cut < bytes.length; cut++) {
      const seen: string[] = [];
      const f = new RequestFramer((k) => seen.push(k));
      f.push(bytes.subarray(0, cut));
      f.push(bytes.subarray(cut));
      expect(seen, `cut at ${cut}`).toEqual(expected);
    }
    const seen: string[] = [];
    const f = new RequestFramer((k) => seen.push(k));
    for (let i = 0; i < bytes.length; i++) f.push(bytes.subarray(i, i + 1));
    expect(seen).toEqual(expected);
  });

  it("refuses a head that never ends instead of buffering without bound", () => {
    const f = new RequestFramer(() => {});
    expect(() => f.push(Buffer.alloc(70 * 1024, "a"))).toThrow(/64 KiB/);
  });
});

describe("the latency proxy between a client and a server", () => {
  let server: Server;
  let proxy: LatencyProxy;
  const arrivals: number[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        arrivals.push(performance.now());
        res.writeHead(200, { "content-type": "text/plain" }).end(`${req.method} ${req.url} ${Buffer.concat(chunks).length}`);
      });
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    proxy = await startLatencyProxy({ target: `http://127.0.0.1:${(server.address() as { port: number }).port}`, delayMs: 40 });
  });
  afterAll(async () => {
    await proxy.stop();
    await new Promise((ok) => server.close(ok));
  });

  const send = (agent: Agent, path: string, body: string, chunkedBody = false) =>
    new Promise<{ text: string; sentAt: number }>((ok, fail) => {
      const sentAt = performance.now();
      const req = request(`${proxy.url}${path}`, { method: "POST", agent, headers: chunkedBody ? {} : { "content-length": Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => ok({ text: Buffer.concat(chunks).toString(), sentAt }));
      });
      req.on("error", fail);
      if (chunkedBody) {
        req.write(body.slice(0, 3));
        req.end(body.slice(3));
      } else req.end(body);
    });

  it("every request on a kept-alive connection waits the delay, answers pass unchanged, and each is counted", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    proxy.reset();
    arrivals.length = 0;
    const a = await send(agent, "/v2/pipeline?x=1", tricky);
    const b = await send(agent, "/v2/pipeline", "abcdef", true);
    expect(a.text).toBe(`POST /v2/pipeline?x=1 ${Buffer.byteLength(tricky)}`);
    expect(b.text).toBe("POST /v2/pipeline 6");
    expect(arrivals[0]! - a.sentAt).toBeGreaterThanOrEqual(39);
    expect(arrivals[1]! - b.sentAt).toBeGreaterThanOrEqual(39);
    const stats = proxy.stats();
    expect(stats).toMatchObject({ requests: 2, byPath: { "POST /v2/pipeline": 2 } });
    // Every delayed write is in the holds it reports, and none went early (an alarm that wakes the
    // loop early leaves it to wait out the rest).
    expect(stats.held.writes).toBeGreaterThanOrEqual(2);
    expect(stats.held.p50).toBeGreaterThanOrEqual(40);
    agent.destroy();
  });

  it("with the delay set to 0 requests go straight on, still counted", async () => {
    proxy.setDelay(0);
    proxy.reset();
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(agent, `/v2/pipeline?i=${i}`, "x".repeat(i))));
    expect(answers.map((r) => r.text)).toEqual(Array.from({ length: 8 }, (_, i) => `POST /v2/pipeline?i=${i} ${i}`));
    expect(proxy.stats()).toMatchObject({ requests: 8, held: { writes: 0 } });
    agent.destroy();
    proxy.setDelay(40);
  });
});

describe("the proxy's alarm (bench/lib/alarm.ts)", () => {
  it("calls back once per due time, after it less the lead, and a new due time replaces the old one", async () => {
    const fired: number[] = [];
    const alarm = startAlarm(() => fired.push(nowMs()));
    const keepAlive = setInterval(() => {}, 1000);
    try {
      const later = nowMs() + 200;
      alarm.at(later);
      const due = nowMs() + 20;
      alarm.at(due);
      await new Promise((r) => setTimeout(r, 300));
      expect(fired).toHaveLength(1);
      expect(fired[0]!).toBeGreaterThanOrEqual(due - alarm.lead - 0.01);
      expect(fired[0]!).toBeLessThan(later);
      // Learned, bounded: the lead is what the owner's wakeup took, never more than a millisecond.
      expect(alarm.lead).toBeGreaterThanOrEqual(0);
      expect(alarm.lead).toBeLessThanOrEqual(1);
    } finally {
      clearInterval(keepAlive);
      await alarm.stop();
    }
  });
});
