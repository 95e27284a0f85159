/** Repository routes: search, create (user/org/deprecated), generate, fork, read, edit, delete and lists. */
import { objectsOf } from "../lib/git-storage.ts";
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses, isInternalFailure } from "../lib/errors.ts";
import { idOf, idPathParam, jsonBody, jsonResponse, pathParam } from "../lib/openapi.ts";
import { PageQuery, pageOf, pageOrAll, setPageHeaders } from "../lib/pagination.ts";
import {
  codeReaderGuard,
  createFork,
  createRepo,
  deleteRepo,
  editRepo,
  generateRepo,
  getRepoById,
  getRepoWithParent,
  listForks,
  listMyRepos,
  listOwnerRepos,
  orgRepoGuard,
  repoAdminGuard,
  searchRepos,
  templateReaderGuard,
} from "../services/repos.ts";
import { repoFeeds } from "../services/feeds.ts";
import { getIssueConfig, getIssueConfigValidation, getIssueTemplates } from "../services/issue-templates.ts";
import { ActivitySchema, CreateForkOptionSchema, CreateRepoOptionSchema, EditRepoOptionSchema, GenerateRepoOptionSchema, RepositorySchema, SearchResultsSchema } from "../wire/repo.ts";
import { boolParam, dateParam, formBool, formInt64, formOptionalBool, intParam, textParam } from "../lib/query.ts";

export const repos = createRouter();



const RepoList = z.array(RepositorySchema);
const ownerRepo = { owner: pathParam("owner", "owner of the repo"), repo: pathParam("repo", "name of the repo") };
const repoScope = { scopes: ["repository"] } as const;

const repoSearch = apiRoute({
  method: "get",
  path: "/repos/search",
  operationId: "repoSearch",
  tags: ["repository"],
  summary: "Search for repositories",
  auth: repoScope,
  request: {
    query: PageQuery.extend({
      q: textParam("q", "keyword"),
      topic: boolParam("topic", "Limit search to repositories with keyword as topic"),
      includeDesc: boolParam("includeDesc", "include search of keyword within repository description"),
      uid: intParam("uid", "search only for repos that the user with the given id owns or contributes to"),
      priority_owner_id: intParam("priority_owner_id", "repo owner to prioritize in the results"),
      team_id: intParam("team_id", "search only for repos that belong to the given team id"),
      starredBy: intParam("starredBy", "search only for repos that the user with the given id has starred"),
      private: boolParam("private", "include private repositories this user has access to (defaults to true)"),
      is_private: boolParam("is_private", "show only pubic, private or all repositories (defaults to all)"),
      template: boolParam("template", "include template repositories this user has access to (defaults to true)"),
      archived: boolParam("archived", "show only archived, non-archived or all repositories (defaults to all)"),
      mode: textParam("mode", 'type of repository to search for. Supported values are "fork", "source", "mirror" and "collaborative"'),
      exclusive: boolParam("exclusive", "if `uid` is given, search only for repos that the user owns"),
      sort: textParam("sort", 'sort repos by attribute. Supported values are "alpha", "created", "updated", "size", "git_size", "lfs_size", "stars", "forks" and "id". Default is "alpha"'),
      order: textParam("order", 'sort order, either "asc" (ascending) or "desc" (descending). Default is "asc", ignored if "sort" is not specified.'),
    }),
  },
  responses: {
    200: jsonResponse(SearchResultsSchema, "SearchResults"),
    ...errorResponses(422),
    500: jsonResponse(z.object({ ok: z.boolean(), error: z.string() }).openapi("SearchError"), "SearchError"),
  },
});
repos.openapi(repoSearch, async (c) => {
  const q = c.req.valid("query");
  const page = pageOf(q, c.get("settings").api);
  try {
    const { total, data } = await searchRepos(
      ctxOf(c),
      {
        q: q.q,
        // Gitea's reading of each parameter (routers/api/v1/repo/repo.go Search).
        topic: formBool(q.topic),
        includeDesc: formBool(q.includeDesc),
        uid: formInt64(q.uid),
        priorityOwnerId: formInt64(q.priority_owner_id),
        teamId: formInt64(q.team_id),
        starredBy: formInt64(q.starredBy),
        private: q.private === undefined || q.private === "" || formBool(q.private),
        isPrivate: formOptionalBool(q.is_private),
        template: formOptionalBool(q.template),
        archived: formOptionalBool(q.archived),
        mode: q.mode,
        exclusive: formBool(q.exclusive),
        sort: q.sort,
        order: q.order,
      },
      page,
    );
    setPageHeaders(c, total, page);
    return c.json({ ok: true, data }, 200);
  } catch (err) {
    // Search rule 4: an internal failure is a 500 with the search-error envelope.
    if (isInternalFailure(err)) {
      console.error("repo search failed", err);
      return c.json({ ok: false, error: "SearchRepositories internal failure" }, 500);
    }
    throw err;
  }
});

const createCurrentUserRepo = apiRoute({
  method: "post",
  path: "/user/repos",
  operationId: "createCurrentUserRepo",
  tags: ["repository", "user"],
  summary: "Create a repository",
  auth: { scopes: ["user", "repository"], signIn: true },
  request: jsonBody(CreateRepoOptionSchema),
  responses: { 201: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(400, 401, 403, 409, 422) },
});
repos.openapi(createCurrentUserRepo, async (c) => c.json(await createRepo(ctxOf(c), c.req.valid("json"), null, { objects: objectsOf(c) }), 201));

const userCurrentListRepos = apiRoute({
  method: "get",
  path: "/user/repos",
  operationId: "userCurrentListRepos",
  tags: ["user"],
  summary: "List the repos that the authenticated user owns",
  auth: { scopes: ["user", "repository"], signIn: true },
  request: { query: PageQuery },
  responses: { 200: jsonResponse(RepoList, "RepositoryList"), ...errorResponses(401, 403) },
});
repos.openapi(userCurrentListRepos, async (c) => {
  const page = pageOf(c.req.valid("query"), c.get("settings").api);
  const { total, data } = await listMyRepos(ctxOf(c), page);
  setPageHeaders(c, total, page);
  return c.json(data, 200);
});

const userListRepos = apiRoute({
  method: "get",
  path: "/users/{username}/repos",
  operationId: "userListRepos",
  tags: ["user"],
  summary: "List the repos owned by the given user",
  auth: { scopes: ["user", "repository"] },
  request: { params: z.object({ username: pathParam("username", "username of the user whose owned repos are to be listed") }), query: PageQuery },
  responses: { 200: jsonResponse(RepoList, "RepositoryList"), ...errorResponses(404) },
});
repos.openapi(userListRepos, async (c) => {
  const page = pageOf(c.req.valid("query"), c.get("settings").api);
  const { total, data } = await listOwnerRepos(ctxOf(c), c.req.valid("param").username, page, { org: false });
  setPageHeaders(c, total, page);
  return c.json(data, 200);
});

const orgListRepos = apiRoute({
  method: "get",
  path: "/orgs/{org}/repos",
  operationId: "orgListRepos",
  tags: ["organization"],
  summary: "List an organization's repos",
  auth: { scopes: ["organization"] },
  request: { params: z.object({ org: pathParam("org", "name of the organization") }), query: PageQuery },
  responses: { 200: jsonResponse(RepoList, "RepositoryList"), ...errorResponses(404) },
});
repos.openapi(orgListRepos, async (c) => {
  const page = pageOf(c.req.valid("query"), c.get("settings").api);
  const { total, data } = await listOwnerRepos(ctxOf(c), c.req.valid("param").org, page, { org: true });
  setPageHeaders(c, total, page);
  return c.json(data, 200);
});

const createOrgRepo = apiRoute({
  method: "post",
  path: "/orgs/{org}/repos",
  operationId: "createOrgRepo",
  tags: ["organization"],
  summary: "Create a repository in an organization",
  auth: { scopes: ["organization"], signIn: true },
  guard: orgRepoGuard,
  request: { params: z.object({ org: pathParam("org", "name of organization") }), ...jsonBody(CreateRepoOptionSchema) },
  responses: { 201: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(400, 401, 403, 404, 409, 422) },
});
repos.openapi(createOrgRepo, async (c) => c.json(await createRepo(ctxOf(c), c.req.valid("json"), c.req.valid("param").org, { objects: objectsOf(c) }), 201));

const createOrgRepoDeprecated = apiRoute({
  method: "post",
  path: "/org/{org}/repos",
  operationId: "createOrgRepoDeprecated",
  tags: ["organization"],
  summary: "Create a repository in an organization",
  deprecated: true,
  auth: { scopes: ["organization", "repository"], signIn: true },
  request: { params: z.object({ org: pathParam("org", "name of organization") }), ...jsonBody(CreateRepoOptionSchema) },
  responses: { 201: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(400, 401, 403, 404, 409, 422) },
});
repos.openapi(createOrgRepoDeprecated, async (c) => c.json(await createRepo(ctxOf(c), c.req.valid("json"), c.req.valid("param").org, { unknownOrg422: true, objects: objectsOf(c) }), 201));

const repoGetByID = apiRoute({
  method: "get",
  path: "/repositories/{id}",
  operationId: "repoGetByID",
  tags: ["repository"],
  summary: "Get a repository by id",
  auth: { ...repoScope, signIn: true },
  request: {
    params: z.object({ id: idPathParam("id", "id of the repo to get") }),
  },
  responses: { 200: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(401, 404) },
});
repos.openapi(repoGetByID, async (c) => c.json(await getRepoById(ctxOf(c), idOf(c.req.valid("param").id)), 200));

const generateRepoRoute = apiRoute({
  method: "post",
  path: "/repos/{template_owner}/{template_repo}/generate",
  operationId: "generateRepo",
  tags: ["repository"],
  summary: "Create a repository using a template",
  auth: { ...repoScope, signIn: true },
  guard: templateReaderGuard,
  request: {
    params: z.object({ template_owner: pathParam("template_owner", "name of the template repository owner"), template_repo: pathParam("template_repo", "name of the template repository") }),
    ...jsonBody(GenerateRepoOptionSchema),
  },
  responses: { 201: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(401, 403, 404, 409, 422) },
});
repos.openapi(generateRepoRoute, async (c) => {
  const p = c.req.valid("param");
  return c.json(await generateRepo(ctxOf(c), p.template_owner, p.template_repo, c.req.valid("json"), { objects: objectsOf(c) }), 201);
});

const repoGet = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}",
  operationId: "repoGet",
  tags: ["repository"],
  summary: "Get a repository",
  auth: repoScope,
  request: { params: z.object(ownerRepo) },
  responses: { 200: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(404) },
});
repos.openapi(repoGet, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getRepoWithParent(ctxOf(c), p.owner, p.repo), 200);
});

const repoEdit = apiRoute({
  method: "patch",
  path: "/repos/{owner}/{repo}",
  operationId: "repoEdit",
  tags: ["repository"],
  summary: "Edit a repository's properties. Only fields that are set will be changed.",
  auth: { ...repoScope, signIn: true },
  guard: repoAdminGuard,
  request: { params: z.object(ownerRepo), ...jsonBody(EditRepoOptionSchema) },
  responses: { 200: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(401, 403, 404, 422) },
});
repos.openapi(repoEdit, async (c) => {
  const p = c.req.valid("param");
  return c.json(await editRepo(ctxOf(c), p.owner, p.repo, c.req.valid("json")), 200);
});

const repoDelete = apiRoute({
  method: "delete",
  path: "/repos/{owner}/{repo}",
  operationId: "repoDelete",
  tags: ["repository"],
  summary: "Delete a repository",
  auth: { ...repoScope, signIn: true },
  request: { params: z.object(ownerRepo) },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404) },
});
repos.openapi(repoDelete, async (c) => {
  const p = c.req.valid("param");
  await deleteRepo(ctxOf(c), p.owner, p.repo, objectsOf(c));
  return c.body(null, 204);
});

const listForksRoute = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/forks",
  operationId: "listForks",
  tags: ["repository"],
  summary: "List a repository's forks",
  auth: repoScope,
  request: { params: z.object(ownerRepo), query: PageQuery },
  responses: { 200: jsonResponse(RepoList, "RepositoryList"), ...errorResponses(404) },
});
repos.openapi(listForksRoute, async (c) => {
  const p = c.req.valid("param");
  // Gitea's FindForks is a db.FindAndCount: without `page`, every fork; ListForks sets no Link
  const page = pageOrAll(c.req.valid("query"), c.get("settings").api);
  const { total, data } = await listForks(ctxOf(c), p.owner, p.repo, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(data, 200);
});

const createForkRoute = apiRoute({
  method: "post",
  path: "/repos/{owner}/{repo}/forks",
  operationId: "createFork",
  tags: ["repository"],
  summary: "Fork a repository",
  auth: { ...repoScope, signIn: true },
  guard: codeReaderGuard,
  request: { params: z.object({ owner: pathParam("owner", "owner of the repo to fork"), repo: pathParam("repo", "name of the repo to fork") }), body: { content: { "application/json": { schema: CreateForkOptionSchema } }, required: false } },
  responses: { 202: jsonResponse(RepositorySchema, "Repository"), ...errorResponses(401, 403, 404, 409, 422) },
});
repos.openapi(createForkRoute, async (c) => {
  const p = c.req.valid("param");
  let form: { organization?: string; name?: string } = {};
  if (c.req.header("content-length") !== "0" && c.req.header("content-type")?.includes("json")) form = c.req.valid("json") ?? {};
  return c.json(await createFork(ctxOf(c), p.owner, p.repo, form), 202);
});

const repoListActivityFeeds = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/activities/feeds",
  operationId: "repoListActivityFeeds",
  tags: ["repository"],
  summary: "List a repository's activity feeds",
  auth: repoScope,
  request: { params: z.object(ownerRepo), query: PageQuery.extend({ date: dateParam }) },
  responses: { 200: jsonResponse(z.array(ActivitySchema), "ActivityFeedsList"), ...errorResponses(404, 422) },
});
repos.openapi(repoListActivityFeeds, async (c) => {
  const p = c.req.valid("param");
  const q = c.req.valid("query");
  const page = pageOf(q, c.get("settings").api);
  const { total, feeds } = await repoFeeds(ctxOf(c), p.owner, p.repo, q.date, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(feeds, 200);
});

// ---- issue templates and issue config ----

const IssueFormFieldSchema = z
  .object({
    type: z.string(),
    id: z.string(),
    attributes: z.record(z.string(), z.unknown()).nullable(),
    validations: z.record(z.string(), z.unknown()).nullable(),
    visible: z.array(z.string()).optional(),
  })
  .openapi("IssueFormField");
const IssueTemplateStringSlice = z.array(z.string()).openapi("IssueTemplateStringSlice");
const IssueTemplateSchema = z
  .object({
    name: z.string(),
    title: z.string(),
    about: z.string(),
    labels: IssueTemplateStringSlice.nullable(),
    assignees: IssueTemplateStringSlice.nullable(),
    ref: z.string(),
    content: z.string(),
    body: z.array(IssueFormFieldSchema).nullable(),
    file_name: z.string(),
  })
  .openapi("IssueTemplate");
const IssueConfigSchema = z
  .object({
    blank_issues_enabled: z.boolean(),
    contact_links: z.array(z.object({ name: z.string(), url: z.string(), about: z.string() }).openapi("IssueConfigContactLink")).nullable(),
  })
  .openapi("IssueConfig");
const IssueConfigValidationSchema = z.object({ valid: z.boolean(), message: z.string() }).openapi("IssueConfigValidation");

const repoGetIssueTemplates = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/issue_templates",
  operationId: "repoGetIssueTemplates",
  tags: ["repository"],
  summary: "Get available issue templates for a repository",
  auth: repoScope,
  request: { params: z.object(ownerRepo) },
  responses: { 200: jsonResponse(z.array(IssueTemplateSchema).nullable(), "IssueTemplates"), ...errorResponses(403, 404) },
});
repos.openapi(repoGetIssueTemplates, async (c) => {
  const p = c.req.valid("param");
  const { templates, warning } = await getIssueTemplates(ctxOf(c), objectsOf(c), p.owner, p.repo);
  if (warning) c.header("X-Service-Warning", warning);
  return c.json(templates, 200);
});

const repoGetIssueConfig = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/issue_config",
  operationId: "repoGetIssueConfig",
  tags: ["repository"],
  summary: "Returns the issue config for a repo",
  auth: repoScope,
  request: { params: z.object(ownerRepo) },
  responses: { 200: jsonResponse(IssueConfigSchema, "RepoIssueConfig"), ...errorResponses(403, 404) },
});
repos.openapi(repoGetIssueConfig, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getIssueConfig(ctxOf(c), objectsOf(c), p.owner, p.repo), 200);
});

const repoValidateIssueConfig = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/issue_config/validate",
  operationId: "repoValidateIssueConfig",
  tags: ["repository"],
  summary: "Returns the validation information for a issue config",
  auth: repoScope,
  request: { params: z.object(ownerRepo) },
  responses: { 200: jsonResponse(IssueConfigValidationSchema, "RepoIssueConfigValidation"), ...errorResponses(403, 404) },
});
repos.openapi(repoValidateIssueConfig, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getIssueConfigValidation(ctxOf(c), objectsOf(c), p.owner, p.repo), 200);
});
