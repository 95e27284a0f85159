/**
 * Issue 9 B.7: read replicas. Its own topology, started and stopped here: a sqld primary, a proxy
 * in front of it that counts, holds or cuts what reaches the primary, and two Node servers on
 * embedded replicas of it — `a` with its periodic sync off (it syncs only after its own writes),
 * `b` syncing every 200 ms — sharing one DATA_DIR (git objects, the secret key) as docs/deploy.md
 * says, each with its own replica file.
 */
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript, startNodeServer, startSqld, type Running } from "../../scripts/lib/processes.ts";
import { roundTrips } from "../fixtures/app.ts";
import { startPrimaryProxy, type PrimaryProxy } from "../fixtures/primary-proxy.ts";
import { tokenAuth, uniqName } from "../fixtures/targets.ts";

const tmp = mkdtempSync(join(tmpdir(), "gitea-replica-"));
let sqld: Running & { dbPath: string };
let proxy: PrimaryProxy;
let a: Running;
let b: Running;
let h: Record<string, string>;
const admin = "replicaadmin";

beforeAll(async () => {
  sqld = await startSqld();
  proxy = await startPrimaryProxy(sqld.url);
  const cli = (args: string[]) => runScript("functions/cli.ts", ["user", ...args], { DATABASE_URL: sqld.url });
  const created = await cli(["create", "--username", admin, "--password", "replica-password-1", "--email", "replica@example.com", "--admin"]);
  if (created.code !== 0) throw new Error(created.stderr);
  const token = await cli(["generate-access-token", "--username", admin, "--scopes", "all", "--raw"]);
  h = tokenAuth(token.stdout.trim());
  const replica = (name: string, primary: string, interval: string) => ({
    DATA_DIR: join(tmp, "shared"),
    DATABASE_URL: primary,
    DATABASE_REPLICA_PATH: join(tmp, name, "replica.db"),
    DATABASE_REPLICA_SYNC_INTERVAL: interval,
    GITEA__database__QUERY_TIMEOUT: "2s",
    GITEA__webhook__ALLOWED_HOST_LIST: "loopback",
  });
  a = await startNodeServer(replica("a", proxy.url, "0"));
  b = await startNodeServer(replica("b", sqld.url, "200ms"));
}, 120_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await proxy?.close();
  await sqld?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** The round trips to the primary a replica server reports in `Server-Timing: primary;desc="K"`. */
function primaryTrips(res: Response): number {
  const m = /primary;(?:dur=[\d.]+;)?desc="(\d+)"/.exec(res.headers.get("Server-Timing") ?? "");
  if (!m) throw new Error(`no Server-Timing primary entry on ${res.status} response`);
  return Number(m[1]);
}

const call = (server: Running, method: string, path: string, json?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { ...h, ...(json === undefined ? {} : { "Content-Type": "application/json" }) }, body: json === undefined ? undefined : JSON.stringify(json) });

/** Polls `probe` until it holds (bounded), for what happens in the background (syncs). */
async function eventually(what: string, probe: () => Promise<boolean>, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

/** Waits until `a` serves reads from its local copy again (its catch-up sync after a write has completed). */
const caughtUp = () => eventually("reads from the local copy", async () => primaryTrips(await call(a, "GET", "/api/v1/user")) === 0);

describe("Node on an embedded replica of a sqld primary", () => {
  it("B.7 a read is served by the local replica: nothing reaches the primary (Server-Timing db 1, primary 0)", async () => {
    await caughtUp();
    proxy.reset();
    for (const path of ["/api/v1/user", `/api/v1/users/${admin}`, "/api/v1/repos/search?q=x", `/api/v1/users/${admin}/repos`]) {
      const res = await call(a, "GET", path);
      expect(res.status, path).toBe(200);
      expect(roundTrips(res), path).toBe(1);
      expect(primaryTrips(res), path).toBe(0);
    }
    expect(proxy.counts.pipeline).toBe(0);
  });

  it("B.7 read-your-writes on a replica whose sync is held (periodic sync off): the write reads and writes on the primary (db 2, primary 2), the next read sees it at once (from the primary), and reads are local again once the replica has pulled it", async () => {
    await caughtUp();
    proxy.reset();
    proxy.holdReplication();
    try {
      const name = uniqName("ryw");
      const created = await call(a, "POST", "/api/v1/user/repos", { name, description: "read your writes" });
      expect(created.status).toBe(201);
      expect(roundTrips(created)).toBe(2);
      expect(primaryTrips(created)).toBe(2);

      const read = await call(a, "GET", `/api/v1/repos/${admin}/${name}`);
      expect(read.status).toBe(200);
      expect((await read.json()).description).toBe("read your writes");
      expect(roundTrips(read)).toBe(1);
      expect(primaryTrips(read)).toBe(1);
      const list = await call(a, "GET", `/api/v1/users/${admin}/repos?limit=50`);
      expect((await list.json()).map((r: { name: string }) => r.name)).toContain(name);
      // The replica's pull of the write is still held: the local copy does not have it yet.
      expect(proxy.counts.replication).toBeGreaterThan(0);

      proxy.releaseReplication();
      await caughtUp();
      const local = await call(a, "GET", `/api/v1/repos/${admin}/${name}`);
      expect(local.status).toBe(200);
      expect(primaryTrips(local)).toBe(0);
    } finally {
      proxy.releaseReplication();
    }
  });

  it("B.7 reads are local: with the periodic sync off, a write made through another server reaches this replica only with its next sync (after its own next write)", async () => {
    await caughtUp();
    const name = uniqName("elsewhere");
    expect((await call(b, "POST", "/api/v1/user/repos", { name })).status).toBe(201);
    const before = await call(a, "GET", `/api/v1/repos/${admin}/${name}`);
    expect(before.status).toBe(404);
    expect(primaryTrips(before)).toBe(0);
    // a's own write is followed by a sync, which brings b's write along.
    expect((await call(a, "POST", "/api/v1/user/repos", { name: uniqName("own") })).status).toBe(201);
    await caughtUp();
    const after = await call(a, "GET", `/api/v1/repos/${admin}/${name}`);
    expect(after.status).toBe(200);
    expect(primaryTrips(after)).toBe(0);
  });

  it("B.7 access revoked through another server binds writes at once on a replica that has not synced (a write's reads come from the primary); its reads follow with the next sync", async () => {
    await caughtUp();
    const user = uniqName("revoked");
    const cli = (args: string[]) => runScript("functions/cli.ts", ["user", ...args], { DATABASE_URL: sqld.url });
    expect((await cli(["create", "--username", user, "--password", "revoked-password-1", "--email", `${user}@example.com`, "--must-change-password=false"])).code).toBe(0);
    const uh = tokenAuth((await cli(["generate-access-token", "--username", user, "--scopes", "all", "--raw"])).stdout.trim());
    const repo = uniqName("shared");
    expect((await call(b, "POST", "/api/v1/user/repos", { name: repo, private: true })).status).toBe(201);
    expect((await call(b, "PUT", `/api/v1/repos/${admin}/${repo}/collaborators/${user}`, { permission: "write" })).status).toBe(204);
    // a learns of the collaboration with its next sync (after a write of its own)
    expect((await call(a, "POST", "/api/v1/user/repos", { name: uniqName("own") })).status).toBe(201);
    await caughtUp();
    const label = (server: Running, name: string) =>
      fetch(`${server.url}/api/v1/repos/${admin}/${repo}/labels`, { method: "POST", headers: { ...uh, "Content-Type": "application/json" }, body: JSON.stringify({ name, color: "#00ff00" }) });
    const before = await label(a, "before");
    expect(before.status, await before.clone().text()).toBe(201);
    await caughtUp();
    // revoked through b; a's copy still holds the collaboration (its periodic sync is off)
    expect((await call(b, "DELETE", `/api/v1/repos/${admin}/${repo}/collaborators/${user}`)).status).toBe(204);
    const stale = await fetch(`${a.url}/api/v1/repos/${admin}/${repo}`, { headers: uh });
    expect([stale.status, primaryTrips(stale)]).toEqual([200, 0]); // reads: eventually consistent, as documented
    const refused = await label(a, "after");
    expect(refused.status).toBe(404);
    expect(primaryTrips(refused)).toBe(1); // its reads, from the primary; nothing written
  });

  it("B.7 a replica with a periodic sync shows writes made through another server without writing itself", async () => {
    const name = uniqName("periodic");
    expect((await call(a, "POST", "/api/v1/user/repos", { name })).status).toBe(201);
    await eventually("b shows a's write", async () => (await call(b, "GET", `/api/v1/repos/${admin}/${name}`)).status === 200);
    const res = await call(b, "GET", `/api/v1/repos/${admin}/${name}`);
    expect(primaryTrips(res)).toBe(0);
  });

  it("B.7 a primary that refuses connections: reads keep coming from the local copy, writes answer 503 in Gitea's shape; once it is back, writes work and are read back", async () => {
    const name = uniqName("before");
    expect((await call(a, "POST", "/api/v1/user/repos", { name })).status).toBe(201);
    await caughtUp();
    await proxy.down();
    try {
      const read = await call(a, "GET", `/api/v1/repos/${admin}/${name}`);
      expect(read.status).toBe(200);
      const write = await call(a, "POST", "/api/v1/user/repos", { name: uniqName("down") });
      expect(write.status).toBe(503);
      expect(await write.json()).toEqual({ message: "the database is unavailable, try again later", url: expect.stringMatching(/\/api\/swagger$/) });
      expect(write.headers.get("Retry-After")).toBe("5");
      // After the failed write, reads still answer from the local copy.
      for (const path of [`/api/v1/repos/${admin}/${name}`, "/api/v1/user", "/api/v1/repos/search?q=before"]) {
        const res = await call(a, "GET", path);
        expect(res.status, path).toBe(200);
      }
    } finally {
      await proxy.up();
    }
    let back = "";
    await eventually("a write succeeds once the primary is back", async () => {
      back = uniqName("back");
      return (await call(a, "POST", "/api/v1/user/repos", { name: back })).status === 201;
    });
    expect((await call(a, "GET", `/api/v1/repos/${admin}/${back}`)).status).toBe(200);
  });

  it("B.7 reads pinned to the primary after a write fall back to the local copy when the primary goes away (availability over read-your-writes)", async () => {
    await caughtUp();
    proxy.holdReplication();
    try {
      expect((await call(a, "POST", "/api/v1/user/repos", { name: uniqName("pinned") })).status).toBe(201);
      await proxy.down();
      const read = await call(a, "GET", "/api/v1/user");
      expect(read.status).toBe(200);
      expect((await read.json()).login).toBe(admin);
    } finally {
      proxy.releaseReplication();
      await proxy.up();
    }
    await caughtUp();
  });

  it("B.7 a primary that stalls: writes answer 503 within QUERY_TIMEOUT, reads keep answering from the local copy", async () => {
    await caughtUp();
    proxy.stall();
    try {
      const write = await call(a, "POST", "/api/v1/user/repos", { name: uniqName("stalled") });
      expect(write.status).toBe(503);
      expect((await write.json()).message).toBe("the database is unavailable, try again later");
      const read = await call(a, "GET", "/api/v1/user");
      expect(read.status).toBe(200);
      expect((await read.json()).login).toBe(admin);
    } finally {
      proxy.resume();
    }
    expect((await call(a, "POST", "/api/v1/user/repos", { name: uniqName("resumed") })).status).toBe(201);
  });

  it("B.7 servers sharing DATA_DIR serve each other's git objects and sign with each other's webhook secrets", async () => {
    // What one server pushed (auto_init's first commit, stored under DATA_DIR/git) is read and
    // cloned through the other; before, each server had its own DATA_DIR and answered 500.
    const name = uniqName("shared");
    expect((await call(a, "POST", "/api/v1/user/repos", { name, auto_init: true, readme: "Default" })).status).toBe(201);
    await eventually("b sees the repository", async () => (await call(b, "GET", `/api/v1/repos/${admin}/${name}`)).status === 200);
    const readme = await call(b, "GET", `/api/v1/repos/${admin}/${name}/raw/README.md`);
    expect(readme.status).toBe(200);
    expect(await readme.text()).toContain(name);
    const dir = join(tmp, "clone");
    const url = new URL(`${b.url}/${admin}/${name}.git`);
    url.username = admin;
    url.password = h.Authorization!.replace(/^token /, ""); // !: tokenAuth sets it
    execFileSync("git", ["clone", "-q", url.href, dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
    expect(execFileSync("git", ["-C", dir, "log", "--format=%s"]).toString().trim()).toBe("Initial commit");

    // A hook secret stored (encrypted) through a signs a delivery b makes.
    const bodies: { body: string; signature: string | undefined }[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        bodies.push({ body, signature: req.headers["x-gitea-signature"] as string | undefined });
        res.end("ok");
      });
    });
    await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok));
    try {
      const org = uniqName("sharedorg");
      expect((await call(a, "POST", "/api/v1/orgs", { username: org })).status).toBe(201);
      const hook = { type: "gitea", active: true, events: ["repository"], config: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, content_type: "json", secret: "shared-secret" } };
      expect((await call(a, "POST", `/api/v1/orgs/${org}/hooks`, hook)).status).toBe(201);
      expect((await call(b, "POST", `/api/v1/orgs/${org}/repos`, { name: "hooked" })).status).toBe(201);
      await eventually("the delivery", async () => bodies.length > 0);
      const [got] = bodies;
      expect(got!.signature).toBe(createHmac("sha256", "shared-secret").update(got!.body).digest("hex")); // !: one arrived
      expect(JSON.parse(got!.body).repository.full_name).toBe(`${org}/hooked`);
    } finally {
      await new Promise((ok) => receiver.close(ok));
    }
  });

  it("B.7 DATABASE_REPLICA_PATH without a primary in DATABASE_URL, or a bad DATABASE_REPLICA_SYNC_INTERVAL, stops start-up with a message naming the variable", async () => {
    const dir = join(tmp, "bad");
    const noPrimary = await runScript("functions/node.ts", [], { DATA_DIR: dir, DATABASE_URL: `file:${join(dir, "x.db")}`, DATABASE_REPLICA_PATH: join(dir, "r.db"), PORT: "0" });
    expect(noPrimary.code).toBe(1);
    expect(noPrimary.stderr).toContain("DATABASE_REPLICA_PATH");
    const badInterval = await runScript("functions/node.ts", [], { DATA_DIR: dir, DATABASE_URL: sqld.url, DATABASE_REPLICA_PATH: join(dir, "r.db"), DATABASE_REPLICA_SYNC_INTERVAL: "often", PORT: "0" });
    expect(badInterval.code).toBe(1);
    expect(badInterval.stderr).toContain("DATABASE_REPLICA_SYNC_INTERVAL");
  });
});
