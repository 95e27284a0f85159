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
