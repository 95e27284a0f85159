/**
 * OpenAPI 3.0 → Swagger 2.0, so that the Swagger document Gitea clients are generated from
 * (`/swagger.v1.json`) is derived from the same route definitions as `/openapi3.v1.json`.
 * It covers what our route definitions produce: path/query/header parameters, JSON request
 * bodies, responses with schemas and headers, component schemas, and security schemes.
 * Pure and dependency-free, so the Worker can serve it too.
 */

type Json = Record<string, unknown>;

interface OpenAPI3 {
  openapi: string;
  info: Json;
  servers?: { url: string }[];
  paths: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, Json>; securitySchemes?: Record<string, Json> };
  security?: Json[];
  tags?: Json[];
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch"];

/** Converts one JSON schema from OpenAPI 3.0 to Swagger 2.0 form. */
export function convertSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(convertSchema);
  if (!schema || typeof schema !== "object") return schema;
  const s = schema as Json;
  if (typeof s.$ref === "string") return { $ref: s.$ref.replace("#/components/schemas/", "#/definitions/") };
  // a nullable reference (`allOf: [$ref]`, `nullable`): Swagger 2.0 has no null, and a reference
  // takes no siblings — Gitea's document writes the plain reference, and so do we
  const keys = Object.keys(s).filter((k) => k !== "nullable" && k !== "description");
  if (keys.length === 1 && Array.isArray(s.allOf) && s.allOf.length === 1 && typeof (s.allOf[0] as Json)?.$ref === "string") return convertSchema(s.allOf[0]);
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    switch (k) {
      case "nullable":
        if (v) out["x-nullable"] = true;
        break;
      case "oneOf":
      case "anyOf": {
        // Swagger 2.0 has no unions: keep the first non-null branch, the rest as an extension.
        const branches = (v as Json[]).filter((b) => !(b && (b as Json).type === "null"));
        if ((v as Json[]).length !== branches.length) out["x-nullable"] = true;
        if (branches.length === 1) Object.assign(out, convertSchema(branches[0]) as Json);
        else {
          const type = (branches[0] as Json).type;
          const sameType = typeof type === "string" && type !== "object" && type !== "array" && branches.every((b) => (b as Json).type === type);
          const allEnums = sameType && branches.every((b) => Array.isArray((b as Json).enum));
          if (allEnums) Object.assign(out, { type, enum: branches.flatMap((b) => (b as Json).enum as unknown[]) });
          else if (sameType) {
            // `"" | email`, `"" | maxLength 255`: values of one type; what only some branches ask
            // (an enum, a format) would refuse the others' values, so only what all share is kept
            Object.assign(out, { type });
            for (const [key, value] of Object.entries(branches[0] as Json)) {
              if (key !== "enum" && branches.every((b) => JSON.stringify((b as Json)[key]) === JSON.stringify(value))) out[key] = convertSchema(value);
            }
          } else {
            Object.assign(out, convertSchema(branches[0]) as Json);
            out[`x-${k}`] = branches.map(convertSchema);
          }
        }
        break;
      }
      case "const":
        out.enum = [v];
        break;
      case "writeOnly":
      case "examples":
      case "discriminator":
      case "xml":
        break;
      case "deprecated":
        if (v) out["x-deprecated"] = true;
        break;
      case "exclusiveMinimum":
      case "exclusiveMaximum":
        // 3.0 uses booleans like 2.0; a numeric (3.1-style) bound becomes minimum/maximum.
        if (typeof v === "number") {
          out[k === "exclusiveMinimum" ? "minimum" : "maximum"] = v;
          out[k] = true;
        } else out[k] = v;
        break;
      case "properties":
        out.properties = Object.fromEntries(Object.entries(v as Json).map(([p, ps]) => [p, convertSchema(ps)]));
        break;
      case "items":
      case "additionalProperties":
      case "not":
        out[k] = typeof v === "object" ? convertSchema(v) : v;
        break;
      case "allOf":
        out.allOf = (v as Json[]).map(convertSchema);
        break;
      default:
        out[k] = v;
    }
  }
  return out;
}

/** A non-body parameter: Swagger 2.0 puts the schema's type keywords on the parameter itself. */
function convertParameter(p: Json): Json {
  const schema = (convertSchema(p.schema ?? {}) as Json) ?? {};
  const out: Json = { name: p.name, in: p.in };
  if (p.description ?? schema.description) out.description = p.description ?? schema.description;
  if (p.required || p.in === "path") out.required = true;
  const type = schema.type ?? (schema.$ref ? "string" : "string");
  out.type = type === "object" ? "string" : type;
  for (const k of ["format", "enum", "default", "minimum", "maximum", "maxLength", "minLength", "pattern", "maxItems", "minItems"]) {
    if (schema[k] !== undefined) out[k] = schema[k];
  }
  if (type === "array") {
    out.items = (schema.items as Json) ?? { type: "string" };
    out.collectionFormat = "multi";
  }
  return out;
}

function convertOperation(op: Json, consumes: Set<string>, produces: Set<string>): Json {
  const out: Json = {};
  for (const k of ["tags", "summary", "description", "operationId", "deprecated", "security", "externalDocs"]) {
    if (op[k] !== undefined) out[k] = op[k];
  }
  const params: Json[] = ((op.parameters as Json[]) ?? []).filter((p) => p.in !== "cookie").map(convertParameter);
  const body = op.requestBody as Json | undefined;
  if (body) {
    const content = (body.content ?? {}) as Record<string, Json>;
    const types = Object.keys(content);
    for (const t of types) consumes.add(t);
    out.consumes = types;
    const schema = content["application/json"]?.schema ?? (types[0] === undefined ? undefined : content[types[0]]?.schema) ?? { type: "object" };
    // Gitea names a few bodies otherwise (orgCreate's `organization`): generated clients take the name as the argument's.
    const name = (op["x-codegen-request-body-name"] as string | undefined) ?? "body";
    params.push({ name, in: "body", required: !!body.required, schema: convertSchema(schema), ...(body.description ? { description: body.description } : {}) });
  }
  if (params.length) out.parameters = params;
  const responses: Json = {};
  const opProduces = new Set<string>();
  for (const [code, r] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
    const res: Json = { description: r.description ?? "" };
    const content = (r.content ?? {}) as Record<string, Json>;
    const types = Object.keys(content);
    types.forEach((t) => {
      produces.add(t);
      opProduces.add(t);
    });
    const schema = content["application/json"]?.schema ?? (types[0] === undefined ? undefined : content[types[0]]?.schema);
    const binary = schema && (schema as Json).type === "string" && (schema as Json).format === "binary";
    // a file's bytes: OpenAPI 3's binary string is Swagger 2.0's `file` (as Gitea's document has it)
    if (schema) res.schema = binary ? { type: "file" } : convertSchema(schema);
    if (r.headers) {
      res.headers = Object.fromEntries(
        Object.entries(r.headers as Record<string, Json>).map(([h, hv]) => {
          const hs = (convertSchema(hv.schema ?? { type: "string" }) as Json) ?? {};
          return [h, { type: hs.type ?? "string", ...(hv.description ? { description: hv.description } : {}) }];
        }),
      );
    }
    responses[code] = res;
  }
  if (opProduces.size) out.produces = [...opProduces];
  out.responses = responses;
  return out;
}

function convertSecurityScheme(s: Json): Json {
  if (s.type === "http" && s.scheme === "basic") return { type: "basic", ...(s.description ? { description: s.description } : {}) };
  if (s.type === "apiKey") return { type: "apiKey", name: s.name, in: s.in, ...(s.description ? { description: s.description } : {}) };
  if (s.type === "http" && s.scheme === "bearer") return { type: "apiKey", name: "Authorization", in: "header", description: s.description ?? "Bearer token" };
  throw new Error(`security scheme type ${String(s.type)} has no Swagger 2.0 form`);
}

/** The Swagger 2.0 form of an OpenAPI 3.0 document. */
export function toSwagger2(doc: OpenAPI3): Json {
  const server = doc.servers?.[0]?.url ?? "/";
  const url = new URL(server, "http://localhost");
  const consumes = new Set<string>();
  const produces = new Set<string>();
  const paths: Json = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    const out: Json = {};
    for (const m of METHODS) if (item[m]) out[m] = convertOperation(item[m] as Json, consumes, produces);
    if (item.parameters) out.parameters = (item.parameters as unknown as Json[]).map(convertParameter);
    paths[path] = out;
  }
  const definitions = Object.fromEntries(Object.entries(doc.components?.schemas ?? {}).map(([k, v]) => [k, convertSchema(v)]));
  const securityDefinitions = Object.fromEntries(Object.entries(doc.components?.securitySchemes ?? {}).map(([k, v]) => [k, convertSecurityScheme(v)]));
  return {
    swagger: "2.0",
    info: doc.info,
    basePath: url.pathname.replace(/\/$/, "") || "/",
    schemes: ["https", "http"],
    consumes: consumes.size ? [...consumes] : ["application/json"],
    produces: produces.size ? [...produces] : ["application/json"],
    paths,
    definitions,
    securityDefinitions,
    ...(doc.security ? { security: doc.security } : {}),
    ...(doc.tags ? { tags: doc.tags } : {}),
  };
}
