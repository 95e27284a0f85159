/** Site administration of accounts: /admin/users (admin scope, site admins only). */
import { z } from "@hono/zod-openapi";
import { objectsOf } from "../lib/git-storage.ts";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { pathParam } from "../lib/openapi.ts";
import { adminCreateUser, adminDeleteUser, adminEditGuard, adminEditUser } from "../services/users.ts";
import { CreateUserOptionSchema, EditUserOptionSchema, UserSchema } from "../wire/user.ts";
import { boolParam, formBool } from "../lib/query.ts";

export const admin = createRouter();

const auth = { scopes: ["admin"], signIn: true, siteAdmin: true } as const;
const userResponse = { description: "User", content: { "application/json": { schema: UserSchema } } };

const adminCreateUserRoute = apiRoute({
  method: "post",
  path: "/admin/users",
  operationId: "adminCreateUser",
  tags: ["admin"],
  summary: "Create a user",
  auth,
  request: { body: { content: { "application/json": { schema: CreateUserOptionSchema } }, required: true } },
  responses: { 201: userResponse, ...errorResponses(400, 401, 403, 422) },
});
admin.openapi(adminCreateUserRoute, async (c) => c.json(await adminCreateUser(ctxOf(c), c.req.valid("json")), 201));

const adminEditUserRoute = apiRoute({
  method: "patch",
  path: "/admin/users/{username}",
  operationId: "adminEditUser",
  tags: ["admin"],
  summary: "Edit an existing user",
  auth,
  guard: adminEditGuard,
  request: {
    params: z.object({ username: pathParam("username", "username of the user whose data is to be edited") }),
    body: { content: { "application/json": { schema: EditUserOptionSchema } }, required: true },
  },
  responses: { 200: userResponse, ...errorResponses(400, 401, 403, 404, 422) },
});
admin.openapi(adminEditUserRoute, async (c) => c.json(await adminEditUser(ctxOf(c), c.req.valid("param").username, c.req.valid("json")), 200));

const adminDeleteUserRoute = apiRoute({
  method: "delete",
  path: "/admin/users/{username}",
  operationId: "adminDeleteUser",
  tags: ["admin"],
  summary: "Delete a user",
  auth,
  request: {
    params: z.object({ username: pathParam("username", "username of the user to delete") }),
    query: z.object({ purge: boolParam("purge", "purge the user from the system completely") }),
  },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404, 422) },
});
admin.openapi(adminDeleteUserRoute, async (c) => {
  const purge = formBool(c.req.valid("query").purge);
  await adminDeleteUser(ctxOf(c), c.req.valid("param").username, purge, objectsOf(c));
  return c.body(null, 204);
});
