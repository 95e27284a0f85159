/**
 * Gitea's JSON structs for users, organizations and tokens as zod schemas, registered under
 * Gitea's definition names so both API documents match Gitea's. Edit options keep every field
 * optional: an absent field leaves the stored value unchanged.
 */
import { z } from "@hono/zod-openapi";

const Visibility = z.enum(["public", "limited", "private"]);
const time = z.string().openapi({ format: "date-time" });
const int64 = z.number().int().openapi({ format: "int64" });

export const UserSchema = z
  .object({
    id: int64.openapi({ description: "the user's id" }),
    login: z.string().openapi({ description: "login of the user, same as `username`" }),
    login_name: z.string().openapi({ description: "identifier of the user, provided by the external authenticator (if configured)", default: "empty" }),
    source_id: int64.openapi({ description: "The ID of the user's Authentication Source" }),
    full_name: z.string(),
    email: z.string().openapi({ format: "email" }),
    avatar_url: z.string(),
    html_url: z.string(),
    language: z.string(),
    is_admin: z.boolean(),
    last_login: time,
    created: time,
    restricted: z.boolean(),
    active: z.boolean(),
    prohibit_login: z.boolean(),
    location: z.string(),
    website: z.string(),
    description: z.string(),
    visibility: Visibility,
    followers_count: int64,
    following_count: int64,
    starred_repos_count: int64,
    username: z.string().openapi({ description: "the user's username" }),
  })
  .openapi("User", { description: "User represents a user" });

export const UserListSchema = z.array(UserSchema);

export const OrganizationSchema = z
  .object({
    id: int64,
    name: z.string(),
    full_name: z.string(),
    email: z.string(),
    avatar_url: z.string(),
    description: z.string(),
    website: z.string(),
    location: z.string(),
    visibility: Visibility,
    repo_admin_change_team_access: z.boolean(),
    username: z.string().openapi({ description: "username of the organization\ndeprecated" }),
  })
  .openapi("Organization", { description: "Organization represents an organization" });

export const AccessTokenSchema = z
  .object({
    id: int64,
    name: z.string(),
    sha1: z.string().openapi({ description: "The SHA1 hash of the access token (only shown when the token is created)" }),
    token_last_eight: z.string(),
    scopes: z.array(z.string()),
    created_at: time,
    last_used_at: time,
  })
  .openapi("AccessToken", { title: "AccessToken represents an API access token." });

export const ServerVersionSchema = z.object({ version: z.string() }).openapi("ServerVersion", { description: "ServerVersion wraps the version of the server" });

export const GeneralAPISettingsSchema = z
  .object({
    max_response_items: int64,
    default_paging_num: int64,
    default_git_trees_per_page: int64,
    default_max_blob_size: int64,
    default_max_response_size: int64,
  })
  .openapi("GeneralAPISettings", { description: "GeneralAPISettings contains global api settings exposed by it" });

/** Gitea's `Username` binding: alphanumeric start, then `[-._\w]`, no repeated or trailing specials. */
export const usernameRule = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => /^[\da-zA-Z][-.\w]*$/.test(s) && !/[-._]{2,}|[-._]$/.test(s), { error: "Username" });

const webUrl = z
  .string()
  .max(255)
  .refine((s) => s === "" || /^https?:\/\/[^\s]+$/i.test(s), { error: "Url" });

export const CreateUserOptionSchema = z
  .object({
    username: usernameRule(40),
    // Gitea's binding `Email` (an unanchored pattern), then ValidateEmailForAdmin: both in the service
    email: z.string().max(254).openapi({ format: "email" }),
    full_name: z.string().max(100).optional(),
    password: z.string().max(255).optional(),
    login_name: z.string().max(255).optional(),
    source_id: int64.min(0).optional(),
    must_change_password: z.boolean().optional(),
    send_notify: z.boolean().optional(),
    restricted: z.boolean().optional(),
    visibility: Visibility.optional(),
    created_at: z.iso.datetime({ offset: true }).optional(),
  })
  .openapi("CreateUserOption", { description: "CreateUserOption create user options" });

export const EditUserOptionSchema = z
  .object({
    source_id: int64.min(0).optional(),
    login_name: z.string().max(255).optional(),
    // validated by the service (400, Gitea ValidateEmailForAdmin), documented as Gitea documents it
    email: z.string().max(254).openapi({ format: "email" }).optional(),
    full_name: z.string().max(100).optional(),
    password: z.string().max(255).optional(),
    must_change_password: z.boolean().optional(),
    website: webUrl.optional(),
    location: z.string().max(50).optional(),
    description: z.string().max(255).optional(),
    active: z.boolean().optional(),
    admin: z.boolean().optional(),
    allow_git_hook: z.boolean().optional(),
    allow_import_local: z.boolean().optional(),
    max_repo_creation: int64.min(-1).optional(),
    prohibit_login: z.boolean().optional(),
    allow_create_organization: z.boolean().optional(),
    restricted: z.boolean().optional(),
    visibility: Visibility.optional(),
  })
  .openapi("EditUserOption", { description: "EditUserOption edit user options" });

export const CreateAccessTokenOptionSchema = z
  .object({
    name: z.string().min(1).max(255),
    scopes: z.array(z.string().max(64)).max(64).optional(),
  })
  .openapi("CreateAccessTokenOption", { description: "CreateAccessTokenOption options when create access token" });

const orgFields = {
  full_name: z.string().max(100).optional(),
  email: z.union([z.literal(""), z.email()]).pipe(z.string().max(255)).optional(),
  description: z.string().max(255).optional(),
  website: webUrl.optional(),
  location: z.string().max(50).optional(),
  visibility: z.enum(["", "public", "limited", "private"]).optional(),
  repo_admin_change_team_access: z.boolean().optional(),
};

export const CreateOrgOptionSchema = z
  .object({ username: usernameRule(40), ...orgFields })
  .openapi("CreateOrgOption", { description: "CreateOrgOption options for creating an organization" });

export const EditOrgOptionSchema = z.object(orgFields).openapi("EditOrgOption", { description: "EditOrgOption options for editing an organization" });

export type CreateUserOption = z.infer<typeof CreateUserOptionSchema>;
export type EditUserOption = z.infer<typeof EditUserOptionSchema>;
export type CreateOrgOption = z.infer<typeof CreateOrgOptionSchema>;
export type EditOrgOption = z.infer<typeof EditOrgOptionSchema>;
