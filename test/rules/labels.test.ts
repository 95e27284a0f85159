/** Labels: the spec's label rules and Gitea's behaviour (reference §1.5, §5.1–5.2, §6.4). */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { label } from "../../functions/db/schema.ts";
import { expectRefusal, NOT_FOUND, apiRepo, interleavedWrites, roundTrips, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
let ownerTok: string;
let repo: { id: number; name: string };

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  ownerTok = await owner.token();
  repo = await apiRepo(t, ownerTok, { name: uniq("l") });
});
afterAll(() => t.close());

const base = () => `/api/v1/repos/${owner.name}/${repo.name}/labels`;
const create = (json: unknown, tk = ownerTok) => t.request(base(), { method: "POST", headers: token(tk), json });

describe("create", () => {
  it("normalizes the colour (stored #rrggbb, shown without #) and answers Gitea's Label (2 round trips)", async () => {
    const res = await create({ name: "bug", color: "#ABC", description: "d" });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const body = await res.json();
    expect(body).toEqual({ id: body.id, name: "bug", exclusive: false, is_archived: false, color: "aabbcc", description: "d", url: `http://gitea.test/api/v1/repos/${owner.name}/${repo.name}/labels/${body.id}` });
    const [row] = await t.db.select().from(label).where(eq(label.id, body.id));
    expect(row!.color).toBe("#aabbcc");
  });

  it("an invalid colour → 422 `bad color code: …`; a missing colour → 422 [Color]: Required", async () => {
    const bad = await create({ name: "x", color: "red" });
    expect(bad.status).toBe(422);
    expect((await bad.json()).message).toBe("bad color code: #red");
    const missing = await create({ name: "x" });
    expect((await missing.json()).message).toBe("[Color]: Required");
  });

  it("a colour is only Required, as Gitea binds it: surrounding spaces of any length are trimmed by NormalizeColor (create and edit)", async () => {
    const padded = `${" ".repeat(20)}#ABC${" ".repeat(20)}`;
    const made = await create({ name: uniq("pad"), color: padded });
    expect(made.status).toBe(201);
    const l = await made.json();
    expect(l.color).toBe("aabbcc");
    const edited = await t.request(`${base()}/${l.id}`, { method: "PATCH", headers: token(ownerTok), json: { color: `${" ".repeat(20)}123456 ` } });
    expect([edited.status, (await edited.json()).color]).toEqual([200, "123456"]);
  });

  it("needs write access on issues or pull requests (403 for a reader)", async () => {
    const reader = await seedUser(t.db);
    await expectRefusal(create({ name: "x", color: "ffffff" }, await reader.token()), 403, "user should have a permission to write to a repo");
  });
});

describe("get by id or name, write by id, confined to the repository", () => {
  it("GET by numeric id or by name (1 round trip)", async () => {
    const l = await (await create({ name: "by-name", color: "00ff00" })).json();
    const byId = await t.request(`${base()}/${l.id}`);
    expect(byId.status).toBe(200);
    expect(roundTrips(byId)).toBe(1);
    expect((await (await t.request(`${base()}/by-name`)).json()).id).toBe(l.id);
    // the id as Gitea's strconv.ParseInt(…, 10, 64) reads it: `+id` is the id; `-1` is an id no label has, not the name "-1"
    expect((await (await t.request(`${base()}/+${l.id}`)).json()).id).toBe(l.id);
    expect((await create({ name: "-1", color: "00ff00" })).status).toBe(201);
    await expectRefusal(t.request(`${base()}/-1`), 404, NOT_FOUND);
  });

  it("PATCH and DELETE take {id} as an id only (Gitea's PathParamInt64): a label's name is a 404 on PATCH and deletes nothing on DELETE (204)", async () => {
    const l = await (await create({ name: "named", color: "00ff00" })).json();
    await expectRefusal(t.request(`${base()}/named`, { method: "PATCH", headers: token(ownerTok), json: { description: "changed" } }), 404, NOT_FOUND);
    expect((await t.request(`${base()}/named`, { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    const [kept] = await t.db.select().from(label).where(eq(label.id, l.id));
    expect(kept).toMatchObject({ name: "named", description: "" });
    // the id still works for both
    expect((await t.request(`${base()}/${l.id}`, { method: "PATCH", headers: token(ownerTok), json: { description: "changed" } })).status).toBe(200);
    expect((await t.request(`${base()}/${l.id}`, { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    expect(await t.db.select().from(label).where(eq(label.id, l.id))).toEqual([]);
  });

  it("a label id of another repository answers exactly like an absent id (GHSA-pgqf-926r-548m)", async () => {
    const other = await apiRepo(t, ownerTok, { name: uniq("o") });
    const foreign = await (await t.request(`/api/v1/repos/${owner.name}/${other.name}/labels`, { method: "POST", headers: token(ownerTok), json: { name: "f", color: "123456" } })).json();
    const a = await t.request(`${base()}/${foreign.id}`);
    const b = await t.request(`${base()}/999999999`);
    expect(a.status).toBe(404);
    expect(await a.json()).toEqual(await b.json());
    await expectRefusal(t.request(`${base()}/${foreign.id}`, { method: "PATCH", headers: token(ownerTok), json: { name: "hijack" } }), 404, NOT_FOUND);
    expect((await t.request(`${base()}/${foreign.id}`, { method: "DELETE", headers: token(ownerTok) })).status).toBe(204);
    const [still] = await t.db.select().from(label).where(eq(label.id, foreign.id));
    expect(still!.name).toBe("f");
  });

  it("labels of a private repository are 404 to outsiders", async () => {
    const priv = await apiRepo(t, ownerTok, { name: uniq("p"), private: true, issue_labels: "Default" });
    const stranger = await seedUser(t.db);
    await expectRefusal(t.request(`/api/v1/repos/${owner.name}/${priv.name}/labels`, { headers: token(await stranger.token()) }), 404, NOT_FOUND);
    await expectRefusal(t.request(`/api/v1/repos/${owner.name}/${priv.name}/labels`), 404, NOT_FOUND);
  });

  it("a token with the issue scope alone reads and writes a private repository's labels (Gitea's issue category reaches the path's repository); the repository itself needs its own scope, and public-only stays public", async () => {
    const priv = await apiRepo(t, ownerTok, { name: uniq("p"), private: true, issue_labels: "Default" });
    const path = `/api/v1/repos/${owner.name}/${priv.name}`;
    const [readIssue, writeIssue, publicIssue] = [await owner.token(["read:issue"]), await owner.token(["write:issue"]), await owner.token(["public-only", "write:issue"])];
    const list = await t.request(`${path}/labels`, { headers: token(readIssue) });
    expect([list.status, list.headers.get("X-Total-Count")]).toEqual([200, "7"]);
    const made = await t.request(`${path}/labels`, { method: "POST", headers: token(writeIssue), json: { name: "bot", color: "#00ff00" } });
    expect(made.status).toBe(201);
    const id = (await made.json()).id;
    expect((await t.request(`${path}/labels/${id}`, { headers: token(readIssue) })).status).toBe(200);
    expect((await t.request(`${path}/labels/${id}`, { method: "PATCH", headers: token(writeIssue), json: { description: "d" } })).status).toBe(200);
    expect((await t.request(`${path}/labels/${id}`, { method: "DELETE", headers: token(writeIssue) })).status).toBe(204);
    // the repository route is the repository category's
    expect((await t.request(path, { headers: token(readIssue) })).status).toBe(403);
    for (const req of [t.request(`${path}/labels`, { headers: token(publicIssue) }), t.request(`${path}/labels`, { method: "POST", headers: token(publicIssue), json: { name: "x", color: "#00ff00" } })]) {
      await expectRefusal(req, 404, NOT_FOUND);
    }
  });
});

describe("edit", () => {
  it("a label another request deleted between the edit's read and its write → 404, nothing written (not a 500)", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const tk = await (await seedUser(t2.db)).token();
    const r = await apiRepo(t2, tk, { name: uniq("l") });
    const me = await (await t2.request("/api/v1/user", { headers: token(tk) })).json();
    const l = await (await t2.request(`/api/v1/repos/${me.login}/${r.name}/labels`, { method: "POST", headers: token(tk), json: { name: "gone", color: "#000000" } })).json();
    w.beforeNextWrite("DELETE FROM label WHERE id = ?", [l.id]);
    await expectRefusal(t2.request(`/api/v1/repos/${me.login}/${r.name}/labels/${l.id}`, { method: "PATCH", headers: token(tk), json: { name: "back" } }), 404, NOT_FOUND);
    expect(await t2.db.select().from(label).where(eq(label.repoId, r.id))).toEqual([]);
    t2.close();
  });

  it("applies present fields; an absent is_archived clears the archived flag", async () => {
    const l = await (await create({ name: "arch", color: "ffffff", is_archived: true })).json();
    expect(l.is_archived).toBe(true);
    const edited = await (await t.request(`${base()}/${l.id}`, { method: "PATCH", headers: token(ownerTok), json: { description: "new" } })).json();
    expect(edited).toMatchObject({ name: "arch", description: "new", is_archived: false });
    const bad = await t.request(`${base()}/${l.id}`, { method: "PATCH", headers: token(ownerTok), json: { color: "#12345" } });
    await expectRefusal(bad, 422, "bad color code: ##12345");
  });
});

describe("list", () => {
  it("lists with X-Total-Count, sorted alphabetically by default and reverse on request", async () => {
    const r = await apiRepo(t, ownerTok, { name: uniq("ls"), issue_labels: "Default" });
    const res = await t.request(`/api/v1/repos/${owner.name}/${r.name}/labels?page=1&limit=3`);
    expect(res.headers.get("X-Total-Count")).toBe("7");
    expect((await res.json()).map((l: { name: string }) => l.name)).toEqual(["bug", "duplicate", "enhancement"]);
    const rev = await (await t.request(`/api/v1/repos/${owner.name}/${r.name}/labels?sort=reversealphabetically&page=1&limit=1`)).json();
    expect(rev[0].name).toBe("wontfix");
  });
});

describe("templates", () => {
  it("GET /label/templates lists Advanced and Default; GET /label/templates/{name} answers the labels or 404", async () => {
    expect(await (await t.request("/api/v1/label/templates")).json()).toEqual(["Advanced", "Default"]);
    const def = await (await t.request("/api/v1/label/templates/Default")).json();
    expect(def).toContainEqual({ name: "bug", exclusive: false, color: "ee0701", description: "Something is not working" });
    await expectRefusal(t.request("/api/v1/label/templates/Nope"), 404, NOT_FOUND);
  });
});
