/** Label routes of a repository (issue scope) and the label templates (no scope). */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf, read } from "../lib/context.ts";
import { errorResponses, notFound } from "../lib/errors.ts";
import { labelTemplate, labelTemplateNames } from "../lib/labels.ts";
import { idPathParam, jsonResponse, pathParam } from "../lib/openapi.ts";
import { PageQuery, pageOf, pageOrAll, setPageHeaders } from "../lib/pagination.ts";
import { createLabel, deleteLabel, editLabel, getLabel, labelWriterGuard, listLabels } from "../services/labels.ts";
import { textParam } from "../lib/query.ts";

export const labels = createRouter();

const ownerRepo = { owner: pathParam("owner", "owner of the repo"), repo: pathParam("repo", "name of the repo") };
// documented as Gitea documents it (an int64); as in Gitea, GET also takes a label's name (PATCH and DELETE do not)
const withId = z.object({ ...ownerRepo, id: idPathParam("id", "id of the label") });
const issueScope = { scopes: ["issue"] } as const;

export const LabelSchema = z
  .object({
    id: z.number().int().openapi({ format: "int64" }),
    name: z.string(),
    exclusive: z.boolean(),
    is_archived: z.boolean(),
    color: z.string(),
    description: z.string(),
    url: z.string(),
  })
  .openapi("Label", { description: "Label a label to an issue or a pr" });
export const CreateLabelOptionSchema = z
  .object({
    name: z.string().min(1).max(255),
    // Gitea binds only Required: NormalizeColor trims, so " #abc " of any length is a colour
    color: z.string().min(1),
    description: z.string().max(255).optional(),
    exclusive: z.boolean().optional(),
    is_archived: z.boolean().optional(),
  })
  .openapi("CreateLabelOption", { description: "CreateLabelOption options for creating a label" });
export const EditLabelOptionSchema = z
  .object({
    name: z.string().min(1).max(255).optional(),
    color: z.string().optional(),
    description: z.string().max(255).optional(),
    exclusive: z.boolean().optional(),
    is_archived: z.boolean().optional(),
  })
  .openapi("EditLabelOption", { description: "EditLabelOption options for editing a label" });
export const LabelTemplateSchema = z
  .object({ name: z.string(), exclusive: z.boolean(), color: z.string(), description: z.string() })
  .openapi("LabelTemplate", { description: "LabelTemplate info of a Label template" });

const issueListLabels = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/labels",
  operationId: "issueListLabels",
  tags: ["issue"],
  summary: "Get all of a repository's labels",
  auth: issueScope,
  request: { params: z.object(ownerRepo), query: PageQuery.extend({ sort: textParam("sort", "Specifies the sorting method: alphabetically, reversealphabetically, leastissues, mostissues") }) },
  responses: { 200: jsonResponse(z.array(LabelSchema), "LabelList"), ...errorResponses(403, 404) },
});
labels.openapi(issueListLabels, async (c) => {
  const p = c.req.valid("param");
  const q = c.req.valid("query");
  // Gitea's GetLabelsByRepoID pages only when `page` > 0: without it, every label
  const page = pageOrAll(q, c.get("settings").api);
  const { total, labels: list } = await listLabels(ctxOf(c), p.owner, p.repo, q.sort, page);
  setPageHeaders(c, total, page, { link: false });
  return c.json(list, 200);
});

const issueCreateLabel = apiRoute({
  method: "post",
  path: "/repos/{owner}/{repo}/labels",
  operationId: "issueCreateLabel",
  tags: ["issue"],
  summary: "Create a label",
  auth: { ...issueScope, signIn: true },
  guard: labelWriterGuard,
  request: { params: z.object(ownerRepo), body: { content: { "application/json": { schema: CreateLabelOptionSchema } }, required: true } },
  responses: { 201: jsonResponse(LabelSchema, "Label"), ...errorResponses(401, 403, 404, 422) },
});
labels.openapi(issueCreateLabel, async (c) => {
  const p = c.req.valid("param");
  return c.json(await createLabel(ctxOf(c), p.owner, p.repo, c.req.valid("json")), 201);
});

const issueGetLabel = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/labels/{id}",
  operationId: "issueGetLabel",
  tags: ["issue"],
  summary: "Get a single label",
  auth: issueScope,
  request: { params: withId },
  responses: { 200: jsonResponse(LabelSchema, "Label"), ...errorResponses(403, 404) },
});
labels.openapi(issueGetLabel, async (c) => {
  const p = c.req.valid("param");
  return c.json(await getLabel(ctxOf(c), p.owner, p.repo, p.id), 200);
});

const issueEditLabel = apiRoute({
  method: "patch",
  path: "/repos/{owner}/{repo}/labels/{id}",
  operationId: "issueEditLabel",
  tags: ["issue"],
  summary: "Update a label",
  auth: { ...issueScope, signIn: true },
  guard: labelWriterGuard,
  request: { params: withId, body: { content: { "application/json": { schema: EditLabelOptionSchema } }, required: true } },
  responses: { 200: jsonResponse(LabelSchema, "Label"), ...errorResponses(401, 403, 404, 422) },
});
labels.openapi(issueEditLabel, async (c) => {
  const p = c.req.valid("param");
  return c.json(await editLabel(ctxOf(c), p.owner, p.repo, p.id, c.req.valid("json")), 200);
});

const issueDeleteLabel = apiRoute({
  method: "delete",
  path: "/repos/{owner}/{repo}/labels/{id}",
  operationId: "issueDeleteLabel",
  tags: ["issue"],
  summary: "Delete a label",
  auth: { ...issueScope, signIn: true },
  request: { params: withId },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404) },
});
labels.openapi(issueDeleteLabel, async (c) => {
  const p = c.req.valid("param");
  await deleteLabel(ctxOf(c), p.owner, p.repo, p.id);
  return c.body(null, 204);
});

const listLabelTemplates = apiRoute({
  method: "get",
  path: "/label/templates",
  operationId: "listLabelTemplates",
  tags: ["miscellaneous"],
  summary: "Returns a list of all label templates",
  auth: { scopes: [] },
  responses: { 200: jsonResponse(z.array(z.string()), "LabelTemplateList") },
});
labels.openapi(listLabelTemplates, async (c) => {
  await read(ctxOf(c), {});
  return c.json(labelTemplateNames(), 200);
});

const getLabelTemplateInfo = apiRoute({
  method: "get",
  path: "/label/templates/{name}",
  operationId: "getLabelTemplateInfo",
  tags: ["miscellaneous"],
  summary: "Returns all labels in a template",
  auth: { scopes: [] },
  request: { params: z.object({ name: pathParam("name", "name of the template") }) },
  responses: { 200: jsonResponse(z.array(LabelTemplateSchema), "LabelTemplateInfo"), ...errorResponses(404) },
});
labels.openapi(getLabelTemplateInfo, async (c) => {
  await read(ctxOf(c), {});
  const tpl = labelTemplate(c.req.valid("param").name);
  if (!tpl) throw notFound();
  return c.json(tpl, 200);
});
