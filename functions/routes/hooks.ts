/** Organization webhook routes (organization scope, organization owners only). */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { idOf, idPathParam, jsonResponse, pathParam } from "../lib/openapi.ts";
import { PageQuery, pageOf, pageOrAll, setPageHeaders } from "../lib/pagination.ts";
import { createHook, deleteHook, editHook, getHook, listHooks } from "../services/hooks.ts";
import { orgOwnerGuard } from "../services/orgs.ts";

export const hooks = createRouter();

const HookSchema = z
  .object({
    id: z.number().int().openapi({ format: "int64" }),
    type: z.string(),
    name: z.string(),
    branch_filter: z.string(),
    config: z.record(z.string(), z.string()),
    events: z.array(z.string()),
    authorization_header: z.string(),
    active: z.boolean(),
    updated_at: z.string().openapi({ format: "date-time" }),
    created_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Hook", { description: "Hook a hook is a web hook when one repository changed" });
const Config = z.record(z.string().max(64), z.string().max(2048)).openapi("CreateHookOptionConfig", { description: "CreateHookOptionConfig has all config options in it" });
const CreateHookOptionSchema = z
  .object({
    type: z.string().max(32).openapi({ enum: ["dingtalk", "discord", "gitea", "gogs", "msteams", "slack", "telegram", "feishu", "wechatwork", "packagist"] }),
    name: z.string().max(255).optional(),
    config: Config,
    events: z.array(z.string().max(64)).max(64).optional(),
    branch_filter: z.string().max(1024).optional(),
    authorization_header: z.string().max(4096).optional(),
    active: z.boolean().optional().openapi({ default: false }),
  })
  .openapi("CreateHookOption", { description: "CreateHookOption options when create a hook" });
const EditHookOptionSchema = z
  .object({
    name: z.string().max(255).optional(),
    config: z.record(z.string().max(64), z.string().max(2048)).optional(),
    events: z.array(z.string().max(64)).max(64).optional(),
    branch_filter: z.string().max(1024).optional(),
    authorization_header: z.string().max(4096).optional(),
    active: z.boolean().optional(),
  })
  .openapi("EditHookOption", { description: "EditHookOption options when modify one hook" });

const auth = { scopes: ["organization"], signIn: true } as const;
const org = pathParam("org", "name of the organization");
const hookId = idPathParam("id", "id of the hook");

const orgListHooks = apiRoute({
  method: "get",
  path: "/orgs/{org}/hooks",
  operationId: "orgListHooks",
  tags: ["organization"],
  summary: "List an organization's webhooks",
  auth,
  request: { params: z.object({ org }), query: PageQuery },
  responses: { 200: jsonResponse(z.array(HookSchema), "HookList"), ...errorResponses(401, 403, 404) },
});
hooks.openapi(orgListHooks, async (c) => {
  // Gitea's ListOwnerHooks is a db.FindAndCount: without `page`, every hook
  const page = pageOrAll(c.req.valid("query"), c.get("settings").api);
  const { total, hooks: list } = await listHooks(ctxOf(c), c.req.valid("param").org, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(list, 200);
});

const orgCreateHook = apiRoute({
  method: "post",
  path: "/orgs/{org}/hooks",
  operationId: "orgCreateHook",
  tags: ["organization"],
  summary: "Create a hook",
  auth,
  guard: orgOwnerGuard,
  request: { params: z.object({ org }), body: { content: { "application/json": { schema: CreateHookOptionSchema } }, required: true } },
  responses: { 201: jsonResponse(HookSchema, "Hook"), ...errorResponses(400, 401, 403, 404, 422) },
});
hooks.openapi(orgCreateHook, async (c) => c.json(await createHook(ctxOf(c), c.req.valid("param").org, c.req.valid("json")), 201));

const orgGetHook = apiRoute({
  method: "get",
  path: "/orgs/{org}/hooks/{id}",
  operationId: "orgGetHook",
  tags: ["organization"],
  summary: "Get a hook",
  auth,
  request: { params: z.object({ org, id: hookId }) },
  responses: { 200: jsonResponse(HookSchema, "Hook"), ...errorResponses(401, 403, 404) },
});
hooks.openapi(orgGetHook, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getHook(ctxOf(c), p.org, idOf(p.id)), 200);
});

const orgEditHook = apiRoute({
  method: "patch",
  path: "/orgs/{org}/hooks/{id}",
  operationId: "orgEditHook",
  tags: ["organization"],
  summary: "Update a hook",
  auth,
  guard: orgOwnerGuard,
  request: { params: z.object({ org, id: hookId }), body: { content: { "application/json": { schema: EditHookOptionSchema } }, required: true } },
  responses: { 200: jsonResponse(HookSchema, "Hook"), ...errorResponses(400, 401, 403, 404, 422) },
});
hooks.openapi(orgEditHook, async (c) => {
  const p = c.req.valid("param");
  return c.json(await editHook(ctxOf(c), p.org, idOf(p.id), c.req.valid("json")), 200);
});

const orgDeleteHook = apiRoute({
  method: "delete",
  path: "/orgs/{org}/hooks/{id}",
  operationId: "orgDeleteHook",
  tags: ["organization"],
  summary: "Delete a hook",
  auth,
  request: { params: z.object({ org, id: hookId }) },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404) },
});
hooks.openapi(orgDeleteHook, async (c) => {
  const p = c.req.valid("param");
  await deleteHook(ctxOf(c), p.org, idOf(p.id));
  return c.body(null, 204);
});
