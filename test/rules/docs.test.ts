/**
 * The API documents are generated from the route definitions: both validate, every route is in
 * them with Gitea's operationId, tag, parameters and definitions, and responses match Gitea's
 * definitions on the wire.
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApi } from "../../functions/app.ts";
import { basic, seedOrg, seedUser, testApp, token, type TestApp } from "../fixtures/app.ts";
import { giteaShapeErrors, giteaSwagger } from "../fixtures/gitea-schema.ts";

let t: TestApp;
let v3: any;
let v2: any;

beforeAll(async () => {
  t = await testApp();
  v3 = await (await t.request("/openapi3.v1.json")).json();
  v2 = await (await t.request("/swagger.v1.json")).json();
});
afterAll(() => t.close());

/** Every (method, path) the app serves under /api/v1, in OpenAPI path syntax. */
function servedRoutes(): [string, string][] {
  const api = createApi();
  return api.routes
    .filter((r) => r.method !== "ALL")
    // A parameter with a Hono pattern (`:filepath{.+}`, several segments) is the documented `{filepath}`.
    .map((r) => [r.method.toLowerCase(), r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}")] as [string, string])
    // contents-ext's root (Gitea's `contents-ext/*` with an empty path) is the documented operation
    .map(([m, p]) => [m, p === "/repos/{owner}/{repo}/contents-ext" ? `${p}/{filepath}` : p] as [string, string])
    .filter(([, p], i, all) => all.findIndex(([m2, p2]) => p2 === p && m2 === all[i]![0]) === i);
}

describe("the OpenAPI 3.0 document", () => {
  it("is a valid OpenAPI 3.0 document", async () => {
    expect(v3.openapi).toMatch(/^3\.0\./);
    await expect(SwaggerParser.validate(structuredClone(v3))).resolves.toBeTruthy();
  });

  it("contains every served route", () => {
    for (const [method, path] of servedRoutes()) expect(v3.paths[path]?.[method], `${method} ${path}`).toBeTruthy();
  });

  it("declares Gitea's security schemes", () => {
    expect(Object.keys(v3.components.securitySchemes).sort()).toEqual(Object.keys(giteaSwagger.securityDefinitions).sort());
  });
});

describe("scope", () => {
  it("every route in scope (test/fixtures/routes-in-scope.md) is served and documented with its operationId", () => {
    const md = readFileSync(new URL("../fixtures/routes-in-scope.md", import.meta.url), "utf8");
    const rows = [...md.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| `(\w+)`/gm)];
    expect(rows.length).toBeGreaterThan(80);
    for (const [, method, path, operationId] of rows) {
      expect(v3.paths[path!]?.[method!.toLowerCase()]?.operationId, `${method} ${path}`).toBe(operationId);
    }
  });
});

describe("the Swagger 2.0 document (derived from the OpenAPI 3.0 one)", () => {
  it("is a valid Swagger 2.0 document with Gitea's basePath and security definitions", async () => {
    expect(v2.swagger).toBe("2.0");
    expect(v2.basePath).toBe("/api/v1");
    await expect(SwaggerParser.validate(structuredClone(v2))).resolves.toBeTruthy();
    expect(v2.securityDefinitions).toEqual(
      Object.fromEntries(Object.entries(giteaSwagger.securityDefinitions as Record<string, Record<string, unknown>>).map(([k, v]) => [k, v])),
    );
  });

  it("has every route with Gitea's operationId, tags and path parameter names", () => {
    for (const [method, path] of servedRoutes()) {
      const ours = v2.paths[path]?.[method];
      expect(ours, `${method} ${path}`).toBeTruthy();
      const gitea = giteaSwagger.paths[path]?.[method];
      if (!gitea) continue; // routes Gitea does not document are still ours to serve
      expect(ours.operationId, `${method} ${path}`).toBe(gitea.operationId);
      expect(ours.tags, `${method} ${path}`).toEqual(gitea.tags);
      const names = (ps: { in: string; name: string }[] = []) => ps.filter((p) => p.in === "path").map((p) => p.name).sort();
      expect(names(ours.parameters), `${method} ${path}`).toEqual(names(gitea.parameters));
      const q = (ps: { in: string; name: string }[] = []) => ps.filter((p) => p.in === "query").map((p) => p.name).sort();
      for (const name of q(gitea.parameters)) expect(q(ours.parameters), `${method} ${path} ?${name}`).toContain(name);
      // the body's name is the argument's name in generated clients (orgCreate's is `organization`)
      const b = (ps: { in: string; name: string }[] = []) => ps.filter((p) => p.in === "body").map((p) => p.name);
      expect(b(ours.parameters), `${method} ${path} body`).toEqual(b(gitea.parameters));
    }
  });

  it("uses Gitea's definition names with Gitea's property sets", () => {
    for (const name of [
      "User", "Organization", "AccessToken", "ServerVersion", "GeneralAPISettings", "CreateUserOption", "EditUserOption", "CreateOrgOption", "EditOrgOption", "CreateAccessTokenOption", "APIError",
      "CreateRepoOption", "GenerateRepoOption", "EditRepoOption", "Label", "CreateLabelOption", "EditLabelOption", "LabelTemplate", "AddCollaboratorOption", "RepoCollaboratorPermission", "Permission", "InternalTracker", "ExternalTracker", "ExternalWiki", "CreateForkOption", "Email", "CreateEmailOption", "DeleteEmailOption", "IssueConfig", "IssueConfigValidation", "IssueTemplate",
    ]) {
      expect(v2.definitions[name], name).toBeTruthy();
      expect(Object.keys(v2.definitions[name].properties).sort(), name).toEqual(Object.keys(giteaSwagger.definitions[name].properties).sort());
    }
  });

  it("types as Gitea documents them: every property, parameter, body and response schema both documents have is the same type, format or reference", () => {
    /** `integer:int64`, `ref:#/definitions/X`, `array[…]`: what a generated client's type is made of. */
    const shape = (x: any): string => (x?.$ref ? `ref:${x.$ref}` : `${x?.type}${x?.format ? `:${x.format}` : ""}${x?.items ? `[${shape(x.items)}]` : ""}`);
    // deliberate: Identity's e-mail is not checked as an address (nor is it by Gitea's binding);
    // PATCH /teams/{id}'s id is an int64 like every other id (Gitea's document leaves its format out there only)
    const deliberate = new Set(["def Identity.email", "param patch /teams/{id} id"]);
    const differences: string[] = [];
    const compare = (what: string, ours: unknown, theirs: unknown) => {
      if (!deliberate.has(what) && shape(ours) !== shape(theirs)) differences.push(`${what}: ${shape(ours)} ≠ Gitea's ${shape(theirs)}`);
    };
    for (const [name, def] of Object.entries<any>(v2.definitions)) {
      for (const [prop, schema] of Object.entries<any>(def.properties ?? {})) {
        const theirs = giteaSwagger.definitions[name]?.properties?.[prop];
        if (theirs) compare(`def ${name}.${prop}`, schema, theirs);
      }
    }
    for (const [path, ops] of Object.entries<any>(v2.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const gitea = giteaSwagger.paths[path]?.[method];
        if (!gitea) continue;
        for (const p of op.parameters ?? []) {
          const theirs = (gitea.parameters ?? []).find((g: any) => g.in === p.in && (p.in === "body" || g.name === p.name));
          if (theirs) compare(`param ${method} ${path} ${p.name}`, p.in === "body" ? p.schema : p, p.in === "body" ? theirs.schema : theirs);
        }
        for (const [code, r] of Object.entries<any>(op.responses ?? {})) {
          const theirs = gitea.responses?.[code];
          const schema = theirs?.$ref ? giteaSwagger.responses[theirs.$ref.split("/").pop()]?.schema : theirs?.schema;
          if (schema) compare(`response ${method} ${path} ${code}`, r.schema, schema);
        }
      }
    }
    expect(differences).toEqual([]);
  });

  it("a union of one type becomes what all its branches share, never the first branch's enum (`\"\" | email` is a string, not `enum: [\"\"]`)", () => {
    const unions: string[] = [];
    const walk = (node: any, at: string) => {
      if (!node || typeof node !== "object") return;
      if (node["x-anyOf"] || node["x-oneOf"]) unions.push(at);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    walk(v2.definitions, "#/definitions");
    expect(unions).toEqual([]);
    for (const [name, prop] of [["CreateOrgOption", "email"], ["EditOrgOption", "email"], ["EditTeamOption", "name"]] as const) expect(v2.definitions[name].properties[prop], `${name}.${prop}`).toEqual({ type: "string" });
  });

  it("a body parameter references its definition as Gitea's does", () => {
    const op = v2.paths["/admin/users"].post;
    const body = op.parameters.find((p: { in: string }) => p.in === "body");
    expect(body.schema).toEqual({ $ref: "#/definitions/CreateUserOption" });
  });
});

describe("responses match Gitea's definitions on the wire", () => {
  it("User, Organization, AccessToken, ServerVersion, GeneralAPISettings", async () => {
    const admin = await seedUser(t.db, { admin: true });
    const alice = await seedUser(t.db);
    const org = await seedOrg(t, alice);
    const tk = await alice.token();
    const checks: [string, Response][] = [
      ["User", await t.request("/api/v1/user", { headers: token(tk) })],
      ["User", await t.request(`/api/v1/users/${admin.name}`)],
      ["Organization", await t.request(`/api/v1/orgs/${org.name}`)],
      ["AccessToken", await t.request(`/api/v1/users/${alice.name}/tokens`, { method: "POST", headers: basic(alice.name, alice.password), json: { name: "shape", scopes: ["all"] } })],
      ["ServerVersion", await t.request("/api/v1/version")],
      ["GeneralAPISettings", await t.request("/api/v1/settings/api")],
      ["APIError", await t.request("/api/v1/user", { headers: token("f".repeat(40)) })],
    ];
    const repo = await (await t.request("/api/v1/user/repos", { method: "POST", headers: token(tk), json: { name: "shape", issue_labels: "Default" } })).json();
    const fork = await (await t.request(`/api/v1/repos/${alice.name}/shape/forks`, { method: "POST", headers: token(await admin.token()), json: {} })).json();
    checks.push(
      ["Repository", new Response(JSON.stringify(repo))],
      ["Repository", await t.request(`/api/v1/repos/${admin.name}/${fork.name}`, { headers: token(tk) })],
      ["Label", await t.request(`/api/v1/repos/${alice.name}/shape/labels/bug`)],
      ["RepoCollaboratorPermission", await t.request(`/api/v1/repos/${alice.name}/shape/collaborators/${alice.name}/permission`, { headers: token(tk) })],
      ["LabelTemplate", new Response(JSON.stringify((await (await t.request("/api/v1/label/templates/Default")).json())[0]))],
    );
    for (const [name, res] of checks) expect(giteaShapeErrors(name, await res.json()), name).toEqual([]);
  });
});

describe("[api] ENABLE_SWAGGER = false", () => {
  it("serves no API document and no Swagger page (Gitea registers none of them then); the API itself answers", async () => {
    const off = await testApp({ GITEA__api__ENABLE_SWAGGER: "false" });
    try {
      for (const path of ["/swagger.v1.json", "/openapi3.v1.json", "/api/swagger", "/api/v1/swagger", "/"]) {
        expect((await off.request(path)).status, path).toBe(404);
      }
      expect((await off.request("/api/v1/version")).status).toBe(200);
    } finally {
      off.close();
    }
  });
});
