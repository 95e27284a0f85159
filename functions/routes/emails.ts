/** The authenticated user's e-mail addresses (user scope; private data: not for public-only tokens). */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { jsonResponse } from "../lib/openapi.ts";
import { addEmails, deleteEmails, listEmails } from "../services/emails.ts";

export const emails = createRouter();

const EmailSchema = z
  .object({ email: z.string().openapi({ format: "email" }), verified: z.boolean(), primary: z.boolean(), user_id: z.number().int().openapi({ format: "int64" }), username: z.string() })
  .openapi("Email", { description: "Email an email address belonging to a user" });
const CreateEmailOptionSchema = z
  .object({ emails: z.array(z.string().max(254)).max(50).optional().openapi({ description: "email addresses to add" }) })
  .openapi("CreateEmailOption", { description: "CreateEmailOption options when creating email addresses" });
const DeleteEmailOptionSchema = z
  .object({ emails: z.array(z.string().max(254)).max(50).optional().openapi({ description: "email addresses to delete" }) })
  .openapi("DeleteEmailOption", { description: "DeleteEmailOption options when deleting email addresses" });

const auth = { scopes: ["user"], signIn: true, rejectPublicOnly: true } as const;

const userListEmails = apiRoute({
  method: "get",
  path: "/user/emails",
  operationId: "userListEmails",
  tags: ["user"],
  summary: "List the authenticated user's email addresses",
  auth,
  responses: { 200: jsonResponse(z.array(EmailSchema), "EmailList"), ...errorResponses(401, 403) },
});
emails.openapi(userListEmails, async (c) => c.json(await listEmails(ctxOf(c)), 200));

const userAddEmail = apiRoute({
  method: "post",
  path: "/user/emails",
  operationId: "userAddEmail",
  tags: ["user"],
  summary: "Add email addresses",
  auth,
  request: { body: { content: { "application/json": { schema: CreateEmailOptionSchema } }, required: true } },
  responses: { 201: jsonResponse(z.array(EmailSchema), "EmailList"), ...errorResponses(401, 403, 404, 422) },
});
emails.openapi(userAddEmail, async (c) => c.json(await addEmails(ctxOf(c), c.req.valid("json").emails ?? []), 201));

const userDeleteEmail = apiRoute({
  method: "delete",
  path: "/user/emails",
  operationId: "userDeleteEmail",
  tags: ["user"],
  summary: "Delete email addresses",
  auth,
  request: { body: { content: { "application/json": { schema: DeleteEmailOptionSchema } }, required: true } },
  responses: { 204: { description: "APIEmpty is an empty response" }, ...errorResponses(401, 403, 404, 422) },
});
emails.openapi(userDeleteEmail, async (c) => {
  await deleteEmails(ctxOf(c), c.req.valid("json").emails ?? []);
  return c.body(null, 204);
});
