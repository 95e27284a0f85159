/**
 * Smart HTTP (git clone/fetch/push) at `/{owner}/{repo}.git/…` and `/{owner}/{repo}/…`, outside
 * /api/v1 and the OpenAPI document, as Gitea serves them: `GET info/refs?service=…`,
 * `POST git-upload-pack`, `POST git-receive-pack`; beside them the web paths of archives and raw
 * files that API answers link to.
 */
import { Hono } from "hono";
import { credentials } from "../lib/auth.ts";
import { ctxOf, type AppEnv } from "../lib/context.ts";
import { withoutQueryCredentials } from "../lib/request.ts";
import { objectsOf } from "../lib/git-storage.ts";
import { serveRepoGit } from "../services/git-http.ts";
import { legacyRawLocation, type RawRefType } from "../services/contents.ts";
import { serveArchive } from "./archives.ts";
import { serveRaw } from "./contents.ts";

export const gitHttp = new Hono<AppEnv>();

const SERVICES = ["info/refs", "git-upload-pack", "git-receive-pack"] as const;

// Source archives at the web path Gitea's tags link to (`tarball_url`, `zipball_url`): signed in as
// git HTTP is, answered as the API's repoGetArchive
gitHttp.get("/:owner/:repo/archive/*", credentials(), async (c) => {
  c.set("routeAuth", { scopes: ["repository"] });
  const { owner, repo } = c.req.param();
  return serveArchive(c, owner, repo, restOfPath(c.req.url));
});

/**
 * The path after `/{owner}/{repo}/{kind}/`, decoded whole: links escape the slashes of a ref's name
 * (`%2F`), which Hono's path decoding (decodeURI) leaves escaped.
 */
function restOfPath(url: string): string {
  const rest = new URL(url).pathname.split("/").slice(4).join("/"); // "", owner, repo, kind, …
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

const RAW_REF_TYPES: readonly string[] = ["branch", "tag", "commit"] satisfies RawRefType[];

// Raw files at the web paths `download_url` names (Gitea's web router: `/raw/branch/*`, `/raw/tag/*`,
// `/raw/commit/*`, `/raw/blob/{sha}`, and the deprecated `/raw/*`, which redirects to the typed path;
// `/media/…` the same, LFS not being served), signed in as git HTTP is, answered as the API's raw route
for (const kind of ["raw", "media"] as const) {
  gitHttp.get(`/:owner/:repo/${kind}/*`, credentials(), async (c) => {
    c.set("routeAuth", { scopes: ["repository"] });
    const { owner, repo } = c.req.param();
    const rest = restOfPath(c.req.url);
    const slash = rest.indexOf("/");
    const [head, tail] = slash < 0 ? [rest, null] : [rest.slice(0, slash), rest.slice(slash + 1)];
    if (tail !== null && RAW_REF_TYPES.includes(head)) return serveRaw(c, owner, repo, { type: head as RawRefType, path: tail });
    if (head === "blob" && tail !== null && !tail.includes("/")) return serveRaw(c, owner, repo, { type: "blob", sha: tail });
    const location = await legacyRawLocation(ctxOf(c), objectsOf(c), owner, repo, rest, kind);
    // the query goes along, without credentials given in it
    return c.redirect(`${location}${withoutQueryCredentials(new URL(c.req.url)).search}`, 303);
  });
}

for (const svc of SERVICES) {
  gitHttp.on(svc === "info/refs" ? ["GET", "HEAD"] : ["POST"], `/:owner/:repo/${svc}`, credentials(), async (c) => {
    const { owner, repo } = c.req.param();
    const name = repo.toLowerCase().endsWith(".git") ? repo.slice(0, -4) : repo;
    return serveRepoGit(ctxOf(c), objectsOf(c), owner, name, c.req.raw, `/${svc}`);
  });
}
