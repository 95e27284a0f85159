/** User routes: /user, /users/{username}, /users/search, tokens and the caller's blocks. */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { jsonResponse, pathParam } from "../lib/openapi.ts";
import { PageQuery, pageOf, pageOrAll, setPageHeaders } from "../lib/pagination.ts";
import { getAuthenticatedUser, getUserInfo, searchUsers } from "../services/users.ts";
import { createAccessToken, deleteAccessToken, listAccessTokens, tokenOwnerGuard } from "../services/tokens.ts";
import { blockUser, checkBlock, listBlocks, unblockUser } from "../services/orgs.ts";
import { AccessTokenSchema, CreateAccessTokenOptionSchema, UserListSchema, UserSchema } from "../wire/user.ts";
import { userFeeds } from "../services/feeds.ts";
import { ActivitySchema } from "../wire/repo.ts";
import { boolParam, dateParam, formBool, formInt64, intParam, textParam } from "../lib/query.ts";

export const users = createRouter();

const username = pathParam("username", "username of the user");

const userGetCurrent = apiRoute({
  method: "get",
  path: "/user",
  operationId: "userGetCurrent",
  tags: ["user"],
  summary: "Get the authenticated user",
  auth: { scopes: ["user"], signIn: true },
  responses: { 200: jsonResponse(UserSchema, "User"), ...errorResponses(401, 403) },
});
users.openapi(userGetCurrent, async (c) => c.json(await getAuthenticatedUser(ctxOf(c)), 200));

const userSearch = apiRoute({
  method: "get",
  path: "/users/search",
  operationId: "userSearch",
  tags: ["user"],
  summary: "Search for users",
  auth: { scopes: ["user"] },
  request: {
    query: PageQuery.extend({
      q: textParam("q", "keyword"),
      uid: intParam("uid", "ID of the user to search for"),
    }),
  },
  responses: {
    200: jsonResponse(z.object({ data: UserListSchema, ok: z.boolean() }), "SearchResults of a successful search"),
    ...errorResponses(422),
  },
});
users.openapi(userSearch, async (c) => {
  const q = c.req.valid("query");
  const page = pageOf(q, c.get("settings").api);
  const { total, data } = await searchUsers(ctxOf(c), { q: q.q, uid: formInt64(q.uid) }, page);
  setPageHeaders(c, total, page);
  return c.json({ ok: true, data }, 200);
});

const userGet = apiRoute({
  method: "get",
  path: "/users/{username}",
  operationId: "userGet",
  tags: ["user"],
  summary: "Get a user",
  auth: { scopes: ["user"] },
  request: { params: z.object({ username: pathParam("username", "username of the user whose data is to be listed") }) },
  responses: { 200: jsonResponse(UserSchema, "User"), ...errorResponses(404) },
});
users.openapi(userGet, async (c) => c.json(await getUserInfo(ctxOf(c), c.req.valid("param").username), 200));

// ---- tokens: self or site admin, basic authentication only (Gitea reqBasicOrRevProxyAuth) ----

const tokenAuth = { scopes: ["user"], signIn: true, basicOnly: true } as const;

const userGetTokens = apiRoute({
  method: "get",
  path: "/users/{username}/tokens",
  operationId: "userGetTokens",
  tags: ["user"],
  summary: "List the authenticated user's access tokens",
  auth: { ...tokenAuth, scopes: ["user"] },
  request: { params: z.object({ username }), query: PageQuery },
  responses: { 200: jsonResponse(z.array(AccessTokenSchema), "AccessTokenList represents a list of API access token."), ...errorResponses(401, 403, 404) },
});
users.openapi(userGetTokens, async (c) => {
  // Gitea's ListAccessTokens is a db.FindAndCount: without `page`, every token
  const page = pageOrAll(c.req.valid("query"), c.get("settings").api);
  const { total, tokens } = await listAccessTokens(ctxOf(c), c.req.valid("param").username, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(tokens, 200);
});

const userCreateToken = apiRoute({
  method: "post",
  path: "/users/{username}/tokens",
  operationId: "userCreateToken",
  tags: ["user"],
  summary: "Create an access token",
  auth: { ...tokenAuth, scopes: ["user"] },
  guard: tokenOwnerGuard,
  request: {
    params: z.object({ username }),
    body: { content: { "application/json": { schema: CreateAccessTokenOptionSchema } }, required: true },
  },
  responses: { 201: jsonResponse(AccessTokenSchema, "AccessToken represents an API access token."), ...errorResponses(400, 401, 403, 404, 422) },
});
users.openapi(userCreateToken, async (c) => c.json(await createAccessToken(ctxOf(c), c.req.valid("param").username, c.req.valid("json")), 201));

const userDeleteAccessToken = apiRoute({
  method: "delete",
  path: "/users/{username}/tokens/{token}",
  operationId: "userDeleteAccessToken",
  tags: ["user"],
  summary: "delete an access token",
  auth: { ...tokenAuth, scopes: ["user"] },
  request: { params: z.object({ username, token: pathParam("token", "token to be deleted, identified by ID and if not available by name") }) },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404, 422) },
});
users.openapi(userDeleteAccessToken, async (c) => {
  const p = c.req.valid("param");
  await deleteAccessToken(ctxOf(c), p.username, p.token);
  return c.body(null, 204);
});

// ---- the caller's blocks (Gitea 1.22+) ----

const blockee = pathParam("username", "username of the user");
const note = z.object({ note: z.string().max(255).optional().openapi({ description: "optional note for the block" }) });

const userListBlocks = apiRoute({
  method: "get",
  path: "/user/blocks",
  operationId: "userListBlocks",
  tags: ["user"],
  summary: "List users blocked by the authenticated user",
  auth: { scopes: ["user"], signIn: true },
  request: { query: PageQuery },
  responses: { 200: jsonResponse(UserListSchema, "UserList"), ...errorResponses(401, 403) },
});
users.openapi(userListBlocks, async (c) => {
  // Gitea's FindBlockings is a db.FindAndCount: without `page`, every block
  const page = pageOrAll(c.req.valid("query"), c.get("settings").api);
  const { total, users: list } = await listBlocks(ctxOf(c), { kind: "user" }, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(list, 200);
});

const userCheckUserBlock = apiRoute({
  method: "get",
  path: "/user/blocks/{username}",
  operationId: "userCheckUserBlock",
  tags: ["user"],
  summary: "Check if a user is blocked by the authenticated user",
  auth: { scopes: ["user"], signIn: true },
  request: { params: z.object({ username: blockee }) },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 404) },
});
users.openapi(userCheckUserBlock, async (c) => {
  await checkBlock(ctxOf(c), { kind: "user" }, c.req.valid("param").username);
  return c.body(null, 204);
});

const userBlockUser = apiRoute({
  method: "put",
  path: "/user/blocks/{username}",
  operationId: "userBlockUser",
  tags: ["user"],
  summary: "Block a user",
  auth: { scopes: ["user"], signIn: true },
  request: { params: z.object({ username: blockee }), query: note },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(400, 401, 404, 422) },
});
users.openapi(userBlockUser, async (c) => {
  await blockUser(ctxOf(c), { kind: "user" }, c.req.valid("param").username, c.req.valid("query").note ?? "");
  return c.body(null, 204);
});

const userUnblockUser = apiRoute({
  method: "delete",
  path: "/user/blocks/{username}",
  operationId: "userUnblockUser",
  tags: ["user"],
  summary: "Unblock a user",
  auth: { scopes: ["user"], signIn: true },
  request: { params: z.object({ username: blockee }) },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(400, 401, 404, 422) },
});
users.openapi(userUnblockUser, async (c) => {
  await unblockUser(ctxOf(c), { kind: "user" }, c.req.valid("param").username);
  return c.body(null, 204);
});

const userListActivityFeeds = apiRoute({
  method: "get",
  path: "/users/{username}/activities/feeds",
  operationId: "userListActivityFeeds",
  tags: ["user"],
  summary: "List a user's activity feeds",
  auth: { scopes: ["user"] },
  request: {
    params: z.object({ username: pathParam("username", "username of the user whose activity feeds are to be listed") }),
    query: PageQuery.extend({
      "only-performed-by": boolParam("only-performed-by", "if true, only show actions performed by the requested user"),
      date: dateParam,
    }),
  },
  responses: { 200: jsonResponse(z.array(ActivitySchema), "ActivityFeedsList"), ...errorResponses(404, 422) },
});
users.openapi(userListActivityFeeds, async (c) => {
  const q = c.req.valid("query");
  const page = pageOf(q, c.get("settings").api);
  const only = formBool(q["only-performed-by"]);
  const { total, feeds } = await userFeeds(ctxOf(c), c.req.valid("param").username, only, q.date, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(feeds as never, 200);
});
