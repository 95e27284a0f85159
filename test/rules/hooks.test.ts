/** Organization webhooks: management rules, write-only encrypted secrets, SSRF-safe targets. */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhook } from "../../functions/db/schema.ts";
import { decryptSecret } from "../../functions/lib/crypto.ts";
import { expectRefusal, interleavedWrites, NOT_FOUND, roundTrips, seedMember, seedOrg, seedUser, testApp, token, type SeededUser, type SeededOrg, type TestApp } from "../fixtures/app.ts";
import { giteaShapeErrors } from "../fixtures/gitea-schema.ts";

let t: TestApp;
let owner: SeededUser;
let tk: string;
let org: SeededOrg;

beforeAll(async () => {
  t = await testApp();
  owner = await seedUser(t.db);
  tk = await owner.token();
  org = await seedOrg(t, owner);
});
afterAll(() => t.close());

const base = () => `/api/v1/orgs/${org.name}/hooks`;
const create = (json: unknown, who = tk) => t.request(base(), { method: "POST", headers: token(who), json });
const good = { type: "gitea", config: { url: "https://hooks.example.com/in", content_type: "json", secret: "s3cr3t-value" }, authorization_header: "Bearer very-secret" };

describe("create", () => {
  it("creates a hook: events default to push, active defaults to false; secrets never come back (2 round trips)", async () => {
    const res = await create(good);
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const body = await res.json();
    expect(giteaShapeErrors("Hook", body)).toEqual([]);
    expect(body).toMatchObject({ type: "gitea", events: ["push"], active: false, config: { url: "https://hooks.example.com/in", content_type: "json" }, authorization_header: "" });
    expect(JSON.stringify(body)).not.toContain("s3cr3t-value");
    expect(JSON.stringify(body)).not.toContain("very-secret");
  });

  it("secrets are stored encrypted under SECRET_KEY, not in the clear", async () => {
    const body = await (await create(good)).json();
    const [row] = await t.db.select().from(webhook).where(eq(webhook.id, body.id));
    expect(row!.secretEnc).not.toContain("s3cr3t-value");
    expect(row!.authHeaderEnc).not.toContain("very-secret");
    expect(await decryptSecret("test-secret-key-0123456789", row!.secretEnc)).toBe("s3cr3t-value");
    await expect(decryptSecret("another-key-0123456789", row!.secretEnc)).rejects.toThrow("cannot decrypt the stored secret: [security] SECRET_KEY differs from the key it was saved with (or the stored value is damaged)");
    const listed = await (await t.request(base(), { headers: token(tk) })).text();
    expect(listed).not.toContain("s3cr3t-value");
  });

  it.each([
    [{ type: "nope", config: { url: "https://x.example", content_type: "json" } }, 422, "Invalid hook type: nope"],
    [{ type: "gitea", config: { content_type: "json" } }, 422, "Missing config option: url"],
    [{ type: "gitea", config: { url: "https://x.example" } }, 422, "Missing config option: content_type"],
    [{ type: "gitea", config: { url: "https://x.example", content_type: "xml" } }, 422, "Invalid content type"],
    [{ type: "gitea", config: { url: "ftp://x.example", content_type: "json" } }, 422, "Invalid url"],
    [{ type: "slack", config: { url: "https://x.example", content_type: "json" } }, 422, "Missing config option: channel"],
    [{ type: "slack", config: { url: "https://x.example", content_type: "json", channel: "no spaces allowed" } }, 400, "Invalid slack channel name"],
    // Gitea's IsValidSlackChannel: lower case, digits, `-` and `_`, at most 80, one leading `#`.
    [{ type: "slack", config: { url: "https://x.example", content_type: "json", channel: "#General" } }, 400, "Invalid slack channel name"],
    [{ type: "slack", config: { url: "https://x.example", content_type: "json", channel: "" } }, 400, "Invalid slack channel name"],
    [{ type: "Slack", config: { url: "https://x.example", content_type: "json", channel: "#dev" } }, 422, "Invalid hook type: Slack"],
    [{ type: "slack", config: { url: "https://x.example", content_type: "json", channel: `#${"a".repeat(81)}` } }, 400, "Invalid slack channel name"],
    [{ type: "slack", config: { url: "https://x.example", content_type: "json", channel: "@someone" } }, 400, "Invalid slack channel name"],
    [{ type: "matrix", config: { url: "https://x.example", content_type: "json", message_type: "3" } }, 422, "Invalid message_type: 1 (m.notice) or 2 (m.text)"],
    [{ type: "packagist", config: { url: "https://x.example", content_type: "json", package_url: "javascript:alert(1)" } }, 422, "Invalid package_url"],
    [{ type: "gitea", config: { url: "https://x.example", content_type: "json" }, branch_filter: "{main" }, 422, "[BranchFilter]: GlobPattern"],
    [{ type: "gitea", config: { url: "https://x.example", content_type: "json" }, branch_filter: "[main" }, 422, "[BranchFilter]: GlobPattern"],
    [{ type: "gitea", config: { url: "https://x.example", content_type: "json" }, branch_filter: "ma[in" }, 422, "[BranchFilter]: GlobPattern"],
    [{ type: "gitea", config: { url: "https://x.example", content_type: "json" }, branch_filter: "main\\" }, 422, "[BranchFilter]: GlobPattern"],
    [{ type: "gitea", config: { url: "https://x.example", content_type: "json" }, branch_filter: "[z-a]" }, 422, "[BranchFilter]: GlobPattern"],
    [{ type: "gitea", config: { url: "https://x.example", content_type: "json" }, authorization_header: "Bearer a\r\nX-Injected: 1" }, 422, "[AuthorizationHeader]: invalid header value"],
  ])("%j → %i %s", async (json, status, message) => {
    const res = await create(json);
    expect(res.status).toBe(status);
    expect((await res.json()).message).toBe(message);
  });

  it("targets inside the network are refused (SSRF): loopback, private, metadata, mapped IPv6", async () => {
    for (const url of ["http://127.0.0.1:3000/x", "http://169.254.169.254/latest", "http://[::ffff:10.0.0.1]/", "http://localhost/", "http://192.168.0.10/"]) {
      const res = await create({ type: "gitea", config: { url, content_type: "json" } });
      await expectRefusal(res, 422, `webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deliver to ${new URL(url).host} is blocked`, url);
    }
    const t2 = await testApp({ GITEA__webhook__ALLOWED_HOST_LIST: "loopback" });
    const o2 = await seedUser(t2.db);
    const org2 = await seedOrg(t2, o2);
    const ok = await t2.request(`/api/v1/orgs/${org2.name}/hooks`, { method: "POST", headers: token(await o2.token()), json: { type: "gitea", config: { url: "http://127.0.0.1:3000/x", content_type: "json" } } });
    expect(ok.status).toBe(201);
    t2.close();
  });

  it("a chat type's settings are taken from config and shown in it, every key of the type (slack's as Gitea, discord's, matrix's and packagist's as its web form)", async () => {
    const cfg = { url: "https://chat.example/in", content_type: "json" };
    const cases: [Record<string, string>, string, Record<string, string>][] = [
      [{ channel: " #dev ", username: "bot", color: "good" }, "slack", { channel: "#dev", username: "bot", icon_url: "", color: "good" }],
      [{ username: "Gitea", icon_url: "https://x.example/i.png", channel: "ignored" }, "discord", { username: "Gitea", icon_url: "https://x.example/i.png" }],
      [{ message_type: "2" }, "matrix", { message_type: "2" }],
      [{ package_url: "https://packagist.org/packages/a/b" }, "packagist", { package_url: "https://packagist.org/packages/a/b" }],
      [{ username: "ignored" }, "telegram", {}],
    ];
    for (const [extra, type, shown] of cases) {
      const res = await create({ type, config: { ...cfg, ...extra } });
      expect(res.status, type).toBe(201);
      const body = await res.json();
      expect(body.config, type).toEqual({ ...cfg, ...shown });
      expect(giteaShapeErrors("Hook", body)).toEqual([]);
      // An edit changes the keys it gives and keeps the others; a channel is judged by the rule on edit too.
      if (type === "slack") {
        const edited = await (await t.request(`${base()}/${body.id}`, { method: "PATCH", headers: token(tk), json: { config: { username: "" } } })).json();
        expect(edited.config).toEqual({ ...cfg, channel: "#dev", username: "", icon_url: "", color: "good" });
        await expectRefusal(t.request(`${base()}/${body.id}`, { method: "PATCH", headers: token(tk), json: { config: { channel: "" } } }), 400, "Invalid slack channel name");
      }
      if (type === "matrix") {
        await expectRefusal(t.request(`${base()}/${body.id}`, { method: "PATCH", headers: token(tk), json: { config: { message_type: "m.emote" } } }), 422, "Invalid message_type: 1 (m.notice) or 2 (m.text)");
        const edited = await (await t.request(`${base()}/${body.id}`, { method: "PATCH", headers: token(tk), json: { config: { message_type: "m.notice" } } })).json();
        expect(edited.config.message_type).toBe("m.notice");
      }
    }
  });

  it("events are turned on as Gitea's addHook does: `issues`/`pull_request` turn on their whole group, `*_only` the bare event, names in any case; an unknown name turns on nothing (not push); only an empty list means push", async () => {
    const events = async (list: unknown) => (await (await create({ ...good, events: list })).json()).events;
    expect(await events(["push", "issues_only", "create", "bogus"])).toEqual(["create", "push", "issues"]);
    expect(await events(["bogus"])).toEqual([]);
    expect(await events([" push"])).toEqual([]);
    expect(await events([])).toEqual(["push"]);
    expect(await events(["PUSH", "Pull_Request_Only"])).toEqual(["push", "pull_request"]);
    expect(await events(["issues", "pull_request"])).toEqual([
      "issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment",
      "pull_request", "pull_request_assign", "pull_request_label", "pull_request_milestone", "pull_request_comment", "pull_request_review", "pull_request_review_request", "pull_request_sync",
    ]);
  });

  it("an edit's events are turned on the same way (Gitea's updateHookEvents for both): package, status and workflow events included; an edit without events keeps them", async () => {
    const h = await (await create({ ...good, events: ["package", "push", "workflow_run"] })).json();
    expect(h.events).toEqual(["push", "package", "workflow_run"]);
    const edit = async (json: unknown) => (await (await t.request(`${base()}/${h.id}`, { method: "PATCH", headers: token(tk), json })).json()).events;
    expect(await edit({ events: ["create", "status", "workflow_job"] })).toEqual(["create", "status", "workflow_job"]);
    expect(await edit({ active: true })).toEqual(["create", "status", "workflow_job"]);
    expect(await edit({ events: ["bogus"] })).toEqual([]);
  });
});

describe("read, edit, delete", () => {
  it("a hook another request deleted between the edit's read and its write → 404, nothing written (not a 500)", async () => {
    const w = interleavedWrites();
    const t2 = await testApp({}, { wrap: w.wrap });
    const o = await seedOrg(t2, await seedUser(t2.db));
    const hooks = `/api/v1/orgs/${o.name}/hooks`;
    const h = await (await t2.request(hooks, { method: "POST", headers: token(o.ownerToken), json: { type: "gitea", config: { url: "https://hooks.example.com/in", content_type: "json" } } })).json();
    w.beforeNextWrite("DELETE FROM webhook WHERE id = ?", [h.id]);
    await expectRefusal(t2.request(`${hooks}/${h.id}`, { method: "PATCH", headers: token(o.ownerToken), json: { active: true } }), 404, NOT_FOUND);
    expect(await t2.db.select().from(webhook).where(eq(webhook.ownerId, o.id))).toEqual([]);
    t2.close();
  });

  it("edit replaces present fields only and keeps secrets write-only", async () => {
    const h = await (await create({ ...good, events: ["push", "create"], branch_filter: "main" })).json();
    const res = await t.request(`${base()}/${h.id}`, { method: "PATCH", headers: token(tk), json: { active: true, events: ["release"], config: { content_type: "form" } } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ active: true, events: ["release"], branch_filter: "main", config: { url: "https://hooks.example.com/in", content_type: "form" } });
    const [row] = await t.db.select().from(webhook).where(eq(webhook.id, h.id));
    expect(await decryptSecret("test-secret-key-0123456789", row!.authHeaderEnc)).toBe("Bearer very-secret");
    await expectRefusal(t.request(`${base()}/${h.id}`, { method: "PATCH", headers: token(tk), json: { config: { url: "http://10.0.0.1/" } } }), 422, "webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deliver to 10.0.0.1 is blocked");
    // An invalid glob is refused on edit as on create; braces outside a group are literal.
    await expectRefusal(t.request(`${base()}/${h.id}`, { method: "PATCH", headers: token(tk), json: { branch_filter: "ma[in" } }), 422, "[BranchFilter]: GlobPattern");
    await expectRefusal(t.request(`${base()}/${h.id}`, { method: "PATCH", headers: token(tk), json: { authorization_header: "x\ny" } }), 422, "[AuthorizationHeader]: invalid header value");
    expect((await t.request(`${base()}/${h.id}`, { method: "PATCH", headers: token(tk), json: { branch_filter: "a}b" } })).status).toBe(200);
  });

  it("a hook of another organization answers like a missing one; delete → 204 then 404", async () => {
    const other = await seedOrg(t, owner);
    const foreign = await (await t.request(`/api/v1/orgs/${other.name}/hooks`, { method: "POST", headers: token(tk), json: good })).json();
    await expectRefusal(t.request(`${base()}/${foreign.id}`, { headers: token(tk) }), 404, NOT_FOUND);
    await expectRefusal(t.request(`${base()}/${foreign.id}`, { method: "DELETE", headers: token(tk) }), 404, NOT_FOUND);
    const h = await (await create(good)).json();
    expect((await t.request(`${base()}/${h.id}`, { headers: token(tk) })).status).toBe(200);
    expect((await t.request(`${base()}/${h.id}`, { method: "DELETE", headers: token(tk) })).status).toBe(204);
    await expectRefusal(t.request(`${base()}/${h.id}`, { method: "DELETE", headers: token(tk) }), 404, NOT_FOUND);
  });

  it("lists with X-Total-Count; only org owners may manage hooks (403 for members, 404 for hidden orgs)", async () => {
    const res = await t.request(base(), { headers: token(tk) });
    expect(Number(res.headers.get("X-Total-Count"))).toBe((await res.json()).length);
    const m = await seedUser(t.db);
    await seedMember(t, org, m);
    await expectRefusal(t.request(base(), { headers: token(await m.token()) }), 403, "Must be an organization owner");
    const hidden = await seedOrg(t, owner, { visibility: 2 });
    const stranger = await seedUser(t.db);
    await expectRefusal(t.request(`/api/v1/orgs/${hidden.name}/hooks`, { headers: token(await stranger.token()) }), 404, NOT_FOUND);
  });

  it("deleting the organization deletes its hooks", async () => {
    const o = await seedOrg(t, owner);
    const h = await (await t.request(`/api/v1/orgs/${o.name}/hooks`, { method: "POST", headers: token(tk), json: good })).json();
    expect((await t.request(`/api/v1/orgs/${o.name}`, { method: "DELETE", headers: token(tk) })).status).toBe(204);
    expect(await t.db.select().from(webhook).where(eq(webhook.id, h.id))).toEqual([]);
  });
});
