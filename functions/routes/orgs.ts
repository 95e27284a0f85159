/** Organization routes: create/read/edit/delete, the caller's orgs, members and blocks. */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { jsonResponse, pathParam } from "../lib/openapi.ts";
import { PageQuery, pageOf, pageOrAll, setPageHeaders } from "../lib/pagination.ts";
import {
  blockUser,
  checkBlock,
  createOrg,
  deleteMember,
  deleteOrg,
  editOrg,
  getOrg,
  isMember,
  isPublicMember,
  listBlocks,
  listMembers,
  listMyOrgs,
  orgOwnerGuard,
  unblockUser,
} from "../services/orgs.ts";
import { CreateOrgOptionSchema, EditOrgOptionSchema, OrganizationSchema, UserListSchema } from "../wire/user.ts";
import { orgFeeds } from "../services/feeds.ts";
import { ActivitySchema } from "../wire/repo.ts";
import { dateParam } from "../lib/query.ts";

export const orgs = createRouter();

const org = pathParam("org", "name of the organization");
const username = pathParam("username", "username of the user");
const empty = { 204: { description: "APIEmpty is an empty response" } };
const orgScope = { scopes: ["organization"] } as const;

const orgCreate = apiRoute({
  method: "post",
  path: "/orgs",
  operationId: "orgCreate",
  tags: ["organization"],
  summary: "Create an organization",
  auth: { ...orgScope, signIn: true },
  request: { body: { content: { "application/json": { schema: CreateOrgOptionSchema } }, required: true } },
  responses: { 201: jsonResponse(OrganizationSchema, "Organization"), ...errorResponses(401, 403, 422) },
  "x-codegen-request-body-name": "organization",
});
orgs.openapi(orgCreate, async (c) => c.json(await createOrg(ctxOf(c), c.req.valid("json")), 201));

const orgListCurrentUserOrgs = apiRoute({
  method: "get",
  path: "/user/orgs",
  operationId: "orgListCurrentUserOrgs",
  tags: ["organization"],
  summary: "List the current user's organizations",
  auth: { scopes: ["user", "organization"], signIn: true },
  request: { query: PageQuery },
  responses: { 200: jsonResponse(z.array(OrganizationSchema), "OrganizationList"), ...errorResponses(401, 403, 404) },
});
orgs.openapi(orgListCurrentUserOrgs, async (c) => {
  const page = pageOf(c.req.valid("query"), c.get("settings").api);
  const { total, orgs: list } = await listMyOrgs(ctxOf(c), page);
  setPageHeaders(c, total, page);
  return c.json(list, 200);
});

const orgGet = apiRoute({
  method: "get",
  path: "/orgs/{org}",
  operationId: "orgGet",
  tags: ["organization"],
  summary: "Get an organization",
  auth: orgScope,
  request: { params: z.object({ org: pathParam("org", "name of the organization to get") }) },
  responses: { 200: jsonResponse(OrganizationSchema, "Organization"), ...errorResponses(404) },
});
orgs.openapi(orgGet, async (c) => c.json(await getOrg(ctxOf(c), c.req.valid("param").org), 200));

const orgEdit = apiRoute({
  method: "patch",
  path: "/orgs/{org}",
  operationId: "orgEdit",
  tags: ["organization"],
  summary: "Edit an organization",
  auth: { ...orgScope, signIn: true },
  guard: orgOwnerGuard,
  request: {
    params: z.object({ org: pathParam("org", "name of the organization to edit") }),
    body: { content: { "application/json": { schema: EditOrgOptionSchema } }, required: true },
  },
  responses: { 200: jsonResponse(OrganizationSchema, "Organization"), ...errorResponses(401, 403, 404, 422) },
});
orgs.openapi(orgEdit, async (c) => c.json(await editOrg(ctxOf(c), c.req.valid("param").org, c.req.valid("json")), 200));

const orgDelete = apiRoute({
  method: "delete",
  path: "/orgs/{org}",
  operationId: "orgDelete",
  tags: ["organization"],
  summary: "Delete an organization",
  auth: { ...orgScope, signIn: true },
  request: { params: z.object({ org: pathParam("org", "organization that is to be deleted") }) },
  responses: { ...empty, ...errorResponses(401, 403, 404) },
});
orgs.openapi(orgDelete, async (c) => {
  await deleteOrg(ctxOf(c), c.req.valid("param").org);
  return c.body(null, 204);
});

const orgListMembers = apiRoute({
  method: "get",
  path: "/orgs/{org}/members",
  operationId: "orgListMembers",
  tags: ["organization"],
  summary: "List an organization's members",
  auth: { ...orgScope, signIn: true },
  request: { params: z.object({ org }), query: PageQuery },
  responses: { 200: jsonResponse(UserListSchema, "UserList"), ...errorResponses(401, 404) },
});
orgs.openapi(orgListMembers, async (c) => {
  const page = pageOf(c.req.valid("query"), c.get("settings").api);
  const { total, users } = await listMembers(ctxOf(c), c.req.valid("param").org, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(users, 200);
});

const orgIsMember = apiRoute({
  method: "get",
  path: "/orgs/{org}/members/{username}",
  operationId: "orgIsMember",
  tags: ["organization"],
  summary: "Check if a user is a member of an organization",
  auth: { ...orgScope, signIn: true },
  request: { params: z.object({ org, username: pathParam("username", "username of the user to check for an organization membership") }) },
  responses: {
    204: { description: "user is a member" },
    303: { description: "redirection to /orgs/{org}/public_members/{username}" },
    404: { description: "user is not a member" },
  },
});
orgs.openapi(orgIsMember, async (c) => {
  const p = c.req.valid("param");
  const r = await isMember(ctxOf(c), p.org, p.username);
  if ("redirect" in r) return c.redirect(r.redirect, 303);
  if (r.status === 404) return c.json({ message: "The target couldn't be found.", url: `${c.get("rootUrl")}api/swagger`, errors: [] }, 404);
  return c.body(null, 204);
});

const orgIsPublicMember = apiRoute({
  method: "get",
  path: "/orgs/{org}/public_members/{username}",
  operationId: "orgIsPublicMember",
  tags: ["organization"],
  summary: "Check if a user is a public member of an organization",
  auth: orgScope,
  request: { params: z.object({ org, username }) },
  responses: { 204: { description: "user is a public member" }, 404: { description: "user is not a public member" } },
});
orgs.openapi(orgIsPublicMember, async (c) => {
  const p = c.req.valid("param");
  await isPublicMember(ctxOf(c), p.org, p.username);
  return c.body(null, 204);
});

const orgDeleteMember = apiRoute({
  method: "delete",
  path: "/orgs/{org}/members/{username}",
  operationId: "orgDeleteMember",
  tags: ["organization"],
  summary: "Remove a member from an organization",
  auth: { ...orgScope, signIn: true },
  request: { params: z.object({ org, username: pathParam("username", "username of the user to remove from the organization") }) },
  responses: { 204: { description: "member removed" }, ...errorResponses(401, 403, 404, 422) },
});
orgs.openapi(orgDeleteMember, async (c) => {
  const p = c.req.valid("param");
  await deleteMember(ctxOf(c), p.org, p.username);
  return c.body(null, 204);
});

// ---- organization blocks: org owners only ----

const organizationListBlocks = apiRoute({
  method: "get",
  path: "/orgs/{org}/blocks",
  operationId: "organizationListBlocks",
  tags: ["organization"],
  summary: "List users blocked by the organization",
  auth: { ...orgScope, signIn: true },
  request: { params: z.object({ org }), query: PageQuery },
  responses: { 200: jsonResponse(UserListSchema, "UserList"), ...errorResponses(401, 403, 404) },
});
orgs.openapi(organizationListBlocks, async (c) => {
  // Gitea's FindBlockings is a db.FindAndCount: without `page`, every block
  const page = pageOrAll(c.req.valid("query"), c.get("settings").api);
  const { total, users } = await listBlocks(ctxOf(c), { kind: "org", name: c.req.valid("param").org }, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(users, 200);
});

const organizationCheckUserBlock = apiRoute({
  method: "get",
  path: "/orgs/{org}/blocks/{username}",
  operationId: "organizationCheckUserBlock",
  tags: ["organization"],
  summary: "Check if a user is blocked by the organization",
  auth: { ...orgScope, signIn: true },
  request: { params: z.object({ org, username }) },
  responses: { ...empty, ...errorResponses(401, 403, 404) },
});
orgs.openapi(organizationCheckUserBlock, async (c) => {
  const p = c.req.valid("param");
  await checkBlock(ctxOf(c), { kind: "org", name: p.org }, p.username);
  return c.body(null, 204);
});

const note = z.object({ note: z.string().max(255).optional().openapi({ description: "optional note for the block" }) });

const organizationBlockUser = apiRoute({
  method: "put",
  path: "/orgs/{org}/blocks/{username}",
  operationId: "organizationBlockUser",
  tags: ["organization"],
  summary: "Block a user",
  auth: { ...orgScope, signIn: true },
  request: { params: z.object({ org, username: pathParam("username", "username of the user to block") }), query: note },
  responses: { ...empty, ...errorResponses(400, 401, 403, 404, 422) },
});
orgs.openapi(organizationBlockUser, async (c) => {
  const p = c.req.valid("param");
  await blockUser(ctxOf(c), { kind: "org", name: p.org }, p.username, c.req.valid("query").note ?? "");
  return c.body(null, 204);
});

const organizationUnblockUser = apiRoute({
  method: "delete",
  path: "/orgs/{org}/blocks/{username}",
  operationId: "organizationUnblockUser",
  tags: ["organization"],
  summary: "Unblock a user",
  auth: { ...orgScope, signIn: true },
  request: { params: z.object({ org, username: pathParam("username", "username of the user to unblock") }) },
  responses: { ...empty, ...errorResponses(400, 401, 403, 404, 422) },
});
orgs.openapi(organizationUnblockUser, async (c) => {
  const p = c.req.valid("param");
  await unblockUser(ctxOf(c), { kind: "org", name: p.org }, p.username);
  return c.body(null, 204);
});

const orgListActivityFeeds = apiRoute({
  method: "get",
  path: "/orgs/{org}/activities/feeds",
  operationId: "orgListActivityFeeds",
  tags: ["organization"],
  summary: "List an organization's activity feeds",
  auth: orgScope,
  request: {
    params: z.object({ org: pathParam("org", "name of the org") }),
    query: PageQuery.extend({ date: dateParam }),
  },
  responses: { 200: jsonResponse(z.array(ActivitySchema), "ActivityFeedsList"), ...errorResponses(404, 422) },
});
orgs.openapi(orgListActivityFeeds, async (c) => {
  const q = c.req.valid("query");
  const page = pageOf(q, c.get("settings").api);
  const { total, feeds } = await orgFeeds(ctxOf(c), c.req.valid("param").org, q.date, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(feeds as never, 200);
});
