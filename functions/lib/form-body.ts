/**
 * Form bodies, as Gitea's binding takes them (go-chi/binding `Bind`): a body route accepts
 * `application/x-www-form-urlencoded` and `multipart/form-data` besides JSON. The form's fields
 * become the JSON object the route's schema validates, each value read as Go's form binding reads
 * it for the field's type — a boolean by strconv.ParseBool, a number by ParseInt/ParseFloat, a list
 * from every value of its key, anything else as text; a field the schema does not name is ignored
 * (Go's binding sets only the struct's fields). Fields are named as the JSON body names them (Gitea
 * maps a form field to its Go field in snake case, the same names for these options). A value that
 * does not parse stays text, and the schema refuses it with the body's usual 422.
 */
import { z } from "@hono/zod-openapi";

/** The media types a body route binds as a form. */
export const FORM_TYPE = /^(application\/x-www-form-urlencoded|multipart\/form-data)$/i;

/** A form's fields in order: text values only (a multipart file field carries no option here). */
export type FormFields = readonly (readonly [string, string])[];

type Kind = "boolean" | "number" | "list" | "text";

/** The kind of value a schema field takes, through the wrappers that do not change it. */
function kindOf(schema: z.ZodType): { kind: Kind; item?: Kind } {
  let s: z.ZodType = schema;
  for (let depth = 0; depth < 16; depth++) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodDefault) s = s.def.innerType as z.ZodType;
    else if (s instanceof z.ZodPipe) s = s.def.in as z.ZodType;
    else break;
  }
  if (s instanceof z.ZodBoolean) return { kind: "boolean" };
  if (s instanceof z.ZodNumber) return { kind: "number" };
  if (s instanceof z.ZodArray) return { kind: "list", item: kindOf(s.element as z.ZodType).kind };
  return { kind: "text" };
}

/** strconv.ParseBool. */
const GO_BOOL: Record<string, boolean> = { 1: true, t: true, T: true, TRUE: true, true: true, True: true, 0: false, f: false, F: false, FALSE: false, false: false, False: false };

function scalar(kind: Kind | undefined, v: string): unknown {
  if (kind === "boolean") return v in GO_BOOL ? GO_BOOL[v] : v;
  // strconv.ParseInt/ParseFloat: no space around the number
  if (kind === "number") return /^[+-]?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
  return v;
}

/** The JSON object a form stands for under the route's body `schema` (an object schema; anything else binds nothing). */
export function formToJson(schema: z.ZodType, fields: FormFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!(schema instanceof z.ZodObject)) return out;
  const shape = schema.shape as Record<string, z.ZodType>;
  const values = new Map<string, string[]>();
  for (const [k, v] of fields) {
    if (!Object.hasOwn(shape, k)) continue;
    const list = values.get(k);
    if (list) list.push(v);
    else values.set(k, [v]);
  }
  for (const [k, vs] of values) {
    const { kind, item } = kindOf(shape[k]!); // !: only the shape's keys were kept
    out[k] = kind === "list" ? vs.map((v) => scalar(item, v)) : scalar(kind, vs[0]!); // !: a key is kept with a value
  }
  return out;
}
