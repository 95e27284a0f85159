/**
 * `npm run dev`: the Worker under workerd (`wrangler dev`, local) on PORT (default 8787), against
 * DATABASE_URL when set, otherwise against a local sqld this script starts (data in
 * DATA_DIR/sqld, default ./data/sqld). Migrations are applied first. Ctrl-C stops everything.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { secretKeyFile } from "../functions/node.ts";
import { ROOT_DIR, startSqld, stopGroup, type Running } from "./lib/processes.ts";

const port = process.env.PORT ?? "8787";
const host = process.env.HOST ?? "127.0.0.1";
let sqld: Running | null = null;
let databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  const dataDir = resolve(process.env.DATA_DIR ?? "./data");
  mkdirSync(dataDir, { recursive: true });
  sqld = await startSqld({ dbPath: join(dataDir, "sqld") });
  databaseUrl = sqld.url;
  console.log(`sqld listening on ${sqld.url} (data in ${join(dataDir, "sqld")})`);
}
const env = { ...process.env, DATABASE_URL: databaseUrl };
const migrate = spawn(process.execPath, [join(ROOT_DIR, "scripts", "migrate.ts")], { env, stdio: "inherit" });
const code = await new Promise<number | null>((ok) => migrate.on("exit", ok));
if (code !== 0) {
  await sqld?.stop();
  process.exit(code ?? 1);
}
// Bindings go through a private env file, so the database token never shows up in a process list.
const envDir = mkdtempSync(join(tmpdir(), "gitea-dev-"));
const envFile = join(envDir, "dev.env");
const bindings: Record<string, string> = { DATABASE_URL: databaseUrl, GITEA__security__SECRET_KEY: secretKeyFile(resolve(process.env.DATA_DIR ?? "./data")) };
if (process.env.DATABASE_AUTH_TOKEN) bindings.DATABASE_AUTH_TOKEN = process.env.DATABASE_AUTH_TOKEN;
for (const [k, v] of Object.entries(process.env)) if (k.startsWith("GITEA__") && v !== undefined) bindings[k] = v;
writeFileSync(envFile, Object.entries(bindings).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join("\n"), { mode: 0o600 });
const vars = ["--env-file", envFile];
const wrangler = spawn(join(ROOT_DIR, "node_modules", ".bin", "wrangler"), ["dev", "--local", "--port", port, "--ip", host, ...vars], {
  env: { ...env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  stdio: "inherit",
  detached: true,
});
const cleanup = () => rmSync(envDir, { recursive: true, force: true });
const shutdown = async () => {
  await stopGroup(wrangler);
  cleanup();
  await sqld?.stop();
  process.exit(0);
};
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
wrangler.on("exit", async (c) => {
  cleanup();
  await sqld?.stop();
  process.exit(c ?? 0);
});
