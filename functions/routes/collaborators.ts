/** Collaborator, reviewer and assignee routes of a repository. */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { jsonResponse, pathParam } from "../lib/openapi.ts";
import { PageQuery, pageOf, pageOrAll, setPageHeaders } from "../lib/pagination.ts";
import { addCollaborator, collaboratorPermission, deleteCollaborator, isCollaborator, listAssignees, listCollaborators, listReviewers } from "../services/collaborators.ts";
import { UserListSchema, UserSchema } from "../wire/user.ts";
import { repoAdminGuard } from "../services/repos.ts";

export const collaborators = createRouter();

const ownerRepo = { owner: pathParam("owner", "owner of the repo"), repo: pathParam("repo", "name of the repo") };
const withCollaborator = z.object({ ...ownerRepo, collaborator: pathParam("collaborator", "username of the collaborator") });
const auth = { scopes: ["repository"], signIn: true } as const;
const empty = { 204: { description: "APIEmpty is an empty response" } };

export const AddCollaboratorOptionSchema = z
  .object({ permission: z.enum(["read", "write", "admin"]).optional() })
  .openapi("AddCollaboratorOption", { description: "AddCollaboratorOption options when adding a user as a collaborator of a repository" });
export const RepoCollaboratorPermissionSchema = z
  .object({ permission: z.string(), role_name: z.string(), user: UserSchema })
  .openapi("RepoCollaboratorPermission", { description: "RepoCollaboratorPermission to get repository permission for a collaborator" });

const repoListCollaborators = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/collaborators",
  operationId: "repoListCollaborators",
  tags: ["repository"],
  summary: "List a repository's collaborators",
  auth,
  request: { params: z.object(ownerRepo), query: PageQuery },
  responses: { 200: jsonResponse(UserListSchema, "UserList"), ...errorResponses(401, 403, 404) },
});
collaborators.openapi(repoListCollaborators, async (c) => {
  const p = c.req.valid("param");
  // Gitea's GetCollaborators is a db.FindAndCount: without `page`, every collaborator
  const page = pageOrAll(c.req.valid("query"), c.get("settings").api);
  const { total, users } = await listCollaborators(ctxOf(c), p.owner, p.repo, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(users, 200);
});

const repoCheckCollaborator = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/collaborators/{collaborator}",
  operationId: "repoCheckCollaborator",
  tags: ["repository"],
  summary: "Check if a user is a collaborator of a repository",
  auth,
  request: { params: withCollaborator },
  responses: { ...empty, ...errorResponses(401, 403, 404, 422) },
});
collaborators.openapi(repoCheckCollaborator, async (c) => {
  const p = c.req.valid("param");
  await isCollaborator(ctxOf(c), p.owner, p.repo, p.collaborator);
  return c.body(null, 204);
});

const repoAddCollaborator = apiRoute({
  method: "put",
  path: "/repos/{owner}/{repo}/collaborators/{collaborator}",
  operationId: "repoAddCollaborator",
  tags: ["repository"],
  summary: "Add or Update a collaborator to a repository",
  auth,
  guard: repoAdminGuard,
  request: { params: withCollaborator, body: { content: { "application/json": { schema: AddCollaboratorOptionSchema } }, required: false } },
  responses: { ...empty, ...errorResponses(401, 403, 404, 422, 500) },
});
collaborators.openapi(repoAddCollaborator, async (c) => {
  const p = c.req.valid("param");
  const form = c.req.header("content-type")?.includes("json") && c.req.header("content-length") !== "0" ? c.req.valid("json") : {};
  await addCollaborator(ctxOf(c), p.owner, p.repo, p.collaborator, form?.permission);
  return c.body(null, 204);
});

const repoDeleteCollaborator = apiRoute({
  method: "delete",
  path: "/repos/{owner}/{repo}/collaborators/{collaborator}",
  operationId: "repoDeleteCollaborator",
  tags: ["repository"],
  summary: "Delete a collaborator from a repository",
  auth,
  request: { params: withCollaborator },
  responses: { ...empty, ...errorResponses(401, 403, 404, 422) },
});
collaborators.openapi(repoDeleteCollaborator, async (c) => {
  const p = c.req.valid("param");
  await deleteCollaborator(ctxOf(c), p.owner, p.repo, p.collaborator);
  return c.body(null, 204);
});

const repoGetRepoPermissions = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/collaborators/{collaborator}/permission",
  operationId: "repoGetRepoPermissions",
  tags: ["repository"],
  summary: "Get repository permissions for a user",
  auth,
  request: { params: withCollaborator },
  responses: { 200: jsonResponse(RepoCollaboratorPermissionSchema, "RepoCollaboratorPermission"), ...errorResponses(401, 403, 404) },
});
collaborators.openapi(repoGetRepoPermissions, async (c) => {
  const p = c.req.valid("param");
  return c.json(await collaboratorPermission(ctxOf(c), p.owner, p.repo, p.collaborator), 200);
});

const repoGetReviewers = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/reviewers",
  operationId: "repoGetReviewers",
  tags: ["repository"],
  summary: "Return all users that can be requested to review in this repo",
  auth,
  request: { params: z.object(ownerRepo) },
  responses: { 200: jsonResponse(UserListSchema, "UserList"), ...errorResponses(401, 403, 404) },
});
collaborators.openapi(repoGetReviewers, async (c) => {
  const p = c.req.valid("param");
  return c.json(await listReviewers(ctxOf(c), p.owner, p.repo), 200);
});

const repoGetAssignees = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/assignees",
  operationId: "repoGetAssignees",
  tags: ["repository"],
  summary: "Return all users that have write access and can be assigned to issues",
  auth,
  request: { params: z.object(ownerRepo) },
  responses: { 200: jsonResponse(UserListSchema, "UserList"), ...errorResponses(401, 403, 404) },
});
collaborators.openapi(repoGetAssignees, async (c) => {
  const p = c.req.valid("param");
  return c.json(await listAssignees(ctxOf(c), p.owner, p.repo), 200);
});
