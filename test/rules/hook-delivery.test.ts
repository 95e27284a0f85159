/**
 * Webhook delivery (Gitea services/webhook): the event outbox records one task per active hook of
 * the organization that chose the event, in the write's own batch; the deliverer sends Gitea's
 * payloads and headers, signed with the hook's secret, to a real HTTP receiver, re-checks the hook
 * and the target at delivery, and records each exchange once.
 */
import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "libsql";
import { claimHookTask } from "../../functions/db/queries/hook-tasks.ts";
import { hookTask, user, webhook } from "../../functions/db/schema.ts";
import { batchItems } from "../../functions/db/sql.ts";
import { fetchHop, type Hop } from "../../functions/lib/outbound.ts";
import { nodeHop } from "../../functions/lib/outbound-node.ts";
import { loadSettings } from "../../functions/lib/settings.ts";
import { branchAdmitted, cleanupDeliveries, deliverPending, KEEP_DELIVERED_MS } from "../../functions/services/hook-delivery.ts";
import { basic, ROOT, roundTrips, seedOrg, seedUser, testApp, token, type SeededOrg, type SeededUser, type TestApp } from "../fixtures/app.ts";
import { FLUSH, pkt } from "../../functions/git/pkt-line.ts";

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A webhook receiver on loopback: records every request; `answer` decides the status (and a redirect). */
class Receiver {
  readonly got: Received[] = [];
  answer: (r: Received) => { status: number; location?: string; delayMs?: number } = () => ({ status: 200 });
  private server: Server | null = null;
  url = "";

  async start() {
    this.server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        const r = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(parts).toString("utf8") };
        this.got.push(r);
        const a = this.answer(r);
        setTimeout(() => {
          res.writeHead(a.status, a.location ? { Location: a.location } : { "Content-Type": "text/plain" });
          res.end("thanks");
        }, a.delayMs ?? 0);
      });
    });
    await new Promise<void>((ok) => this.server!.listen(0, "127.0.0.1", ok));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  of(event: string) {
    const payload = (r: Received) =>
      r.method === "GET" ? new URL(r.url, "http://x").searchParams.get("payload")! : r.headers["content-type"] === "application/x-www-form-urlencoded" ? new URLSearchParams(r.body).get("payload")! : r.body;
    // Chat hooks' messages (sent to /chat…) are not Gitea payloads.
    return this.got.filter((r) => r.headers["x-gitea-event"] === event && !r.url.startsWith("/chat")).map((r) => ({ ...r, json: JSON.parse(payload(r)) }));
  }

  stop() {
    this.server?.close();
  }
}

const ENV = { GITEA__webhook__ALLOWED_HOST_LIST: "loopback" };
let t: TestApp;
let owner: SeededUser;
let tk: string;
let org: SeededOrg;
const rx = new Receiver();
const deliver = (env: Record<string, string> = ENV, hop: Hop = nodeHop) =>
  deliverPending({ driver: t.driver, settings: loadSettings({ GITEA__server__ROOT_URL: ROOT, GITEA__security__SECRET_KEY: "test-secret-key-0123456789", ...env }), hop });

beforeAll(async () => {
  t = await testApp(ENV);
  owner = await seedUser(t.db);
  tk = await owner.token();
  org = await seedOrg(t, owner);
  await rx.start();
});
afterAll(() => {
  rx.stop();
  t.close();
});

async function hook(o: SeededOrg, json: Record<string, unknown>) {
  const res = await t.request(`/api/v1/orgs/${o.name}/hooks`, { method: "POST", headers: token(o.ownerToken), json: { type: "gitea", active: true, ...json, config: { content_type: "json", url: `${rx.url}/in`, ...(json.config as object) } } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: number };
}

async function orgRepo(o: SeededOrg, json: Record<string, unknown> = {}) {
  const name = `r${Math.random().toString(36).slice(2, 8)}`;
  const res = await t.request(`/api/v1/orgs/${o.name}/repos`, { method: "POST", headers: token(o.ownerToken), json: { name, ...json } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: number; name: string; full_name: string };
}

const sign = (secret: string, body: string, alg = "sha256") => createHmac(alg, secret).update(body).digest("hex");

describe("what is delivered", () => {
  it("a repository created in an organization reaches its active hooks that chose `repository`, signed, with Gitea's headers and payload", async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(o, { events: ["repository"], config: { secret: "hook-secret-1" }, authorization_header: "Bearer hook-auth" });
    const repo = await orgRepo(o, { private: true, description: "made for hooks" });
    expect(await deliver()).toBeGreaterThanOrEqual(1);
    const [got, ...more] = rx.of("repository").filter((r) => r.json.repository.full_name === repo.full_name);
    expect(more).toEqual([]);
    expect(got!.method).toBe("POST");
    expect(got!.url).toBe("/in");
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["x-gitea-event-type"]).toBe("repository");
    expect(got!.headers["x-gitea-delivery"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(got!.headers["x-github-delivery"]).toBe(got!.headers["x-gitea-delivery"]);
    expect(got!.headers["x-gitea-signature"]).toBe(sign("hook-secret-1", got!.body));
    expect(got!.headers["x-hub-signature-256"]).toBe(`sha256=${sign("hook-secret-1", got!.body)}`);
    expect(got!.headers["x-hub-signature"]).toBe(`sha1=${sign("hook-secret-1", got!.body, "sha1")}`);
    expect(got!.headers.authorization).toBe("Bearer hook-auth");
    expect(got!.headers["x-gitea-hook-installation-target-type"]).toBe("organization");
    expect(got!.headers["x-github-hook-installation-target-type"]).toBe("organization");
    // Gitea's RepositoryPayload, one-space indented; the id is the stored repository's.
    expect(got!.body.startsWith('{\n "action": "created",\n "repository": {\n  "id": ')).toBe(true);
    expect(got!.json).toMatchObject({
      action: "created",
      repository: { id: repo.id, full_name: repo.full_name, private: true, description: "made for hooks", permissions: { admin: true, push: true, pull: true } },
      organization: { id: o.id, login: o.name },
      sender: { id: owner.id, login: owner.name },
    });
    // Accounts as an anonymous viewer sees them: the placeholder address, never the real one.
    expect(got!.json.sender.email).toBe(`${owner.name.toLowerCase()}@noreply.gitea.test`);
    // The record: delivered once, succeeded, the Authorization masked, no secret stored.
    const rows = await t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ isDelivered: true, isSucceed: true, eventType: "repository", uuid: got!.headers["x-gitea-delivery"] });
    // Delivered at, in unix nanoseconds (Gitea's TimeStampNano).
    expect(Math.abs(rows[0]!.delivered / 1e6 - Date.now())).toBeLessThan(60_000);
    expect(JSON.parse(rows[0]!.requestContent).headers.Authorization).toBe("******");
    expect(JSON.parse(rows[0]!.responseContent)).toMatchObject({ status: 200, body: "thanks" });
    expect(rows[0]!.requestContent + rows[0]!.responseContent).not.toContain("hook-secret-1");
    expect(rows[0]!.requestContent).not.toContain("hook-auth");
  });

  it("a hook whose secret this server cannot decrypt (another SECRET_KEY, or none) is a failed delivery saying so, never sent unsigned", async () => {
    for (const [key, why] of [
      ["another-secret-key-0123456789", "cannot decrypt the stored secret: [security] SECRET_KEY differs from the key it was saved with (or the stored value is damaged)"],
      ["", "cannot decrypt the stored secret: no [security] SECRET_KEY is set"],
    ] as const) {
      const o = await seedOrg(t, owner);
      const h = await hook(o, { events: ["repository"], config: { secret: "hook-secret-2" } });
      const repo = await orgRepo(o, {});
      await deliver({ ...ENV, GITEA__security__SECRET_KEY: key });
      expect(rx.of("repository").filter((r) => r.json.repository.full_name === repo.full_name), key).toEqual([]);
      const rows = await t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id));
      expect(rows.map((r) => [r.isDelivered, r.isSucceed, JSON.parse(r.responseContent).body]), key).toEqual([[true, false, `Delivery: ${why}`]]);
    }
  });

  it("a repository created with an initial commit is announced as the batch left it: not empty, with its size", async () => {
    const o = await seedOrg(t, owner);
    await hook(o, { events: ["repository"] });
    const repo = await orgRepo(o, { auto_init: true });
    const stored = await (await t.request(`/api/v1/repos/${repo.full_name}`, { headers: token(o.ownerToken) })).json();
    expect(stored.empty).toBe(false);
    await deliver();
    const [got] = rx.of("repository").filter((r) => r.json.repository.full_name === repo.full_name);
    expect(got!.json.repository).toMatchObject({ id: repo.id, empty: false, size: stored.size });
  });

  it("only active hooks that chose the event get a task, of every type; a user's repositories reach no organization hook; the create keeps its 2 round trips", async () => {
    const o = await seedOrg(t, owner);
    const inactive = await hook(o, { events: ["repository"], active: false });
    const slack = await hook(o, { type: "slack", events: ["repository"], config: { channel: "#ci", url: `${rx.url}/chat` } });
    const pushOnly = await hook(o, { events: ["push"] });
    const res = await t.request(`/api/v1/orgs/${o.name}/repos`, { method: "POST", headers: token(o.ownerToken), json: { name: "quiet" } });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    const mine = await t.request("/api/v1/user/repos", { method: "POST", headers: token(tk), json: { name: `mine${Date.now()}` } });
    expect(mine.status).toBe(201);
    for (const id of [inactive.id, pushOnly.id]) expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, id))).toEqual([]);
    expect(await t.db.select({ event: hookTask.eventType }).from(hookTask).where(eq(hookTask.hookId, slack.id))).toEqual([{ event: "repository" }]);
  });

  it("a write that fails records no delivery (the tasks ride in its batch)", async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(o, { events: ["repository"] });
    await orgRepo(o, { name: "taken" });
    const dup = await t.request(`/api/v1/orgs/${o.name}/repos`, { method: "POST", headers: token(o.ownerToken), json: { name: "taken" } });
    expect(dup.status).toBe(409);
    expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id))).toHaveLength(1);
  });

  it("commits through the contents API deliver `push` with the commit, its files and the pusher; a new branch sends `create`, then `push`", async () => {
    const o = await seedOrg(t, owner);
    await hook(o, { events: ["push", "create"] });
    const repo = await orgRepo(o, { auto_init: true });
    // The author is a public account (named by its address); the committer a private one, which the
    // receiver — no signed-in viewer — does not learn the name of.
    const hidden = await seedUser(t.db, { visibility: 2 });
    const hiddenEmail = `${hidden.name.toLowerCase()}@example.com`;
    const put = await t.request(`/api/v1/repos/${repo.full_name}/contents/docs/a.md`, {
      method: "POST",
      headers: token(o.ownerToken),
      json: { content: Buffer.from("a\n").toString("base64"), message: "add a", author: { name: "Ann Author", email: `${owner.name.toLowerCase()}@example.com` }, committer: { name: "Nobody", email: hiddenEmail } },
    });
    expect(put.status).toBe(201);
    const sha = (await put.json()).commit.sha as string;
    const branch = await t.request(`/api/v1/repos/${repo.full_name}/contents/b.md`, { method: "POST", headers: token(o.ownerToken), json: { content: "Yg==", message: "add b", new_branch: "feature/x" } });
    expect(branch.status).toBe(201);
    await deliver();
    const pushes = rx.of("push").filter((r) => r.json.repository.full_name === repo.full_name);
    const main = pushes.find((p) => p.json.ref === "refs/heads/main")!;
    expect(main.json).toMatchObject({
      after: sha,
      total_commits: 1,
      compare_url: `${ROOT}${repo.full_name}/compare/${main.json.before}...${sha}`,
      commits: [
        {
          id: sha,
          message: "add a\n",
          url: `${ROOT}${repo.full_name}/commit/${sha}`,
          author: { name: "Ann Author", email: `${owner.name.toLowerCase()}@example.com`, username: owner.name },
          committer: { name: "Nobody", email: hiddenEmail, username: "" },
          added: ["docs/a.md"],
          removed: [],
          modified: [],
          verification: null,
        },
      ],
      head_commit: { id: sha },
      pusher: { login: owner.name },
      sender: { login: owner.name },
    });
    expect(main.body).toContain('\n  "ref": "refs/heads/main"');
    const order = rx.got.filter((r) => r.body.includes('"feature/x"') || r.body.includes('"refs/heads/feature/x"')).map((r) => r.headers["x-gitea-event"]);
    expect(order).toEqual(["create", "push"]);
    const created = rx.of("create").find((r) => r.json.repository.full_name === repo.full_name)!;
    // CreateRef: the short name, the repository without permissions.
    expect(created.json).toMatchObject({ ref: "feature/x", ref_type: "branch", repository: { permissions: { admin: false, push: false, pull: false } } });
    const feature = pushes.find((p) => p.json.ref === "refs/heads/feature/x")!;
    expect(feature.json.before).toBe("0".repeat(40));
    expect(feature.json.commits.map((c: { message: string }) => c.message)).toEqual(["add b\n", "add a\n", "Initial commit\n"]);
    expect(feature.json.total_commits).toBe(3);
  });

  it("a branch filter is a glob on the branch name (`*` crosses `/`); it is matched as the hook is at delivery", async () => {
    expect(branchAdmitted("feature/*", "refs/heads/feature/x/y")).toBe(true);
    expect(branchAdmitted("{main,release-*}", "refs/heads/release-1")).toBe(true);
    expect(branchAdmitted("main", "refs/heads/develop")).toBe(false);
    expect(branchAdmitted("", "refs/heads/anything")).toBe(true);
    // Gitea's checkBranchFilter: a branch by its name or its full ref, a tag by its full ref.
    expect(branchAdmitted("refs/heads/ma*", "refs/heads/main")).toBe(true);
    expect(branchAdmitted("main", "refs/tags/v1")).toBe(false);
    expect(branchAdmitted("refs/tags/v*", "refs/tags/v1")).toBe(true);
    expect(branchAdmitted("v*", "refs/tags/v1")).toBe(false);
    expect(branchAdmitted("**", "refs/tags/v1")).toBe(true);
    // An event without a ref (repository, fork) passes; a task stored with a bare branch name is matched by it.
    expect(branchAdmitted("main", "")).toBe(true);
    expect(branchAdmitted("main", "main")).toBe(true);
    // An owner's filter cannot stall the server: no backtracking (this one held a regular expression for minutes).
    expect(branchAdmitted(`${"*a".repeat(10)}*c`, "a".repeat(60))).toBe(false);
    const o = await seedOrg(t, owner);
    const h = await hook(o, { events: ["push"], branch_filter: "release-*" });
    const repo = await orgRepo(o, { auto_init: true });
    const before = rx.got.length;
    await t.request(`/api/v1/repos/${repo.full_name}/contents/x.md`, { method: "POST", headers: token(o.ownerToken), json: { content: "eA==" } });
    await deliver();
    expect(rx.got.slice(before).filter((r) => r.body.includes(repo.full_name))).toEqual([]);
    // Filtered out: the task is gone, not recorded as a delivery.
    expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id))).toEqual([]);
  });

  it("the first commit into an empty repository announces it as the write leaves it: not empty, the new branch its default, no compare with a branch that never existed", async () => {
    const o = await seedOrg(t, owner);
    await hook(o, { events: ["push", "create"] });
    const repo = await orgRepo(o);
    const res = await t.request(`/api/v1/repos/${o.name}/${repo.name}/contents/a.txt`, { method: "POST", headers: token(o.ownerToken), json: { content: "YQ==", new_branch: "develop" } });
    expect(res.status).toBe(201);
    await deliver();
    const [push] = rx.of("push").filter((r) => r.json.repository.id === repo.id);
    const [create] = rx.of("create").filter((r) => r.json.repository.id === repo.id);
    expect(push!.json.repository).toMatchObject({ empty: false, default_branch: "develop" });
    expect(push!.json.repository.size).toBeGreaterThan(0);
    expect(push!.json.compare_url).toBe(ROOT);
    expect(create!.json.repository).toMatchObject({ empty: false, default_branch: "develop" });
    expect((await (await t.request(`/api/v1/repos/${o.name}/${repo.name}`, { headers: token(o.ownerToken) })).json()).default_branch).toBe("develop");
  });

  it("a push deleting refs that do not exist is `ok` with git's warning and delivers nothing (git's post-receive never hears of it)", async () => {
    const o = await seedOrg(t, owner);
    await hook(o, { events: ["push", "create", "delete"] });
    const repo = await orgRepo(o, { auto_init: true });
    await deliver();
    const before = rx.got.length;
    const zero = "0".repeat(40);
    const body = Buffer.concat([pkt(`${zero} ${zero} refs/heads/ghost\0report-status side-band-64k\n`), pkt(`${zero} ${zero} refs/tags/ghosttag\n`), FLUSH]);
    const res = await t.request(`/${o.name}/${repo.name}.git/git-receive-pack`, {
      method: "POST",
      headers: { ...basic(owner.name, tk), "Content-Type": "application/x-git-receive-pack-request" },
      body,
    });
    expect(res.status).toBe(200);
    const answer = Buffer.from(await res.arrayBuffer()).toString("latin1");
    expect(answer).toContain("ok refs/heads/ghost");
    expect(answer).toContain("ok refs/tags/ghosttag");
    expect(answer).toContain("warning: deleting a non-existent ref");
    expect(await t.db.select().from(hookTask).where(eq(hookTask.isDelivered, false))).toEqual([]);
    await deliver();
    expect(rx.got.length).toBe(before);
    const refs = await (await t.request(`/api/v1/repos/${o.name}/${repo.name}/git/refs`, { headers: token(tk) })).json();
    expect(refs.map((r: { ref: string }) => r.ref)).toEqual(["refs/heads/main"]);
  });

  it("deleting a repository delivers `repository` deleted; forking one delivers `fork` to the base's hooks (forkee = the base)", async () => {
    const o = await seedOrg(t, owner);
    await hook(o, { events: ["repository", "fork"] });
    const repo = await orgRepo(o);
    const forker = await seedUser(t.db);
    const fork = await t.request(`/api/v1/repos/${repo.full_name}/forks`, { method: "POST", headers: token(await forker.token()), json: {} });
    expect(fork.status).toBe(202);
    const forked = await fork.json();
    expect((await t.request(`/api/v1/repos/${repo.full_name}`, { method: "DELETE", headers: token(o.ownerToken) })).status).toBe(204);
    await deliver();
    const f = rx.of("fork").find((r) => r.json.forkee.full_name === repo.full_name)!;
    expect(f.json).toMatchObject({ forkee: { id: repo.id }, repository: { id: forked.id, full_name: forked.full_name, fork: true, parent: { id: repo.id, full_name: repo.full_name } }, sender: { login: forker.name } });
    const gone = rx.of("repository").find((r) => r.json.action === "deleted" && r.json.repository.full_name === repo.full_name)!;
    expect(gone.json).toMatchObject({ repository: { id: repo.id }, organization: { login: o.name } });
  });

  it("a fork's `repository` created payload to its new owner's hooks embeds the base only where anyone may see it: a private base stays out (its own organization's `fork` payload keeps it)", async () => {
    const base = await seedOrg(t, owner);
    const target = await seedOrg(t, owner);
    await hook(base, { events: ["fork"] });
    await hook(target, { events: ["repository"] });
    const secret = await orgRepo(base, { private: true, description: "TOP SECRET" });
    const open = await orgRepo(base);
    const forkInto = async (r: { full_name: string }, name: string) => {
      const res = await t.request(`/api/v1/repos/${r.full_name}/forks`, { method: "POST", headers: token(tk), json: { organization: target.name, name } });
      expect(res.status).toBe(202);
      return (await res.json()) as { full_name: string };
    };
    const [secretFork, openFork] = [await forkInto(secret, `${secret.name}-f`), await forkInto(open, `${open.name}-f`)];
    const before = rx.got.length;
    await deliver();
    const created = (full: string) => rx.of("repository").find((r) => r.json.action === "created" && r.json.repository.full_name === full)!.json;
    expect(created(secretFork.full_name).repository).toMatchObject({ fork: true });
    expect(created(secretFork.full_name).repository.parent).toBeUndefined();
    // (the fork's own description is the base's, copied when it was made, and is the fork's to show)
    expect(rx.got.slice(before).some((r) => r.headers["x-gitea-event"] === "repository" && r.body.includes(`"full_name": "${secret.full_name}"`))).toBe(false);
    expect(created(openFork.full_name).repository.parent).toMatchObject({ full_name: open.full_name });
    // the base's own hooks keep the parent in the `fork` payload of a fork anyone may see
    expect(rx.of("fork").find((r) => r.json.forkee.full_name === open.full_name)!.json.repository.parent).toMatchObject({ full_name: open.full_name });
  });

  it("the base's hooks hear of a fork only when anyone may see it: a private fork, or one in a private organization, sends no `fork` event", async () => {
    const base = await seedOrg(t, owner);
    const hidden = await seedOrg(t, owner, { visibility: 2 });
    const shown = await seedOrg(t, owner);
    await hook(base, { events: ["fork"] });
    const pub = await orgRepo(base);
    const priv = await orgRepo(base, { private: true });
    const fork = async (r: { full_name: string }, org: string, name: string) =>
      expect((await t.request(`/api/v1/repos/${r.full_name}/forks`, { method: "POST", headers: token(tk), json: { organization: org, name } })).status).toBe(202);
    await fork(pub, hidden.name, "into-private-org");
    await fork(priv, shown.name, "private-fork");
    await fork(pub, shown.name, "open-fork");
    const before = rx.got.length;
    await deliver();
    const forks = rx
      .got.slice(before)
      .filter((r) => r.headers["x-gitea-event"] === "fork")
      .map((r) => JSON.parse(r.body) as { repository: { full_name: string } });
    expect(forks.map((f) => f.repository.full_name)).toEqual([`${shown.name}/open-fork`]);
    expect(rx.got.slice(before).some((r) => r.body.includes(hidden.name) || r.body.includes("private-fork"))).toBe(false);
  });
});

describe("chat hooks", () => {
  it("slack, matrix and feishu hooks get their own messages of the same events: signed over the message, Matrix by PUT with its transaction id and token, Feishu signed in the body; the record keeps the message sent", async () => {
    const o = await seedOrg(t, owner);
    const events = ["push", "create", "delete", "repository"];
    const room = "/chat-matrix/_matrix/client/r0/rooms/!room:x/send/m.room.message";
    await hook(o, { events });
    await hook(o, { type: "slack", events, config: { url: `${rx.url}/chat-slack`, channel: "#ci", secret: "slack-secret", color: "good" } });
    await hook(o, { type: "matrix", events, config: { url: `${rx.url}${room}`, message_type: "2" }, authorization_header: "Bearer matrix-token" });
    await hook(o, { type: "feishu", events, config: { url: `${rx.url}/chat-feishu`, secret: "feishu-secret" } });
    const repo = await orgRepo(o, { auto_init: true });
    const made = await t.request(`/api/v1/repos/${repo.full_name}/contents/b.md`, { method: "POST", headers: token(o.ownerToken), json: { content: "Yg==", message: "add b", new_branch: "topic" } });
    expect(made.status).toBe(201);
    expect((await t.request(`/api/v1/repos/${repo.full_name}/branches/topic`, { method: "DELETE", headers: token(o.ownerToken) })).status).toBe(204);
    await deliver();
    const mine = (prefix: string) => rx.got.filter((r) => r.url.startsWith(prefix) && r.body.includes(repo.name));
    // The gitea hook got the same events: repository, create + push of the new branch, delete.
    expect(rx.got.filter((r) => r.url === "/in" && r.body.includes(repo.full_name)).map((r) => r.headers["x-gitea-event"])).toEqual(["repository", "create", "push", "delete"]);

    const slack = mine("/chat-slack");
    expect(slack.map((r) => r.headers["x-gitea-event"])).toEqual(["repository", "create", "push", "delete"]);
    for (const r of slack) {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["x-gitea-signature"]).toBe(sign("slack-secret", r.body));
      expect(r.headers["x-hub-signature"]).toBe(`sha1=${sign("slack-secret", r.body, "sha1")}`);
      expect(JSON.parse(r.body)).toMatchObject({ channel: "#ci", unfurl_links: 0 });
    }
    const html = `${ROOT}${repo.full_name}`;
    expect(JSON.parse(slack[1]!.body).text).toBe(`[<${html}|${repo.full_name}>:<${html}/src/branch/topic|topic>] branch created by ${owner.name}`);
    expect(JSON.parse(slack[2]!.body)).toMatchObject({ text: expect.stringContaining("|2 new commits> pushed by"), attachments: [{ color: "good", title: html, text: expect.stringContaining(": add b - ") }] });

    const matrix = mine("/chat-matrix");
    expect(matrix.map((r) => r.headers["x-gitea-event"])).toEqual(["repository", "create", "push", "delete"]);
    for (const r of matrix) {
      expect(r.method).toBe("PUT");
      expect(r.url).toBe(`${room}/${createHash("sha1").update(r.body).digest("hex")}`);
      expect(r.headers.authorization).toBe("Bearer matrix-token");
      expect(JSON.parse(r.body)).toMatchObject({ msgtype: "m.text", format: "org.matrix.custom.html" });
    }
    expect(JSON.parse(matrix[2]!.body)["io.gitea.commits"]).toHaveLength(2);

    const feishu = mine("/chat-feishu");
    expect(feishu).toHaveLength(4);
    for (const r of feishu) {
      expect(r.headers["x-gitea-event"]).toBeUndefined();
      expect(r.headers["x-hub-signature"]).toBeUndefined();
      const { timestamp, sign: signature } = JSON.parse(r.body);
      expect(signature).toBe(createHmac("sha256", `${timestamp}\nfeishu-secret`).update("").digest("base64"));
    }
    expect(JSON.parse(feishu[2]!.body).content.text).toMatch(new RegExp(`^\\[${repo.full_name}:topic\\] 2 new commits\r\n\\[[0-9a-f]{7}\\]\\(${html}/commit/[0-9a-f]{40}\\) add b - `));

    // What was recorded is the message sent, with the token masked.
    const [record] = await t.db.select().from(hookTask).where(eq(hookTask.eventType, "delete")).orderBy(desc(hookTask.id)).limit(1);
    const request = JSON.parse(record!.requestContent);
    expect(request.body).toContain('"msg_type": "text"');
    const [matrixRecord] = (await t.db.select().from(hookTask).where(eq(hookTask.eventType, "repository")).orderBy(desc(hookTask.id)).limit(4))
      .map((row) => JSON.parse(row.requestContent))
      .filter((r) => r.url.includes("/chat-matrix"));
    expect(matrixRecord).toMatchObject({ http_method: "PUT", headers: { Authorization: "******" } });
    expect(JSON.stringify(matrixRecord)).not.toContain("matrix-token");
  });
});

describe("how it is delivered", () => {
  it("form hooks send `payload=` (signed over the JSON); a failed answer is recorded as failed and not sent again", async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(o, { events: ["repository"], config: { content_type: "form", secret: "form-secret" } });
    rx.answer = (r) => ({ status: r.body.includes(o.name) ? 500 : 200 });
    await orgRepo(o);
    await deliver();
    rx.answer = () => ({ status: 200 });
    const got = rx.got.filter((r) => r.body.includes(encodeURIComponent(o.name)) || r.body.includes(o.name));
    expect(got).toHaveLength(1);
    expect(got[0]!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    const payload = new URLSearchParams(got[0]!.body).get("payload")!;
    expect(JSON.parse(payload).organization.login).toBe(o.name);
    expect(got[0]!.headers["x-gitea-signature"]).toBe(sign("form-secret", payload));
    const [row] = await t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id));
    expect(row).toMatchObject({ isDelivered: true, isSucceed: false });
    expect(JSON.parse(row!.responseContent).status).toBe(500);
    await deliver();
    expect(rx.got.filter((r) => r.body.includes(o.name))).toHaveLength(1);
  });

  it("the target is checked at delivery: an address the allow list no longer admits, or a redirect into the network, is refused and recorded", async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(o, { events: ["repository"] });
    await orgRepo(o);
    const before = rx.got.length;
    await deliver({ GITEA__webhook__ALLOWED_HOST_LIST: "external" });
    expect(rx.got.length).toBe(before);
    const [row] = await t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id));
    expect(row).toMatchObject({ isDelivered: true, isSucceed: false });
    expect(JSON.parse(row!.responseContent).body).toMatch(/^Delivery: webhook can only call allowed HTTP servers .* is blocked$/);

    const o2 = await seedOrg(t, owner);
    const h2 = await hook(o2, { events: ["repository"], config: { url: `${rx.url}/redirect` } });
    rx.answer = (r) => (r.url === "/redirect" ? { status: 307, location: "http://169.254.169.254/latest/meta-data" } : { status: 200 });
    await orgRepo(o2);
    await deliver();
    rx.answer = () => ({ status: 200 });
    const [row2] = await t.db.select().from(hookTask).where(eq(hookTask.hookId, h2.id));
    expect(row2).toMatchObject({ isDelivered: true, isSucceed: false });
    expect(JSON.parse(row2!.responseContent).body).toContain("169.254.169.254 is blocked");
  });

  it("the Worker's hop (fetch, no resolver) delivers the same and judges every hop's host as written", async () => {
    const o = await seedOrg(t, owner);
    await hook(o, { events: ["repository"], config: { url: `${rx.url}/hop`, secret: "fetch-secret" } });
    const redirected = await seedOrg(t, owner);
    const h2 = await hook(redirected, { events: ["repository"], config: { url: `${rx.url}/away` } });
    rx.answer = (r) => (r.url === "/away" ? { status: 302, location: "http://[::ffff:a9fe:a9fe]/latest" } : { status: 200 });
    await orgRepo(o);
    await orgRepo(redirected);
    await deliver(ENV, fetchHop);
    rx.answer = () => ({ status: 200 });
    const [got] = rx.of("repository").filter((r) => r.json.organization.login === o.name);
    expect(got!.headers["x-gitea-signature"]).toBe(sign("fetch-secret", got!.body));
    const [row] = await t.db.select().from(hookTask).where(eq(hookTask.hookId, h2.id));
    expect(row).toMatchObject({ isDelivered: true, isSucceed: false });
    expect(JSON.parse(row!.responseContent).body).toMatch(/is blocked$/);
  });

  it("a hook deleted after the event takes its tasks along; one made inactive is recorded as failed with nothing sent", async () => {
    const o = await seedOrg(t, owner);
    const gone = await hook(o, { events: ["repository"] });
    const off = await hook(o, { events: ["repository"] });
    await orgRepo(o);
    expect((await t.request(`/api/v1/orgs/${o.name}/hooks/${gone.id}`, { method: "DELETE", headers: token(o.ownerToken) })).status).toBe(204);
    expect((await t.request(`/api/v1/orgs/${o.name}/hooks/${off.id}`, { method: "PATCH", headers: token(o.ownerToken), json: { active: false } })).status).toBe(200);
    const before = rx.got.length;
    await deliver();
    expect(rx.got.slice(before).filter((r) => r.body.includes(o.name))).toEqual([]);
    expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, gone.id))).toEqual([]);
    const [row] = await t.db.select().from(hookTask).where(eq(hookTask.hookId, off.id));
    expect(row).toMatchObject({ isDelivered: true, isSucceed: false });
    expect(JSON.parse(row!.responseContent)).toEqual({ status: 0, headers: {}, body: "Hook delivery skipped as webhook is inactive" });
  });

  it("concurrent sweeps deliver every task exactly once", async () => {
    const o = await seedOrg(t, owner);
    await hook(o, { events: ["repository"] });
    for (let i = 0; i < 12; i++) await orgRepo(o);
    const before = rx.got.length;
    await Promise.all([deliver(), deliver(), deliver()]);
    const mine = rx.got.slice(before).filter((r) => r.body.includes(`"login": "${o.name}"`));
    expect(mine).toHaveLength(12);
    expect(new Set(mine.map((r) => r.headers["x-gitea-delivery"])).size).toBe(12);
  });

  it("records of deliveries older than a week are removed; pending tasks never are", async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(o, { events: ["repository"] });
    await orgRepo(o);
    await deliver();
    await orgRepo(o);
    const rows = () => t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id));
    expect((await rows()).map((r) => r.isDelivered).sort()).toEqual([false, true]);
    await cleanupDeliveries(t.driver, Date.now() + KEEP_DELIVERED_MS - 60_000);
    expect(await rows()).toHaveLength(2);
    await cleanupDeliveries(t.driver, Date.now() + KEEP_DELIVERED_MS + 60_000);
    expect((await rows()).map((r) => r.isDelivered)).toEqual([false]);
  });

  it("a push to an organization with only inactive hooks records no task, in its 2 round trips", async () => {
    const o = await seedOrg(t, owner);
    const off = await hook(o, { events: ["push"], active: false });
    const repo = await orgRepo(o, { auto_init: true });
    const res = await t.request(`/api/v1/repos/${repo.full_name}/contents/y.md`, { method: "POST", headers: token(o.ownerToken), json: { content: "eQ==" } });
    expect(res.status).toBe(201);
    expect(roundTrips(res)).toBe(2);
    expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, off.id))).toEqual([]);
  });

  it("an organization deleted after the event: its hooks and their tasks go with it, nothing is delivered", async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(o, { events: ["repository"] });
    const repo = await orgRepo(o);
    expect((await t.request(`/api/v1/repos/${repo.full_name}`, { method: "DELETE", headers: token(o.ownerToken) })).status).toBe(204);
    expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id))).toHaveLength(2);
    expect((await t.request(`/api/v1/orgs/${o.name}`, { method: "DELETE", headers: token(o.ownerToken) })).status).toBe(204);
    const before = rx.got.length;
    await deliver();
    expect(rx.got.slice(before).filter((r) => r.body.includes(o.name))).toEqual([]);
    expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, h.id))).toEqual([]);
  });

  it("delivery re-checks its hook: a task whose hook row is gone (not through the cascade: a delete racing a claimed delivery) or whose owner is no longer an organization is dropped, nothing sent", async () => {
    const gone = await seedOrg(t, owner);
    const turned = await seedOrg(t, owner);
    const hGone = await hook(gone, { events: ["repository"] });
    const hTurned = await hook(turned, { events: ["repository"] });
    await orgRepo(gone);
    await orgRepo(turned);
    expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, hGone.id))).toHaveLength(1);
    // as a delete between claim and delivery would leave it: the hook row gone, its task still there
    await t.db.delete(webhook).where(eq(webhook.id, hGone.id));
    await t.db.update(user).set({ type: 0 }).where(eq(user.id, (await t.db.select().from(webhook).where(eq(webhook.id, hTurned.id)))[0]!.ownerId));
    const before = rx.got.length;
    await deliver();
    expect(rx.got.slice(before).filter((r) => r.body.includes(gone.name) || r.body.includes(turned.name))).toEqual([]);
    for (const id of [hGone.id, hTurned.id]) expect(await t.db.select().from(hookTask).where(eq(hookTask.hookId, id))).toEqual([]);
  });

  it("a slow receiver holds one delivery slot, not the others: a hook's deliveries go one at a time, in event order", async () => {
    const slow = await seedOrg(t, owner);
    const fast = await seedOrg(t, owner);
    await hook(slow, { events: ["repository"], config: { url: `${rx.url}/slow` } });
    await hook(fast, { events: ["repository"] });
    const made: number[] = [];
    for (let i = 0; i < 10; i++) made.push((await orgRepo(slow)).id);
    await orgRepo(fast);
    rx.answer = (r) => ({ status: 200, delayMs: r.url === "/slow" ? 100 : 0 });
    const before = rx.got.length;
    await deliver();
    rx.answer = () => ({ status: 200 });
    const order = rx.got.slice(before).map((r) => JSON.parse(r.body) as { organization: { login: string }; repository: { id: number } });
    // The fast organization's one delivery does not wait behind the slow one's ten.
    expect(order.findIndex((p) => p.organization.login === fast.name)).toBeLessThan(2);
    expect(order.filter((p) => p.organization.login === slow.name).map((p) => p.repository.id)).toEqual(made);
  });

  it("a delivery still in flight is never taken over by the sweep's own idle slots, however long DELIVER_TIMEOUT allows it to take: sent once, its answer recorded, the hook's next event delivered", async () => {
    const o = await seedOrg(t, owner);
    const other = await seedOrg(t, owner);
    await hook(o, { events: ["repository"], config: { url: `${rx.url}/long` } });
    await hook(other, { events: ["repository"] });
    const [first, second] = [await orgRepo(o), await orgRepo(o)];
    await orgRepo(other);
    // The receiver makes the first delivery look 150 s old (past a 2-minute lease, within a
    // 300 s DELIVER_TIMEOUT) and answers it after the idle slots have polled for work again.
    let aged = false;
    rx.answer = (r) => {
      if (aged || r.url !== "/long" || JSON.parse(r.body).repository.id !== first.id) return { status: 200 };
      aged = true;
      void t.driver.batch([{ text: "UPDATE hook_task SET claimed_unix = claimed_unix - 150 WHERE is_delivered = 0 AND claim <> ''", args: [] }], "write");
      return { status: 200, delayMs: 2500 };
    };
    const before = rx.got.length;
    await deliver({ ...ENV, GITEA__webhook__DELIVER_TIMEOUT: "300" });
    rx.answer = () => ({ status: 200 });
    const mine = rx.got.slice(before).filter((r) => r.url === "/long").map((r) => ({ id: JSON.parse(r.body).repository.id, delivery: r.headers["x-gitea-delivery"] }));
    expect(mine.map((m) => m.id)).toEqual([first.id, second.id]);
    const tasks = await t.db.select().from(hookTask).where(eq(hookTask.hookId, (await t.db.select().from(webhook).where(eq(webhook.ownerId, o.id)))[0]!.id));
    expect(tasks.map((x) => [x.isDelivered, x.isSucceed])).toEqual([
      [true, true],
      [true, true],
    ]);
  });

  it("work that arrives while a slow receiver holds a sweep is picked up by a waiting slot, not after the slow backlog", async () => {
    const slow = await seedOrg(t, owner);
    const late = await seedOrg(t, owner);
    await hook(slow, { events: ["repository"], config: { url: `${rx.url}/slower` } });
    await hook(late, { events: ["repository"] });
    await orgRepo(slow);
    await orgRepo(slow);
    rx.answer = (r) => ({ status: 200, delayMs: r.url === "/slower" ? 2500 : 0 });
    const before = rx.got.length;
    const sweep = deliver();
    // The sweep is under way, the slow hook's first delivery in flight; then another organization's event.
    while (rx.got.length === before) await new Promise((r) => setTimeout(r, 20));
    await orgRepo(late);
    await sweep;
    rx.answer = () => ({ status: 200 });
    const order = rx.got.slice(before).map((r) => r.url);
    expect(order).toEqual(["/slower", "/in", "/slower"]);
  });

  it("a hook without a secret or Authorization sends empty signatures and no Authorization; a GET hook carries the payload in its query", async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(o, { events: ["repository"], config: { url: `${rx.url}/plain?keep=1` } });
    await orgRepo(o);
    await orgRepo(o);
    await deliver();
    const [plain] = rx.of("repository").filter((r) => r.json.organization.login === o.name);
    expect(plain!.headers).toMatchObject({ "x-gitea-signature": "", "x-hub-signature": "sha1=", "x-hub-signature-256": "sha256=" });
    expect(plain!.headers.authorization).toBeUndefined();
    // Gitea's web UI can make GET hooks (this API cannot): the payload goes in the query, no body.
    await t.client.execute({ sql: "UPDATE webhook SET http_method = 'GET' WHERE id = ?", args: [h.id] });
    const before = rx.got.length;
    const repo = await orgRepo(o);
    await deliver();
    const [get] = rx.got.slice(before);
    expect(get!.method).toBe("GET");
    expect(get!.body).toBe("");
    const q = new URL(get!.url, rx.url).searchParams;
    expect(q.get("keep")).toBe("1");
    expect(JSON.parse(q.get("payload")!).repository.id).toBe(repo.id);
  });

  it("Node's deliverer: a kick starts a sweep, a kick during one makes it look again, idle() waits for it", async () => {
    const { HookDeliverer } = await import("../../functions/services/hook-delivery.ts");
    const o = await seedOrg(t, owner);
    await hook(o, { events: ["repository"] });
    const d = new HookDeliverer({ driver: t.driver, settings: loadSettings({ GITEA__server__ROOT_URL: ROOT, GITEA__security__SECRET_KEY: "test-secret-key-0123456789", ...ENV }), hop: nodeHop }, 3_600_000);
    try {
      await orgRepo(o);
      d.kick();
      await orgRepo(o);
      d.kick();
      await d.idle();
      expect(rx.of("repository").filter((r) => r.json.organization.login === o.name)).toHaveLength(2);
    } finally {
      d.stop();
    }
  });
});

describe("the queue's cost", () => {
  it("claiming the next delivery costs SQLite the same work with 1 and with 5,000 pending tasks (no payload read, no sort; counted in VM steps)", async () => {
    const t2 = await testApp();
    const raw = new Database(t2.file);
    try {
      const add = raw.prepare("INSERT INTO hook_task (hook_id, uuid, event_type, payload_content) VALUES (?, ?, 'push', ?)");
      const claim = batchItems([claimHookTask.bind({ claim: "c", now: 1_000, staleBefore: 900 })])[0]!; // !: one statement bound
      const st = raw.prepare(claim.text);
      const steps = () => (raw.prepare("SELECT nstep FROM sqlite_stmt WHERE sql = ?").get(claim.text) as { nstep: number }).nstep;
      const claimOnce = () => {
        const before = steps();
        raw.exec("BEGIN");
        expect(st.run(claim.args as never).changes).toBe(1);
        raw.exec("ROLLBACK");
        return steps() - before;
      };
      add.run(1, "u0", "x".repeat(5_000));
      const one = claimOnce();
      raw.exec("BEGIN");
      for (let i = 1; i < 5_000; i++) add.run(1 + (i % 7), `u${i}`, "x".repeat(5_000));
      raw.exec("COMMIT");
      expect(claimOnce()).toBe(one);
    } finally {
      raw.close();
      t2.close();
    }
  });
});
