/**
 * The reference server of `npm run bench` (issue 9 B.4): what this stack does on this machine.
 * Plain `node:http` over the `libsql` binding (the one @libsql/client's Node build uses), on the
 * project's own database file, with every statement prepared once at start. It answers the
 * benchmarked routes with the same token lookup (SHA-256 of the token → `access_token.token_hash`),
 * the same rows and JSON bodies of the same shape as the project:
 *   GET  /api/v1/user                       the caller's user row
 *   GET  /api/v1/repos/{owner}/{repo}       repository ⋈ owner, its units, the caller's access mode
 *   GET  /api/v1/repos/search?q=&page=&limit=   accessible repositories matching q (name or topic), and their count
 *                                           (candidates from the trigram index repo_search, as the project)
 *   POST /api/v1/user/repos                 the app's write set in one IMMEDIATE transaction
 * Anything else is 404. Access follows the same rules in one SQL expression: public repositories
 * of owners the caller may see, owned ones, collaborations, and teams covering the repository.
 * It is a yardstick, not a second implementation: no sudo, no restricted users, no public-only
 * tokens, no redirects.
 *
 *   node bench/reference.ts --db PATH/gitea.db [--port 0] [--root-url http://127.0.0.1:PORT/]
 * prints one JSON line `{"url":"http://127.0.0.1:PORT"}` once it listens; stops on SIGTERM.
 */
import Database from "libsql";
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { db: { type: "string" }, port: { type: "string", default: "0" }, "root-url": { type: "string" } } });
if (!values.db) {
  console.error("usage: node bench/reference.ts --db PATH [--port N] [--root-url URL]");
  process.exit(2);
}

// The file's journal mode stays as the project left it (WAL is a property of the file, so
// switching it here would change the project's measurement too). In WAL mode the reference uses
// synchronous=NORMAL, the usual pairing; in rollback-journal mode SQLite's default (FULL), as the
// project. The busy timeout only affects this connection.
const db = new Database(values.db, { timeout: 5000 });
const journalMode = String((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toLowerCase();
if (journalMode === "wal") db.exec("PRAGMA synchronous=NORMAL");

/** The user columns a response needs (never the password hash). */
const USER = (a: string, p = "") =>
  ["id", "name", "lower_name", "full_name", "email", "keep_email_private", "login_name", "login_source", "language", "is_admin", "last_login_unix", "created_unix", "is_restricted", "is_active", "prohibit_login", "location", "website", "description", "visibility", "num_followers", "num_following", "num_stars", "type"]
    .map((c) => `${a}.${c} AS ${p}${c}`)
    .join(", ");
const REPO = ["id", "owner_id", "name", "description", "website", "original_url", "default_branch", "num_watches", "num_stars", "num_forks", "num_issues", "num_closed_issues", "num_pulls", "num_closed_pulls", "num_releases", "is_private", "is_empty", "is_archived", "is_mirror", "is_fork", "is_template", "size", "topics", "object_format_name", "created_unix", "updated_unix", "archived_unix"]
  .map((c) => `r.${c} AS ${c}`)
  .join(", ");

/** ?1 = the caller's id (NULL for anonymous): its access mode on repository r of owner o (0 none … 4 owner). */
const MODE = `CASE
  WHEN ?1 IS NULL THEN (CASE WHEN r.is_private = 0 AND o.visibility = 0 THEN 1 ELSE 0 END)
  WHEN r.owner_id = ?1 THEN 4
  ELSE MAX(
    CASE WHEN r.is_private = 0 AND (o.visibility < 2 OR EXISTS (SELECT 1 FROM org_user ou WHERE ou.org_id = o.id AND ou.uid = ?1)) THEN 1 ELSE 0 END,
    COALESCE((SELECT c.mode FROM collaboration c WHERE c.repo_id = r.id AND c.user_id = ?1), 0),
    COALESCE((SELECT MAX(t.authorize) FROM team_user tu JOIN team t ON t.id = tu.team_id
      WHERE tu.uid = ?1 AND tu.org_id = r.owner_id AND (t.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM team_repo tr WHERE tr.team_id = t.id AND tr.repo_id = r.id))), 0))
END`;
const UNITS = `(SELECT json_group_array(json_array(ru.type, json(ru.config))) FROM repo_unit ru WHERE ru.repo_id = r.id)`;
const REPO_SELECT = `SELECT ${REPO}, ${USER("o", "o_")}, ${UNITS} AS units, ${MODE} AS mode FROM repository r JOIN user o ON o.id = r.owner_id`;
const SEARCH_INDEX = `r.id IN (SELECT rowid FROM repo_search WHERE repo_search MATCH '{lower_name topics} : ' || ?6)`;
const SEARCH_WHERE = `WHERE (r.lower_name LIKE ?2 ESCAPE '\\' OR EXISTS (SELECT 1 FROM json_each(r.topics) jt WHERE lower(jt.value) = ?3)) AND (${MODE}) > 0`;

const stmt = {
  caller: db.prepare(`SELECT t.scope AS scope, u.num_repos AS num_repos, u.max_repo_creation AS max_repo_creation, u.must_change_password AS must_change_password, ${USER("u")} FROM access_token t JOIN user u ON u.id = t.uid WHERE t.token_hash = ?`),
  repoByPath: db.prepare(`${REPO_SELECT} WHERE o.lower_name = ?2 AND r.lower_name = ?3`),
  repoById: db.prepare(`${REPO_SELECT} WHERE r.id = ?2`),
  search: db.prepare(`${REPO_SELECT} ${SEARCH_WHERE} ORDER BY r.lower_name, r.id LIMIT ?4 OFFSET ?5`),
  searchCount: db.prepare(`SELECT COUNT(*) AS n FROM repository r JOIN user o ON o.id = r.owner_id ${SEARCH_WHERE}`),
  // With a keyword of 3+ characters, the candidates come from the trigram index, as in the project.
  searchIndexed: db.prepare(`${REPO_SELECT} ${SEARCH_WHERE} AND ${SEARCH_INDEX} ORDER BY r.lower_name, r.id LIMIT ?4 OFFSET ?5`),
  searchCountIndexed: db.prepare(`SELECT COUNT(*) AS n FROM repository r JOIN user o ON o.id = r.owner_id ${SEARCH_WHERE} AND ${SEARCH_INDEX.replace("?6", "?4")}`),
  dropRedirect: db.prepare(`DELETE FROM repo_redirect WHERE owner_id = ? AND lower_name = ?`),
  insertRepo: db.prepare(`INSERT INTO repository (owner_id, owner_name, lower_name, name, description, is_private, is_template, is_empty, default_branch, trust_model, object_format_name, is_fork, fork_id, template_id, topics, created_unix, updated_unix)
    VALUES (?, ?, ?, ?, ?, ?, 0, 1, 'main', 0, 'sha1', 0, 0, 0, '[]', ?, ?)`),
  insertUnits: db.prepare(`INSERT INTO repo_unit (repo_id, type, config, created_unix) VALUES ${Array.from({ length: 8 }, () => "(?, ?, ?, ?)").join(", ")}`),
  bumpRepos: db.prepare(`UPDATE user SET num_repos = num_repos + 1 WHERE id = ?`),
  insertAction: db.prepare(`INSERT INTO action (user_id, op_type, act_user_id, repo_id, is_private, created_unix) VALUES (?, 1, ?, ?, ?, ?)`),
};

/** The units the app gives a new repository, with its default configs. */
const NEW_UNITS: [number, string][] = [
  [1, "{}"],
  [2, JSON.stringify({ enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true })],
  [3, JSON.stringify({ ignore_whitespace_conflicts: false, allow_merge_commits: true, allow_rebase: true, allow_rebase_explicit: true, allow_squash_merge: true, allow_fast_forward_only_merge: true, allow_manual_merge: true, autodetect_manual_merge: false, allow_rebase_update: true, allow_merge_update: true, default_delete_branch_after_merge: false, default_merge_style: "merge", default_update_style: "merge", default_allow_maintainer_edit: false })],
  [4, "{}"],
  [5, "{}"],
  [8, JSON.stringify({ projects_mode: "all" })],
  [9, "{}"],
  [10, "{}"],
];

const createRepo = db.transaction((caller: Row, name: string, description: string, isPrivate: boolean) => {
  const now = Math.floor(Date.now() / 1000);
  stmt.dropRedirect.run(caller.id, name.toLowerCase());
  const { lastInsertRowid } = stmt.insertRepo.run(caller.id, caller.name, name.toLowerCase(), name, description, isPrivate ? 1 : 0, now, now);
  const id = Number(lastInsertRowid);
  stmt.insertUnits.run(NEW_UNITS.flatMap(([t, c]) => [id, t, c, now]));
  stmt.bumpRepos.run(caller.id);
  stmt.insertAction.run(caller.id, caller.id, id, isPrivate ? 1 : 0, now);
  return stmt.repoById.get(caller.id, id) as Row;
});

type Row = Record<string, unknown> & { id: number; name: string };

const ZERO_TIME = "0001-01-01T00:00:00Z";
const iso = (unix: unknown) => new Date(Number(unix) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
const VIS = ["public", "limited", "private"];

/** The same keys as the project's user JSON (Gitea's User). */
function userJson(u: Row, p: string, viewer: Row | null, root: string) {
  const id = u[`${p}id`] as number;
  const name = u[`${p}name`] as string;
  const authed = !!viewer && (!!viewer.is_admin || viewer.id === id);
  const email = viewer && (!u[`${p}keep_email_private`] || authed) && u[`${p}email`] ? u[`${p}email`] : `${u[`${p}lower_name`]}@noreply.${host}`;
  return {
    id,
    login: name,
    login_name: authed ? u[`${p}login_name`] : "",
    source_id: authed ? u[`${p}login_source`] : 0,
    full_name: u[`${p}full_name`],
    email,
    avatar_url: `${root}assets/img/avatar_default.png`,
    html_url: `${root}${encodeURIComponent(name)}`,
    language: authed ? u[`${p}language`] : "",
    is_admin: authed ? !!u[`${p}is_admin`] : false,
    last_login: authed ? iso(u[`${p}last_login_unix`]) : ZERO_TIME,
    created: iso(u[`${p}created_unix`]),
    restricted: !!u[`${p}is_restricted`],
    active: authed ? !!u[`${p}is_active`] : false,
    prohibit_login: authed ? !!u[`${p}prohibit_login`] : false,
    location: u[`${p}location`],
    website: u[`${p}website`],
    description: u[`${p}description`],
    visibility: VIS[u[`${p}visibility`] as number] ?? "public",
    followers_count: u[`${p}num_followers`],
    following_count: u[`${p}num_following`],
    starred_repos_count: u[`${p}num_stars`],
    username: name,
  };
}

/** The same keys as the project's repository JSON (Gitea's Repository). */
function repoJson(r: Row, viewer: Row | null, root: string) {
  const owner = r.o_name as string;
  const units = new Map((JSON.parse(r.units as string) as [number, Record<string, unknown>][]).map(([t, c]) => [t, c]));
  const mode = viewer?.is_admin ? Math.max(3, r.mode as number) : (r.mode as number);
  const pulls = units.get(3);
  const pr = (k: string) => (pulls ? pulls[k] : false);
  const base = `${root}${encodeURIComponent(owner)}/${encodeURIComponent(r.name)}`;
  const api = `${root}api/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(r.name)}`;
  return {
    id: r.id,
    owner: userJson(r, "o_", viewer, root),
    name: r.name,
    full_name: `${owner}/${r.name}`,
    description: r.description,
    empty: !!r.is_empty,
    private: !!r.is_private,
    fork: !!r.is_fork,
    template: !!r.is_template,
    mirror: !!r.is_mirror,
    size: Math.floor(Number(r.size) / 1024), // Gitea shows KiB
    language: "",
    languages_url: `${api}/languages`,
    html_url: base,
    url: api,
    link: `/${owner}/${r.name}`,
    ssh_url: `git@${host}:${owner}/${r.name}.git`,
    clone_url: `${base}.git`,
    original_url: r.original_url,
    website: r.website,
    stars_count: r.num_stars,
    forks_count: r.num_forks,
    watchers_count: r.num_watches,
    open_issues_count: (r.num_issues as number) - (r.num_closed_issues as number),
    open_pr_counter: (r.num_pulls as number) - (r.num_closed_pulls as number),
    release_counter: r.num_releases,
    default_branch: r.default_branch,
    default_target_branch: r.default_branch,
    branch_count: 0,
    archived: !!r.is_archived,
    created_at: iso(r.created_unix),
    updated_at: iso(r.updated_unix),
    archived_at: iso(r.archived_unix),
    permissions: { admin: mode >= 3, push: mode >= 2 && units.has(1) && !r.is_archived, pull: mode >= 1 && units.has(1) },
    has_code: units.has(1),
    has_issues: units.has(2) || units.has(7),
    internal_tracker: units.get(2),
    has_wiki: units.has(5) || units.has(6),
    has_pull_requests: !!pulls,
    has_projects: units.has(8),
    projects_mode: units.get(8)?.projects_mode ?? "all",
    has_releases: units.has(4),
    has_packages: units.has(9),
    has_actions: units.has(10),
    ignore_whitespace_conflicts: pr("ignore_whitespace_conflicts"),
    allow_merge_commits: pr("allow_merge_commits"),
    allow_rebase: pr("allow_rebase"),
    allow_rebase_explicit: pr("allow_rebase_explicit"),
    allow_squash_merge: pr("allow_squash_merge"),
    allow_fast_forward_only_merge: pr("allow_fast_forward_only_merge"),
    allow_rebase_update: pr("allow_rebase_update"),
    allow_merge_update: pr("allow_merge_update"),
    allow_manual_merge: pr("allow_manual_merge"),
    autodetect_manual_merge: pr("autodetect_manual_merge"),
    default_delete_branch_after_merge: pr("default_delete_branch_after_merge"),
    default_merge_style: pulls ? pulls.default_merge_style : "merge",
    default_update_style: pulls ? pulls.default_update_style : "merge",
    default_allow_maintainer_edit: pr("default_allow_maintainer_edit"),
    avatar_url: "",
    internal: !r.is_private && r.o_visibility === 2,
    mirror_interval: "",
    object_format_name: r.object_format_name,
    mirror_updated: ZERO_TIME,
    mirror_last_sync_at: ZERO_TIME,
    topics: JSON.parse(r.topics as string),
    licenses: [],
  };
}

class HttpError extends Error {
  status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Token auth as the project does it: `Authorization: token|bearer …` → SHA-256 → one indexed lookup. */
function authenticate(req: IncomingMessage): Row | null {
  const h = req.headers.authorization ?? "";
  const sp = h.indexOf(" ");
  if (sp < 0) return null;
  const scheme = h.slice(0, sp).toLowerCase();
  if (scheme !== "token" && scheme !== "bearer") return null;
  const row = stmt.caller.get(createHash("sha256").update(h.slice(sp + 1).trim()).digest("hex")) as Row | undefined;
  if (!row) throw new HttpError(401, "user does not exist");
  if (!row.is_active || row.prohibit_login) throw new HttpError(403, "This account is prohibited from signing in, please contact your site administrator.");
  if (row.must_change_password) throw new HttpError(403, "You must change your password.");
  return row;
}

/** Token scopes as the project checks them: `all`, `write:X`, or `read:X` for reads. */
function reqScopes(caller: Row | null, level: "read" | "write", cats: string[]) {
  if (!caller) return;
  const have = new Set(String(caller.scope).split(","));
  for (const c of cats) if (!have.has("all") && !have.has(`write:${c}`) && !(level === "read" && have.has(`read:${c}`))) throw new HttpError(403, "token does not have at least one of required scope(s)");
}

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json;charset=utf-8", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
};

const NOT_FOUND = "The target couldn't be found.";
const like = (kw: string) => `%${kw.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
const intParam = (v: string | null, def: number, max: number) => {
  const n = v && /^\d+$/.test(v) ? Number(v) : 0;
  return n <= 0 ? def : Math.min(n, max);
};

let root = values["root-url"] ?? "";
let host = root ? new URL(root).hostname : "";

function handle(req: IncomingMessage, res: ServerResponse, body: string) {
  const q = req.url!.indexOf("?");
  const path = q < 0 ? req.url! : req.url!.slice(0, q);
  const params = new URLSearchParams(q < 0 ? "" : req.url!.slice(q + 1));
  const caller = authenticate(req);
  if (req.method === "GET" && path === "/api/v1/user") {
    if (!caller) throw new HttpError(401, "token is required");
    reqScopes(caller, "read", ["user"]);
    return send(res, 200, userJson(caller, "", caller, root));
  }
  if (req.method === "GET" && path === "/api/v1/repos/search") {
    reqScopes(caller, "read", ["repository"]);
    const kw = (params.get("q") ?? "").trim();
    const limit = intParam(params.get("limit"), 30, 50);
    const page = intParam(params.get("page"), 1, 1e9);
    const me = caller?.id ?? null;
    const lower = kw.toLowerCase();
    const indexed = [...lower].length >= 3 && !/[\u0000-\u001f"\\\ud800-\udfff]/u.test(lower);
    const rows = (indexed ? stmt.searchIndexed.all(me, like(kw), lower, limit, (page - 1) * limit, `"${lower}"`) : stmt.search.all(me, like(kw), lower, limit, (page - 1) * limit)) as Row[];
    const { n } = (indexed ? stmt.searchCountIndexed.get(me, like(kw), lower, `"${lower}"`) : stmt.searchCount.get(me, like(kw), lower)) as { n: number };
    return send(res, 200, { ok: true, data: rows.map((r) => repoJson(r, caller, root)) }, { "X-Total-Count": String(n) });
  }
  if (req.method === "POST" && path === "/api/v1/user/repos") {
    if (!caller) throw new HttpError(401, "token is required");
    reqScopes(caller, "write", ["user", "repository"]);
    const form = JSON.parse(body || "{}") as { name?: string; description?: string; private?: boolean };
    const name = String(form.name ?? "");
    if (!/^[\w.-]{1,100}$/.test(name) || /\.(git|wiki)$/i.test(name)) throw new HttpError(422, "[Name]: invalid");
    if (caller.type === 1) throw new HttpError(422, "not allowed creating repository for organization");
    if (!caller.is_admin && (caller.max_repo_creation as number) >= 0 && (caller.num_repos as number) >= (caller.max_repo_creation as number)) throw new HttpError(403, "limit reached");
    try {
      return send(res, 201, repoJson(createRepo.immediate(caller, name, String(form.description ?? ""), !!form.private), caller, root));
    } catch (e) {
      if (/UNIQUE constraint failed: repository\.owner_id/.test(String((e as Error).message))) throw new HttpError(409, "The repository with the same name already exists.");
      throw e;
    }
  }
  const m = req.method === "GET" ? /^\/api\/v1\/repos\/([^/]+)\/([^/]+)$/.exec(path) : null;
  if (m) {
    reqScopes(caller, "read", ["repository"]);
    const r = stmt.repoByPath.get(caller?.id ?? null, decodeURIComponent(m[1]!).toLowerCase(), decodeURIComponent(m[2]!).toLowerCase()) as Row | undefined;
    if (!r || (!(r.mode as number) && !caller?.is_admin)) throw new HttpError(404, NOT_FOUND);
    return send(res, 200, repoJson(r, caller, root));
  }
  throw new HttpError(404, NOT_FOUND);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    try {
      handle(req, res, Buffer.concat(chunks).toString("utf8"));
    } catch (e) {
      const status = e instanceof HttpError ? e.status : 500;
      if (status === 500) console.error(e);
      const message = e instanceof HttpError ? e.message : "internal error";
      send(res, status, status === 404 ? { message, url: `${root}api/swagger`, errors: [] } : { message, url: `${root}api/swagger` });
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(values.port), "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  root ||= `http://127.0.0.1:${port}/`;
  host = new URL(root).hostname;
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, journalMode }));
});
const stop = () => {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  server.closeAllConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
