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
  if (goBase === 0 && t[0] === "0" && t.length > 1) {
    const prefixed = t.length >= 3 ? { x: 16, o: 8, b: 2 }[t[1]!.toLowerCase()] : undefined;
    base = prefixed ?? 8;
    digits = t.slice(prefixed ? 2 : 1);
  }
  // Go's ParseUint, left to right: a bad character is a syntax error where it stands, but a value
  // past 64 bits is a range error as soon as it overflows, whatever follows.
  let v = 0n;
  let underscores = false;
  for (const c of digits) {
    if (c === "_" && goBase === 0) {
      underscores = true;
      continue;
    }
    const d = c >= "0" && c <= "9" ? c.charCodeAt(0) - 48 : /[a-zA-Z]/.test(c) ? c.toLowerCase().charCodeAt(0) - 87 : 99;
    if (d >= base) return null;
    v = v * BigInt(base) + BigInt(d);
    if (v > 0xffffffffffffffffn) return saturate ? (neg ? -9223372036854775808n : 9223372036854775807n) : null;
  }
  if (underscores && !underscoreOK(t)) return null;
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
