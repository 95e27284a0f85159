/**
 * The database schema (drizzle, SQLite/libSQL dialect). Table and column names follow Gitea's
 * (`user`, `access_token`, `team_user`, `*_unix` timestamps) so that the rules read like Gitea's.
 * Uniqueness is enforced by the database (case-insensitive names via `lower_*` columns), never by
 * a read-then-write check alone.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const bool = (name: string) => integer(name, { mode: "boolean" }).notNull().default(false);
const int = (name: string) => integer(name).notNull().default(0);
const str = (name: string) => text(name).notNull().default("");
const unixNow = sql`(unixepoch())`;

/**
 * Users and organizations (type 1), as Gitea's `user` table. lower_name, full_name and email are
 * also in `user_search`, a trigram full-text index kept in step by triggers
 * (drizzle/0009_user_search.sql; drizzle-kit does not model virtual tables).
 */
export const user = sqliteTable(
  "user",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    lowerName: text("lower_name").notNull(),
    name: text("name").notNull(),
    fullName: str("full_name"),
    email: str("email"),
    keepEmailPrivate: bool("keep_email_private"),
    passwd: str("passwd"),
    passwdHashAlgo: str("passwd_hash_algo"),
    mustChangePassword: bool("must_change_password"),
    /** 0 = local (plain) account; otherwise the type of the external login source. */
    loginType: int("login_type"),
    loginSource: int("login_source"),
    loginName: str("login_name"),
    /** 0 = individual, 1 = organization. */
    type: int("type"),
    location: str("location"),
    website: str("website"),
    description: str("description"),
    language: str("language"),
    /** 0 = public, 1 = limited, 2 = private (Gitea's VisibleType). */
    visibility: int("visibility"),
    isAdmin: bool("is_admin"),
    isActive: bool("is_active"),
    prohibitLogin: bool("prohibit_login"),
    isRestricted: bool("is_restricted"),
    allowCreateOrganization: integer("allow_create_organization", { mode: "boolean" }).notNull().default(true),
    allowGitHook: bool("allow_git_hook"),
    allowImportLocal: bool("allow_import_local"),
    maxRepoCreation: integer("max_repo_creation").notNull().default(-1),
    repoAdminChangeTeamAccess: bool("repo_admin_change_team_access"),
    numFollowers: int("num_followers"),
    numFollowing: int("num_following"),
    numStars: int("num_stars"),
    numRepos: int("num_repos"),
    numTeams: int("num_teams"),
    numMembers: int("num_members"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
    updatedUnix: integer("updated_unix").notNull().default(unixNow),
    lastLoginUnix: int("last_login_unix"),
  },
  (t) => [
    uniqueIndex("UQE_user_lower_name").on(t.lowerName),
    index("IDX_user_type").on(t.type),
    // The few site admins: the last-admin guard of a deletion or demotion reads these, not every user.
    index("IDX_user_admins").on(t.id).where(sql`is_admin = 1`),
  ],
);

/** E-mail addresses; `lower_email` is unique across the instance (Gitea's `email_address`). */
export const emailAddress = sqliteTable(
  "email_address",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    uid: integer("uid").notNull(),
    email: text("email").notNull(),
    lowerEmail: text("lower_email").notNull(),
    isActivated: bool("is_activated"),
    isPrimary: bool("is_primary"),
  },
  (t) => [uniqueIndex("UQE_email_address_lower_email").on(t.lowerEmail), index("IDX_email_address_uid").on(t.uid)],
);

/** External login sources (LDAP, OAuth2, …) an account can be bound to by `source_id`. */
export const loginSource = sqliteTable(
  "login_source",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    type: integer("type").notNull(),
    name: text("name").notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    createdUnix: integer("created_unix").notNull().default(unixNow),
  },
  (t) => [uniqueIndex("UQE_login_source_name").on(t.name)],
);

/** Personal access tokens. Only the SHA-256 of the token is stored. */
export const accessToken = sqliteTable(
  "access_token",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    uid: integer("uid").notNull(),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull(),
    tokenLastEight: text("token_last_eight").notNull(),
    scope: str("scope"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
    updatedUnix: integer("updated_unix").notNull().default(unixNow),
  },
  (t) => [
    uniqueIndex("UQE_access_token_token_hash").on(t.tokenHash),
    uniqueIndex("UQE_access_token_uid_name").on(t.uid, t.name),
  ],
);

/** Organization membership (Gitea's `org_user`). */
export const orgUser = sqliteTable(
  "org_user",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    uid: integer("uid").notNull(),
    orgId: integer("org_id").notNull(),
    isPublic: bool("is_public"),
  },
  (t) => [uniqueIndex("UQE_org_user_s").on(t.uid, t.orgId), index("IDX_org_user_org_id").on(t.orgId)],
);

/** Teams of an organization. `authorize` is the access mode (0 none … 4 owner). */
export const team = sqliteTable(
  "team",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id").notNull(),
    lowerName: text("lower_name").notNull(),
    name: text("name").notNull(),
    description: str("description"),
    authorize: int("authorize"),
    numRepos: int("num_repos"),
    numMembers: int("num_members"),
    includesAllRepositories: bool("includes_all_repositories"),
    canCreateOrgRepo: bool("can_create_org_repo"),
    /** `private`, `limited` or `public`. */
    visibility: text("visibility").notNull().default("private"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
    updatedUnix: integer("updated_unix").notNull().default(unixNow),
  },
  (t) => [uniqueIndex("UQE_team_org_lower_name").on(t.orgId, t.lowerName)],
);

export const teamUser = sqliteTable(
  "team_user",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id").notNull(),
    teamId: integer("team_id").notNull(),
    uid: integer("uid").notNull(),
  },
  // By organization (as Gitea's): an organization's deletion removes its teams' members through it.
  (t) => [uniqueIndex("UQE_team_user_s").on(t.teamId, t.uid), index("IDX_team_user_uid_org").on(t.uid, t.orgId), index("IDX_team_user_org_id").on(t.orgId)],
);

export const teamUnit = sqliteTable(
  "team_unit",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id").notNull(),
    teamId: integer("team_id").notNull(),
    type: integer("type").notNull(),
    accessMode: int("access_mode"),
  },
  (t) => [uniqueIndex("UQE_team_unit_s").on(t.teamId, t.type), index("IDX_team_unit_org_id").on(t.orgId)],
);

export const teamRepo = sqliteTable(
  "team_repo",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orgId: integer("org_id").notNull(),
    teamId: integer("team_id").notNull(),
    repoId: integer("repo_id").notNull(),
  },
  (t) => [uniqueIndex("UQE_team_repo_s").on(t.teamId, t.repoId), index("IDX_team_repo_repo").on(t.repoId)],
);

/** A user (or organization) blocking another user. */
export const userBlocking = sqliteTable(
  "user_blocking",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    blockerId: integer("blocker_id").notNull(),
    blockeeId: integer("blockee_id").notNull(),
    note: str("note"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
  },
  (t) => [uniqueIndex("UQE_user_blocking_s").on(t.blockerId, t.blockeeId), index("IDX_user_blocking_blockee").on(t.blockeeId)],
);

export type UserRow = typeof user.$inferSelect;
export type AccessTokenRow = typeof accessToken.$inferSelect;
export type TeamRow = typeof team.$inferSelect;

/**
 * Repositories (Gitea's `repository`). Names are unique per owner case-insensitively. Their lower
 * name, description and topics are also in `repo_search`, a trigram full-text index kept in step by
 * triggers (drizzle/0006_repo_search.sql; drizzle-kit does not model virtual tables).
 */
export const repository = sqliteTable(
  "repository",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ownerId: integer("owner_id").notNull(),
    ownerName: text("owner_name").notNull(),
    lowerName: text("lower_name").notNull(),
    name: text("name").notNull(),
    description: str("description"),
    website: str("website"),
    originalUrl: str("original_url"),
    defaultBranch: str("default_branch"),
    numWatches: int("num_watches"),
    numStars: int("num_stars"),
    numForks: int("num_forks"),
    numIssues: int("num_issues"),
    numClosedIssues: int("num_closed_issues"),
    numPulls: int("num_pulls"),
    numClosedPulls: int("num_closed_pulls"),
    numReleases: int("num_releases"),
    isPrivate: bool("is_private"),
    isEmpty: bool("is_empty"),
    isArchived: bool("is_archived"),
    isMirror: bool("is_mirror"),
    isFork: bool("is_fork"),
    forkId: int("fork_id"),
    isTemplate: bool("is_template"),
    templateId: int("template_id"),
    size: int("size"),
    /** JSON array of topic names. */
    topics: text("topics").notNull().default("[]"),
    objectFormatName: text("object_format_name").notNull().default("sha1"),
    trustModel: int("trust_model"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
    updatedUnix: integer("updated_unix").notNull().default(unixNow),
    archivedUnix: int("archived_unix"),
    /**
     * The stored packs may hold objects no ref reaches (a ref was deleted or moved by a
     * non-fast-forward update, or the base of a fork had such objects): a clone then walks history
     * instead of sending the stored packs as they are (functions/git/protocol/upload-pack.ts).
     */
    gitUnreachable: bool("git_unreachable"),
  },
  (t) => [
    uniqueIndex("UQE_repository_s").on(t.ownerId, t.lowerName),
    index("IDX_repository_lower_name").on(t.lowerName),
    index("IDX_repository_is_private").on(t.isPrivate),
    index("IDX_repository_fork_id").on(t.forkId),
    // As Gitea's: deleting a template clears template_id of the repositories generated from it.
    index("IDX_repository_template_id").on(t.templateId),
    // One owner may fork a repository once (Gitea's ErrForkAlreadyExist), also under concurrent forks.
    uniqueIndex("UQE_repository_fork").on(t.ownerId, t.forkId).where(sql`fork_id <> 0`),
    index("IDX_repository_updated").on(t.updatedUnix),
    // The few forks, mirrors, templates, archived and private repositories by name: a search
    // filtering on one of them walks these in its order (or reads them to sort them), not every
    // repository.
    index("IDX_repository_forks").on(t.lowerName).where(sql`is_fork = 1`),
    index("IDX_repository_mirrors").on(t.lowerName).where(sql`is_mirror = 1`),
    index("IDX_repository_templates").on(t.lowerName).where(sql`is_template = 1`),
    index("IDX_repository_archived").on(t.lowerName).where(sql`is_archived = 1`),
    index("IDX_repository_private").on(t.lowerName).where(sql`is_private = 1`),
    // A search with sort=alpha walks repositories by owner, then name (Gitea's "owner_name ASC, name ASC").
    index("IDX_repository_alpha").on(sql`lower(owner_name)`, t.lowerName),
  ],
);

/**
 * How many repositories there are of each class: the owner's visibility (-1: no owner row) and the
 * flags a repository search filters on. Kept in step with `repository` and `user` by triggers
 * (drizzle/0007_repo_count.sql), whatever statement writes them. A search without a keyword
 * counts the repositories every caller of a kind may read (the public ones of public, or of public
 * and limited, owners) from these few rows, and looks at single repositories only for what the
 * caller reaches by membership: its total no longer costs a pass over every repository.
 */
export const repoCount = sqliteTable(
  "repo_count",
  {
    vis: integer("vis").notNull(),
    isPrivate: integer("is_private").notNull(),
    isFork: integer("is_fork").notNull(),
    isMirror: integer("is_mirror").notNull(),
    isTemplate: integer("is_template").notNull(),
    isArchived: integer("is_archived").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.vis, t.isPrivate, t.isFork, t.isMirror, t.isTemplate, t.isArchived] })],
);

/**
 * How many accounts there are per type and visibility (at most 2 × 3 rows), kept by triggers on
 * `user` (drizzle/0010_user_count.sql): the total of a user search without a keyword sums the
 * classes the viewer may see whole instead of counting every user row.
 */
export const userCount = sqliteTable(
  "user_count",
  {
    type: integer("type").notNull(),
    visibility: integer("visibility").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.type, t.visibility] })],
);

/** Enabled units of a repository, with their JSON config (Gitea's `repo_unit`). */
export const repoUnit = sqliteTable(
  "repo_unit",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    repoId: integer("repo_id").notNull(),
    type: integer("type").notNull(),
    config: text("config").notNull().default("{}"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
  },
  (t) => [uniqueIndex("UQE_repo_unit_s").on(t.repoId, t.type)],
);

/** Collaborators with their access mode (1 read, 2 write, 3 admin). */
export const collaboration = sqliteTable(
  "collaboration",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    repoId: integer("repo_id").notNull(),
    userId: integer("user_id").notNull(),
    mode: integer("mode").notNull().default(2),
    createdUnix: integer("created_unix").notNull().default(unixNow),
    updatedUnix: integer("updated_unix").notNull().default(unixNow),
  },
  (t) => [uniqueIndex("UQE_collaboration_s").on(t.repoId, t.userId), index("IDX_collaboration_user_id").on(t.userId)],
);

/** Old names of renamed repositories, answered with 307 to the new path. */
export const repoRedirect = sqliteTable(
  "repo_redirect",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    ownerId: integer("owner_id").notNull(),
    lowerName: text("lower_name").notNull(),
    redirectRepoId: integer("redirect_repo_id").notNull(),
  },
  (t) => [uniqueIndex("UQE_repo_redirect_s").on(t.ownerId, t.lowerName), index("IDX_repo_redirect_repo").on(t.redirectRepoId)],
);

/** Pull-mirror settings of mirror repositories. */
export const mirror = sqliteTable("mirror", {
  repoId: integer("repo_id").primaryKey(),
  intervalMs: integer("interval_ms").notNull().default(28_800_000),
  enablePrune: integer("enable_prune", { mode: "boolean" }).notNull().default(true),
  updatedUnix: int("updated_unix"),
  nextUpdateUnix: int("next_update_unix"),
});

export const star = sqliteTable(
  "star",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    uid: integer("uid").notNull(),
    repoId: integer("repo_id").notNull(),
    createdUnix: integer("created_unix").notNull().default(unixNow),
  },
  (t) => [uniqueIndex("UQE_star_s").on(t.uid, t.repoId), index("IDX_star_repo").on(t.repoId)],
);

/** Issue labels of a repository (org labels have repo_id 0 and org_id set). */
export const label = sqliteTable(
  "label",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    repoId: int("repo_id"),
    orgId: int("org_id"),
    name: text("name").notNull(),
    exclusive: bool("exclusive"),
    description: str("description"),
    color: text("color").notNull(),
    numIssues: int("num_issues"),
    numClosedIssues: int("num_closed_issues"),
    archivedUnix: int("archived_unix"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
    updatedUnix: integer("updated_unix").notNull().default(unixNow),
  },
  (t) => [index("IDX_label_repo_id").on(t.repoId), index("IDX_label_org_id").on(t.orgId)],
);

/** Activity feed entries (Gitea's `action`): one row per receiver. */
export const action = sqliteTable(
  "action",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id").notNull(),
    opType: integer("op_type").notNull(),
    actUserId: integer("act_user_id").notNull(),
    repoId: integer("repo_id").notNull(),
    commentId: int("comment_id"),
    refName: str("ref_name"),
    isPrivate: bool("is_private"),
    content: str("content"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
  },
  (t) => [index("IDX_action_user_id").on(t.userId, t.createdUnix), index("IDX_action_repo_id").on(t.repoId, t.createdUnix), index("IDX_action_act_user").on(t.actUserId)],
);

export type RepositoryRow = typeof repository.$inferSelect;
export type RepoUnitRow = typeof repoUnit.$inferSelect;
export type LabelRow = typeof label.$inferSelect;

/** Webhooks (organization hooks have owner_id set and repo_id 0). Secrets are stored encrypted. */
export const webhook = sqliteTable(
  "webhook",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    repoId: int("repo_id"),
    ownerId: int("owner_id"),
    type: text("type").notNull(),
    name: str("name"),
    url: text("url").notNull(),
    httpMethod: text("http_method").notNull().default("POST"),
    contentType: text("content_type").notNull().default("json"),
    /** AES-GCM ciphertext of the HMAC secret (empty when none). */
    secretEnc: str("secret_enc"),
    /** AES-GCM ciphertext of the Authorization header value (empty when none). */
    authHeaderEnc: str("auth_header_enc"),
    /** JSON array of enabled event names. */
    events: text("events").notNull().default('["push"]'),
    branchFilter: str("branch_filter"),
    /** JSON object of type-specific settings (slack channel, username, …). */
    meta: text("meta").notNull().default("{}"),
    isActive: bool("is_active"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
    updatedUnix: integer("updated_unix").notNull().default(unixNow),
  },
  (t) => [index("IDX_webhook_owner_id").on(t.ownerId), index("IDX_webhook_repo_id").on(t.repoId)],
);

export type WebhookRow = typeof webhook.$inferSelect;

/**
 * Git refs of a repository (functions/git RefStore). HEAD is `refs/heads/<repository.default_branch>`,
 * as in Gitea, where the default branch and HEAD are kept the same.
 */
export const gitRef = sqliteTable(
  "git_ref",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    repoId: integer("repo_id").notNull(),
    /** Full ref name (`refs/heads/main`); compared byte-wise (BINARY collation), as git sorts refs. */
    name: text("name").notNull(),
    oid: text("oid").notNull(),
    /** What an annotated tag finally points to; null for other refs. */
    peeled: text("peeled"),
  },
  (t) => [uniqueIndex("UQE_git_ref_s").on(t.repoId, t.name)],
);

/**
 * The pack catalog: immutable pack + index files in the object store. `repo_id` is the storage
 * owner (a fork's rows point at its base's files until the base is deleted), `catalog_repo_id` the
 * repository whose catalog lists the pack; `seq` keeps the order packs were added.
 */
export const gitPack = sqliteTable(
  "git_pack",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull(),
    repoId: integer("repo_id").notNull(),
    catalogRepoId: integer("catalog_repo_id").notNull(),
    objects: int("objects"),
    size: int("size"),
    idxSize: int("idx_size"),
    checksum: str("checksum"),
  },
  (t) => [uniqueIndex("UQE_git_pack_s").on(t.catalogRepoId, t.id), index("IDX_git_pack_repo").on(t.repoId)],
);

/**
 * Pack files a compaction took out of a catalog (`repo_id` owns the files): they are deleted after a
 * grace period, since requests that opened the old catalog may still be reading them, and only once
 * no catalog lists them any more (a fork may still read its base's old packs). Written in the
 * compaction's own commit batch, so no file is forgotten when a process stops.
 */
export const gitPackGarbage = sqliteTable(
  "git_pack_garbage",
  {
    repoId: integer("repo_id").notNull(),
    packId: text("pack_id").notNull(),
    removedUnix: integer("removed_unix").notNull().default(unixNow),
  },
  (t) => [primaryKey({ columns: [t.repoId, t.packId] }), index("IDX_git_pack_garbage_removed").on(t.removedUnix)],
);

/**
 * One row per RefStore commit in flight, inserted and deleted in the commit's own transaction: the
 * compare-and-swap verdict, evaluated once before any write, that every write of the batch checks.
 */
export const gitTx = sqliteTable("git_tx", {
  id: text("id").primaryKey(),
  ok: int("ok"),
});

/**
 * The e-mail addresses (lower-cased) a repository's commits name as author or committer, recorded
 * as the commits arrive (a push's pack, commits made through the API, the initial and generated
 * commits, a fork's base): a route that names commit authors reads the accounts they match in its
 * one round trip. An address missing here (commits stored before this table) is looked up on demand.
 */
export const gitIdentity = sqliteTable("git_identity", {
  repoId: integer("repo_id").notNull(),
  email: text("email").notNull(),
}, (t) => [primaryKey({ columns: [t.repoId, t.email] })]);

/**
 * Webhook deliveries (Gitea's `hook_task`): the transactional outbox of the event seam. A write
 * inserts one row per matching active hook in its own batch (functions/events); a deliverer claims
 * pending rows (`claimed_unix`, a lease a crashed deliverer's rows outlive), sends them once and
 * records the exchange. `ref_name` is the ref a hook's branch filter is matched against ("" when the
 * event has none).
 */
export const hookTask = sqliteTable(
  "hook_task",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    hookId: integer("hook_id").notNull(),
    uuid: text("uuid").notNull(),
    eventType: text("event_type").notNull(),
    refName: str("ref_name"),
    payloadContent: text("payload_content").notNull(),
    isDelivered: bool("is_delivered"),
    /** When it was delivered, unix nanoseconds (Gitea's `delivered`). */
    delivered: int("delivered"),
    claimedUnix: int("claimed_unix"),
    /** The claim of the deliverer that holds the row (random per sweep). */
    claim: str("claim"),
    requestContent: str("request_content"),
    responseContent: str("response_content"),
    isSucceed: bool("is_succeed"),
    createdUnix: integer("created_unix").notNull().default(unixNow),
  },
  (t) => [
    index("IDX_hook_task_hook_id").on(t.hookId),
    index("IDX_hook_task_pending").on(t.isDelivered, t.claimedUnix),
    // the queue in delivery order, with what a claim tests: a claim walks no task's payload
    index("IDX_hook_task_queue").on(t.isDelivered, t.id, t.claimedUnix, t.hookId),
    index("IDX_hook_task_delivered").on(t.isDelivered, t.delivered),
  ],
);

export type HookTaskRow = typeof hookTask.$inferSelect;
