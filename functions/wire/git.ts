/**
 * Gitea's JSON structs for git content (branches, references, commits) as zod schemas, registered
 * under Gitea's definition names. E-mail fields carry no `email` format: they are what a commit
 * says, which git does not check.
 */
import { z } from "@hono/zod-openapi";
import { nullableRef } from "../lib/openapi.ts";
import { UserSchema } from "./user.ts";

const time = z.string().openapi({ format: "date-time" });
const int64 = z.number().int().openapi({ format: "int64" });
/** Go's nil slice: `null` on the wire. */
const names = z.array(z.string()).nullable();

export const PayloadUserSchema = z
  .object({
    name: z.string().openapi({ description: "Full name of the commit author" }),
    email: z.string().openapi({ format: "email" }),
    username: z.string().openapi({ description: "username of the user" }),
  })
  .openapi("PayloadUser", { description: "PayloadUser represents the author or committer of a commit" });

export const PayloadCommitVerificationSchema = z
  .object({
    verified: z.boolean(),
    reason: z.string(),
    signature: z.string(),
    signer: nullableRef(PayloadUserSchema),
    payload: z.string(),
  })
  .openapi("PayloadCommitVerification", { description: "PayloadCommitVerification represents the GPG verification of a commit" });

export const PayloadCommitSchema = z
  .object({
    id: z.string().openapi({ description: "sha1 hash of the commit" }),
    message: z.string(),
    url: z.string(),
    author: PayloadUserSchema,
    committer: PayloadUserSchema,
    verification: nullableRef(PayloadCommitVerificationSchema),
    timestamp: time,
    added: names,
    removed: names,
    modified: names,
  })
  .openapi("PayloadCommit", { description: "PayloadCommit represents a commit" });

export const BranchSchema = z
  .object({
    name: z.string(),
    commit: PayloadCommitSchema,
    protected: z.boolean(),
    required_approvals: int64,
    enable_status_check: z.boolean(),
    status_check_contexts: z.array(z.string()),
    user_can_push: z.boolean(),
    user_can_merge: z.boolean(),
    effective_branch_protection_name: z.string(),
  })
  .openapi("Branch", { description: "Branch represents a repository branch" });

export const CreateBranchRepoOptionSchema = z
  .object({
    new_branch_name: z.string().openapi({ description: "Name of the branch to create" }),
    old_branch_name: z.string().optional().openapi({ description: "Deprecated: true\nName of the old branch to create from" }),
    old_ref_name: z.string().optional().openapi({ description: "Name of the old branch/tag/commit to create from" }),
  })
  .openapi("CreateBranchRepoOption", { description: "CreateBranchRepoOption options when creating a branch in a repository" });

export const UpdateBranchRepoOptionSchema = z
  .object({
    new_commit_id: z.string().openapi({ description: "New commit SHA (or any ref) the branch should point to" }),
    old_commit_id: z.string().optional().openapi({ description: "Expected old commit SHA of the branch; if provided it must match the current tip" }),
    force: z.boolean().optional().openapi({ description: "Force update even if the change is not a fast-forward" }),
  })
  .openapi("UpdateBranchRepoOption", { description: "UpdateBranchRepoOption options when updating a branch reference in a repository" });

export const RenameBranchRepoOptionSchema = z
  .object({ name: z.string().openapi({ description: "New branch name", uniqueItems: true } as never) })
  .openapi("RenameBranchRepoOption", { description: "RenameBranchRepoOption options when renaming a branch in a repository" });

export const GitObjectSchema = z
  .object({ type: z.string(), sha: z.string(), url: z.string() })
  .openapi("GitObject", { title: "GitObject represents a Git object." });

export const ReferenceSchema = z
  .object({ ref: z.string(), url: z.string(), object: GitObjectSchema })
  .openapi("Reference", { title: "Reference represents a Git reference." });

export const CommitMetaSchema = z
  .object({ url: z.string(), sha: z.string(), created: time })
  .openapi("CommitMeta", { title: "CommitMeta contains meta information of a commit in terms of API." });

export const CommitUserSchema = z
  .object({ name: z.string(), email: z.string().openapi({ format: "email" }), date: z.string() })
  .openapi("CommitUser", { title: "CommitUser contains information of a user in the context of a commit." });

export const RepoCommitSchema = z
  .object({
    url: z.string(),
    author: CommitUserSchema,
    committer: CommitUserSchema,
    message: z.string(),
    tree: CommitMetaSchema,
    verification: nullableRef(PayloadCommitVerificationSchema),
  })
  .openapi("RepoCommit", { title: "RepoCommit contains information of a commit in the context of a repository." });

export const CommitAffectedFilesSchema = z
  .object({ filename: z.string(), status: z.string() })
  .openapi("CommitAffectedFiles", { description: "CommitAffectedFiles store information about files affected by the commit" });

export const CommitStatsSchema = z
  .object({ total: int64, additions: int64, deletions: int64 })
  .openapi("CommitStats", { description: "CommitStats is statistics for a RepoCommit" });

export const CommitSchema = z
  .object({
    url: z.string(),
    sha: z.string(),
    created: time,
    html_url: z.string(),
    commit: RepoCommitSchema,
    author: nullableRef(UserSchema),
    committer: nullableRef(UserSchema),
    parents: z.array(CommitMetaSchema),
    files: z.array(CommitAffectedFilesSchema).nullable(),
    stats: nullableRef(CommitStatsSchema),
  })
  .openapi("Commit", { title: "Commit contains information generated from a Git commit." });

export const TagSchema = z
  .object({
    name: z.string().openapi({ description: "The name of the tag" }),
    message: z.string().openapi({ description: "The message associated with the tag" }),
    id: z.string().openapi({ description: "The ID (SHA) of the tag" }),
    commit: CommitMetaSchema,
    zipball_url: z.string().optional().openapi({ description: "The URL to download the zipball archive" }),
    tarball_url: z.string().optional().openapi({ description: "The URL to download the tarball archive" }),
  })
  .openapi("Tag", { description: "Tag represents a repository tag" });

export const CreateTagOptionSchema = z
  .object({
    tag_name: z.string().openapi({ description: "The name of the tag to create" }),
    message: z.string().optional().openapi({ description: "The message to associate with the tag" }),
    target: z.string().optional().openapi({ description: "The target commit SHA or branch name for the tag" }),
  })
  .openapi("CreateTagOption", { description: "CreateTagOption options when creating a tag" });

export const AnnotatedTagObjectSchema = z
  .object({
    type: z.string().openapi({ description: "The type of the tagged object (e.g., commit, tree)" }),
    url: z.string().openapi({ description: "The URL to access the tagged object" }),
    sha: z.string().openapi({ description: "The SHA hash of the tagged object" }),
  })
  .openapi("AnnotatedTagObject", { description: "AnnotatedTagObject contains meta information of the tag object" });

export const AnnotatedTagSchema = z
  .object({
    tag: z.string().openapi({ description: "The name of the annotated tag" }),
    sha: z.string().openapi({ description: "The SHA hash of the annotated tag" }),
    url: z.string().openapi({ description: "The URL to access the annotated tag" }),
    message: z.string().openapi({ description: "The message associated with the annotated tag" }),
    tagger: CommitUserSchema,
    object: AnnotatedTagObjectSchema,
    verification: PayloadCommitVerificationSchema,
  })
  .openapi("AnnotatedTag", { description: "AnnotatedTag represents an annotated tag" });

export const GitEntrySchema = z
  .object({
    path: z.string().openapi({ description: "Path is the file or directory path" }),
    mode: z.string().openapi({ description: "Mode is the file mode (permissions)" }),
    type: z.string().openapi({ description: "Type indicates if this is a file, directory, or symlink" }),
    size: int64.openapi({ description: "Size is the file size in bytes" }),
    sha: z.string().openapi({ description: "SHA is the Git object SHA" }),
    url: z.string().openapi({ description: "URL is the API URL for this tree entry" }),
  })
  .openapi("GitEntry", { description: "GitEntry represents a git tree" });

export const GitTreeResponseSchema = z
  .object({
    sha: z.string().openapi({ description: "SHA is the tree object SHA" }),
    url: z.string().openapi({ description: "URL is the API URL for this tree" }),
    // Go's nil slice: an empty tree, or a page past its end, is `null`
    tree: z.array(GitEntrySchema).nullable().openapi({ description: "Entries contains the tree entries (files and directories)" }),
    truncated: z.boolean().openapi({ description: "Truncated indicates if the response was truncated due to size" }),
    page: int64.openapi({ description: "Page is the current page number for pagination" }),
    total_count: int64.openapi({ description: "TotalCount is the total number of entries in the tree" }),
  })
  .openapi("GitTreeResponse", { description: "GitTreeResponse returns a git tree" });

export const GitBlobResponseSchema = z
  .object({
    content: z.string().nullable().openapi({ description: "The content of the git blob (may be base64 encoded)" }),
    encoding: z.string().nullable().openapi({ description: "The encoding used for the content (e.g., \"base64\")" }),
    url: z.string().openapi({ description: "The URL to access this git blob" }),
    sha: z.string().openapi({ description: "The SHA hash of the git blob" }),
    size: int64.openapi({ description: "The size of the git blob in bytes" }),
    lfs_oid: z.string().optional().openapi({ description: "The LFS object ID if this blob is stored in LFS" }),
    lfs_size: int64.optional().openapi({ description: "The size of the LFS object if this blob is stored in LFS" }),
  })
  .openapi("GitBlobResponse", { description: "GitBlobResponse represents a git blob" });
