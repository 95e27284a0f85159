/**
 * Seeds a benchmark database straight into the schema with bulk inserts: users, organizations with
 * deep teams, repositories, collaborations and activity rows. The schema itself comes from the
 * project's own migrations (`drizzle/`), so a seeded file is exactly what the server expects.
 *
 * The shape (`planShape`) is deterministic (seeded PRNG) and split in two:
 * - a FIXED part, identical at every size: the well-connected viewer `viewer`, its organization
 *   `acme` (300 members, 8 teams, 200 repositories), 20 small organizations it belongs to, its own
 *   repositories, 50 repositories of other users it collaborates on, all their activity, and the 40
 *   repositories whose names contain the search keyword `needle`;
 * - a GROWING part: every other repository (owned half by organizations, half by users, skewed),
 *   with team assignments, outside collaborators, forks and activity.
 * Users (10,000) and organizations (1,000) are the same at every size, so what grows with
 * `repos` is the rest of the instance, never what the viewer can reach.
 *
 * One function per table group (`usersRows`, `orgRows`, `repoRows`, `collaborationRows`,
 * `activityRows`, `fixCounters`); when the schema changes, change the group that owns the table.
 *
 * As a script: node bench/seed.ts --file PATH --repos 1000   (prints what it made as JSON)
 */
import Database from "libsql";
import { createClient, type Client, type InStatement } from "@libsql/client";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_ISSUES_CONFIG, DEFAULT_PROJECTS_CONFIG, DEFAULT_PULLS_CONFIG } from "../functions/convert/repository.ts";
import { migrateDb } from "../functions/db/migrate.ts";
import { prng, type Rng } from "../scripts/lib/prng.ts";

/** What a seeded database holds and how to address it in requests. */
export interface Seeded {
  repos: number;
  users: number;
  orgs: number;
  rows: Record<string, number>;
  seconds: number;
  /** The well-connected non-admin user and its all-scopes token. */
  viewer: { id: number; name: string; token: string };
  /** A site admin with an all-scopes token. */
  admin: { id: number; name: string; token: string };
  /** The viewer's organization (constant size at every scale). */
  org: string;
  /** A team of `org` the viewer belongs to (team_repo assignments). */
  teamId: number;
  /** A private repository of `org` the viewer reaches through its teams. */
  privateRepo: string;
  /** A public repository of `org` with activity. */
  publicRepo: string;
  /** Repository search keyword with a constant number of matches. */
  repoKeyword: string;
  /** User search keyword (matches about 1 user in 30). */
  userKeyword: string;
}

export const SHAPE = { users: 10_000, orgs: 1_000 } as const;
const T0 = 1_700_000_000;
const YEAR = 365 * 86400;
const ADJ = ["amber", "brisk", "calm", "dusty", "eager", "fuzzy", "gentle", "hollow", "icy", "jolly", "keen", "lucky", "mellow", "nimble", "olive", "proud", "quiet", "rapid", "sunny", "tidy", "urban", "vivid", "witty", "young", "zesty", "bold", "crisp", "deft", "frank", "grand"];
const NOUN = ["otter", "falcon", "maple", "river", "comet", "badger", "cedar", "harbor", "lantern", "meadow", "orbit", "pepper", "quartz", "raven", "summit", "tulip", "valley", "walrus", "willow", "yak", "zephyr", "anvil", "beacon", "canyon", "delta", "ember", "fjord", "glacier", "heron", "island"];
const TOPICS = ["go", "rust", "web", "cli", "api", "docs", "infra", "ml", "game", "iot"];
/** The search keyword: in no vocabulary word, so only the 40 fixed repositories carry it. */
const KEYWORD = "needle";

const ACCESS = { none: 0, read: 1, write: 2, admin: 3, owner: 4 } as const;
const UNIT_TYPES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const EXT_UNITS = new Set([6, 7]);
/** The units a new repository gets, with the configs the app writes (functions/services/repos.ts). */
const REPO_UNITS: [number, string][] = [
  [1, "{}"],
  [2, JSON.stringify(DEFAULT_ISSUES_CONFIG)],
  [3, JSON.stringify(DEFAULT_PULLS_CONFIG)],
  [4, "{}"],
  [5, "{}"],
  [8, JSON.stringify(DEFAULT_PROJECTS_CONFIG)],
  [9, "{}"],
  [10, "{}"],
];
const FORK_UNITS = REPO_UNITS.filter(([t]) => t === 1 || t === 3);


const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
const b = (x: boolean) => (x ? 1 : 0);

/** Rows per table, in column order; ids are explicit so that every size shares the fixed part's ids. */
interface Table {
  cols: readonly string[];
  rows: unknown[][];
}
type Tables = Record<string, Table>;
const table = (cols: readonly string[]): Table => ({ cols, rows: [] });

interface UserInfo {
  id: number;
  name: string;
  visibility: number;
}
interface OrgInfo extends UserInfo {
  kind: "acme" | "viewer" | "big" | "plain";
  members: number[];
  teams: { id: number; name: string; authorize: number; includesAll: boolean; members: number[] }[];
}
interface RepoInfo {
  id: number;
  ownerId: number;
  org: OrgInfo | null;
  isPrivate: boolean;
  created: number;
  /** Users who may act on it (owner or org members, collaborators). */
  actors: number[];
}

/** Everything the groups share while building rows. */
interface Plan {
  repos: number;
  t: Tables;
  users: UserInfo[];
  orgs: OrgInfo[];
  viewerId: number;
  adminId: number;
  tokens: { viewer: string; admin: string };
  repoList: RepoInfo[];
  fixedRepos: number;
  named: { privateRepo: string; publicRepo: string; teamId: number };
}

const USER_COLS = ["id", "lower_name", "name", "full_name", "email", "keep_email_private", "passwd", "passwd_hash_algo", "must_change_password", "login_type", "login_source", "login_name", "type", "location", "website", "description", "language", "visibility", "is_admin", "is_active", "prohibit_login", "is_restricted", "allow_create_organization", "max_repo_creation", "created_unix", "updated_unix", "last_login_unix"] as const;

/** Group 1: individual users, their e-mail addresses, and access tokens for the viewer and the admin. */
function usersRows(p: Plan, n: number) {
  const rng = prng(1);
  const u = p.t.user;
  const email = p.t.email_address;
  const token = p.t.access_token;
  for (let id = 1; id <= n; id++) {
    const adj = rng.pick(ADJ);
    const noun = rng.pick(NOUN);
    const name = id === p.adminId ? "admin" : id === p.viewerId ? "viewer" : `${adj}-${noun}-${id}`;
    const visibility = id <= 2 ? 0 : id % 20 === 0 ? 2 : id % 20 === 1 ? 1 : 0;
    const created = T0 - 3 * YEAR + rng.int(2 * YEAR);
    const mail = `${name}@example.com`;
    const keepPrivate = id > 2 && id % 3 === 0;
    u!.rows.push([id, name.toLowerCase(), name, `${cap(adj)} ${cap(noun)}`, mail, b(keepPrivate), "", "", 0, 0, 0, "", 0, rng.pick(["", "Berlin", "Lagos", "Lima", "Osaka"]), "", id % 4 === 0 ? `${cap(adj)} ${noun} maintainer` : "", "en-US", visibility, b(id === p.adminId), 1, 0, b(id > 2 && id % 97 === 0), 1, -1, created, created + rng.int(YEAR), T0 + rng.int(YEAR)]);
    email!.rows.push([id, id, mail, mail.toLowerCase(), 1, 1]);
    p.users.push({ id, name, visibility });
  }
  let tid = 0;
  for (const [uid, plain] of [[p.viewerId, p.tokens.viewer], [p.adminId, p.tokens.admin]] as const) {
    token!.rows.push([++tid, uid, "bench", createHash("sha256").update(plain).digest("hex"), plain.slice(-8), "all", T0, T0]);
  }
}

/** Group 2: organizations, their teams (with units), team members and organization members. */
function orgRows(p: Plan, n: number) {
  const rng = prng(2);
  const firstId = p.users.length + 1;
  const pool = p.users.filter((x) => x.id !== p.viewerId && x.id !== p.adminId).map((x) => x.id);
  let teamId = 0;
  let unitId = 0;
  let tuId = 0;
  let ouId = 0;
  for (let k = 0; k < n; k++) {
    const id = firstId + k;
    const kind: OrgInfo["kind"] = k === 0 ? "acme" : k <= 20 ? "viewer" : k <= 39 ? "big" : "plain";
    const name = k === 0 ? "acme" : `org-${NOUN[k % NOUN.length]}-${k}`;
    const visibility = k === 0 ? 0 : k % 10 === 7 ? 2 : k % 10 === 8 ? 1 : 0;
    const created = T0 - 3 * YEAR + rng.int(YEAR);
    p.t.user!.rows.push([id, name, name, `${cap(NOUN[k % NOUN.length]!)} ${kind === "acme" ? "Corp" : "Group"} ${k}`, `${name}@example.org`, 0, "", "", 0, 0, 0, "", 1, "", "", `The ${name} organization`, "", visibility, 0, 1, 0, 0, 1, -1, created, created, 0]);
    const size = kind === "acme" || kind === "big" ? 300 : kind === "viewer" ? 8 : 3 + rng.int(13);
    const members = new Set<number>();
    while (members.size < size) members.add(pool[rng.int(pool.length)]!);
    const list = [...members];
    const org: OrgInfo = { id, name, visibility, kind, members: list, teams: [] };
    const deep = kind === "acme" || kind === "big";
    const specs = [
      { name: "Owners", authorize: ACCESS.owner, includesAll: true, canCreate: true, visibility: "private" },
      { name: "developers", authorize: ACCESS.write, includesAll: false, canCreate: true, visibility: "limited" },
      { name: "readers", authorize: ACCESS.read, includesAll: true, canCreate: false, visibility: "public" },
      ...(deep ? [1, 2, 3, 4, 5].map((i) => ({ name: `squad-${i}`, authorize: i === 5 ? ACCESS.admin : ACCESS.write, includesAll: false, canCreate: false, visibility: ["private", "limited", "public"][i % 3] })) : []),
    ];
    for (const s of specs) {
      const tid = ++teamId;
      const tm: number[] = [];
      if (s.name === "Owners") tm.push(...list.slice(0, 2));
      else for (const m of list.slice(2)) if (rng.chance(s.name === "developers" ? 0.4 : s.name === "readers" ? 0.5 : 0.25)) tm.push(m);
      org.teams.push({ id: tid, name: s.name, authorize: s.authorize, includesAll: s.includesAll, members: tm });
        p.t.team!.rows.push([tid, id, s.name.toLowerCase(), s.name, s.name === "Owners" ? "" : `The ${s.name} of ${name}`, s.authorize, b(s.includesAll), b(s.canCreate), s.visibility, created, created]);
      for (const type of UNIT_TYPES) {
        const mode = s.authorize === ACCESS.owner ? ACCESS.owner : EXT_UNITS.has(type) ? Math.min(s.authorize, ACCESS.read) : s.authorize;
        p.t.team_unit!.rows.push([++unitId, id, tid, type, mode]);
      }
    }
    // Members in no team yet join the readers.
    const inTeam = new Set(org.teams.flatMap((t) => t.members));
    for (const m of list) if (!inTeam.has(m)) org.teams[2]!.members.push(m);
    // The viewer: in acme's developers, readers and three squads (never an owner); developers of
    // ten small organizations and readers (include-all) of ten more.
    if (kind === "acme") for (const t of org.teams.filter((t) => ["developers", "readers", "squad-1", "squad-2", "squad-3"].includes(t.name))) t.members.push(p.viewerId);
    if (kind === "viewer") org.teams[k <= 10 ? 1 : 2]!.members.push(p.viewerId);
    if (kind === "acme" || kind === "viewer") org.members.push(p.viewerId);
    for (const t of org.teams) for (const m of t.members) p.t.team_user!.rows.push([++tuId, id, t.id, m]);
    for (const m of org.members) p.t.org_user!.rows.push([++ouId, m, id, b(rng.chance(0.5))]);
    p.orgs.push(org);
  }
  p.named.teamId = p.orgs[0]!.teams[1]!.id;
}

const REPO_COLS = ["id", "owner_id", "owner_name", "lower_name", "name", "description", "website", "original_url", "default_branch", "num_watches", "num_stars", "num_forks", "num_issues", "num_closed_issues", "num_pulls", "num_closed_pulls", "num_releases", "is_private", "is_empty", "is_archived", "is_mirror", "is_fork", "fork_id", "is_template", "template_id", "size", "topics", "object_format_name", "trust_model", "created_unix", "updated_unix", "archived_unix"] as const;

/** Group 3: repositories, their units and team assignments (the fixed part first, then the growing part). */
function repoRows(p: Plan) {
  const names = new Map<number, Set<string>>();
  const add = (rng: Rng, ownerId: number, ownerName: string, org: OrgInfo | null, opts: { name?: string; isPrivate: boolean; fork?: RepoInfo }) => {
    const taken = names.get(ownerId) ?? new Set<string>();
    names.set(ownerId, taken);
    const id = p.repoList.length + 1;
    let name = opts.name ?? `${rng.pick(ADJ)}-${rng.pick(NOUN)}`;
    if (taken.has(name.toLowerCase())) name = `${name}-${id}`;
    taken.add(name.toLowerCase());
    const created = T0 - 2 * YEAR + rng.int(2 * YEAR);
    const archived = rng.chance(0.03);
    const topics = rng.chance(0.3) ? JSON.stringify([...new Set([rng.pick(TOPICS), rng.pick(TOPICS)])]) : "[]";
    const issues = rng.int(40);
    const pulls = rng.int(20);
    p.t.repository!.rows.push([id, ownerId, ownerName, name.toLowerCase(), name, rng.chance(0.7) ? `A ${rng.pick(ADJ)} project about ${rng.pick(NOUN)}s` : "", "", "", "main", rng.int(10), rng.int(50), 0, issues, rng.int(issues + 1), pulls, rng.int(pulls + 1), rng.int(5), b(opts.isPrivate), b(rng.chance(0.05)), b(archived), 0, b(!!opts.fork), opts.fork?.id ?? 0, b(rng.chance(0.02)), 0, rng.int(50_000), topics, "sha1", 0, created, created + rng.int(YEAR / 2), archived ? created + YEAR / 2 : 0]);
    for (const [type, config] of opts.fork ? FORK_UNITS : REPO_UNITS) p.t.repo_unit!.rows.push([p.t.repo_unit!.rows.length + 1, id, type, config, created]);
    const info: RepoInfo = { id, ownerId, org, isPrivate: opts.isPrivate, created, actors: org ? org.members : [ownerId] };
    if (org) {
      // Teams that are not include-all get explicit team_repo rows (as the app writes them).
      for (const t of org.teams) {
        if (t.includesAll) continue;
        if (rng.chance(t.name === "developers" ? 0.6 : 0.2)) p.t.team_repo!.rows.push([p.t.team_repo!.rows.length + 1, org.id, t.id, id]);
      }
    }
    p.repoList.push(info);
    return { info, name };
  };

  // Fixed part: its own PRNG, so it is identical at every size.
  const rng = prng(3);
  const acme = p.orgs[0];
  const viewer = p.users[p.viewerId - 1];
  const friends = p.users.slice(2, 52);
  const needle = (i: number) => `${KEYWORD}-${rng.pick(NOUN)}-${i}`;
  let nIdx = 0;
  for (let i = 0; i < 200; i++) {
    const isPrivate = i % 10 < 3;
    const r = add(rng, acme!.id, acme!.name, acme!, { isPrivate, name: i % 12 === 5 ? needle(nIdx++) : undefined });
    // The named repositories: a private one covered by the viewer's developers team, a public one.
    const dev = acme!.teams[1]!.id;
    if (isPrivate && !p.named.privateRepo && p.t.team_repo!.rows.some((row) => row[2] === dev && row[3] === r.info.id)) p.named.privateRepo = `${acme!.name}/${r.name}`;
    if (!isPrivate && !p.named.publicRepo && i >= 3) p.named.publicRepo = `${acme!.name}/${r.name}`;
  }
  for (const o of p.orgs.filter((o) => o.kind === "viewer")) for (let i = 0; i < 5; i++) add(rng, o.id, o.name, o, { isPrivate: i < 2, name: i === 4 && nIdx < 25 ? needle(nIdx++) : undefined });
  for (let i = 0; i < 20; i++) add(rng, viewer!.id, viewer!.name, null, { isPrivate: i % 4 === 0, name: i % 5 === 0 ? needle(nIdx++) : undefined });
  for (let i = 0; i < 50; i++) {
    const f = friends[i];
    const r = add(rng, f!.id, f!.name, null, { isPrivate: i % 5 < 2, name: i % 4 === 1 && nIdx < 40 ? needle(nIdx++) : undefined });
    // The viewer collaborates on 30 of them.
    if (i < 30) p.t.collaboration!.rows.push([p.t.collaboration!.rows.length + 1, r.info.id, p.viewerId, 1 + (i % 3), r.info.created, r.info.created]);
    if (i < 30) r.info.actors = [f!.id, p.viewerId];
  }
  if (!p.named.privateRepo) throw new Error("seed: no private acme repository covered by the viewer's team");
  p.fixedRepos = p.repoList.length;

  // Growing part.
  const g = prng(4);
  const big = p.orgs.filter((o) => o.kind === "big");
  const plain = p.orgs.filter((o) => o.kind === "plain");
  const regular = p.users.filter((u) => u.id > 52);
  // One fork of a repository per owner, as the app allows (UQE_repository_fork).
  const forked = new Set<string>();
  const forkFor = (ownerId: number, fork: RepoInfo | undefined) => {
    if (!fork || forked.has(`${ownerId}:${fork.id}`)) return undefined;
    forked.add(`${ownerId}:${fork.id}`);
    return fork;
  };
  while (p.repoList.length < p.repos) {
    const candidate = p.repoList.length > p.fixedRepos && g.chance(0.05) ? p.repoList[p.fixedRepos + g.int(p.repoList.length - p.fixedRepos)] : undefined;
    const isPrivate = candidate ? candidate.isPrivate : g.chance(0.3);
    if (g.chance(0.5)) {
      const o = g.chance(0.5) ? g.pick(big) : g.pick(plain);
      add(g, o.id, o.name, o, { isPrivate, fork: forkFor(o.id, candidate) });
    } else {
      // Skewed: a few users own many repositories.
      const u = regular[Math.floor(regular.length * g.next() ** 2)];
      const r = add(g, u!.id, u!.name, null, { isPrivate, fork: forkFor(u!.id, candidate) });
      if (g.chance(0.2)) {
        const n = 1 + g.int(3);
        const collab = new Set<number>();
        while (collab.size < n) {
          const c = regular[g.int(regular.length)]!.id;
          if (c !== u!.id) collab.add(c);
        }
        r.info.actors = [u!.id, ...collab];
        for (const c of collab) p.t.collaboration!.rows.push([p.t.collaboration!.rows.length + 1, r.info.id, c, 1 + g.int(3), r.info.created, r.info.created]);
      }
    }
  }
}

/** Group 4: outside collaborators of organization repositories (user repositories got theirs with the repository). */
function collaborationRows(p: Plan) {
  const g = prng(5);
  const regular = p.users.filter((u) => u.id > 52);
  for (const r of p.repoList.slice(p.fixedRepos)) {
    if (!r.org || !g.chance(0.05)) continue;
    const c = regular[g.int(regular.length)]!.id;
    if (r.org.members.includes(c)) continue;
    p.t.collaboration!.rows.push([p.t.collaboration!.rows.length + 1, r.id, c, 1 + g.int(3), r.created, r.created]);
    r.actors = [...r.actors, c];
  }
}

/**
 * Group 5: activity (Gitea's `action`, one row per receiver as the app writes them): a create_repo
 * per repository for its creator and its owner, then 0–4 pushes (commit_repo) by its actors.
 * The viewer acts only on the fixed part, so its own feed is the same at every size.
 */
function activityRows(p: Plan) {
  const rows = p.t.action!.rows;
  const emit = (actor: number, r: RepoInfo, op: number, at: number, refName: string, content: string) => {
    for (const receiver of new Set([actor, r.ownerId])) rows.push([rows.length + 1, receiver, op, actor, r.id, 0, refName, b(r.isPrivate), content, at]);
  };
  const forPart = (g: Rng, list: RepoInfo[]) => {
    for (const r of list) {
      // The viewer acts on a third of what it can act on (only fixed repositories list it).
      const pickActor = () => (r.actors.includes(p.viewerId) && g.chance(0.3) ? p.viewerId : g.pick(r.actors));
      emit(r.org ? pickActor() : r.ownerId, r, 1, r.created, "", "");
      const pushes = g.int(5);
      for (let i = 0; i < pushes; i++) emit(pickActor(), r, 5, r.created + 3600 + g.int(YEAR), "refs/heads/main", `{"Len":${1 + g.int(5)}}`);
    }
  };
  forPart(prng(6), p.repoList.slice(0, p.fixedRepos));
  const growing = p.repoList.slice(p.fixedRepos);
  if (growing.some((r) => r.actors.includes(p.viewerId))) throw new Error("seed: the viewer must not act on the growing part");
  forPart(prng(7), growing);
}

/** Group 6: counters the app keeps in rows (repositories per owner, members and teams per org, team sizes, forks). */
const fixCounters = [
  `UPDATE user SET num_repos = (SELECT COUNT(*) FROM repository r WHERE r.owner_id = user.id)`,
  `UPDATE user SET num_teams = (SELECT COUNT(*) FROM team t WHERE t.org_id = user.id), num_members = (SELECT COUNT(*) FROM org_user ou WHERE ou.org_id = user.id) WHERE type = 1`,
  `UPDATE team SET num_members = (SELECT COUNT(*) FROM team_user tu WHERE tu.team_id = team.id), num_repos = (SELECT COUNT(*) FROM team_repo tr WHERE tr.team_id = team.id)`,
  `UPDATE repository SET num_forks = (SELECT COUNT(*) FROM repository f WHERE f.fork_id = repository.id) WHERE id IN (SELECT fork_id FROM repository WHERE is_fork = 1)`,
];

/** Builds every row of a database with `repos` repositories (in memory; 100k repositories ≈ 1.5 M rows). */
export function planShape(repos: number, shape: { users: number; orgs: number } = SHAPE): Plan {
  const p: Plan = {
    repos,
    t: {
      user: table(USER_COLS),
      email_address: table(["id", "uid", "email", "lower_email", "is_activated", "is_primary"]),
      access_token: table(["id", "uid", "name", "token_hash", "token_last_eight", "scope", "created_unix", "updated_unix"]),
      team: table(["id", "org_id", "lower_name", "name", "description", "authorize", "includes_all_repositories", "can_create_org_repo", "visibility", "created_unix", "updated_unix"]),
      team_unit: table(["id", "org_id", "team_id", "type", "access_mode"]),
      team_user: table(["id", "org_id", "team_id", "uid"]),
      org_user: table(["id", "uid", "org_id", "is_public"]),
      repository: table(REPO_COLS),
      repo_unit: table(["id", "repo_id", "type", "config", "created_unix"]),
      team_repo: table(["id", "org_id", "team_id", "repo_id"]),
      collaboration: table(["id", "repo_id", "user_id", "mode", "created_unix", "updated_unix"]),
      action: table(["id", "user_id", "op_type", "act_user_id", "repo_id", "comment_id", "ref_name", "is_private", "content", "created_unix"]),
    },
    users: [],
    orgs: [],
    adminId: 1,
    viewerId: 2,
    tokens: { viewer: randomBytes(20).toString("hex"), admin: randomBytes(20).toString("hex") },
    repoList: [],
    fixedRepos: 0,
    named: { privateRepo: "", publicRepo: "", teamId: 0 },
  };
  usersRows(p, shape.users);
  orgRows(p, shape.orgs);
  repoRows(p);
  collaborationRows(p);
  activityRows(p);
  return p;
}

/** Where rows go: an embedded file (prepared multi-row inserts in one transaction) or a libSQL server (batches). */
interface Sink {
  insert(name: string, t: Table): Promise<void>;
  exec(sql: string): Promise<void>;
}

/** SQLite's default limit on bound parameters is 32766; stay well below it. */
const rowsPerStatement = (cols: number) => Math.max(1, Math.min(250, Math.floor(30_000 / cols)));
const insertSql = (name: string, cols: readonly string[], n: number) =>
  `INSERT INTO "${name}" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES ${Array.from({ length: n }, () => `(${cols.map(() => "?").join(", ")})`).join(", ")}`;

function fileSink(db: InstanceType<typeof Database>): Sink {
  return {
    async insert(name, t) {
      const per = rowsPerStatement(t.cols.length);
      const full = db.prepare(insertSql(name, t.cols, per));
      for (let i = 0; i < t.rows.length; i += per) {
        const chunk = t.rows.slice(i, i + per);
        (chunk.length === per ? full : db.prepare(insertSql(name, t.cols, chunk.length))).run(chunk.flat());
      }
    },
    async exec(sql) {
      db.exec(sql);
    },
  };
}

function clientSink(client: Client): Sink {
  let pending: InStatement[] = [];
  const flush = async () => {
    if (pending.length) await client.batch(pending, "write");
    pending = [];
  };
  return {
    async insert(name, t) {
      const per = Math.min(100, rowsPerStatement(t.cols.length));
      for (let i = 0; i < t.rows.length; i += per) {
        const chunk = t.rows.slice(i, i + per);
        pending.push({ sql: insertSql(name, t.cols, chunk.length), args: chunk.flat() as never });
        if (pending.length >= 50) await flush();
      }
      await flush();
    },
    async exec(sql) {
      await flush();
      await client.execute(sql);
    },
  };
}

async function fill(sink: Sink, p: Plan) {
  for (const [name, t] of Object.entries(p.t)) await sink.insert(name, t);
  for (const s of fixCounters) await sink.exec(s);
}

function describe(p: Plan, started: number): Seeded {
  const vName = p.users[p.viewerId - 1]!.name;
  return {
    repos: p.repoList.length,
    users: p.users.length,
    orgs: p.orgs.length,
    rows: Object.fromEntries(Object.entries(p.t).map(([k, t]) => [k, t.rows.length])),
    seconds: (performance.now() - started) / 1000,
    viewer: { id: p.viewerId, name: vName, token: p.tokens.viewer },
    admin: { id: p.adminId, name: "admin", token: p.tokens.admin },
    org: p.orgs[0]!.name,
    teamId: p.named.teamId,
    privateRepo: p.named.privateRepo,
    publicRepo: p.named.publicRepo,
    repoKeyword: KEYWORD,
    userKeyword: "witty",
  };
}

/**
 * Creates `file` (replacing it) with the project's migrations and `repos` repositories. The file is
 * left in the journal mode the app uses (rollback journal); only the seeding connection turns
 * durability off.
 */
export async function seedFile(file: string, repos: number): Promise<Seeded> {
  const started = performance.now();
  const path = resolve(file);
  for (const f of [path, `${path}-journal`, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) rmSync(f);
  mkdirSync(dirname(path), { recursive: true });
  const client = createClient({ url: `file:${path}` });
  await migrateDb(client);
  client.close();
  const p = planShape(repos);
  const db = new Database(path);
  db.exec("PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY; PRAGMA cache_size=-200000");
  db.exec("BEGIN");
  await fill(fileSink(db), p);
  db.exec("COMMIT");
  db.close();
  return describe(p, started);
}

/** Seeds a libSQL server (sqld) the same way, over its HTTP API in batches. */
export async function seedServer(url: string, repos: number): Promise<Seeded> {
  const started = performance.now();
  const client = createClient({ url });
  await migrateDb(client);
  const p = planShape(repos);
  await fill(clientSink(client), p);
  client.close();
  return describe(p, started);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { file: { type: "string" }, repos: { type: "string", default: "1000" } } });
  if (!values.file) {
    console.error("usage: node bench/seed.ts --file PATH [--repos N]");
    process.exit(2);
  }
  const s = await seedFile(values.file, Number(values.repos));
  console.log(JSON.stringify({ ...s, viewer: { ...s.viewer, token: "(hidden)" }, admin: { ...s.admin, token: "(hidden)" } }, null, 2));
}
