/**
 * Token scopes and the rest of every route's declared auth, on EVERY served route (issue 12 item 3;
 * GHSA-6cqf-375w-639g, GHSA-3pww-vcvm-3gmj, go-gitea/gitea#26035). The table is built from the code
 * — `ROUTE_AUTH` (operationId → method, path, declared auth) — and checked against the served API
 * document, so a new route is in it the day it is served.
 *
 * Per route: a token without the route's categories → 403 naming them (read for GET, write otherwise),
 * one round trip; a token with exactly those categories answers as a full token does; a read token on a
 * write route → 403; reqToken → anonymous 401 before any database work; reqSiteAdmin, basic-only and
 * public-only refusals with Gitea's messages. Requests are built so that they can be repeated: write
 * routes get an invalid body (422 after auth) or, without a body, a missing target (404/422 after auth).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApi } from "../../functions/app.ts";
import { ROUTE_AUTH } from "../../functions/lib/context.ts";
import { SCOPE_CATEGORIES } from "../../functions/lib/auth.ts";
import { addCollaborator, apiRepo, roundTrips, seedOrg, seedTeam, seedUser, testApp, token, uniq, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";

createApi();

interface Route {
  op: string;
  method: string;
  path: string;
  auth: { scopes: readonly string[]; signIn?: boolean; basicOnly?: boolean; siteAdmin?: boolean; rejectPublicOnly?: boolean };
  hasBody: boolean;
}

let t: TestApp;
let admin: SeededUser;
let other: SeededUser;
let org: SeededOrg;
let ids: { repo: number; label: number; team: number; hook: number };
let repo: string;
let orgRepo: string;
let doc: { paths: Record<string, Record<string, { operationId: string; requestBody?: unknown }>> };
const MISSING = "zz-missing-zz";

beforeAll(async () => {
  t = await testApp();
  admin = await seedUser(t.db, { admin: true });
  other = await seedUser(t.db);
  const adminTok = await admin.token();
  org = await seedOrg(t, admin);
  const r = await apiRepo(t, adminTok, { name: uniq("s"), template: true, issue_labels: "Default" });
  repo = r.full_name;
  await addCollaborator(t, adminTok, repo, other, "read");
  orgRepo = (await apiRepo(t, adminTok, { name: uniq("o") }, org.name)).name;
  const [label] = await (await t.request(`/api/v1/repos/${repo}/labels`, { headers: token(adminTok) })).json();
  const team = await seedTeam(t, org);
  const hook = await (await t.request(`/api/v1/orgs/${org.name}/hooks`, { method: "POST", headers: token(adminTok), json: { type: "gitea", config: { url: "https://hooks.example.com/x", content_type: "json" } } })).json();
  ids = { repo: r.id, label: label.id, team: team.id, hook: hook.id };
  doc = await (await t.request("/openapi3.v1.json")).json();
});
afterAll(() => t.close());

/** Every served route with its declared auth, from ROUTE_AUTH, and whether the document gives it a body. */
const routes = (): Route[] =>
  [...ROUTE_AUTH].map(([op, r]) => ({ op, method: r.method, path: r.path, auth: r.auth, hasBody: !!doc.paths[r.path]?.[r.method.toLowerCase()]?.requestBody }));

/** The value of a path parameter (by name, and for `{id}` by what it identifies). */
function param(path: string, name: string): string {
  switch (name) {
    case "username":
    case "collaborator":
      return other.name;
    case "org":
      return org.name;
    case "owner":
    case "template_owner":
      return repo.split("/")[0]!;
    case "repo":
      // A team's repository is one of the team's organization.
      return path.startsWith("/teams/") ? orgRepo : repo.split("/")[1]!;
    case "template_repo":
      return repo.split("/")[1]!;
    case "name":
      return "Default";
    case "filepath":
      return "README.md";
    case "token":
      return MISSING;
    case "branch":
    case "sha":
      return "main";
    case "ref":
      return "heads";
    case "archive":
      return "main.zip";
    case "tag":
      return "v1";
    case "id":
      if (path.startsWith("/repositories/")) return String(ids.repo);
      if (path.includes("/labels/")) return String(ids.label);
      if (path.startsWith("/teams/")) return String(ids.team);
      if (path.includes("/hooks/")) return String(ids.hook);
  }
  throw new Error(`no value for {${name}} in ${path}: teach param() about it`);
}

/**
 * A request that answers the same each time it is sent: GET as is; a write with a body gets an
 * invalid one (a JSON array: 422 once past auth); a write without a body targets a missing thing.
 */
function requestOf(r: Route): { path: string; init: RequestInit & { json?: unknown } } {
  const names = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const bodiless = r.method !== "GET" && !r.hasBody;
  let path = r.path;
  names.forEach((n, i) => {
    const last = i === names.length - 1;
    const value = bodiless && last ? (n === "id" ? "999999999" : MISSING) : param(r.path, n!);
    path = path.replace(`{${n}}`, encodeURIComponent(value));
  });
  return { path: `/api/v1${path}`, init: { method: r.method, ...(r.hasBody ? { json: [] } : {}) } };
}

const send = (r: Route, headers: Record<string, string>) => {
  const { path, init } = requestOf(r);
  return t.request(path, { ...init, headers });
};
const level = (r: Route) => (r.method === "GET" ? "read" : "write");
const scopeMessage = (r: Route, have: string) => `token does not have at least one of required scope(s), required=[${r.auth.scopes.map((c) => `${level(r)}:${c}`).join(" ")}], token scope=${have}`;

describe("the table is the served API", () => {
  it("ROUTE_AUTH and the API document name the same operations, methods and paths", () => {
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.entries(ops).map(([m, o]) => `${m.toUpperCase()} ${path} ${o.operationId}`))
      .sort();
    expect(routes().map((r) => `${r.method} ${r.path} ${r.op}`).sort()).toEqual(documented);
    expect(routes().length).toBe(119);
  });

  it("every route has a request to try, and declares only known categories", () => {
    for (const r of routes()) {
      expect(() => requestOf(r), r.op).not.toThrow();
      for (const c of r.auth.scopes) expect(SCOPE_CATEGORIES, r.op).toContain(c);
    }
  });
});

describe("token scopes on every route", () => {
  it("a token without the route's categories → 403 naming them, in one round trip; routes without categories answer it as any token", async () => {
    const misc = await admin.token(["read:misc"]);
    const all = await admin.token();
    const failures: string[] = [];
    for (const r of routes()) {
      const res = await send(r, token(misc));
      const body = await res.text();
      if (r.auth.scopes.length === 0) {
        const full = await send(r, token(all));
        if (res.status !== full.status || body !== (await full.text())) failures.push(`${r.op}: ${res.status} ${body} differs from a full token's answer`);
        continue;
      }
      if (res.status !== 403 || JSON.parse(body).message !== scopeMessage(r, "read:misc")) failures.push(`${r.op}: ${res.status} ${body}`);
      else if (roundTrips(res) !== 1) failures.push(`${r.op}: ${roundTrips(res)} round trips`);
    }
    expect(failures).toEqual([]);
  });

  it("a token with exactly the route's categories passes as a full token does; with reads of every data category it answers the same", async () => {
    const all = await admin.token();
    const failures: string[] = [];
    for (const r of routes()) {
      const own = r.auth.scopes.map((c) => `${level(r)}:${c}`);
      const [a, full] = [await send(r, token(await admin.token(own))), await send(r, token(all))];
      const [ta, tf] = [await a.text(), await full.text()];
      if (a.status === 403 && ta.includes("required scope")) failures.push(`${r.op}: refused with its own scopes: ${ta}`);
      if (a.status !== full.status) failures.push(`${r.op}: ${a.status} ${ta.slice(0, 120)} ≠ full token ${full.status} ${tf.slice(0, 120)}`);
      // What a route embeds of other categories is bounded by the token's read scopes (issue 8 A.3);
      // with those, the answer is the full token's.
      const b = await send(r, token(await admin.token([...own, "read:repository", "read:organization", "read:user"])));
      const tb = await b.text();
      if (b.status !== full.status || tb !== tf) failures.push(`${r.op}: with data reads ${b.status} ${tb.slice(0, 120)} ≠ full token ${full.status} ${tf.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });

  it("read scopes do not allow writes: every write route → 403 naming the write scopes", async () => {
    const reads = await admin.token(SCOPE_CATEGORIES.map((c) => `read:${c}`));
    const failures: string[] = [];
    for (const r of routes().filter((x) => x.method !== "GET" && x.auth.scopes.length > 0)) {
      const res = await send(r, token(reads));
      const body = await res.json();
      if (res.status !== 403 || body.message !== scopeMessage(r, SCOPE_CATEGORIES.map((c) => `read:${c}`).join(","))) failures.push(`${r.op}: ${res.status} ${JSON.stringify(body)}`);
    }
    expect(failures).toEqual([]);
  });

  it("write scopes include reads: every GET route passes with the write scopes of its categories", async () => {
    const failures: string[] = [];
    for (const r of routes().filter((x) => x.method === "GET" && x.auth.scopes.length > 0)) {
      const res = await send(r, token(await admin.token(r.auth.scopes.map((c) => `write:${c}`))));
      if (res.status === 403 && (await res.text()).includes("required scope")) failures.push(r.op);
    }
    expect(failures).toEqual([]);
  });
});

describe("the rest of the declared auth on every route", () => {
  it("reqToken: anonymous → 401 `token is required` with no round trip; other routes never ask for a token", async () => {
    const failures: string[] = [];
    for (const r of routes()) {
      const res = await send(r, {});
      const body = await res.text();
      const asked = res.status === 401 && JSON.parse(body).message === "token is required";
      if (!!r.auth.signIn !== asked) failures.push(`${r.op}: signIn ${!!r.auth.signIn}, answered ${res.status} ${body}`);
      if (asked && roundTrips(res) !== 0) failures.push(`${r.op}: ${roundTrips(res)} round trips before refusing`);
      if (!r.auth.signIn && res.status === 401) failures.push(`${r.op}: 401 ${body}`);
    }
    expect(failures).toEqual([]);
  });

  it("reqSiteAdmin: a signed-in non-admin with every scope → 403 `user should be the site admin`; others are not asked", async () => {
    const tk = await other.token();
    const failures: string[] = [];
    for (const r of routes()) {
      const res = await send(r, token(tk));
      const body = await res.text();
      const asked = res.status === 403 && body.includes("user should be the site admin");
      if (!!r.auth.siteAdmin !== asked) failures.push(`${r.op}: siteAdmin ${!!r.auth.siteAdmin}, answered ${res.status} ${body}`);
      if (asked && (JSON.parse(body).message !== "user should be the site admin" || roundTrips(res) !== 1)) failures.push(`${r.op}: ${body} in ${roundTrips(res)} round trips`);
    }
    expect(failures).toEqual([]);
  });

  it("basic-only routes refuse tokens (401 `auth required`) and take a password; others take a token", async () => {
    const tk = await admin.token();
    const failures: string[] = [];
    for (const r of routes()) {
      const res = await send(r, token(tk));
      const body = await res.text();
      const refused = res.status === 401 && JSON.parse(body).message === "auth required";
      if (!!r.auth.basicOnly !== refused) failures.push(`${r.op}: basicOnly ${!!r.auth.basicOnly}, answered ${res.status} ${body}`);
      if (r.auth.basicOnly) {
        const pw = await send(r, { Authorization: `Basic ${Buffer.from(`${admin.name}:${admin.password}`).toString("base64")}` });
        if (pw.status === 401) failures.push(`${r.op}: a password is refused too: ${await pw.text()}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("public-only tokens are refused by the routes that serve only private data (403), and only by those", async () => {
    const tk = await admin.token(["public-only", "all"]);
    const failures: string[] = [];
    for (const r of routes()) {
      const res = await send(r, token(tk));
      const body = await res.text();
      const refused = res.status === 403 && body.includes("this endpoint is not available for public-only tokens");
      if (!!r.auth.rejectPublicOnly !== refused) failures.push(`${r.op}: rejectPublicOnly ${!!r.auth.rejectPublicOnly}, answered ${res.status} ${body}`);
    }
    expect(failures).toEqual([]);
  });
});
