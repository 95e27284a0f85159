/** Gitea's contents structs (modules/structs/repo_file.go) as zod schemas, under Gitea's definition names. */
import { z } from "@hono/zod-openapi";
import { CommitMetaSchema, CommitUserSchema, PayloadCommitVerificationSchema } from "./git.ts";
import { gitRefName } from "./repo.ts";

const int64 = z.number().int().openapi({ format: "int64" });
const time = z.string().openapi({ format: "date-time" });

export const FileLinksResponseSchema = z
  .object({ self: z.string().nullable(), git: z.string().nullable(), html: z.string().nullable() })
  .openapi("FileLinksResponse", { description: "FileLinksResponse contains the links for a repo's file" });

export const ContentsResponseSchema = z
  .object({
    name: z.string(),
    path: z.string(),
    sha: z.string(),
    last_commit_sha: z.string().optional(),
    last_committer_date: time.optional(),
    last_author_date: time.optional(),
    last_commit_message: z.string().optional(),
    type: z.string().openapi({ description: "`type` will be `file`, `dir`, `symlink`, or `submodule`" }),
    size: int64,
    encoding: z.string().nullable(),
    content: z.string().nullable(),
    target: z.string().nullable(),
    url: z.string().nullable(),
    html_url: z.string().nullable(),
    git_url: z.string().nullable(),
    download_url: z.string().nullable(),
    submodule_git_url: z.string().nullable(),
    lfs_oid: z.string().optional(),
    lfs_size: int64.optional(),
    _links: FileLinksResponseSchema,
  })
  .openapi("ContentsResponse", { description: "ContentsResponse contains information about a repo's entry's (dir, file, symlink, submodule) metadata and content" });


export const FileCommitResponseSchema = z
  .object({
    url: z.string(),
    sha: z.string(),
    created: time,
    html_url: z.string(),
    author: CommitUserSchema,
    committer: CommitUserSchema,
    parents: z.array(CommitMetaSchema),
    message: z.string(),
    tree: CommitMetaSchema,
  })
  .openapi("FileCommitResponse", { description: "FileCommitResponse contains information generated from a Git commit for a repo's file." });

export const FileResponseSchema = z
  .object({ content: ContentsResponseSchema.nullable(), commit: FileCommitResponseSchema, verification: PayloadCommitVerificationSchema })
  .openapi("FileResponse", { description: "FileResponse contains information about a repo's file" });

export const FileDeleteResponseSchema = z
  .object({ content: z.null(), commit: FileCommitResponseSchema, verification: PayloadCommitVerificationSchema })
  .openapi("FileDeleteResponse", { description: "FileDeleteResponse contains information about a repo's file that was deleted" });

export const FilesResponseSchema = z
  .object({ files: z.array(ContentsResponseSchema.nullable()), commit: FileCommitResponseSchema, verification: PayloadCommitVerificationSchema })
  .openapi("FilesResponse", { description: "FilesResponse contains information about multiple files from a repo" });

export const IdentitySchema = z
  .object({ name: z.string().max(100).optional(), email: z.string().max(254).optional() })
  .openapi("Identity", { description: "Identity for a person's identity like an author or committer" });

export const CommitDateOptionsSchema = z
  .object({ author: time.optional(), committer: time.optional() })
  .openapi("CommitDateOptions", { description: "CommitDateOptions store dates for GIT_AUTHOR_DATE and GIT_COMMITTER_DATE" });

/** The fields every file change form shares (Gitea's FileOptions). */
const fileOptions = {
  message: z.string().optional(),
  branch: gitRefName.optional(),
  new_branch: gitRefName.optional(),
  author: IdentitySchema.optional(),
  committer: IdentitySchema.optional(),
  dates: CommitDateOptionsSchema.optional(),
  signoff: z.boolean().optional(),
  force_push: z.boolean().optional(),
};

// `content` (Gitea's ContentBase64) has no Required binding: absent is "", an empty file. Gitea's
// document still lists it as required, and so does ours.
export const CreateFileOptionsSchema = z
  .object({ ...fileOptions, content: z.string().optional() })
  .openapi("CreateFileOptions", { description: "CreateFileOptions options for creating a file", required: ["content"] } as never);
export type CreateFileOptions = z.infer<typeof CreateFileOptionsSchema>;

export const UpdateFileOptionsSchema = z
  .object({ ...fileOptions, content: z.string().optional(), sha: z.string().optional(), from_path: z.string().max(500).optional() })
  .openapi("UpdateFileOptions", { description: "UpdateFileOptions options for updating or creating a file", required: ["content"] } as never);
export type UpdateFileOptions = z.infer<typeof UpdateFileOptionsSchema>;

export const DeleteFileOptionsSchema = z
  .object({ ...fileOptions, sha: z.string().min(1) })
  .openapi("DeleteFileOptions", { description: "DeleteFileOptions options for deleting a file" });
export type DeleteFileOptions = z.infer<typeof DeleteFileOptionsSchema>;

export const ChangeFileOperationSchema = z
  .object({
    operation: z.enum(["create", "update", "upload", "rename", "delete"]),
    path: z.string().min(1).max(500),
    content: z.string().optional(),
    sha: z.string().optional(),
    from_path: z.string().max(500).optional(),
  })
  .openapi("ChangeFileOperation", { description: "ChangeFileOperation for creating, updating or deleting a file" });

export const ChangeFilesOptionsSchema = z
  .object({ ...fileOptions, files: z.array(ChangeFileOperationSchema).min(1) })
  .openapi("ChangeFilesOptions", { description: "ChangeFilesOptions options for creating, updating or deleting multiple files" });
export type ChangeFilesOptions = z.infer<typeof ChangeFilesOptionsSchema>;

/** Options common to every file change, as the service takes them. */
export type FileOptions = Omit<CreateFileOptions, "content">;

export const GetFilesOptionsSchema = z
  .object({ files: z.array(z.string()).optional().openapi({ description: "Files is the list of file paths to retrieve" }) })
  .openapi("GetFilesOptions", { description: "GetFilesOptions options for retrieving metadate and content of multiple files" });

export const ContentsExtResponseSchema = z
  .object({
    dir_contents: z.array(ContentsResponseSchema).optional().openapi({ description: "DirContents contains directory listing when the path represents a directory" }),
    file_contents: ContentsResponseSchema.optional(),
  })
  .openapi("ContentsExtResponse");
