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

/**
 * Go's strconv.ParseInt(s, base, 64): with base 0 a sign, the 0x/0o/0b/0 prefixes and underscores
 * between digits (Go's underscoreOK); with base 10 a sign and decimal digits. Null where Go fails
 * with a syntax error; out of range, null too — or, with `saturate`, the bound Go returns beside
 * its range error (Gitea's `v, _ := strconv.ParseInt(…)` keeps that value).
 */
export function parseGoInt(s: string, goBase: 0 | 10 = 0, saturate = false): number | bigint | null {
  let t = s;
  let neg = false;
  if (t[0] === "+" || t[0] === "-") {
    neg = t[0] === "-";
    t = t.slice(1);
  }
  if (t === "") return null;
  let base = 10;
  let digits = t;
  if (goBase === 10) {
    if (!/^[0-9]+$/.test(t)) return null;
  } else {
    if (t.length >= 3 && t[0] === "0" && /[bBoOxX]/.test(t[1]!)) {
      base = /[xX]/.test(t[1]!) ? 16 : /[oO]/.test(t[1]!) ? 8 : 2;
      digits = t.slice(2);
    } else if (t[0] === "0" && t.length > 1) {
      base = 8;
      digits = t.slice(1);
    }
    if (t.includes("_")) {
      if (!underscoreOK(t)) return null;
      digits = digits.replace(/_/g, "");
    }
  }
  const re = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/;
  if (!re.test(digits)) return null;
  const prefix = base === 16 ? "0x" : base === 8 ? "0o" : base === 2 ? "0b" : "";
  let v = BigInt(prefix + digits);
  if (neg) v = -v;
  if (v > 9223372036854775807n) return saturate ? 9223372036854775807n : null;
  if (v < -9223372036854775808n) return saturate ? -9223372036854775808n : null;
  return Number.isSafeInteger(Number(v)) ? Number(v) : v;
}

/** Go's underscoreOK (sign already removed): underscores only between digits, or right after a base prefix. */
function underscoreOK(t: string): boolean {
  let saw = "^";
  let i = 0;
  let hex = false;
  if (t.length >= 2 && t[0] === "0" && /[bBoOxX]/.test(t[1]!)) {
    i = 2;
    saw = "0";
    hex = /[xX]/.test(t[1]!);
  }
  for (; i < t.length; i++) {
    const c = t[i]!;
    if ((c >= "0" && c <= "9") || (hex && /[a-fA-F]/.test(c))) {
      saw = "0";
      continue;
    }
    if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
      continue;
    }
    if (saw === "_") return false;
    saw = "!";
  }
  return saw !== "_";
}
