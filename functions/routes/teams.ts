/** Team routes (organization scope; /user/teams in the user scope). */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses, isInternalFailure } from "../lib/errors.ts";
import { idOf, idPathParam, jsonResponse, nullableRef, pathParam } from "../lib/openapi.ts";
import { PageQuery, pageOf, pageOrAll, setPageHeaders } from "../lib/pagination.ts";
import {
  addTeamMember,
  createTeam,
  deleteTeam,
  editTeam,
  getTeam,
  getTeamMember,
  getTeamRepo,
  listMyTeams,
  listOrgTeams,
  listTeamMembers,
  listTeamRepos,
  removeTeamMember,
  setTeamRepo,
  teamCreateGuard,
  teamEditGuard,
  teamFeeds,
} from "../services/teams.ts";
import { OrganizationSchema, UserListSchema, UserSchema } from "../wire/user.ts";
import { RepositorySchema } from "../wire/repo.ts";
import { ActivitySchema } from "../wire/repo.ts";
import { boolParam, dateParam, formBool, textParam } from "../lib/query.ts";

export const teams = createRouter();

const Visibility = z.string().max(16).openapi({ enum: ["public", "limited", "private"] });
const UnitsMap = z.record(z.string().max(64), z.string().max(16));
export const TeamSchema = z
  .object({
    id: z.number().int().openapi({ format: "int64" }),
    name: z.string(),
    description: z.string(),
    organization: nullableRef(OrganizationSchema),
    includes_all_repositories: z.boolean(),
    permission: z.string().openapi({ enum: ["none", "read", "write", "admin", "owner"] }),
    units: z.array(z.string()),
    units_map: z.record(z.string(), z.string()),
    can_create_org_repo: z.boolean(),
    visibility: z.string().openapi({ enum: ["public", "limited", "private"] }),
  })
  .openapi("Team", { description: "Team represents a team in an organization" });
const teamName = z
  .string()
  .max(255)
  .refine((s) => /^[\w.-]+$/.test(s), { error: "AlphaDashDot" });
const CreateTeamOptionSchema = z
  .object({
    name: teamName,
    description: z.string().max(255).optional(),
    includes_all_repositories: z.boolean().optional(),
    permission: z.string().max(16).optional().openapi({ enum: ["read", "write", "admin"] }),
    units: z.array(z.string().max(64)).max(32).optional(),
    units_map: UnitsMap.optional(),
    can_create_org_repo: z.boolean().optional(),
    visibility: Visibility.optional(),
  })
  .openapi("CreateTeamOption", { description: "CreateTeamOption options for creating a team" });
const EditTeamOptionSchema = z
  .object({
    name: z.union([z.literal(""), teamName]).optional(),
    description: z.string().max(255).optional(),
    includes_all_repositories: z.boolean().optional(),
    permission: z.string().max(16).optional().openapi({ enum: ["read", "write", "admin"] }),
    units: z.array(z.string().max(64)).max(32).optional(),
    units_map: UnitsMap.optional(),
    can_create_org_repo: z.boolean().optional(),
    visibility: Visibility.optional(),
  })
  .openapi("EditTeamOption", { description: "EditTeamOption options for editing a team" });

const orgAuth = { scopes: ["organization"], signIn: true } as const;
const teamId = z.object({ id: idPathParam("id", "id of the team") });
const empty = { 204: { description: "APIEmpty is an empty response" } };

const orgListTeams = apiRoute({
  method: "get",
  path: "/orgs/{org}/teams",
  operationId: "orgListTeams",
  tags: ["organization"],
  summary: "List an organization's teams",
  auth: orgAuth,
  request: { params: z.object({ org: pathParam("org", "name of the organization") }), query: PageQuery },
  responses: { 200: jsonResponse(z.array(TeamSchema), "TeamList"), ...errorResponses(401, 403, 404) },
});
teams.openapi(orgListTeams, async (c) => {
  const page = pageOf(c.req.valid("query"), c.get("settings").api);
  const { total, teams: list } = await listOrgTeams(ctxOf(c), c.req.valid("param").org, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(list, 200);
});

const teamSearch = apiRoute({
  method: "get",
  path: "/orgs/{org}/teams/search",
  operationId: "teamSearch",
  tags: ["organization"],
  summary: "Search for teams within an organization",
  auth: orgAuth,
  request: {
    params: z.object({ org: pathParam("org", "name of the organization") }),
    query: PageQuery.extend({
      q: textParam("q", "keywords to search"),
      include_desc: boolParam("include_desc", "include search within team description (defaults to true)"),
    }),
  },
  responses: {
    200: jsonResponse(z.object({ data: z.array(TeamSchema), ok: z.boolean() }), "SearchResults of a successful search"),
    ...errorResponses(401, 404),
    500: jsonResponse(z.object({ ok: z.boolean(), error: z.string() }), "SearchError"),
  },
});
teams.openapi(teamSearch, async (c) => {
  const q = c.req.valid("query");
  const page = pageOf(q, c.get("settings").api);
  try {
    // Gitea: `ctx.FormString("include_desc") == "" || ctx.FormBool("include_desc")`.
    const includeDesc = q.include_desc === undefined || q.include_desc === "" || formBool(q.include_desc);
    const { total, teams: list } = await listOrgTeams(ctxOf(c), c.req.valid("param").org, page, { q: q.q ?? "", includeDesc });
    setPageHeaders(c, total, page);
    return c.json({ ok: true, data: list }, 200);
  } catch (err) {
    if (isInternalFailure(err)) {
      console.error("team search failed", err);
      return c.json({ ok: false, error: "SearchTeam internal failure" }, 500);
    }
    throw err;
  }
});

const orgCreateTeam = apiRoute({
  method: "post",
  path: "/orgs/{org}/teams",
  operationId: "orgCreateTeam",
  tags: ["organization"],
  summary: "Create a team",
  auth: orgAuth,
  guard: teamCreateGuard,
  request: { params: z.object({ org: pathParam("org", "name of the organization") }), body: { content: { "application/json": { schema: CreateTeamOptionSchema } }, required: true } },
  responses: { 201: jsonResponse(TeamSchema, "Team"), ...errorResponses(401, 403, 404, 422, 500) },
});
teams.openapi(orgCreateTeam, async (c) => c.json(await createTeam(ctxOf(c), c.req.valid("param").org, c.req.valid("json")), 201));

const userListTeams = apiRoute({
  method: "get",
  path: "/user/teams",
  operationId: "userListTeams",
  tags: ["user"],
  summary: "List all the teams a user belongs to",
  // A public-only token lists only public teams of public organizations (issue 8 A.2), as /user/orgs lists only public ones.
  auth: { scopes: ["user"], signIn: true },
  request: { query: PageQuery },
  responses: { 200: jsonResponse(z.array(TeamSchema), "TeamList"), ...errorResponses(401, 403) },
});
teams.openapi(userListTeams, async (c) => {
  const page = pageOf(c.req.valid("query"), c.get("settings").api);
  const { total, teams: list } = await listMyTeams(ctxOf(c), page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(list, 200);
});

const orgGetTeam = apiRoute({
  method: "get",
  path: "/teams/{id}",
  operationId: "orgGetTeam",
  tags: ["organization"],
  summary: "Get a team",
  auth: orgAuth,
  request: { params: teamId },
  responses: { 200: jsonResponse(TeamSchema, "Team"), ...errorResponses(401, 404) },
});
teams.openapi(orgGetTeam, async (c) => c.json(await getTeam(ctxOf(c), idOf(c.req.valid("param").id)), 200));

const orgEditTeam = apiRoute({
  method: "patch",
  path: "/teams/{id}",
  operationId: "orgEditTeam",
  tags: ["organization"],
  summary: "Edit a team",
  auth: orgAuth,
  guard: teamEditGuard,
  request: { params: teamId, body: { content: { "application/json": { schema: EditTeamOptionSchema } }, required: true } },
  responses: { 200: jsonResponse(TeamSchema, "Team"), ...errorResponses(401, 404, 422) },
});
teams.openapi(orgEditTeam, async (c) => c.json(await editTeam(ctxOf(c), idOf(c.req.valid("param").id), c.req.valid("json")), 200));

const orgDeleteTeam = apiRoute({
  method: "delete",
  path: "/teams/{id}",
  operationId: "orgDeleteTeam",
  tags: ["organization"],
  summary: "Delete a team",
  auth: orgAuth,
  request: { params: teamId },
  responses: { 204: { description: "team deleted" }, ...errorResponses(401, 404, 422) },
});
teams.openapi(orgDeleteTeam, async (c) => {
  await deleteTeam(ctxOf(c), idOf(c.req.valid("param").id));
  return c.body(null, 204);
});

const orgListTeamMembers = apiRoute({
  method: "get",
  path: "/teams/{id}/members",
  operationId: "orgListTeamMembers",
  tags: ["organization"],
  summary: "List a team's members",
  auth: orgAuth,
  request: { params: teamId, query: PageQuery },
  responses: { 200: jsonResponse(UserListSchema, "UserList"), ...errorResponses(401, 404) },
});
teams.openapi(orgListTeamMembers, async (c) => {
  // Gitea's GetTeamMembers pages only when `page` > 0: without it, every member
  const page = pageOrAll(c.req.valid("query"), c.get("settings").api);
  const { total, users } = await listTeamMembers(ctxOf(c), idOf(c.req.valid("param").id), page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(users, 200);
});

const memberParams = teamId.extend({ username: pathParam("username", "username of the user") });

const orgListTeamMember = apiRoute({
  method: "get",
  path: "/teams/{id}/members/{username}",
  operationId: "orgListTeamMember",
  tags: ["organization"],
  summary: "List a particular member of team",
  auth: orgAuth,
  request: { params: memberParams },
  responses: { 200: jsonResponse(UserSchema, "User"), ...errorResponses(401, 404) },
});
teams.openapi(orgListTeamMember, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getTeamMember(ctxOf(c), idOf(p.id), p.username), 200);
});

const orgAddTeamMember = apiRoute({
  method: "put",
  path: "/teams/{id}/members/{username}",
  operationId: "orgAddTeamMember",
  tags: ["organization"],
  summary: "Add a team member",
  auth: orgAuth,
  request: { params: memberParams },
  responses: { ...empty, ...errorResponses(401, 403, 404) },
});
teams.openapi(orgAddTeamMember, async (c) => {
  const p = c.req.valid("param");
  await addTeamMember(ctxOf(c), idOf(p.id), p.username);
  return c.body(null, 204);
});

const orgRemoveTeamMember = apiRoute({
  method: "delete",
  path: "/teams/{id}/members/{username}",
  operationId: "orgRemoveTeamMember",
  tags: ["organization"],
  summary: "Remove a team member",
  auth: orgAuth,
  request: { params: memberParams },
  responses: { ...empty, ...errorResponses(401, 404, 422) },
});
teams.openapi(orgRemoveTeamMember, async (c) => {
  const p = c.req.valid("param");
  await removeTeamMember(ctxOf(c), idOf(p.id), p.username);
  return c.body(null, 204);
});

const orgListTeamRepos = apiRoute({
  method: "get",
  path: "/teams/{id}/repos",
  operationId: "orgListTeamRepos",
  tags: ["organization"],
  summary: "List a team's repos",
  auth: orgAuth,
  request: { params: teamId, query: PageQuery },
  responses: { 200: jsonResponse(z.array(RepositorySchema), "RepositoryList"), ...errorResponses(401, 404) },
});
teams.openapi(orgListTeamRepos, async (c) => {
  const page = pageOf(c.req.valid("query"), c.get("settings").api);
  const { total, data } = await listTeamRepos(ctxOf(c), idOf(c.req.valid("param").id), page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(data, 200);
});

const repoParams = teamId.extend({ org: pathParam("org", "organization that owns the repo"), repo: pathParam("repo", "name of the repo") });

const orgListTeamRepo = apiRoute({
  method: "get",
  path: "/teams/{id}/repos/{org}/{repo}",
  operationId: "orgListTeamRepo",
  tags: ["organization"],
  summary: "List a particular repo of team",
  auth: orgAuth,
  request: { params: repoParams },
  responses: { 200: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(401, 404) },
});
teams.openapi(orgListTeamRepo, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getTeamRepo(ctxOf(c), idOf(p.id), p.org, p.repo), 200);
});

const orgAddTeamRepository = apiRoute({
  method: "put",
  path: "/teams/{id}/repos/{org}/{repo}",
  operationId: "orgAddTeamRepository",
  tags: ["organization"],
  summary: "Add a repository to a team",
  auth: orgAuth,
  request: { params: repoParams },
  responses: { ...empty, ...errorResponses(401, 403, 404) },
});
teams.openapi(orgAddTeamRepository, async (c) => {
  const p = c.req.valid("param");
  await setTeamRepo(ctxOf(c), idOf(p.id), p.org, p.repo, true);
  return c.body(null, 204);
});

const orgRemoveTeamRepository = apiRoute({
  method: "delete",
  path: "/teams/{id}/repos/{org}/{repo}",
  operationId: "orgRemoveTeamRepository",
  tags: ["organization"],
  summary: "Remove a repository from a team",
  auth: orgAuth,
  request: { params: repoParams },
  responses: { ...empty, ...errorResponses(401, 403, 404) },
});
teams.openapi(orgRemoveTeamRepository, async (c) => {
  const p = c.req.valid("param");
  await setTeamRepo(ctxOf(c), idOf(p.id), p.org, p.repo, false);
  return c.body(null, 204);
});

const orgListTeamActivityFeeds = apiRoute({
  method: "get",
  path: "/teams/{id}/activities/feeds",
  operationId: "orgListTeamActivityFeeds",
  tags: ["organization"],
  summary: "List a team's activity feeds",
  auth: orgAuth,
  request: { params: teamId, query: PageQuery.extend({ date: dateParam }) },
  responses: { 200: jsonResponse(z.array(ActivitySchema), "ActivityFeedsList"), ...errorResponses(401, 404, 422) },
});
teams.openapi(orgListTeamActivityFeeds, async (c) => {
  const q = c.req.valid("query");
  const page = pageOf(q, c.get("settings").api);
  const { total, feeds } = await teamFeeds(ctxOf(c), idOf(c.req.valid("param").id), q.date, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(feeds as never, 200);
});
