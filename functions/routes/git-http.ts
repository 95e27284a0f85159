/**
 * Smart HTTP (git clone/fetch/push) at `/{owner}/{repo}.git/…` and `/{owner}/{repo}/…`, outside
 * /api/v1 and the OpenAPI document, as Gitea serves them: `GET info/refs?service=…`,
 * `POST git-upload-pack`, `POST git-receive-pack`.
 */
import { Hono } from "hono";
import { credentials } from "../lib/auth.ts";
import { ctxOf, type AppEnv } from "../lib/context.ts";
import { objectsOf } from "../lib/git-storage.ts";
import { serveRepoGit } from "../services/git-http.ts";

export const gitHttp = new Hono<AppEnv>();

const SERVICES = ["info/refs", "git-upload-pack", "git-receive-pack"] as const;

for (const svc of SERVICES) {
  gitHttp.on(svc === "info/refs" ? ["GET", "HEAD"] : ["POST"], `/:owner/:repo/${svc}`, credentials(), async (c) => {
    const { owner, repo } = c.req.param();
    const name = repo.toLowerCase().endsWith(".git") ? repo.slice(0, -4) : repo;
    return serveRepoGit(ctxOf(c), objectsOf(c), owner, name, c.req.raw, `/${svc}`);
  });
}
