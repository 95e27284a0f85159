/**
 * Rule: a body route binds a form as Gitea's binding does (go-chi/binding `Bind`):
 * `application/x-www-form-urlencoded` and `multipart/form-data` are read besides JSON, each field
 * as Go's form binding reads it for its type (strconv.ParseBool, ParseInt, every value of a list);
 * fields the option does not name are ignored; what does not parse is the body's usual 422. Other
 * media types stay Gitea's "Unsupported Content-Type".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basic, expectRefusal, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let u: SeededUser;
let tk: string;

beforeAll(async () => {
  t = await testApp();
  u = await seedUser(t.db);
  tk = await u.token();
});
afterAll(() => t.close());

const form = (method: string, path: string, body: URLSearchParams | FormData, headers: Record<string, string> = token(tk)) => t.request(path, { method, headers, body });

describe("form bodies bind as Gitea's form binding", () => {
  it("a urlencoded create reads text, booleans (ParseBool's spellings) and ignores fields the option does not name", async () => {
    const name = uniq("form");
    const res = await form("POST", "/api/v1/user/repos", new URLSearchParams({ name, description: "from a form", private: "T", auto_init: "1", no_such_field: "x" }));
    expect(res.status, await res.clone().text()).toBe(201);
    expect(await res.json()).toMatchObject({ name, description: "from a form", private: true, empty: false });
  });

  it("a multipart create binds the same way; an edit applies only the fields sent", async () => {
    const name = uniq("multi");
    const body = new FormData();
    body.set("name", name);
    body.set("private", "false");
    expect((await form("POST", "/api/v1/user/repos", body)).status).toBe(201);
    const edit = await form("PATCH", `/api/v1/repos/${u.name}/${name}`, new URLSearchParams({ has_issues: "false", website: "https://example.com" }));
    expect(edit.status).toBe(200);
    expect(await edit.json()).toMatchObject({ private: false, has_issues: false, website: "https://example.com", description: "" });
  });

  it("a list takes every value of its key (token scopes)", async () => {
    const body = new URLSearchParams([
      ["name", uniq("t")],
      ["scopes", "read:user"],
      ["scopes", "read:repository"],
    ]);
    const res = await form("POST", `/api/v1/users/${u.name}/tokens`, body, basic(u.name, u.password));
    expect(res.status, await res.clone().text()).toBe(201);
    expect((await res.json()).scopes).toEqual(["read:repository", "read:user"]);
  });

  it("a value that does not parse, a missing required field and a NUL are the body's 422s; nothing is written", async () => {
    const name = uniq("bad");
    const bad = await form("POST", "/api/v1/user/repos", new URLSearchParams({ name, private: "maybe" }));
    expect(bad.status).toBe(422);
    await expectRefusal(form("POST", "/api/v1/user/repos", new URLSearchParams({ description: "no name" })), 422, "[Name]: Required");
    await expectRefusal(form("POST", "/api/v1/user/repos", new URLSearchParams({ name: `x\0y` })), 422, "[Name]: invalid character NUL");
    // a multipart body that does not parse (its boundary never comes)
    const broken = await t.request("/api/v1/user/repos", { method: "POST", headers: { ...token(tk), "Content-Type": "multipart/form-data; boundary=xyz" }, body: "not a multipart body" });
    expect([broken.status, (await broken.json()).message]).toEqual([422, "[Body]: DeserializationError: malformed form body"]);
    expect((await t.request(`/api/v1/repos/${u.name}/${name}`, { headers: token(tk) })).status).toBe(404);
  });

  it("a form a browser posts from another site is refused as an unsupported body, nothing written (cached Basic credentials would ride along); one from this site or no browser binds", async () => {
    const name = uniq("csrf");
    const auth = basic(u.name, u.password);
    for (const headers of [{ "Sec-Fetch-Site": "cross-site" }, { "Sec-Fetch-Site": "same-site" }, { Origin: "https://evil.example" }] as Record<string, string>[]) {
      await expectRefusal(form("POST", "/api/v1/user/repos", new URLSearchParams({ name }), { ...auth, ...headers }), 422, "[]: Unsupported Content-Type");
    }
    expect((await t.request(`/api/v1/repos/${u.name}/${name}`, { headers: token(tk) })).status).toBe(404);
    expect((await form("POST", "/api/v1/user/repos", new URLSearchParams({ name }), { ...auth, "Sec-Fetch-Site": "same-origin", Origin: "http://gitea.test" })).status).toBe(201);
  });

  it("a number field reads as strconv.ParseInt would (a sign, digits, no space); text that is no number stays text, the schema's 422", async () => {
    const admin = await seedUser(t.db, { admin: true });
    const at = await admin.token();
    const create = (source_id: string) =>
      form("POST", "/api/v1/admin/users", new URLSearchParams({ username: uniq("fu"), email: `${uniq("fu")}@example.com`, password: "form-password-1", source_id, must_change_password: "false" }), token(at));
    await expectRefusal(create("+3"), 422, "login source does not exist [id: 3]");
    await expectRefusal(create("12"), 422, "login source does not exist [id: 12]");
    for (const v of ["twelve", " 12", "0x1"]) {
      const text = await create(v);
      expect(text.status, v).toBe(422);
      expect((await text.json()).message, v).toMatch(/^\[SourceID\]/);
    }
    expect((await create("0")).status).toBe(201);
  });

  it("a browser form from this origin binds: Sec-Fetch-Site same-origin or none, or only an Origin that is this site's", async () => {
    const auth = basic(u.name, u.password);
    for (const headers of [{ "Sec-Fetch-Site": "same-origin" }, { "Sec-Fetch-Site": "none" }, { Origin: "http://gitea.test" }] as Record<string, string>[]) {
      const res = await form("POST", "/api/v1/user/repos", new URLSearchParams({ name: uniq("same") }), { ...auth, ...headers });
      expect(res.status, JSON.stringify(headers)).toBe(201);
    }
    // Fetch Metadata decides when both are sent: a foreign Origin does not refuse a same-origin fetch, a local one does not admit a cross-site one
    expect((await form("POST", "/api/v1/user/repos", new URLSearchParams({ name: uniq("same") }), { ...auth, "Sec-Fetch-Site": "same-origin", Origin: "https://evil.example" })).status).toBe(201);
    await expectRefusal(form("POST", "/api/v1/user/repos", new URLSearchParams({ name: uniq("x") }), { ...auth, "Sec-Fetch-Site": "cross-site", Origin: "http://gitea.test" }), 422, "[]: Unsupported Content-Type");
  });

  it("other media types are still Gitea's binding 422", async () => {
    await expectRefusal(t.request("/api/v1/user/repos", { method: "POST", headers: { ...token(tk), "Content-Type": "text/plain" }, body: "name=x" }), 422, "[]: Unsupported Content-Type");
  });
});
