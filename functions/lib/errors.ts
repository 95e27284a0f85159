/**
 * The one error module: ApiError (thrown by services and guards) and the renderers that produce
 * Gitea's bodies — `{message,url}`; 404 adds `errors: []`; validation 422 is `[Field]: Rule`;
 * a 500 in production hides its text from all but site admins. Routes document their errors
 * with `errorResponses(...)`.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { GitError } from "../git/errors.ts";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { DatabaseUnavailable } from "../db/client.ts";

export const NOT_FOUND_MESSAGE = "The target couldn't be found.";

/** An API failure with Gitea's status and message; `body` replaces the whole JSON body when set. */
export class ApiError extends HTTPException {
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  constructor(status: ContentfulStatusCode, message: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
    super(status, { message });
    this.body = opts.body;
    this.headers = opts.headers;
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const unauthorized = (message = "invalid username, password or token") => new ApiError(401, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message = NOT_FOUND_MESSAGE) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);
/** A path served under other methods (chi answers 405 with `Allow`). */
export const methodNotAllowed = (allow: readonly string[]) => new ApiError(405, "Method Not Allowed", { headers: { Allow: allow.join(", ") } });
export const unprocessable = (message: string) => new ApiError(422, message);
/** Gitea answers some account states with a bare `{message}` (no `url`). */
export const bareForbidden = (message: string) => new ApiError(403, message, { body: { message } });

/** Gitea's documentation URL in error bodies: `<AppURL>api/swagger`. */
const errorUrl = (c: Context) => `${(c.get("rootUrl") as string | undefined) ?? new URL(c.req.url).origin + "/"}api/swagger`;

/** A redirect answer thrown from a service (renamed repositories: 307 to the new path). */
export class Redirect extends Error {
  readonly location: string;
  readonly status: 301 | 302 | 303 | 307 | 308;
  constructor(location: string, status: 301 | 302 | 303 | 307 | 308 = 307) {
    super(`redirect to ${location}`);
    this.location = location;
    this.status = status;
  }
}

/** An unexpected failure (not an API answer, a redirect, or an unavailable database): the search envelopes' 500. */
export const isInternalFailure = (err: unknown) =>
  err instanceof Error && !(err instanceof HTTPException) && !(err instanceof Redirect) && !(err instanceof DatabaseUnavailable);

/**
 * The git engine's failures as API answers (functions/git/README.md): `not-found` 404, `conflict`
 * 409 (a lost compare-and-swap race: nothing was written), `invalid` 422, `too-large` 413,
 * `bad-request` 400. `missing` and `corrupt` are faults of the stored data, not of the request:
 * they stay errors (500).
 */
function gitApiError(e: GitError): ApiError | GitError {
  switch (e.code) {
    case "not-found":
      return new ApiError(404, e.message);
    case "conflict":
      return new ApiError(409, e.message);
    case "invalid":
      return unprocessable(e.message);
    case "too-large":
      return new ApiError(413, e.message);
    case "bad-request":
      return badRequest(e.message);
    case "aborted":
      // nobody reads it; answered (and not logged) as a request that did not complete
      return badRequest(e.message);
    default:
      return e;
  }
}

/** Renders any thrown error as Gitea does. Unknown errors become a 500 without internals. */
export function renderError(thrown: unknown, c: Context): Response {
  const err = thrown instanceof GitError ? gitApiError(thrown) : thrown;
  if (err instanceof Redirect) return c.redirect(err.location, err.status);
  if (err instanceof ApiError) {
    if (err.headers) for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
    if (err.body !== undefined) return c.json(err.body as object, err.status);
    const body: Record<string, unknown> = { message: err.message, url: errorUrl(c) };
    if (err.status === 404) body.errors = [];
    return c.json(body, err.status);
  }
  if (err instanceof HTTPException) {
    // A body that is not JSON: Gitea's binding (go-chi/binding Bind) answers 422 with its reason.
    if (err.status === 415) {
      const message = c.req.header("Content-Type") ? "[]: Unsupported Content-Type" : "[]: Empty Content-Type";
      return c.json({ message, url: errorUrl(c) }, 422);
    }
    // Hono's own (body parsing, body limit): keep the status, use Gitea's shape.
    const status = err.status === 400 && /JSON/i.test(err.message) ? 422 : err.status;
    const message = status === 422 ? `[Body]: DeserializationError: ${err.message}` : err.message || "bad request";
    return c.json({ message, url: errorUrl(c) }, status as ContentfulStatusCode);
  }
  if (err instanceof DatabaseUnavailable) {
    // A stalled or unreachable database: a bounded, clean 503 instead of holding the request.
    console.error("database unavailable", c.req.method, new URL(c.req.url).pathname, err.message);
    c.header("Retry-After", "5");
    return c.json({ message: "the database is unavailable, try again later", url: errorUrl(c) }, 503);
  }
  console.error("internal error", c.req.method, new URL(c.req.url).pathname, err);
  // Gitea hides a 500's text in production unless the caller is a site admin.
  const shown = (c.get("settings") as { runMode?: string } | undefined)?.runMode === "dev" || (c.get("doer") as { siteAdmin: boolean } | undefined)?.siteAdmin === true;
  return c.json({ message: shown ? String((err as Error)?.message ?? err) : "", url: errorUrl(c) }, 500);
}

/** The initialisms Gitea's Go field names spell in capitals (`new_commit_id` → `NewCommitID`). */
const GO_INITIALISMS: Readonly<Record<string, string>> = {
  api: "API", gpg: "GPG", html: "HTML", http: "HTTP", id: "ID", ids: "IDs", ip: "IP", json: "JSON",
  sha: "SHA", ssh: "SSH", uid: "UID", uri: "URI", uris: "URIs", url: "URL", urls: "URLs", uuid: "UUID",
};

/**
 * JSON keys whose Go field is not named after them: FileOptions' `branch` and `new_branch` are
 * `BranchName` and `NewBranchName` (modules/structs/repo_file.go; no other form has these keys).
 */
const GO_FIELD_NAMES: Readonly<Record<string, string>> = { branch: "BranchName", new_branch: "NewBranchName" };

/** JSON key → Gitea's Go field name in binding errors: `login_name` → `LoginName`, `source_id` → `SourceID`. */
export const goFieldName = (key: string) =>
  GO_FIELD_NAMES[key] ??
  key
    .split(/[_-]/)
    .filter(Boolean)
    .map((p) => GO_INITIALISMS[p] ?? p.charAt(0).toUpperCase() + p.slice(1))
    .join("");

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  input?: unknown;
  origin?: string;
  minimum?: number | bigint;
  expected?: string;
  format?: string;
}

/** The first zod issue as Gitea's binding message `[Field]: Rule`. */
export function validationMessage(issues: readonly Issue[]): string {
  const issue = issues[0];
  if (!issue) return "[]: invalid input";
  const key = issue.path.filter((p) => typeof p === "string").at(-1) as string | undefined;
  const field = `[${key ? goFieldName(key) : ""}]`;
  let rule: string;
  switch (issue.code) {
    case "invalid_type":
      // zod 4 omits `input` unless asked; its message names what was received.
      rule = /received undefined/.test(issue.message) ? "Required" : `TypeError: expected ${issue.expected}`;
      break;
    case "too_small":
      rule = issue.origin === "string" && issue.minimum === 1 ? "Required" : "MinSize";
      break;
    case "too_big":
      rule = "MaxSize";
      break;
    case "invalid_format":
      rule = issue.format === "email" ? "Email" : issue.format === "url" ? "Url" : issue.message;
      break;
    case "invalid_value":
      rule = "In";
      break;
    case "unrecognized_keys":
      rule = issue.message;
      break;
    default:
      rule = issue.message;
  }
  return `${field}: ${rule}`;
}

/** Gitea's documented error bodies. */
export const ApiErrorSchema = z
  .object({ message: z.string(), url: z.string() })
  .openapi("APIError", { description: "APIError is an api error with a message" });

const descriptions: Record<number, string> = {
  400: "APIError is error format response",
  401: "APIUnauthorizedError is a unauthorized error response",
  403: "APIForbiddenError is a forbidden error response",
  404: "APINotFound is a not found empty response",
  409: "APIConflict is a conflict empty response",
  413: "the request body is larger than the instance accepts",
  422: "APIValidationError is error format response related to input validation",
  423: "APIRepoArchivedError is an error that is raised when an archived repo should be modified",
  500: "APIError is error format response",
  503: "the database did not answer in time or cannot be reached",
};

/** Response entries for `createRoute({ responses: { ...errorResponses(403, 404) } })`. */
export function errorResponses<S extends keyof typeof descriptions>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((s) => [s, { description: descriptions[s], content: { "application/json": { schema: ApiErrorSchema } } }]),
  ) as Record<S, { description: string; content: { "application/json": { schema: typeof ApiErrorSchema } } }>;
}
