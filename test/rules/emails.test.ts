/** The caller's e-mail addresses: the spec's rules for GET/POST/DELETE /user/emails. */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emailAddress } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, roundTrips, seedUser, testApp, token, uniq, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const add = (tk: string, emails: unknown) => t.request("/api/v1/user/emails", { method: "POST", headers: token(tk), json: { emails } });
const del = (tk: string, emails: unknown) => t.request("/api/v1/user/emails", { method: "DELETE", headers: token(tk), json: { emails } });

describe("GET /user/emails", () => {
  it("lists the caller's addresses, primary included, in Gitea's Email shape (1 round trip)", async () => {
    const u = await seedUser(t.db);
    const res = await t.request("/api/v1/user/emails", { headers: token(await u.token()) });
    expect(res.status).toBe(200);
    expect(roundTrips(res)).toBe(1);
    expect(await res.json()).toEqual([{ email: `${u.name.toLowerCase()}@example.com`, verified: true, primary: true, user_id: 0, username: "" }]);
    expect(res.headers.get("X-Total-Count")).toBeNull();
  });

  it("a public-only token is refused (GHSA-wrr5-99h5-gq57)", async () => {
    const u = await seedUser(t.db);
    const res = await t.request("/api/v1/user/emails", { headers: token(await u.token(["public-only", "read:user"])) });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe("this endpoint is not available for public-only tokens");
  });
});

describe("POST /user/emails", () => {
  it("adds addresses and answers all of the user's addresses (2 round trips)", async () => {
    const u = await seedUser(t.db);
    const a = `${uniq("a")}@example.com`;
    const res = await add(await u.token(), [a]);
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    expect((await res.json()).map((e: { email: string }) => e.email)).toEqual([`${u.name.toLowerCase()}@example.com`, a]);
  });

  it("an empty list → 422 `Email list empty`", async () => {
    const u = await seedUser(t.db);
    const res = await add(await u.token(), []);
    expect(res.status).toBe(422);
    expect((await res.json()).message).toBe("Email list empty");
  });

  it("an address already used (by anyone, any case) → 422, and nothing of the request is added", async () => {
    const u = await seedUser(t.db);
    const other = await seedUser(t.db);
    const fresh = `${uniq("f")}@example.com`;
    const res = await add(await u.token(), [fresh, `${other.name.toUpperCase()}@example.com`]);
    expect(res.status).toBe(422);
    expect((await res.json()).message).toMatch(/^Email address has been used/);
    expect(await t.db.select().from(emailAddress).where(eq(emailAddress.lowerEmail, fresh))).toEqual([]);
  });

  it("an invalid address or an unsupported character → 422", async () => {
    const u = await seedUser(t.db);
    // Gitea's validateEmailBasic: its pattern, no leading "-", and what net/mail.ParseAddress takes (no dot at either end of the local part, no two in a row, no comma, no space around)
    for (const bad of ["", "not-an-email", "a b@example.com", "x@", "ü@example.com", "-a@example.com", ".a@example.com", "a.@example.com", "a..b@example.com", "a,b@example.com", " c@example.com", "@example.com"]) {
      const res = await add(await u.token(), [bad]);
      expect(res.status, bad).toBe(422);
      expect((await res.json()).message).toBe(`Email address "${bad}" invalid`);
    }
    // a host without a dot is an address to Gitea
    expect((await add(await u.token(), [`${uniq("m")}@localhost`])).status).toBe(201);
    // the same address twice in one request: the second is "used" by the first, nothing added
    const twice = `${uniq("m")}@example.com`;
    await expectRefusal(add(await u.token(), [twice, twice.toUpperCase()]), 422, `Email address has been used: ${twice.toUpperCase()}`);
    expect(await t.db.select().from(emailAddress).where(eq(emailAddress.lowerEmail, twice))).toEqual([]);
  });

  it("404 when credential management is disabled for the caller's login type", async () => {
    const t2 = await testApp({ GITEA__admin__EXTERNAL_USER_DISABLE_FEATURES: "manage_credentials" });
    const ext = await seedUser(t2.db, { loginType: 2 });
    const local = await seedUser(t2.db);
    await expectRefusal(t2.request("/api/v1/user/emails", { method: "POST", headers: token(await ext.token()), json: { emails: ["e1@example.com"] } }), 404, NOT_FOUND);
    await expectRefusal(t2.request("/api/v1/user/emails", { method: "DELETE", headers: token(await ext.token()), json: { emails: [] } }), 404, NOT_FOUND);
    expect((await t2.request("/api/v1/user/emails", { method: "POST", headers: token(await local.token()), json: { emails: ["e2@example.com"] } })).status).toBe(201);
    t2.close();
  });
});

describe("DELETE /user/emails", () => {
  it("deletes the listed addresses (2 round trips); an empty list is a 204 without change", async () => {
    const u = await seedUser(t.db);
    const tk = await u.token();
    const a = `${uniq("d")}@example.com`;
    await add(tk, [a]);
    expect((await del(tk, [])).status).toBe(204);
    const res = await del(tk, [a.toUpperCase()]);
    expect(res.status).toBe(204);
    expect(roundTrips(res)).toBe(2);
    expect(await t.db.select().from(emailAddress).where(eq(emailAddress.lowerEmail, a))).toEqual([]);
  });

  it("an address that is not the user's → 404, and nothing is deleted (another user's address answers the same)", async () => {
    const u = await seedUser(t.db);
    const other = await seedUser(t.db);
    const tk = await u.token();
    const a = `${uniq("k")}@example.com`;
    await add(tk, [a]);
    const res = await del(tk, [a, `${other.name.toLowerCase()}@example.com`]);
    await expectRefusal(res, 404, NOT_FOUND);
    expect(await t.db.select().from(emailAddress).where(eq(emailAddress.lowerEmail, a))).toHaveLength(1);
    expect(await t.db.select().from(emailAddress).where(eq(emailAddress.uid, other.id))).toHaveLength(1);
    // blank or padded entries are addresses no user has, as Gitea looks each up as given
    for (const odd of [[""], [" "], [a, ""], [` ${a}`]]) await expectRefusal(del(tk, odd), 404, NOT_FOUND, JSON.stringify(odd));
    expect(await t.db.select().from(emailAddress).where(eq(emailAddress.lowerEmail, a))).toHaveLength(1);
  });

  it("the primary address cannot be deleted (422)", async () => {
    const u = await seedUser(t.db);
    const res = await del(await u.token(), [`${u.name.toLowerCase()}@example.com`]);
    await expectRefusal(res, 422, "Primary email address cannot be deleted");
  });
});
