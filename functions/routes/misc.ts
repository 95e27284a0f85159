/** Miscellaneous routes: /version and /settings/api (no scope required, as in Gitea). */
import { createRouter, apiRoute, read, ctxOf } from "../lib/context.ts";
import { GeneralAPISettingsSchema, ServerVersionSchema } from "../wire/user.ts";
import { GITEA_API_VERSION } from "../lib/openapi.ts";

export const misc = createRouter();

const getVersion = apiRoute({
  method: "get",
  path: "/version",
  operationId: "getVersion",
  tags: ["miscellaneous"],
  summary: "Returns the version of the Gitea application",
  auth: { scopes: [] },
  responses: { 200: { description: "ServerVersion", content: { "application/json": { schema: ServerVersionSchema } } } },
});

misc.openapi(getVersion, async (c) => {
  // Authentication still runs: bad credentials are a 401 everywhere (one round trip).
  await read(ctxOf(c), {});
  return c.json({ version: GITEA_API_VERSION }, 200);
});

const getGeneralAPISettings = apiRoute({
  method: "get",
  path: "/settings/api",
  operationId: "getGeneralAPISettings",
  tags: ["settings"],
  summary: "Get instance's global settings for api",
  auth: { scopes: [] },
  responses: { 200: { description: "GeneralAPISettings", content: { "application/json": { schema: GeneralAPISettingsSchema } } } },
});

misc.openapi(getGeneralAPISettings, async (c) => {
  await read(ctxOf(c), {});
  const { api } = c.get("settings");
  return c.json(
    {
      max_response_items: api.maxResponseItems,
      default_paging_num: api.defaultPagingNum,
      default_git_trees_per_page: 1000,
      default_max_blob_size: 10485760,
      default_max_response_size: 104857600,
    },
    200,
  );
});
