/** Start-up and the admin CLI as an operator uses them: fresh databases, bad settings, no implicit accounts. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT_DIR, runScript, startNodeServer } from "../../scripts/lib/processes.ts";
import { expectRefusal } from "../fixtures/app.ts";

const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), "gitea-startup-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("start-up", () => {
  it("an invalid setting stops start-up with a message naming the key", async () => {
    const r = await runScript("functions/node.ts", [], { DATA_DIR: freshDir(), PORT: "0", GITEA__api__MAX_RESPONSE_ITEMS: "lots" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("GITEA__api__MAX_RESPONSE_ITEMS");
  });

  it("a bad PORT, an address it cannot listen on or a database it cannot reach stops start-up with a message saying which, not a stack trace", async () => {
    const port = await runScript("functions/node.ts", [], { DATA_DIR: freshDir(), PORT: "abc" });
    expect([port.code, port.stderr.trim()]).toEqual([1, 'invalid setting PORT: expected a TCP port (0–65535), got "abc"']);
    const host = await runScript("functions/node.ts", [], { DATA_DIR: freshDir(), PORT: "0", HOST: "203.0.113.1" });
    expect([host.code, host.stderr.trim()]).toEqual([1, "cannot start: cannot listen on 203.0.113.1:0: EADDRNOTAVAIL"]);
    const db = await runScript("functions/node.ts", [], { DATA_DIR: freshDir(), PORT: "0", DATABASE_URL: "http://127.0.0.1:49/?authToken=secret-token" });
    expect(db.code).toBe(1);
    expect(db.stderr.trim()).toMatch(/^cannot start: the database http:\/\/127\.0\.0\.1:49\/ could not be migrated: .*ECONNREFUSED/);
    expect(db.stderr).not.toContain("secret-token");
    // a URL with credentials in it never reaches the log with them
    const withPassword = await runScript("functions/node.ts", [], { DATA_DIR: freshDir(), PORT: "0", DATABASE_URL: "http://user:hunter2@127.0.0.1:49/" });
    expect(withPassword.code).toBe(1);
    expect(withPassword.stderr).not.toContain("hunter2");
  });

  it("npm start serves the built bundle: migrated database, API documents, Swagger UI and its assets", async () => {
    const compileCache = freshDir();
    const server = await startNodeServer({ DATA_DIR: freshDir(), NODE_COMPILE_CACHE: compileCache }, { npmStart: true });
    try {
      // The bundle is pure ASCII (V8 holds it as a one-byte string) and its compiled code is cached
      // for the next start once the server listens (scripts/build.ts).
      expect(readFileSync(join(ROOT_DIR, "dist", "node", "server.js"), "latin1")).not.toMatch(/[^\0-\x7f]/);
      const cached = readdirSync(compileCache, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
      expect(cached.reduce((n, f) => n + statSync(join(f.parentPath, f.name)).size, 0)).toBeGreaterThan(500_000);
      expect((await (await fetch(`${server.url}/api/v1/users/search`)).json()).data).toEqual([]);
      const doc = await (await fetch(`${server.url}/swagger.v1.json`)).json();
      expect(doc.swagger).toBe("2.0");
      expect(Object.keys(doc.paths)).toContain("/repos/{owner}/{repo}");
      expect(await (await fetch(`${server.url}/api/swagger`)).text()).toContain("swagger-ui-bundle.js");
      const css = await fetch(`${server.url}/assets/swagger-ui/swagger-ui.css`);
      expect(css.status).toBe(200);
      expect((await css.text()).length).toBeGreaterThan(10_000);
    } finally {
      await server.stop();
    }
  });

  it("a fresh data directory is migrated on start and has no accounts", async () => {
    const dir = freshDir();
    const server = await startNodeServer({ DATA_DIR: dir });
    try {
      const res = await fetch(`${server.url}/api/v1/users/search`);
      expect(res.status).toBe(200);
      expect((await res.json()).data).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

describe("admin CLI", () => {
  it("creates the first user (no forced password change) on a database that does not exist yet, then later users must change it", async () => {
    const env = { DATA_DIR: freshDir() };
    const first = await runScript("functions/cli.ts", ["user", "create", "--username", "root", "--password", "root-password", "--email", "root@example.com", "--admin"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("New user 'root' has been successfully created!");
    const second = await runScript("functions/cli.ts", ["user", "create", "--username", "second", "--password", "second-password", "--email", "second@example.com"], env);
    expect(second.code).toBe(0);
    const third = await runScript("functions/cli.ts", ["user", "create", "--username", "third", "--password", "third-password", "--email", "third@example.com", "--must-change-password=false"], env);
    expect(third.code).toBe(0);
    const server = await startNodeServer(env);
    try {
      const auth = (u: string, p: string) => ({ Authorization: `Basic ${Buffer.from(`${u}:${p}`).toString("base64")}` });
      expect((await fetch(`${server.url}/api/v1/user`, { headers: auth("root", "root-password") })).status).toBe(200);
      const must = await fetch(`${server.url}/api/v1/user`, { headers: auth("second", "second-password") });
      expect(must.status).toBe(403);
      expect((await must.json()).message).toMatch(/You must change your password/);
      expect((await fetch(`${server.url}/api/v1/user`, { headers: auth("third", "third-password") })).status).toBe(200);
      const tok = await runScript("functions/cli.ts", ["user", "generate-access-token", "--username", "root", "--scopes", "read:user", "--raw"], env);
      expect(tok.code).toBe(0);
      const me = await fetch(`${server.url}/api/v1/user`, { headers: { Authorization: `token ${tok.stdout.trim()}` } });
      expect((await me.json()).login).toBe("root");
      const scoped = await fetch(`${server.url}/api/v1/orgs`, { method: "POST", headers: { Authorization: `token ${tok.stdout.trim()}`, "Content-Type": "application/json" }, body: '{"username":"x-org"}' });
      await expectRefusal(scoped, 403, "token does not have at least one of required scope(s), required=[write:organization], token scope=read:user");
    } finally {
      await server.stop();
    }
  });

  it("refuses duplicates, bad scopes and missing arguments with a message and exit code 1", async () => {
    const env = { DATA_DIR: freshDir() };
    await runScript("functions/cli.ts", ["user", "create", "--username", "dup", "--password", "dup-password", "--email", "dup@example.com"], env);
    const again = await runScript("functions/cli.ts", ["user", "create", "--username", "DUP", "--password", "dup-password", "--email", "other@example.com"], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("user already exists");
    const scope = await runScript("functions/cli.ts", ["user", "generate-access-token", "--username", "dup", "--scopes", "read:nothing"], env);
    expect(scope.code).toBe(1);
    expect(scope.stderr).toContain("invalid access token scope");
    const usage = await runScript("functions/cli.ts", ["user", "create"], env);
    expect(usage.code).toBe(1);
  });
});
