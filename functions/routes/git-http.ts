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
import { serveArchive } from "./archives.ts";

export const gitHttp = new Hono<AppEnv>();

const SERVICES = ["info/refs", "git-upload-pack", "git-receive-pack"] as const;

// Source archives at the web path Gitea's tags link to (`tarball_url`, `zipball_url`): signed in as
// git HTTP is, answered as the API's repoGetArchive
gitHttp.get("/:owner/:repo/archive/*", credentials(), async (c) => {
  c.set("routeAuth", { scopes: ["repository"] });
  const { owner, repo } = c.req.param();
  // the rest of the raw path, decoded whole: a tag's links escape the slashes of its name (`%2F`),
  // which Hono's path decoding (decodeURI) leaves escaped
  const rest = new URL(c.req.url).pathname.split("/").slice(4).join("/"); // "", owner, repo, "archive", …
  let archive: string;
  try {
    archive = decodeURIComponent(rest);
  } catch {
    archive = rest;
  }
  return serveArchive(c, owner, repo, archive);
});

for (const svc of SERVICES) {
  gitHttp.on(svc === "info/refs" ? ["GET", "HEAD"] : ["POST"], `/:owner/:repo/${svc}`, credentials(), async (c) => {
    const { owner, repo } = c.req.param();
    const name = repo.toLowerCase().endsWith(".git") ? repo.slice(0, -4) : repo;
    return serveRepoGit(ctxOf(c), objectsOf(c), owner, name, c.req.raw, `/${svc}`);
  });
}
