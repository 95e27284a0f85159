/**
 * A tiny Node bridge that runs git's own CGI, `git http-backend`, per request (the anchor of
 * `npm run bench:git`): `node bench/git-cgi.ts <projectRoot> [port]` serves
 * `http://127.0.0.1:<port>/<repo>.git/…` from bare repositories under `<projectRoot>`, bodies
 * streamed both ways. Prints its URL on stdout once listening.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const root = process.argv[2];
if (!root) throw new Error("usage: node bench/git-cgi.ts <projectRoot> [port]");

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: "1",
    GIT_CONFIG_NOSYSTEM: "1",
    HOME: root,
    REQUEST_METHOD: req.method,
    PATH_INFO: url.pathname,
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: req.headers["content-type"] ?? "",
    REMOTE_ADDR: "127.0.0.1",
    REMOTE_USER: "bench",
    GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
    HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
  };
  if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
  const cgi = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "inherit"] });
  req.pipe(cgi.stdin);
  cgi.stdin.on("error", () => {});
  let head = Buffer.alloc(0);
  let started = false;
  cgi.stdout.on("data", (d: Buffer) => {
    if (started) {
      res.write(d);
      return;
    }
    head = Buffer.concat([head, d]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    started = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
      const i = line.indexOf(":");
      const k = line.slice(0, i).trim();
      const v = line.slice(i + 1).trim();
      if (k.toLowerCase() === "status") status = Number.parseInt(v, 10);
      else res.setHeader(k, v);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  cgi.stdout.on("end", () => res.end());
});

server.listen(Number(process.argv[3] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
