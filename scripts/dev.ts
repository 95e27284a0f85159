/**
 * `npm run dev`: the Worker under workerd (`wrangler dev`, local) on PORT (default 8787), against
 * DATABASE_URL when set, otherwise against a local sqld this script starts (data in
 * DATA_DIR/sqld, default ./data/sqld). Migrations are applied first. Ctrl-C stops everything.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
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
const vars = ["--var", `DATABASE_URL:${databaseUrl}`];
if (process.env.DATABASE_AUTH_TOKEN) vars.push("--var", `DATABASE_AUTH_TOKEN:${process.env.DATABASE_AUTH_TOKEN}`);
for (const [k, v] of Object.entries(process.env)) if (k.startsWith("GITEA__") && v !== undefined) vars.push("--var", `${k}:${v}`);
const wrangler = spawn(join(ROOT_DIR, "node_modules", ".bin", "wrangler"), ["dev", "--local", "--port", port, "--ip", host, ...vars], {
  env: { ...env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  stdio: "inherit",
  detached: true,
});
const shutdown = async () => {
  await stopGroup(wrangler);
  await sqld?.stop();
  process.exit(0);
};
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
wrangler.on("exit", async (c) => {
  await sqld?.stop();
  process.exit(c ?? 0);
});
