/**
 * Query parameters as Gitea reads them: Go's strconv behind Gitea's `ctx.Form*` helpers. They are
 * lenient — a value that does not parse is false / 0 / "not given", never a 422 (issue 8 B.1) —
 * and documented with their Gitea types in both API documents.
 */
import { z } from "@hono/zod-openapi";

/** A boolean query parameter (documented as boolean, parsed with `formBool`/`formOptionalBool`). */
export const boolParam = (name: string, description: string) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: "query" }, type: "boolean", description } as never);

/** An int64 query parameter (documented as integer, parsed with `formInt64`). */
export const intParam = (name: string, description: string) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: "query" }, type: "integer", format: "int64", description } as never);

/** A free-text or enum-like string query parameter; unknown values are the route's to interpret. */
export const textParam = (name: string, description: string, extra: Record<string, unknown> = {}) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: "query" }, description, ...extra } as never);

/** The `date` of feed routes (YYYY-MM-DD); one that does not parse is ignored, as in Gitea. */
export const dateParam = textParam("date", "the date of the activities to be found", { format: "date" });

const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Go's strconv.ParseBool, or null when the value is not one of its spellings. */
export const parseGoBool = (v: string) => (TRUE.has(v) ? true : FALSE.has(v) ? false : null);

/** Gitea's `ctx.FormBool`: a value that does not parse is false. */
export const formBool = (v: string | undefined) => (v === undefined ? false : (parseGoBool(v) ?? false));

/** Gitea's `optional.Some(ctx.FormBool(k))` when `ctx.FormString(k) != ""`: absent or empty is "not given". */
export const formOptionalBool = (v: string | undefined) => (v === undefined || v === "" ? undefined : formBool(v));

/** Gitea's `ctx.FormInt64`: a value that does not parse as an int64 is 0. */
export function formInt64(v: string | undefined): number {
  if (v === undefined || !/^[+-]?\d{1,19}$/.test(v)) return 0;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : 0;
}
