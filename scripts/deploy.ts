/**
 * `npm run deploy`: migrates DATABASE_URL, stores DATABASE_URL and DATABASE_AUTH_TOKEN as Worker
 * secrets, then `wrangler deploy`. Needs a Cloudflare account (CLOUDFLARE_API_TOKEN); see docs/deploy.md.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT_DIR } from "./lib/processes.ts";

const url = process.env.DATABASE_URL;
if (!url || url.startsWith("file:")) {
  console.error("DATABASE_URL must point at sqld or Turso (libsql:// or https://) to deploy the Worker");
  process.exit(1);
}
const wrangler = join(ROOT_DIR, "node_modules", ".bin", "wrangler");
const run = (cmd: string, args: string[], input?: string) => {
  const r = spawnSync(cmd, args, { stdio: [input === undefined ? "inherit" : "pipe", "inherit", "inherit"], input, env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
run(process.execPath, [join(ROOT_DIR, "scripts", "migrate.ts")]);
run(wrangler, ["secret", "put", "DATABASE_URL"], url);
if (process.env.DATABASE_AUTH_TOKEN) run(wrangler, ["secret", "put", "DATABASE_AUTH_TOKEN"], process.env.DATABASE_AUTH_TOKEN);
run(wrangler, ["deploy", ...process.argv.slice(2)]);
