/**
 * Gitea's template listings that clients use to fill their create forms
 * (routers/api/v1/misc/gitignore.go, licenses.go): gitignore templates and licenses, the same
 * bundled texts AutoInit writes (functions/lib/repo-templates.ts).
 */
import { z } from "@hono/zod-openapi";
import { apiRoute, createRouter, ctxOf, read } from "../lib/context.ts";
import { errorResponses, notFound } from "../lib/errors.ts";
import { jsonResponse, pathParam } from "../lib/openapi.ts";
import { gitignoreNames, gitignoreTemplate, licenseNames, licenseTemplate } from "../lib/repo-templates.ts";

export const templates = createRouter();

const GitignoreTemplateInfoSchema = z
  .object({ name: z.string().openapi({ description: "Name is the name of the gitignore template" }), source: z.string().openapi({ description: "Source contains the content of the gitignore template" }) })
  .openapi("GitignoreTemplateInfo", { description: "GitignoreTemplateInfo name and text of a gitignore template" });

const LicensesTemplateListEntrySchema = z
  .object({
    key: z.string().openapi({ description: "Key is the unique identifier for the license template" }),
    name: z.string().openapi({ description: "Name is the display name of the license" }),
    url: z.string().openapi({ description: "URL is the reference URL for the license" }),
  })
  .openapi("LicensesTemplateListEntry", { description: "LicensesListEntry is used for the API" });

const LicenseTemplateInfoSchema = z
  .object({
    key: z.string().openapi({ description: "Key is the unique identifier for the license template" }),
    name: z.string().openapi({ description: "Name is the display name of the license" }),
    url: z.string().openapi({ description: "URL is the reference URL for the license" }),
    implementation: z.string().openapi({ description: "Implementation contains license implementation details" }),
    body: z.string().openapi({ description: "Body contains the full text of the license" }),
  })
  .openapi("LicenseTemplateInfo", { description: "LicensesInfo contains information about a License" });

const LICENSE_IMPLEMENTATION = "Create a text file (typically named LICENSE or LICENSE.txt) in the root of your source code and copy the text of the license into the file";

/** Gitea's license URL: `<ROOT_URL>api/v1/licenses/<name>`. */
const licenseUrl = (rootUrl: string, name: string) => `${rootUrl}api/v1/licenses/${encodeURIComponent(name)}`;

const listGitignoresTemplates = apiRoute({
  method: "get",
  path: "/gitignore/templates",
  operationId: "listGitignoresTemplates",
  tags: ["miscellaneous"],
  summary: "Returns a list of all gitignore templates",
  auth: { scopes: [] },
  responses: { 200: jsonResponse(z.array(z.string()), "GitignoreTemplateList") },
});
templates.openapi(listGitignoresTemplates, async (c) => {
  await read(ctxOf(c), {});
  return c.json(await gitignoreNames(), 200);
});

const getGitignoreTemplateInfo = apiRoute({
  method: "get",
  path: "/gitignore/templates/{name}",
  operationId: "getGitignoreTemplateInfo",
  tags: ["miscellaneous"],
  summary: "Returns information about a gitignore template",
  auth: { scopes: [] },
  request: { params: z.object({ name: pathParam("name", "name of the template") }) },
  responses: { 200: jsonResponse(GitignoreTemplateInfoSchema, "GitignoreTemplateInfo"), ...errorResponses(404) },
});
templates.openapi(getGitignoreTemplateInfo, async (c) => {
  await read(ctxOf(c), {});
  const name = c.req.valid("param").name;
  const source = await gitignoreTemplate(name);
  if (source === null) throw notFound();
  return c.json({ name, source }, 200);
});

const listLicenseTemplates = apiRoute({
  method: "get",
  path: "/licenses",
  operationId: "listLicenseTemplates",
  tags: ["miscellaneous"],
  summary: "Returns a list of all license templates",
  auth: { scopes: [] },
  responses: { 200: jsonResponse(z.array(LicensesTemplateListEntrySchema), "LicenseTemplateList") },
});
templates.openapi(listLicenseTemplates, async (c) => {
  await read(ctxOf(c), {});
  const root = c.get("rootUrl");
  return c.json((await licenseNames()).map((n) => ({ key: n, name: n, url: licenseUrl(root, n) })), 200);
});

const getLicenseTemplateInfo = apiRoute({
  method: "get",
  path: "/licenses/{name}",
  operationId: "getLicenseTemplateInfo",
  tags: ["miscellaneous"],
  summary: "Returns information about a license template",
  auth: { scopes: [] },
  request: { params: z.object({ name: pathParam("name", "name of the license") }) },
  responses: { 200: jsonResponse(LicenseTemplateInfoSchema, "LicenseTemplateInfo"), ...errorResponses(404) },
});
templates.openapi(getLicenseTemplateInfo, async (c) => {
  await read(ctxOf(c), {});
  const name = c.req.valid("param").name;
  const body = await licenseTemplate(name);
  if (body === null) throw notFound();
  // The raw text, placeholders kept; the implementation note is Gitea's fixed GitHub-compatible text.
  return c.json({ key: name, name, url: licenseUrl(c.get("rootUrl"), name), implementation: LICENSE_IMPLEMENTATION, body }, 200);
});
