/** Gitea's repository structs as zod schemas, under Gitea's definition names. */
import { z } from "@hono/zod-openapi";
import { UserSchema } from "./user.ts";
import { nullableRef } from "../lib/openapi.ts";
import { isGitRefName } from "../git/refname.ts";

const int64 = z.number().int().openapi({ format: "int64" });
const time = z.string().openapi({ format: "date-time" });

/** Gitea's AlphaDashDot binding: only `[A-Za-z0-9_.-]`. */
export const alphaDashDot = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => /^[\w.-]+$/.test(s), { error: "AlphaDashDot" });

/** Gitea's GitRefName binding (a valid branch name). */
export const gitRefName = z
  .string()
  .max(100)
  .refine((s) => s === "" || isGitRefName(s), { error: "GitRefName" });

export const PermissionSchema = z.object({ admin: z.boolean(), push: z.boolean(), pull: z.boolean() }).openapi("Permission");
export const InternalTrackerSchema = z
  .object({ enable_time_tracker: z.boolean().optional(), allow_only_contributors_to_track_time: z.boolean().optional(), enable_issue_dependencies: z.boolean().optional() })
  .openapi("InternalTracker");
export const ExternalTrackerSchema = z
  .object({
    external_tracker_url: z.string().max(2048).optional(),
    external_tracker_format: z.string().max(2048).optional(),
    external_tracker_style: z.string().max(64).optional(),
    external_tracker_regexp_pattern: z.string().max(2048).optional(),
  })
  .openapi("ExternalTracker");
export const ExternalWikiSchema = z.object({ external_wiki_url: z.string().max(2048).optional() }).openapi("ExternalWiki");

const RepositoryBase = z.object({
  id: int64,
  owner: UserSchema,
  name: z.string(),
  full_name: z.string(),
  description: z.string(),
  empty: z.boolean(),
  private: z.boolean(),
  fork: z.boolean(),
  template: z.boolean(),
  mirror: z.boolean(),
  size: int64,
  language: z.string(),
  languages_url: z.string(),
  html_url: z.string(),
  url: z.string(),
  link: z.string(),
  ssh_url: z.string(),
  clone_url: z.string(),
  original_url: z.string(),
  website: z.string(),
  stars_count: int64,
  forks_count: int64,
  watchers_count: int64,
  open_issues_count: int64,
  open_pr_counter: int64,
  release_counter: int64,
  default_branch: z.string(),
  default_target_branch: z.string(),
  branch_count: int64,
  archived: z.boolean(),
  created_at: time,
  updated_at: time,
  archived_at: time,
  permissions: PermissionSchema.optional(),
  has_code: z.boolean(),
  has_issues: z.boolean(),
  internal_tracker: InternalTrackerSchema.optional(),
  external_tracker: ExternalTrackerSchema.optional(),
  has_wiki: z.boolean(),
  external_wiki: ExternalWikiSchema.optional(),
  has_pull_requests: z.boolean(),
  has_projects: z.boolean(),
  projects_mode: z.string(),
  has_releases: z.boolean(),
  has_packages: z.boolean(),
  has_actions: z.boolean(),
  ignore_whitespace_conflicts: z.boolean(),
  allow_merge_commits: z.boolean(),
  allow_rebase: z.boolean(),
  allow_rebase_explicit: z.boolean(),
  allow_squash_merge: z.boolean(),
  allow_fast_forward_only_merge: z.boolean(),
  allow_rebase_update: z.boolean(),
  allow_merge_update: z.boolean(),
  allow_manual_merge: z.boolean(),
  autodetect_manual_merge: z.boolean(),
  default_delete_branch_after_merge: z.boolean(),
  default_merge_style: z.string(),
  default_update_style: z.string(),
  default_allow_maintainer_edit: z.boolean(),
  avatar_url: z.string(),
  internal: z.boolean(),
  mirror_interval: z.string(),
  object_format_name: z.string(),
  mirror_updated: time,
  mirror_last_sync_at: time,
  topics: z.array(z.string()),
  licenses: z.array(z.string()),
});

export const RepositorySchema: z.ZodType = RepositoryBase.extend({ parent: z.lazy(() => RepositorySchema).optional() }).openapi("Repository", {
  description: "Repository represents a repository",
});

export const SearchResultsSchema = z.object({ ok: z.boolean(), data: z.array(RepositorySchema) }).openapi("SearchResults", { description: "SearchResults results of a successful search" });

export const CreateRepoOptionSchema = z
  .object({
    name: alphaDashDot(100),
    description: z.string().max(2048).optional(),
    private: z.boolean().optional(),
    issue_labels: z.string().max(255).optional(),
    auto_init: z.boolean().optional(),
    template: z.boolean().optional(),
    gitignores: z.string().max(1024).optional(),
    license: z.string().max(100).optional(),
    readme: z.string().max(255).optional(),
    default_branch: gitRefName.optional(),
    trust_model: z.string().max(64).optional(),
    object_format_name: z.enum(["", "sha1", "sha256"]).optional(),
  })
  .openapi("CreateRepoOption", { description: "CreateRepoOption options when creating repository" });

export const GenerateRepoOptionSchema = z
  .object({
    // Gitea binds no rule on Owner: absent or "" is an owner that does not exist (404). Its
    // document lists it as required, and so does ours.
    owner: z.string().max(255).optional(),
    name: alphaDashDot(100),
    default_branch: gitRefName.optional(),
    description: z.string().max(2048).optional(),
    private: z.boolean().optional(),
    git_content: z.boolean().optional(),
    topics: z.boolean().optional(),
    git_hooks: z.boolean().optional(),
    webhooks: z.boolean().optional(),
    avatar: z.boolean().optional(),
    labels: z.boolean().optional(),
    protected_branch: z.boolean().optional(),
  })
  .openapi("GenerateRepoOption", { description: "GenerateRepoOption options when creating repository using a template", required: ["owner", "name"] } as never);

export const EditRepoOptionSchema = z
  .object({
    name: alphaDashDot(100).optional(),
    description: z.string().max(2048).optional(),
    website: z.string().max(1024).optional(),
    private: z.boolean().optional(),
    template: z.boolean().optional(),
    has_code: z.boolean().optional(),
    has_issues: z.boolean().optional(),
    internal_tracker: InternalTrackerSchema.optional(),
    external_tracker: ExternalTrackerSchema.optional(),
    has_wiki: z.boolean().optional(),
    external_wiki: ExternalWikiSchema.optional(),
    default_branch: gitRefName.optional(),
    has_pull_requests: z.boolean().optional(),
    has_projects: z.boolean().optional(),
    projects_mode: z.enum(["repo", "owner", "all"]).optional(),
    has_releases: z.boolean().optional(),
    has_packages: z.boolean().optional(),
    has_actions: z.boolean().optional(),
    ignore_whitespace_conflicts: z.boolean().optional(),
    allow_merge_commits: z.boolean().optional(),
    allow_rebase: z.boolean().optional(),
    allow_rebase_explicit: z.boolean().optional(),
    allow_squash_merge: z.boolean().optional(),
    allow_fast_forward_only_merge: z.boolean().optional(),
    allow_manual_merge: z.boolean().optional(),
    autodetect_manual_merge: z.boolean().optional(),
    allow_rebase_update: z.boolean().optional(),
    allow_merge_update: z.boolean().optional(),
    default_update_style: z.enum(["merge", "rebase"]).optional(),
    default_delete_branch_after_merge: z.boolean().optional(),
    // Gitea's EditRepoOption binds no rule on it: any string is stored as given (repo_model.MergeStyle(*opts.DefaultMergeStyle))
    default_merge_style: z.string().optional(),
    default_allow_maintainer_edit: z.boolean().optional(),
    archived: z.boolean().optional(),
    mirror_interval: z.string().max(64).optional(),
    enable_prune: z.boolean().optional(),
    mirror_username: z.string().max(255).optional(),
    mirror_password: z.string().max(255).optional(),
    mirror_token: z.string().max(255).optional(),
  })
  .openapi("EditRepoOption", { description: "EditRepoOption options when editing a repository's properties" });

export const CreateForkOptionSchema = z
  .object({ organization: z.string().max(255).optional(), name: alphaDashDot(100).optional() })
  .openapi("CreateForkOption", { description: "CreateForkOption options for creating a fork" });

export type CreateRepoOption = z.infer<typeof CreateRepoOptionSchema>;
export type GenerateRepoOption = z.infer<typeof GenerateRepoOptionSchema>;
export type EditRepoOption = z.infer<typeof EditRepoOptionSchema>;

/** Gitea's Attachment (files on comments and releases). */
export const AttachmentSchema = z
  .object({
    id: z.number().int().openapi({ format: "int64" }),
    name: z.string(),
    size: z.number().int().openapi({ format: "int64" }),
    download_count: z.number().int().openapi({ format: "int64" }),
    created_at: z.string().openapi({ format: "date-time" }),
    uuid: z.string(),
    browser_download_url: z.string(),
  })
  .openapi("Attachment", { description: "Attachment a generic attachment" });

/** Gitea's Comment; feed entries carry none until issues exist (`Activity.comment` is null). */
export const CommentSchema = z
  .object({
    id: z.number().int().openapi({ format: "int64" }),
    html_url: z.string(),
    pull_request_url: z.string(),
    issue_url: z.string(),
    user: nullableRef(UserSchema),
    original_author: z.string(),
    original_author_id: z.number().int().openapi({ format: "int64" }),
    body: z.string(),
    assets: z.array(AttachmentSchema),
    created_at: z.string().openapi({ format: "date-time" }),
    updated_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Comment", { description: "Comment represents a comment on a commit or issue" });

/** Gitea's Activity (feed entry). */
export const ActivitySchema = z
  .object({
    id: int64,
    user_id: int64,
    op_type: z.string(),
    act_user_id: int64,
    act_user: UserSchema,
    repo_id: int64,
    repo: nullableRef(RepositorySchema),
    comment_id: int64,
    comment: nullableRef(CommentSchema),
    ref_name: z.string(),
    is_private: z.boolean(),
    content: z.string(),
    created: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Activity");
