/**
 * Branches, tags, references, commits and objects of a repository's git data (repository scope;
 * reading needs the code unit, writing needs write on it). Branch, tag and ref names may contain
 * slashes, as Gitea's `/branches/*`, `/tags/*` and `/git/refs/*`: each such route is also served
 * for a multi-segment value.
 */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { objectsOf } from "../lib/git-storage.ts";
import { jsonBody, jsonResponse, pathParam, withSlashes } from "../lib/openapi.ts";
import { expose, PageQuery, pageOf, setPageHeaders } from "../lib/pagination.ts";
import { boolParam, formBool, formInt64, textParam } from "../lib/query.ts";
import { codeWriterGuard, createBranch, deleteBranch, getBranch, listBranches, renameBranch, updateBranch } from "../services/branches.ts";
import { getCommit, listCommits, listRefs, type CommitOptions } from "../services/commits.ts";
import { getAnnotatedTag, getBlob, getTree } from "../services/git-objects.ts";
import { createTag, deleteTag, getTag, listTags } from "../services/tags.ts";
import {
  AnnotatedTagSchema,
  BranchSchema,
  CommitSchema,
  CreateBranchRepoOptionSchema,
  CreateTagOptionSchema,
  RenameBranchRepoOptionSchema,
  UpdateBranchRepoOptionSchema,
  GitBlobResponseSchema,
  GitTreeResponseSchema,
  ReferenceSchema,
  TagSchema,
} from "../wire/git.ts";

export const gitApi = createRouter();

const ownerRepo = { owner: pathParam("owner", "owner of the repo"), repo: pathParam("repo", "name of the repo") };
const repoScope = { scopes: ["repository"] } as const;
const writeScope = { scopes: ["repository"], signIn: true } as const;
const tags = ["repository"];

const CommitOptionsQuery = {
  stat: boolParam("stat", "include diff stats for every commit (disable for speedup, default 'true')"),
  verification: boolParam("verification", "include verification for every commit (disable for speedup, default 'true')"),
  files: boolParam("files", "include a list of affected files for every commit (disable for speedup, default 'true')"),
};

/** Gitea's ParseCommitOptions: absent or empty means true. */
const commitOptions = (q: { stat?: string; verification?: string; files?: string }): CommitOptions => ({
  stat: !q.stat || formBool(q.stat),
  verification: !q.verification || formBool(q.verification),
  files: !q.files || formBool(q.files),
});

const repoListBranches = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/branches",
  operationId: "repoListBranches",
  tags,
  summary: "List a repository's branches",
  auth: repoScope,
  request: { params: z.object(ownerRepo), query: PageQuery.extend({ q: textParam("q", "branch name substring to filter by") }) },
  responses: { 200: jsonResponse(z.array(BranchSchema), "BranchList"), ...errorResponses(403, 404) },
});
gitApi.openapi(repoListBranches, async (c) => {
  const p = c.req.valid("param");
  const q = c.req.valid("query");
  const page = pageOf(q, c.get("settings").api);
  const { total, branches } = await listBranches(ctxOf(c), objectsOf(c), p.owner, p.repo, page, q.q);
  setPageHeaders(c, total, page);
  return c.json(branches, 200);
});

const repoCreateBranch = apiRoute({
  method: "post",
  path: "/repos/{owner}/{repo}/branches",
  operationId: "repoCreateBranch",
  tags,
  summary: "Create a branch",
  auth: writeScope,
  guard: codeWriterGuard,
  request: { params: z.object(ownerRepo), ...jsonBody(CreateBranchRepoOptionSchema) },
  responses: { 201: jsonResponse(BranchSchema, "Branch"), ...errorResponses(401, 403, 404, 409, 422, 423) },
});
gitApi.openapi(repoCreateBranch, async (c) => {
  const p = c.req.valid("param");
  return c.json(await createBranch(ctxOf(c), objectsOf(c), p.owner, p.repo, c.req.valid("json")), 201);
});

const branchParams = z.object({ ...ownerRepo, branch: pathParam("branch", "branch to get") });

const repoGetBranch = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/branches/{branch}",
  operationId: "repoGetBranch",
  tags,
  summary: "Retrieve a specific branch from a repository, including its effective branch protection",
  auth: repoScope,
  request: { params: branchParams },
  responses: { 200: jsonResponse(BranchSchema, "Branch"), ...errorResponses(403, 404) },
});
withSlashes(repoGetBranch, "branch", (r) =>
  gitApi.openapi(r, async (c) => {
    const p = c.req.valid("param");
    return c.json(await getBranch(ctxOf(c), objectsOf(c), p.owner, p.repo, p.branch), 200);
  }),
);

const repoDeleteBranch = apiRoute({
  method: "delete",
  path: "/repos/{owner}/{repo}/branches/{branch}",
  operationId: "repoDeleteBranch",
  tags,
  summary: "Delete a specific branch from a repository",
  auth: writeScope,
  request: { params: branchParams },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404, 409, 423) },
});
withSlashes(repoDeleteBranch, "branch", (r) =>
  gitApi.openapi(r, async (c) => {
    const p = c.req.valid("param");
    await deleteBranch(ctxOf(c), objectsOf(c), p.owner, p.repo, p.branch);
    return c.body(null, 204);
  }),
);

const repoUpdateBranch = apiRoute({
  method: "put",
  path: "/repos/{owner}/{repo}/branches/{branch}",
  operationId: "repoUpdateBranch",
  tags,
  summary: "Update a branch reference to a new commit",
  auth: writeScope,
  guard: codeWriterGuard,
  request: { params: z.object({ ...ownerRepo, branch: pathParam("branch", "name of the branch") }), ...jsonBody(UpdateBranchRepoOptionSchema) },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404, 409, 422, 423) },
});
withSlashes(repoUpdateBranch, "branch", (r) =>
  gitApi.openapi(r, async (c) => {
    const p = c.req.valid("param");
    await updateBranch(ctxOf(c), objectsOf(c), p.owner, p.repo, p.branch, c.req.valid("json"));
    return c.body(null, 204);
  }),
);

const repoRenameBranch = apiRoute({
  method: "patch",
  path: "/repos/{owner}/{repo}/branches/{branch}",
  operationId: "repoRenameBranch",
  tags,
  summary: "Rename a branch",
  auth: writeScope,
  guard: codeWriterGuard,
  request: { params: z.object({ ...ownerRepo, branch: pathParam("branch", "name of the branch") }), ...jsonBody(RenameBranchRepoOptionSchema) },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404, 422, 423) },
});
withSlashes(repoRenameBranch, "branch", (r) =>
  gitApi.openapi(r, async (c) => {
    const p = c.req.valid("param");
    await renameBranch(ctxOf(c), objectsOf(c), p.owner, p.repo, p.branch, c.req.valid("json").name);
    return c.body(null, 204);
  }),
);

// a list, as Gitea documents it; one match equal to the filter is answered as an object (as Gitea)
const ReferenceAnswer = z.union([z.array(ReferenceSchema), ReferenceSchema]);

const repoListAllGitRefs = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/git/refs",
  operationId: "repoListAllGitRefs",
  tags,
  summary: "Get specified ref or filtered repository's refs",
  auth: repoScope,
  request: { params: z.object(ownerRepo) },
  responses: { 200: jsonResponse(ReferenceAnswer, "ReferenceList"), ...errorResponses(403, 404) },
});
gitApi.openapi(repoListAllGitRefs, async (c) => {
  const p = c.req.valid("param");
  return c.json(await listRefs(ctxOf(c), objectsOf(c), p.owner, p.repo, ""), 200);
});

const repoListGitRefs = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/git/refs/{ref}",
  operationId: "repoListGitRefs",
  tags,
  summary: "Get specified ref or filtered repository's refs",
  auth: repoScope,
  request: { params: z.object({ ...ownerRepo, ref: pathParam("ref", "part or full name of the ref") }) },
  responses: { 200: jsonResponse(ReferenceAnswer, "ReferenceList"), ...errorResponses(403, 404) },
});
withSlashes(repoListGitRefs, "ref", (r) =>
  gitApi.openapi(r, async (c) => {
    const p = c.req.valid("param");
    return c.json(await listRefs(ctxOf(c), objectsOf(c), p.owner, p.repo, p.ref), 200);
  }),
);

const repoGetAllCommits = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/commits",
  operationId: "repoGetAllCommits",
  tags,
  summary: "Get a list of all commits from a repository",
  auth: repoScope,
  request: {
    params: z.object(ownerRepo),
    query: z.object({
      sha: textParam("sha", "SHA or branch to start listing commits from (usually 'master')"),
      path: textParam("path", "filepath of a file/dir"),
      since: textParam("since", "Only commits after this date will be returned (ISO 8601 format)", { format: "date-time" }),
      until: textParam("until", "Only commits before this date will be returned (ISO 8601 format)", { format: "date-time" }),
      ...CommitOptionsQuery,
      page: PageQuery.shape.page,
      limit: textParam("limit", "page size of results (ignored if used with 'path')", { type: "integer" }),
      not: textParam("not", "commits that match the given specifier will not be listed."),
    }),
  },
  responses: {
    200: {
      ...jsonResponse(z.array(CommitSchema), "CommitList"),
      headers: {
        "X-HasMore": { description: "True if there is another page", schema: { type: "boolean" } },
        "X-Page": { description: "The current page", schema: { type: "integer", format: "int64" } },
        "X-PageCount": { description: "Total number of pages", schema: { type: "integer", format: "int64" } },
        "X-PerPage": { description: "Commits per page", schema: { type: "integer", format: "int64" } },
        "X-Total": { description: "Total commit count", schema: { type: "integer", format: "int64" } },
      },
    },
    ...errorResponses(403, 404, 409),
  },
});

/** An ISO 8601 time as Unix seconds; one that does not parse is ignored (as Gitea's lenient form values). */
const unixOf = (s: string | undefined) => {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : Math.floor(t / 1000);
};

gitApi.openapi(repoGetAllCommits, async (c) => {
  const p = c.req.valid("param");
  const q = c.req.valid("query");
  const requested = pageOf(q, c.get("settings").api);
  const { total, page, commits } = await listCommits(
    ctxOf(c),
    objectsOf(c),
    p.owner,
    p.repo,
    { sha: q.sha || undefined, path: q.path || undefined, not: q.not || undefined, since: unixOf(q.since), until: unixOf(q.until) },
    requested,
    commitOptions(q),
  );
  setPageHeaders(c, total, page);
  const pageCount = Math.ceil(total / page.limit);
  // kept by Gitea for backwards compatibility
  const legacy = { "X-Page": String(page.page), "X-PerPage": String(page.limit), "X-Total": String(total), "X-PageCount": String(pageCount), "X-HasMore": String(page.page < pageCount) };
  for (const [k, v] of Object.entries(legacy)) {
    c.header(k, v);
    expose(c, k);
  }
  return c.json(commits, 200);
});

const repoGetSingleCommit = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/git/commits/{sha}",
  operationId: "repoGetSingleCommit",
  tags,
  summary: "Get a single commit from a repository",
  auth: repoScope,
  request: { params: z.object({ ...ownerRepo, sha: pathParam("sha", "a git ref or commit sha") }), query: z.object(CommitOptionsQuery) },
  responses: { 200: jsonResponse(CommitSchema, "Commit"), ...errorResponses(403, 404, 422) },
});
gitApi.openapi(repoGetSingleCommit, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getCommit(ctxOf(c), objectsOf(c), p.owner, p.repo, p.sha, commitOptions(c.req.valid("query"))), 200);
});

// ---- tags ----

const repoListTags = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/tags",
  operationId: "repoListTags",
  tags,
  summary: "List a repository's tags",
  auth: repoScope,
  request: {
    params: z.object(ownerRepo),
    query: z.object({
      page: PageQuery.shape.page,
      limit: textParam("limit", "page size of results, default maximum page size is 50", { type: "integer" }),
    }),
  },
  responses: { 200: jsonResponse(z.array(TagSchema), "TagList"), ...errorResponses(403, 404) },
});
gitApi.openapi(repoListTags, async (c) => {
  const p = c.req.valid("param");
  const q = c.req.valid("query");
  // Gitea's FormInt("page"): absent or unparsable is 0, and page 0 lists every tag
  const page = { page: formInt64(q.page), limit: pageOf(q, c.get("settings").api).limit };
  const { total, tags: list } = await listTags(ctxOf(c), objectsOf(c), p.owner, p.repo, page);
  c.header("X-Total-Count", String(total));
  expose(c, "X-Total-Count");
  return c.json(list, 200);
});

const tagParams = (description: string) => z.object({ ...ownerRepo, tag: pathParam("tag", description) });

const repoGetTag = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/tags/{tag}",
  operationId: "repoGetTag",
  tags,
  summary: "Get the tag of a repository by tag name",
  auth: repoScope,
  request: { params: tagParams("name of tag") },
  responses: { 200: jsonResponse(TagSchema, "Tag"), ...errorResponses(403, 404) },
});
withSlashes(repoGetTag, "tag", (r) =>
  gitApi.openapi(r, async (c) => {
    const p = c.req.valid("param");
    return c.json(await getTag(ctxOf(c), objectsOf(c), p.owner, p.repo, p.tag), 200);
  }),
);

// Gitea's document says 200; its handler answers 201 Created, and so do we.
const repoCreateTag = apiRoute({
  method: "post",
  path: "/repos/{owner}/{repo}/tags",
  operationId: "repoCreateTag",
  tags,
  summary: "Create a new git tag in a repository",
  auth: writeScope,
  guard: codeWriterGuard,
  request: { params: z.object(ownerRepo), ...jsonBody(CreateTagOptionSchema) },
  responses: { 201: jsonResponse(TagSchema, "Tag"), ...errorResponses(401, 403, 404, 409, 422, 423) },
});
gitApi.openapi(repoCreateTag, async (c) => {
  const p = c.req.valid("param");
  return c.json(await createTag(ctxOf(c), objectsOf(c), p.owner, p.repo, c.req.valid("json")), 201);
});

const repoDeleteTag = apiRoute({
  method: "delete",
  path: "/repos/{owner}/{repo}/tags/{tag}",
  operationId: "repoDeleteTag",
  tags,
  summary: "Delete a repository's tag by name",
  auth: writeScope,
  request: { params: tagParams("name of tag to delete") },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404, 409, 423) },
});
withSlashes(repoDeleteTag, "tag", (r) =>
  gitApi.openapi(r, async (c) => {
    const p = c.req.valid("param");
    await deleteTag(ctxOf(c), objectsOf(c), p.owner, p.repo, p.tag);
    return c.body(null, 204);
  }),
);

// ---- objects by id ----

const GetTree = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/git/trees/{sha}",
  operationId: "GetTree",
  tags,
  summary: "Gets the tree of a repository.",
  auth: repoScope,
  request: {
    params: z.object({ ...ownerRepo, sha: pathParam("sha", "sha of the commit") }),
    query: z.object({
      recursive: boolParam("recursive", "show all directories and files"),
      page: textParam("page", "page number; the 'truncated' field in the response will be true if there are still more items after this page, false if the last page", { type: "integer" }),
      per_page: textParam("per_page", "number of items per page", { type: "integer" }),
    }),
  },
  responses: { 200: jsonResponse(GitTreeResponseSchema, "GitTreeResponse"), ...errorResponses(400, 403, 404) },
});
gitApi.openapi(GetTree, async (c) => {
  const p = c.req.valid("param");
  const q = c.req.valid("query");
  const tree = await getTree(ctxOf(c), objectsOf(c), p.owner, p.repo, p.sha, { recursive: formBool(q.recursive), page: formInt64(q.page), perPage: formInt64(q.per_page) });
  c.header("X-Total-Count", String(tree.total_count));
  expose(c, "X-Total-Count");
  return c.json(tree, 200);
});

const GetBlob = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/git/blobs/{sha}",
  operationId: "GetBlob",
  tags,
  summary: "Gets the blob of a repository.",
  auth: repoScope,
  request: { params: z.object({ ...ownerRepo, sha: pathParam("sha", "sha of the commit") }) },
  responses: { 200: jsonResponse(GitBlobResponseSchema, "GitBlobResponse"), ...errorResponses(400, 403, 404) },
});
gitApi.openapi(GetBlob, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getBlob(ctxOf(c), objectsOf(c), p.owner, p.repo, p.sha), 200);
});

const GetAnnotatedTag = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/git/tags/{sha}",
  operationId: "GetAnnotatedTag",
  tags,
  summary: "Gets the tag object of an annotated tag (not lightweight tags)",
  auth: repoScope,
  request: { params: z.object({ ...ownerRepo, sha: pathParam("sha", "sha of the tag. The Git tags API only supports annotated tag objects, not lightweight tags.") }) },
  responses: { 200: jsonResponse(AnnotatedTagSchema, "AnnotatedTag"), ...errorResponses(400, 403, 404) },
});
gitApi.openapi(GetAnnotatedTag, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getAnnotatedTag(ctxOf(c), objectsOf(c), p.owner, p.repo, p.sha), 200);
});
