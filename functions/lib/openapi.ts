/** Shared pieces of route declarations: path parameters and Gitea's document-level settings. */
import { z } from "@hono/zod-openapi";
import { parseGoInt } from "./query.ts";

/**
 * A string path parameter with Gitea's description. No length limit: a name longer than any
 * stored one simply matches nothing and answers 404, like any other missing name.
 */
export const pathParam = (name: string, description: string) =>
  z
    .string()
    .min(1)
    .openapi({ param: { name, in: "path", required: true }, description });

/** Gitea's security definitions (routers/api/v1/api.go swagger:meta), in OpenAPI 3 form. */
export const securitySchemes = {
  BasicAuth: { type: "http", scheme: "basic" },
  Token: {
    type: "apiKey",
    name: "token",
    in: "query",
    description: "This authentication option is deprecated for removal in Gitea 1.23. Please use AuthorizationHeaderToken instead.",
  },
  AccessToken: {
    type: "apiKey",
    name: "access_token",
    in: "query",
    description: "This authentication option is deprecated for removal in Gitea 1.23. Please use AuthorizationHeaderToken instead.",
  },
  AuthorizationHeaderToken: {
    type: "apiKey",
    name: "Authorization",
    in: "header",
    description: 'API tokens must be prepended with "token" followed by a space.',
  },
  SudoParam: {
    type: "apiKey",
    name: "sudo",
    in: "query",
    description: "Sudo API request as the user provided as the key. Admin privileges are required.",
  },
  SudoHeader: {
    type: "apiKey",
    name: "Sudo",
    in: "header",
    description: "Sudo API request as the user provided as the key. Admin privileges are required.",
  },
  TOTPHeader: {
    type: "apiKey",
    name: "X-GITEA-OTP",
    in: "header",
    description: "Must be used in combination with BasicAuth if two-factor authentication is enabled.",
  },
} as const;

export const security = Object.keys(securitySchemes).map((k) => ({ [k]: [] as string[] }));

/** The version string reported by `/version` and in the documents: the Gitea API level we serve. */
export const GITEA_API_VERSION = "1.27.1";

/**
 * A registered schema that may be null. zod-openapi writes `X.nullable()` into X's own component
 * when X is first met that way, so nullable references are unions, normalized to OpenAPI 3.0's
 * `allOf: [$ref]` + `nullable: true` when the document is built.
 */
export const nullableRef = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

/** A JSON response entry for createRoute's `responses`. */
export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

/** A required JSON request body for createRoute's `request`. */
export const jsonBody = <T extends z.ZodType>(schema: T, required = true) => ({ body: { content: { "application/json": { schema } }, required } });

/** An int64 id in the path, documented as an integer; a value that is no id answers 404 (see `idOf`). */
export const idPathParam = (name: string, description: string) =>
  z
    .string()
    .openapi({ param: { name, in: "path", required: true }, type: "integer", format: "int64", description } as never);

/**
 * The id from an `idPathParam`, read as strconv.ParseInt reads it (a leading `+` too). Anything
 * that is not a positive int64 the database can hold (`-1`, `abc`, `9223372036854775808`) becomes
 * 0, which no row has: the route then authenticates and answers 404 exactly as for a missing
 * resource (Gitea parses such ids as 0 too).
 */
export function idOf(s: string): number {
  const n = parseGoInt(s, 10);
  return typeof n === "number" && n > 0 ? n : 0;
}

/**
 * Registers a route whose `{param}` may span several path segments (a file path, a branch or ref
 * name with slashes, as Gitea's `*` routes): `register` is called with the documented route, then
 * with the same definition hidden from the document under Hono's `{.+}` pattern.
 */
export function withSlashes<R extends { path: string }>(route: R, param: string, register: (r: R) => void) {
  register(route);
  register({ ...route, path: route.path.replace(`{${param}}`, `{${param}{.+}}`), hide: true });
}
