/**
 * Outbound delivery requests (lib/outbound.ts, lib/outbound-node.ts): redirects as Go's client
 * follows them, each hop checked against ALLOWED_HOST_LIST, the bounds on time, hops and answer
 * size — and on Node the address a name resolves to checked when connecting (DNS rebinding).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeHop } from "../../functions/lib/outbound-node.ts";
import { fetchHop, MAX_RESPONSE_BODY, OutboundError, send, type Hop, type OutboundRequest, type OutboundResponse } from "../../functions/lib/outbound.ts";

const LIST = ["external"];
const POST: OutboundRequest = { method: "POST", url: "https://a.example/hook", headers: { "Content-Type": "application/json", Authorization: "Bearer x" }, body: "{}" };

/** A hop answering from a script; records what it was asked. */
function scripted(answers: ((req: OutboundRequest) => OutboundResponse)[]) {
  const seen: OutboundRequest[] = [];
  const hop: Hop = async (req) => {
    seen.push(req);
    const next = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    return next(req);
  };
  return { hop, seen };
}
const redirect = (status: number, location: string) => () => ({ status, headers: { location }, body: "" });
const ok = () => ({ status: 200, headers: {}, body: "fine" });

describe("send: redirects as Go's http.Client", () => {
  it("301, 302 and 303 turn a POST into a GET without a body; 307 and 308 repeat it", async () => {
    for (const status of [301, 302, 303]) {
      const { hop, seen } = scripted([redirect(status, "/next"), ok]);
      expect((await send(hop, POST, { timeoutMs: 1000, allowList: LIST })).body).toBe("fine");
      expect(seen[1]).toEqual({ method: "GET", url: "https://a.example/next", headers: { Authorization: "Bearer x" }, body: "" });
    }
    for (const status of [307, 308]) {
      const { hop, seen } = scripted([redirect(status, "https://a.example/again"), ok]);
      await send(hop, POST, { timeoutMs: 1000, allowList: LIST });
      expect(seen[1]).toEqual({ ...POST, url: "https://a.example/again" });
    }
  });

  it("a HEAD stays a HEAD through a 302, and a request whose method changes loses its Content-Type and Content-Length", async () => {
    const head = scripted([redirect(302, "/next"), ok]);
    await send(head.hop, { ...POST, method: "HEAD", body: "" }, { timeoutMs: 1000, allowList: LIST });
    expect(head.seen[1]!.method).toBe("HEAD");
    const sized = scripted([redirect(303, "/next"), ok]);
    await send(sized.hop, { ...POST, headers: { ...POST.headers, "Content-Length": "2" } }, { timeoutMs: 1000, allowList: LIST });
    expect(sized.seen[1]!.headers).toEqual({ Authorization: "Bearer x" });
  });

  it("a redirect to another host drops the Authorization header; a 3xx without Location is the answer", async () => {
    const { hop, seen } = scripted([redirect(307, "https://b.example/x"), ok]);
    await send(hop, POST, { timeoutMs: 1000, allowList: LIST });
    expect(seen[1]!.headers.Authorization).toBeUndefined();
    const bare = scripted([() => ({ status: 302, headers: {}, body: "no location" })]);
    expect(await send(bare.hop, POST, { timeoutMs: 1000, allowList: LIST })).toMatchObject({ status: 302, body: "no location" });
  });

  it("stops after 10 requests", async () => {
    const { hop, seen } = scripted([redirect(302, "/loop")]);
    await expect(send(hop, POST, { timeoutMs: 1000, allowList: LIST })).rejects.toThrow("stopped after 10 redirects");
    expect(seen).toHaveLength(10);
  });

  it("every hop's target is checked before it is reached: a scheme other than http(s), a host the list refuses", async () => {
    for (const location of ["file:///etc/passwd", "ftp://a.example/x", "gopher://a.example/"]) {
      const { hop, seen } = scripted([redirect(302, location), ok]);
      await expect(send(hop, POST, { timeoutMs: 1000, allowList: LIST })).rejects.toThrow(/unsupported protocol scheme/);
      expect(seen).toHaveLength(1);
    }
    for (const location of ["http://169.254.169.254/latest", "http://10.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://localhost/"]) {
      const { hop, seen } = scripted([redirect(307, location), ok]);
      await expect(send(hop, POST, { timeoutMs: 1000, allowList: LIST })).rejects.toThrow(/is blocked$/);
      expect(seen).toHaveLength(1);
    }
  });

  it("a chain of allowed redirects still has every later hop checked: the third target, inside the network, is never reached", async () => {
    for (const location of ["http://169.254.169.254/latest/meta-data", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::1]/", "http://2130706433/"]) {
      const { hop, seen } = scripted([redirect(302, "https://b.example/one"), redirect(307, "https://c.example/two"), redirect(302, location), ok]);
      await expect(send(hop, POST, { timeoutMs: 1000, allowList: LIST })).rejects.toThrow(/is blocked$/);
      expect(seen.map((r) => r.url)).toEqual([POST.url, "https://b.example/one", "https://c.example/two"]);
    }
  });

  it("a hop that checks addresses itself is not judged by the host's form; its refusal and other failures come back as OutboundError", async () => {
    const checking: Hop = Object.assign(async () => ok(), { checksAddresses: true });
    expect((await send(checking, { ...POST, url: "http://intranet-ci/hook" }, { timeoutMs: 1000, allowList: LIST })).status).toBe(200);
    const refusing: Hop = async () => {
      throw new OutboundError("deliver to x is blocked");
    };
    await expect(send(refusing, POST, { timeoutMs: 1000, allowList: LIST })).rejects.toThrow("deliver to x is blocked");
    const failing: Hop = async () => {
      throw new Error("connect ECONNREFUSED");
    };
    const err = await send(failing, POST, { timeoutMs: 1000, allowList: LIST }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundError);
    expect((err as Error).message).toBe("POST https://a.example/hook: connect ECONNREFUSED");
  });

  it("the whole exchange has one deadline, named as Go names it", async () => {
    const slow: Hop = (_req, opts) =>
      new Promise((_resolve, reject) => opts.signal.addEventListener("abort", () => reject(new Error("aborted"))));
    await expect(send(slow, POST, { timeoutMs: 50, allowList: LIST })).rejects.toThrow("POST https://a.example/hook: context deadline exceeded (Client.Timeout exceeded while awaiting headers)");
  });
});

describe("nodeHop", () => {
  let server: Server;
  let port = 0;
  const got: { method: string; body: string; headers: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        got.push({ method: req.method ?? "", body: Buffer.concat(parts).toString(), headers: req.headers });
        if (req.url === "/trickle") {
          // Four chunks apart in time, so the reader sees them one by one.
          let n = 0;
          const next = () => {
            if (n++ === 4) return res.end();
            res.write("y".repeat(4096));
            setTimeout(next, 5);
          };
          next();
        } else if (req.url === "/endless") {
          // an answer without end: a reader that reads it all never finishes
          res.writeHead(200);
          const pump = () => {
            while (res.write("z".repeat(16384))) {
              if (res.destroyed) return;
            }
            if (!res.destroyed) res.once("drain", pump);
          };
          res.on("close", () => res.removeAllListeners("drain"));
          pump();
        } else if (req.url === "/stall") {
          // headers and a first chunk, then nothing
          res.writeHead(201, { "X-Seen": "yes" });
          res.write("partial");
        } else if (req.url === "/moved") {
          res.writeHead(302, { Location: "/small" });
          res.end("moved");
        } else if (req.url === "/big") {
          res.writeHead(200, { "Set-Cookie": ["a=1", "b=2"] });
          for (let i = 0; i < 40; i++) res.write("x".repeat(4096));
          res.end();
        } else res.end("small");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());
  const opts = (allowList: string[], maxBody = MAX_RESPONSE_BODY) => ({ signal: AbortSignal.timeout(5000), allowList, maxBody });

  it("sends the body with its length (none for GET and HEAD) and keeps the first maxBody bytes of the answer", async () => {
    const res = await nodeHop({ method: "POST", url: `http://127.0.0.1:${port}/big`, headers: {}, body: "ünï" }, opts(["loopback"], 1000));
    expect(res.body).toBe("x".repeat(1000));
    expect(res.headers["set-cookie"]).toBe("a=1, b=2");
    expect(got.at(-1)).toMatchObject({ method: "POST", body: "ünï", headers: { "content-length": String(Buffer.byteLength("ünï")) } });
    for (const method of ["GET", "HEAD"]) {
      await nodeHop({ method, url: `http://127.0.0.1:${port}/small`, headers: {}, body: "ignored" }, opts(["loopback"]));
      expect(got.at(-1)).toMatchObject({ method, body: "" });
      expect(got.at(-1)!.headers["content-length"]).toBeUndefined();
    }
  });

  it("a name is resolved and the addresses it resolves to are checked when connecting", async () => {
    // `localhost` resolves to a loopback address: allowed under `loopback`, refused under `external`.
    expect((await nodeHop({ method: "GET", url: `http://localhost:${port}/small`, headers: {}, body: "" }, opts(["loopback"]))).body).toBe("small");
    const before = got.length;
    await expect(nodeHop({ method: "GET", url: `http://localhost:${port}/small`, headers: {}, body: "" }, opts(["external"]))).rejects.toThrow(
      `webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deliver to localhost is blocked`,
    );
    // A host-name entry admits the name whatever it resolves to (Gitea's MatchHostOrIP).
    expect((await nodeHop({ method: "GET", url: `http://localhost:${port}/small`, headers: {}, body: "" }, opts(["localhost"]))).body).toBe("small");
    expect(got.length).toBe(before + 1);
    await expect(nodeHop({ method: "GET", url: `http://[::ffff:127.0.0.1]:${port}/small`, headers: {}, body: "" }, opts(["external"]))).rejects.toThrow(/is blocked$/);
    await expect(nodeHop({ method: "GET", url: "http://does-not-exist.invalid/", headers: {}, body: "" }, opts(["*"]))).rejects.toThrow(/ENOTFOUND|EAI_AGAIN/);
  });

  it("stops reading an answer once it holds maxBody bytes (an endless one is not read to the timeout); a body that stalls after its headers keeps the status and headers, as Go's client does", async () => {
    for (const hop of [nodeHop, fetchHop]) {
      const started = Date.now();
      const endless = await hop({ method: "GET", url: `http://127.0.0.1:${port}/endless`, headers: {}, body: "" }, opts(["loopback"], 1000));
      expect([endless.status, endless.body]).toEqual([200, "z".repeat(1000)]);
      expect(Date.now() - started).toBeLessThan(2000);
      const stalled = await hop({ method: "GET", url: `http://127.0.0.1:${port}/stall`, headers: {}, body: "" }, { signal: AbortSignal.timeout(300), allowList: ["loopback"], maxBody: 1000 });
      expect(stalled).toMatchObject({ status: 201, headers: { "x-seen": "yes" }, body: "read body: context deadline exceeded (Client.Timeout or context cancellation while reading body)" });
    }
  });

  it("keeps the first maxBody bytes of an answer that arrives in several chunks", async () => {
    const res = await nodeHop({ method: "GET", url: `http://127.0.0.1:${port}/trickle`, headers: {}, body: "" }, opts(["loopback"], 6000));
    expect(res.body).toBe("y".repeat(6000));
  });

  it("an https URL is spoken with TLS (a plain HTTP server there fails it)", async () => {
    await expect(nodeHop({ method: "GET", url: `https://127.0.0.1:${port}/small`, headers: {}, body: "" }, opts(["loopback"]))).rejects.toThrow();
  });

  it("fetchHop (the Worker's hop): the body only where a method has one, redirects answered not followed, headers in lower case, the answer capped", async () => {
    const post = await fetchHop({ method: "POST", url: `http://127.0.0.1:${port}/small`, headers: { "X-Gitea-Event": "push" }, body: "ünï" }, opts(["loopback"]));
    expect(post).toMatchObject({ status: 200, body: "small" });
    expect(got.at(-1)).toMatchObject({ method: "POST", body: "ünï", headers: { "x-gitea-event": "push" } });
    for (const method of ["GET", "HEAD"]) {
      await fetchHop({ method, url: `http://127.0.0.1:${port}/small`, headers: {}, body: "ignored" }, opts(["loopback"]));
      expect(got.at(-1)).toMatchObject({ method, body: "" });
    }
    const moved = await fetchHop({ method: "GET", url: `http://127.0.0.1:${port}/moved`, headers: {}, body: "" }, opts(["loopback"]));
    expect(moved).toMatchObject({ status: 302, headers: { location: "/small" }, body: "moved" });
    const big = await fetchHop({ method: "GET", url: `http://127.0.0.1:${port}/big`, headers: {}, body: "" }, opts(["loopback"], 1000));
    expect(big.body).toBe("x".repeat(1000));
    expect(big.headers["set-cookie"]).toBe("a=1, b=2");
    const trickle = await fetchHop({ method: "GET", url: `http://127.0.0.1:${port}/trickle`, headers: {}, body: "" }, opts(["loopback"], 6000));
    expect(trickle.body).toBe("y".repeat(6000));
  });
});
