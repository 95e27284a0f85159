/** OpenAPI 3.0 → Swagger 2.0 conversion of the schema and parameter forms our routes produce. */
import { describe, expect, it } from "vitest";
import { convertSchema, toSwagger2 } from "../../functions/lib/swagger2.ts";

describe("convertSchema", () => {
  it("rewrites refs, nullable, const and unions", () => {
    expect(convertSchema({ $ref: "#/components/schemas/User" })).toEqual({ $ref: "#/definitions/User" });
    expect(convertSchema({ type: "string", nullable: true })).toEqual({ type: "string", "x-nullable": true });
    expect(convertSchema({ const: "a" })).toEqual({ enum: ["a"] });
    expect(convertSchema({ anyOf: [{ type: "string", enum: ["a"] }, { type: "string", enum: ["b"] }] })).toEqual({ type: "string", enum: ["a", "b"] });
    expect(convertSchema({ type: "object", properties: { u: { $ref: "#/components/schemas/User" } } })).toEqual({ type: "object", properties: { u: { $ref: "#/definitions/User" } } });
  });
});

describe("toSwagger2", () => {
  it("turns request bodies into body parameters and flattens parameter schemas", () => {
    const out = toSwagger2({
      openapi: "3.0.3",
      info: { title: "t", version: "1" },
      servers: [{ url: "https://h/api/v1" }],
      paths: {
        "/x/{id}": {
          post: {
            operationId: "op",
            parameters: [
              { name: "id", in: "path", required: true, schema: { type: "integer", format: "int64" } },
              { name: "q", in: "query", schema: { type: "string", enum: ["a", "b"] } },
            ],
            requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/B" } } } },
            responses: { "201": { description: "ok", content: { "application/json": { schema: { type: "array", items: { $ref: "#/components/schemas/B" } } } } }, "204": { description: "empty" } },
          },
        },
      },
      components: { schemas: { B: { type: "object", properties: { a: { type: "string" } } } }, securitySchemes: { BasicAuth: { type: "http", scheme: "basic" } } },
    });
    expect(out.basePath).toBe("/api/v1");
    const op = (out.paths as any)["/x/{id}"].post;
    expect(op.parameters).toEqual([
      { name: "id", in: "path", required: true, type: "integer", format: "int64" },
      { name: "q", in: "query", type: "string", enum: ["a", "b"] },
      { name: "body", in: "body", required: true, schema: { $ref: "#/definitions/B" } },
    ]);
    expect(op.responses["201"].schema).toEqual({ type: "array", items: { $ref: "#/definitions/B" } });
    expect(op.responses["204"]).toEqual({ description: "empty" });
    expect(out.securityDefinitions).toEqual({ BasicAuth: { type: "basic" } });
  });
});
