/** Access tokens: /users/{username}/tokens (self or admin, basic auth only, shown once, stored hashed). */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessToken } from "../../functions/db/schema.ts";
import { tokenHash } from "../../functions/lib/crypto.ts";
import { expectRefusal, basic, NOT_FOUND, roundTrips, seedUser, testApp, token, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let admin: SeededUser;

beforeAll(async () => {
  t = await testApp();
  alice = await seedUser(t.db);
  admin = await seedUser(t.db, { admin: true });
});
afterAll(() => t.close());

const create = (who: SeededUser, owner: string, json: unknown) =>
  t.request(`/api/v1/users/${owner}/tokens`, { method: "POST", headers: basic(who.name, who.password), json });

describe("POST /users/{username}/tokens", () => {
  it("returns the token once (sha1), stores only its SHA-256, and the token works (2 round trips)", async () => {
    const res = await create(alice, alice.name, { name: "ci", scopes: ["read:user", "write:repository"] });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const body = await res.json();
    expect(Object.keys(body)).toEqual(["id", "name", "sha1", "token_last_eight", "scopes", "created_at", "last_used_at"]);
    expect(body.sha1).toMatch(/^[0-9a-f]{40}$/);
    expect(body.token_last_eight).toBe(body.sha1.slice(-8));
    expect(body.scopes).toEqual(["write:repository", "read:user"]);
    const [row] = await t.db.select().from(accessToken).where(eq(accessToken.id, body.id));
    expect(row!.tokenHash).toBe(await tokenHash(body.sha1));
    expect(JSON.stringify(row)).not.toContain(body.sha1);
    expect((await t.request("/api/v1/user", { headers: token(body.sha1) })).status).toBe(200);
  });

  it("scopes are normalized: write implies read, the full write set is `all`", async () => {
    const a = await (await create(alice, alice.name, { name: "n1", scopes: ["read:user", "write:user"] })).json();
    expect(a.scopes).toEqual(["write:user"]);
    const b = await (await create(alice, alice.name, { name: "n2", scopes: ["all", "public-only"] })).json();
    expect(b.scopes).toEqual(["public-only", "all"]);
  });

  it("an empty scope list → 400 (go-gitea/gitea#32092); an unknown scope → 400", async () => {
    const empty = await create(alice, alice.name, { name: "e1", scopes: [] });
    expect(empty.status).toBe(400);
    expect((await empty.json()).message).toBe("access token must have a scope");
    const bad = await create(alice, alice.name, { name: "e2", scopes: ["read:everything"] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toBe("invalid access token scope provided: invalid access token scope: read:everything");
    // Gitea splits on commas without trimming: a space makes an unknown scope
    const spaced = await create(alice, alice.name, { name: "e3", scopes: ["read:user, write:issue"] });
    expect([spaced.status, (await spaced.json()).message]).toEqual([400, "invalid access token scope provided: invalid access token scope:  write:issue"]);
  });

  it("a name already used by the same user → 400; other users may reuse it", async () => {
    await create(alice, alice.name, { name: "dup", scopes: ["all"] });
    const again = await create(alice, alice.name, { name: "dup", scopes: ["all"] });
    expect(again.status).toBe(400);
    expect((await again.json()).message).toBe("access token name has been used already");
    // the name is checked before the scopes, as in Gitea
    const both = await create(alice, alice.name, { name: "dup", scopes: ["read:nothing"] });
    expect([both.status, (await both.json()).message]).toEqual([400, "access token name has been used already"]);
    expect((await create(admin, admin.name, { name: "dup", scopes: ["all"] })).status).toBe(201);
  });

  it("a missing name → 422 `[Name]: Required`", async () => {
    const res = await create(alice, alice.name, { scopes: ["all"] });
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe("[Name]: Required");
  });

  it("token authentication (not basic) → 401 `auth required`", async () => {
    const res = await t.request(`/api/v1/users/${alice.name}/tokens`, { method: "POST", headers: token(await alice.token()), json: { name: "x", scopes: ["all"] } });
    expect(res.status).toBe(401);
    expect((await res.json()).message).toBe("auth required");
  });

  it("scope rule: a token given as the basic-auth password creates tokens within its own scope only — no wider one, public-only kept; nothing is written", async () => {
    const viaToken = async (who: SeededUser, tok: string, owner: string, scopes: string[]) =>
      t.request(`/api/v1/users/${owner}/tokens`, { method: "POST", headers: basic(who.name, tok), json: { name: `t${Math.random()}`, scopes } });
    const writeUser = await alice.token(["write:user"]);
    const tokensBefore = (await t.db.select().from(accessToken).where(eq(accessToken.uid, alice.id))).length;
    await expectRefusal(viaToken(alice, writeUser, alice.name, ["all"]), 403, `token does not have at least one of required scope(s), required=[write:activitypub write:admin write:misc write:notification write:organization write:package write:issue write:repository write:user], token scope=write:user`);
    await expectRefusal(viaToken(alice, writeUser, alice.name, ["read:repository"]), 403, "token does not have at least one of required scope(s), required=[read:repository], token scope=write:user");
    expect((await t.db.select().from(accessToken).where(eq(accessToken.uid, alice.id))).length).toBe(tokensBefore);
    // within its scope it works (write implies read)
    expect((await viaToken(alice, writeUser, alice.name, ["read:user"])).status).toBe(201);
    // a public-only token makes public-only tokens only, for others too when it is a site admin's
    const adminPublic = await admin.token(["public-only", "all"]);
    await expectRefusal(viaToken(admin, adminPublic, alice.name, ["all"]), 403, "token does not have at least one of required scope(s), required=[public-only write:activitypub write:admin write:misc write:notification write:organization write:package write:issue write:repository write:user], token scope=public-only,all");
    const bounded = await viaToken(admin, adminPublic, alice.name, ["public-only", "read:repository"]);
    expect([bounded.status, (await bounded.json()).scopes]).toEqual([201, ["public-only", "read:repository"]]);
    // a password is not a token: it creates any scope, as before
    expect((await create(alice, alice.name, { name: "pw-all", scopes: ["all"] })).status).toBe(201);
  });

  it("another user → 403; a site admin may create tokens for others", async () => {
    const res = await create(alice, admin.name, { name: "steal", scopes: ["all"] });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("doer should be the site admin or be same as the contextUser");
    expect((await create(admin, alice.name, { name: "from-admin", scopes: ["read:user"] })).status).toBe(201);
  });

  it("USER_DISABLED_FEATURES=manage_credentials refuses new tokens with 403", async () => {
    const t2 = await testApp({ GITEA__admin__USER_DISABLED_FEATURES: "manage_credentials" });
    const u = await seedUser(t2.db);
    const res = await t2.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: basic(u.name, u.password), json: { name: "x", scopes: ["all"] } });
    await expectRefusal(res, 403, "managing credentials is disabled for this account");
    t2.close();
  });

  it("EXTERNAL_USER_DISABLE_FEATURES applies to external accounts only", async () => {
    const t2 = await testApp({ GITEA__admin__EXTERNAL_USER_DISABLE_FEATURES: "manage_credentials" });
    const local = await seedUser(t2.db);
    const ext = await seedUser(t2.db, { loginType: 2 });
    const admin2 = await seedUser(t2.db, { admin: true });
    const h = basic(admin2.name, admin2.password);
    expect((await t2.request(`/api/v1/users/${local.name}/tokens`, { method: "POST", headers: h, json: { name: "x", scopes: ["all"] } })).status).toBe(201);
    await expectRefusal(t2.request(`/api/v1/users/${ext.name}/tokens`, { method: "POST", headers: h, json: { name: "x", scopes: ["all"] } }), 403, "managing credentials is disabled for this account");
    t2.close();
  });
});

describe("GET /users/{username}/tokens", () => {
  it("lists the user's tokens newest first without the secret, with X-Total-Count, one round trip", async () => {
    const u = await seedUser(t.db);
    await t.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: basic(u.name, u.password), json: { name: "first", scopes: ["all"] } });
    await t.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: basic(u.name, u.password), json: { name: "second", scopes: ["all"] } });
    const res = await t.request(`/api/v1/users/${u.name}/tokens`, { headers: basic(u.name, u.password) });
    expect(res.status).toBe(200);
    expect(roundTrips(res)).toBe(1);
    expect(res.headers.get("X-Total-Count")).toBe("2");
    const list = await res.json();
    expect(list.map((x: { name: string }) => x.name)).toEqual(["second", "first"]);
    expect(list.map((x: { sha1: string }) => x.sha1)).toEqual(["", ""]);
  });
});

describe("DELETE /users/{username}/tokens/{token}", () => {
  it("deletes by id or by name; the deleted token stops working at once", async () => {
    const u = await seedUser(t.db);
    const h = basic(u.name, u.password);
    const a = await (await t.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: h, json: { name: "by-id", scopes: ["all"] } })).json();
    const b = await (await t.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: h, json: { name: "by-name", scopes: ["all"] } })).json();
    const del = await t.request(`/api/v1/users/${u.name}/tokens/${a.id}`, { method: "DELETE", headers: h });
    expect(del.status).toBe(204);
    expect(roundTrips(del)).toBe(2);
    expect((await t.request(`/api/v1/users/${u.name}/tokens/by-name`, { method: "DELETE", headers: h })).status).toBe(204);
    await expectRefusal(t.request("/api/v1/user", { headers: token(a.sha1) }), 401, "invalid username, password or token");
    await expectRefusal(t.request("/api/v1/user", { headers: token(b.sha1) }), 401, "invalid username, password or token");
    // the path value as Gitea's strconv.ParseInt(…, 0, 64) reads it: hex and octal are ids; "0" is a name
    const c = await (await t.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: h, json: { name: "0", scopes: ["all"] } })).json();
    const d = await (await t.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: h, json: { name: "hex", scopes: ["all"] } })).json();
    expect((await t.request(`/api/v1/users/${u.name}/tokens/0x${d.id.toString(16)}`, { method: "DELETE", headers: h })).status).toBe(204);
    await expectRefusal(t.request("/api/v1/user", { headers: token(d.sha1) }), 401, "invalid username, password or token");
    expect((await t.request(`/api/v1/users/${u.name}/tokens/0`, { method: "DELETE", headers: h })).status).toBe(204);
    // Go's underscores between digits make an id; out of range is the bound Go returns (an id, so 404), never the name
    const e = await (await t.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: h, json: { name: "99999999999999999999", scopes: ["all"] } })).json();
    await expectRefusal(t.request(`/api/v1/users/${u.name}/tokens/99999999999999999999`, { method: "DELETE", headers: h }), 404, NOT_FOUND);
    const f = await (await t.request(`/api/v1/users/${u.name}/tokens`, { method: "POST", headers: h, json: { name: "under", scopes: ["all"] } })).json();
    const digits = String(f.id);
    expect((await t.request(`/api/v1/users/${u.name}/tokens/${digits.length > 1 ? `${digits[0]}_${digits.slice(1)}` : digits}`, { method: "DELETE", headers: h })).status).toBe(204);
    expect((await t.request(`/api/v1/users/${u.name}/tokens/${e.id}`, { method: "DELETE", headers: h })).status).toBe(204);
    await expectRefusal(t.request("/api/v1/user", { headers: token(c.sha1) }), 401, "invalid username, password or token");
  });

  it("another user's token id answers exactly like a missing one (404)", async () => {
    const other = await (await create(admin, admin.name, { name: "admins", scopes: ["all"] })).json();
    const res = await t.request(`/api/v1/users/${alice.name}/tokens/${other.id}`, { method: "DELETE", headers: basic(alice.name, alice.password) });
    const missing = await t.request(`/api/v1/users/${alice.name}/tokens/999999`, { method: "DELETE", headers: basic(alice.name, alice.password) });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(await missing.json());
    expect((await t.request("/api/v1/user", { headers: token(other.sha1) })).status).toBe(200);
  });
});
