/**
 * Starts both targets once for the e2e project and stops them afterwards:
 * - node: the Node server (`functions/node.ts`) on an embedded libSQL file;
 * - workerd: the Worker under workerd (its `wrangler deploy` bundle under Miniflare) against a real sqld process.
 * Each database gets its site admin from the admin CLI, exactly as an operator would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { freePort, runScript, startNodeServer, startSqld, startWorker, type Running } from "../../scripts/lib/processes.ts";
import type { Target } from "../fixtures/targets.ts";

export default async function setup(project: TestProject) {
  const started: (Running | { stop: () => Promise<void> })[] = [];
  const tmp = mkdtempSync(join(tmpdir(), "gitea-e2e-"));
  const admin = { name: "siteadmin", password: "admin-password-1" };

  async function bootstrap(env: Record<string, string>) {
    const create = await runScript("functions/cli.ts", ["user", "create", "--username", admin.name, "--password", admin.password, "--email", "admin@example.com", "--admin"], env);
    if (create.code !== 0) throw new Error(`admin CLI failed: ${create.stderr}`);
    const tok = await runScript("functions/cli.ts", ["user", "generate-access-token", "--username", admin.name, "--scopes", "all", "--raw"], env);
    if (tok.code !== 0) throw new Error(`admin CLI failed: ${tok.stderr}`);
    return tok.stdout.trim();
  }

  try {
    const targets: Target[] = [];

    const nodePort = await freePort();
    // Webhooks may reach this machine: the delivery tests run their receiver on loopback.
    const hooks = { GITEA__webhook__ALLOWED_HOST_LIST: "external,loopback" };
    const nodeEnv = { DATA_DIR: join(tmp, "node"), GITEA__server__ROOT_URL: `http://127.0.0.1:${nodePort}/`, ...hooks };
    const nodeToken = await bootstrap(nodeEnv);
    const node = await startNodeServer(nodeEnv, { port: nodePort });
    started.push(node);
    targets.push({ name: "node", url: node.url, admin: { ...admin, token: nodeToken }, databaseUrl: `file:${join(tmp, "node", "gitea.db")}` });

    const sqld = await startSqld();
    started.push(sqld);
    const workerToken = await bootstrap({ DATABASE_URL: sqld.url });
    const workerPort = await freePort();
    const worker = await startWorker(
      { DATABASE_URL: sqld.url, GITEA__server__ROOT_URL: `http://127.0.0.1:${workerPort}/`, GITEA__security__SECRET_KEY: "e2e-worker-secret-key-0123", ...hooks },
      // miniflare's local R2 (GIT_OBJECTS) persisted in this run's temporary directory
      { port: workerPort, persistTo: join(tmp, "workerd-state") },
    );
    started.push(worker);
    targets.push({ name: "workerd", url: worker.url, admin: { ...admin, token: workerToken }, sqldUrl: sqld.url, databaseUrl: sqld.url });

    project.provide("targets", targets);
  } catch (e) {
    for (const s of started.reverse()) await s.stop();
    throw e;
  }

  return async () => {
    for (const s of started.reverse()) await s.stop();
    rmSync(tmp, { recursive: true, force: true });
  };
}
