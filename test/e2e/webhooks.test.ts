/**
 * Webhooks that deliver, on BOTH targets: Node delivers from its own process after the answer; the
 * Worker sends a message on its queue (Miniflare's local Queues) and its consumer delivers. An
 * organization's hook receives `repository` for a new repository and `create` + `push` for a real
 * `git push`, signed with its secret, at a receiver on this machine.
 */
import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, targets, uniqName } from "../fixtures/targets.ts";
import { Scratch } from "../git/helpers.ts";

const s = new Scratch("e2e-hooks-");
const got: { url: string; method: string; headers: IncomingMessage["headers"]; body: string }[] = [];
const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (c: Buffer) => parts.push(c));
  req.on("end", () => {
    got.push({ url: req.url ?? "", method: req.method ?? "", headers: req.headers, body: Buffer.concat(parts).toString("utf8") });
    res.end("ok");
  });
});
let receiver = "";
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(() => {
  server.close();
  s.cleanup();
});

/** The deliveries of `event` whose payload names `fullName`, once `count` have arrived (deliveries run after the answer). */
async function deliveries(event: string, fullName: string, count: number) {
  const match = () => got.filter((g) => g.headers["x-gitea-event"] === event && g.body.includes(`"full_name": "${fullName}"`)).map((g) => ({ ...g, json: JSON.parse(g.body) }));
  for (let i = 0; i < 200 && match().length < count; i++) await new Promise((r) => setTimeout(r, 50));
  return match();
}

/** How many tasks are still pending once they have had ~10 s to go (0: every delivery recorded). */
async function pendingTasks(databaseUrl: string) {
  const db = createClient({ url: databaseUrl });
  let pending = -1;
  for (let i = 0; i < 100 && pending !== 0; i++) {
    pending = Number((await db.execute("SELECT COUNT(*) AS n FROM hook_task WHERE is_delivered = 0")).rows[0]!.n);
    if (pending) await new Promise((r) => setTimeout(r, 100));
  }
  db.close();
  return pending;
}

for (const target of targets()) {
  describe(`webhook delivery on ${target.name}`, () => {
    const { call, adminHeaders } = client(target);

    it("an organization's hook receives `repository` for a new repository and `create` + `push` for a git push, signed", async () => {
      const org = uniqName("hk");
      expect((await call("POST", "/api/v1/orgs", { headers: adminHeaders, json: { username: org } })).status).toBe(201);
      const hook = await call("POST", `/api/v1/orgs/${org}/hooks`, {
        headers: adminHeaders,
        json: { type: "gitea", active: true, events: ["repository", "push", "create"], config: { url: receiver, content_type: "json", secret: "e2e-hook-secret" } },
      });
      expect(hook.status).toBe(201);
      const name = uniqName("hr");
      const created = await call("POST", `/api/v1/orgs/${org}/repos`, { headers: adminHeaders, json: { name, private: true } });
      expect(created.status).toBe(201);
      const repo = await created.json();
      const [made] = await deliveries("repository", repo.full_name, 1);
      expect(made!.json).toMatchObject({ action: "created", repository: { id: repo.id, private: true }, organization: { login: org } });
      expect(made!.headers["x-gitea-signature"]).toBe(createHmac("sha256", "e2e-hook-secret").update(made!.body).digest("hex"));

      const dir = s.path(`${target.name}-push`);
      await s.git(["init", "-q", "-b", "main", dir]);
      writeFileSync(`${dir}/README.md`, "# hooks\n");
      // The second commit's author is the site admin's address: the payload names the account.
      const ident = (email: string) => ({ GIT_AUTHOR_NAME: "Hook Pusher", GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: "Hook Pusher", GIT_COMMITTER_EMAIL: email });
      await s.git(["commit", "-q", "--allow-empty", "-m", "first"], { cwd: dir, env: ident("hooks@example.com") });
      await s.git(["add", "README.md"], { cwd: dir });
      await s.git(["commit", "-q", "-m", "readme"], { cwd: dir, env: ident("admin@example.com") });
      const head = (await s.gitText(["rev-parse", "HEAD"], { cwd: dir })).trim();
      const host = target.url.replace(/^http:\/\//, "");
      await s.git(["push", "-q", `http://${target.admin.name}:${target.admin.token}@${host}/${org}/${name}.git`, "main"], { cwd: dir });

      const [create] = await deliveries("create", repo.full_name, 1);
      expect(create!.json).toMatchObject({ ref: "main", ref_type: "branch", sha: head });
      const [push] = await deliveries("push", repo.full_name, 1);
      expect(push!.json).toMatchObject({ ref: "refs/heads/main", after: head, total_commits: 2, head_commit: { id: head, message: "readme\n", added: ["README.md"], author: { email: "admin@example.com", username: target.admin.name } }, pusher: { login: target.admin.name } });
      expect(push!.json.commits.map((c: { message: string }) => c.message)).toEqual(["readme\n", "first\n"]);
      expect(push!.headers["x-hub-signature-256"]).toBe(`sha256=${createHmac("sha256", "e2e-hook-secret").update(push!.body).digest("hex")}`);

      // A force push that rewinds the branch lists no commit and names the new tip as the head.
      const first = (await s.gitText(["rev-parse", "HEAD~1"], { cwd: dir })).trim();
      await s.git(["push", "-q", "-f", `http://${target.admin.name}:${target.admin.token}@${host}/${org}/${name}.git`, "HEAD~1:refs/heads/main"], { cwd: dir });
      const [, rewind] = await deliveries("push", repo.full_name, 2);
      expect(rewind!.json).toMatchObject({ before: head, after: first, commits: [], total_commits: 0, head_commit: { id: first, message: "first\n" } });

      // 24 branches in one push to three hooks: 96 deliveries, each made and recorded once (concurrent delivery slots).
      for (const h of ["b", "c"]) {
        const extra = await call("POST", `/api/v1/orgs/${org}/hooks`, { headers: adminHeaders, json: { type: "gitea", active: true, events: ["create"], config: { url: `${receiver}?${h}`, content_type: "json" } } });
        expect(extra.status).toBe(201);
      }
      const refs = Array.from({ length: 24 }, (_, i) => `HEAD:refs/heads/many-${i}`);
      await s.git(["push", "-q", `http://${target.admin.name}:${target.admin.token}@${host}/${org}/${name}.git`, ...refs], { cwd: dir });
      const many = (await deliveries("create", repo.full_name, 1 + 72)).filter((d) => String(d.json.ref).startsWith("many-"));
      expect(many).toHaveLength(72);
      const manyPush = (await deliveries("push", repo.full_name, 2 + 24)).filter((d) => String(d.json.ref).startsWith("refs/heads/many-"));
      expect(manyPush).toHaveLength(24);
      expect(new Set([...many, ...manyPush].map((d) => d.headers["x-gitea-delivery"])).size).toBe(96);
      // Every delivery recorded: nothing left pending or claimed.
      expect(await pendingTasks(target.databaseUrl)).toBe(0);
    });

    it("ref writes through the API deliver as the pushes they stand for: tag create (`create` + `push`) and delete (`delete`), branch update (`push`) and rename (`delete` + `create`)", async () => {
      const org = uniqName("hk");
      expect((await call("POST", "/api/v1/orgs", { headers: adminHeaders, json: { username: org } })).status).toBe(201);
      const hook = await call("POST", `/api/v1/orgs/${org}/hooks`, { headers: adminHeaders, json: { type: "gitea", active: true, events: ["push", "create", "delete"], config: { url: `${receiver}?api`, content_type: "json" } } });
      expect(hook.status).toBe(201);
      const name = uniqName("hr");
      const repo = await (await call("POST", `/api/v1/orgs/${org}/repos`, { headers: adminHeaders, json: { name, auto_init: true } })).json();
      const at = (p: string, method: string, json?: unknown) => call(method, `/api/v1/repos/${org}/${name}${p}`, { headers: adminHeaders, json });
      const main = (await (await at("/branches/main", "GET")).json()).commit.id as string;
      expect((await at("/tags", "POST", { tag_name: "v1", message: "one" })).status).toBe(201);
      const [tagCreate] = (await deliveries("create", repo.full_name, 1)).filter((d) => d.json.ref === "v1");
      expect(tagCreate!.json).toMatchObject({ ref: "v1", ref_type: "tag", sha: main });
      const tagPush = (await deliveries("push", repo.full_name, 1)).find((d) => d.json.ref === "refs/tags/v1");
      // Gitea's CreateTag notifies with the commit's id, not the tag object's
      expect(tagPush!.json).toMatchObject({ ref: "refs/tags/v1", before: "0000000000000000000000000000000000000000", after: main, total_commits: 0 });
      expect((await at("/tags/v1", "DELETE")).status).toBe(204);
      const [tagDelete] = await deliveries("delete", repo.full_name, 1);
      expect(tagDelete!.json).toMatchObject({ ref: "v1", ref_type: "tag" });

      expect((await at("/contents/next.txt", "POST", { content: Buffer.from("next\n").toString("base64"), message: "next", new_branch: "topic" })).status).toBe(201);
      const topic = (await (await at("/branches/topic", "GET")).json()).commit.id as string;
      expect((await at("/branches/main", "PUT", { new_commit_id: "topic" })).status).toBe(204);
      // pushes so far: the tag's create and delete, the new branch, and this update
      const forward = (await deliveries("push", repo.full_name, 4)).find((d) => d.json.ref === "refs/heads/main");
      expect(forward!.json).toMatchObject({ before: main, after: topic, total_commits: 1, commits: [{ id: topic, message: "next\n" }] });
      expect((await at("/branches/topic", "PATCH", { name: "renamed" })).status).toBe(204);
      const gone = (await deliveries("delete", repo.full_name, 2)).find((d) => d.json.ref === "topic");
      expect(gone!.json).toMatchObject({ ref_type: "branch" });
      const made = (await deliveries("create", repo.full_name, 3)).find((d) => d.json.ref === "renamed");
      expect(made!.json).toMatchObject({ ref_type: "branch", sha: topic });
      expect(await pendingTasks(target.databaseUrl)).toBe(0);
    });

    it("a Slack hook gets Slack's messages of a git push; a tag's push (no commits) reaches only the gitea hook", async () => {
      const org = uniqName("ck");
      expect((await call("POST", "/api/v1/orgs", { headers: adminHeaders, json: { username: org } })).status).toBe(201);
      const events = ["push", "create"];
      for (const json of [
        { type: "slack", events, config: { url: `${receiver}?slack-${org}`, content_type: "json", channel: "#ci", secret: "slack-secret" } },
        { type: "gitea", events, config: { url: `${receiver}?gitea-${org}`, content_type: "json" } },
      ]) {
        expect((await call("POST", `/api/v1/orgs/${org}/hooks`, { headers: adminHeaders, json: { active: true, ...json } })).status).toBe(201);
      }
      const name = uniqName("cr");
      expect((await call("POST", `/api/v1/orgs/${org}/repos`, { headers: adminHeaders, json: { name } })).status).toBe(201);
      const dir = s.path(`${target.name}-chat`);
      await s.git(["init", "-q", "-b", "main", dir]);
      await s.git(["commit", "-q", "--allow-empty", "-m", "only <commit> & more"], { cwd: dir });
      await s.git(["tag", "v1"], { cwd: dir });
      const host = target.url.replace(/^http:\/\//, "");
      await s.git(["push", "-q", `http://${target.admin.name}:${target.admin.token}@${host}/${org}/${name}.git`, "main", "v1"], { cwd: dir });
      // The gitea hook: create + push for the branch, push + create for the tag.
      const of = (who: string) => got.filter((g) => g.url.endsWith(`?${who}-${org}`));
      for (let i = 0; i < 200 && of("gitea").length < 4; i++) await new Promise((r) => setTimeout(r, 50));
      expect(of("gitea").map((g) => g.headers["x-gitea-event"]).sort()).toEqual(["create", "create", "push", "push"]);
      expect(await pendingTasks(target.databaseUrl)).toBe(0);
      const slack = of("slack");
      expect(slack.map((g) => g.headers["x-gitea-event"]).sort()).toEqual(["create", "create", "push"]);
      const html = `${target.url.replace(/\/$/, "")}/${org}/${name}`;
      const texts = slack.map((g) => JSON.parse(g.body).text as string);
      expect(texts).toContain(`[<${html}|${org}/${name}>:<${html}/src/tag/v1|v1>] tag created by ${target.admin.name}`);
      const push = slack.find((g) => g.headers["x-gitea-event"] === "push")!;
      expect(JSON.parse(push.body)).toMatchObject({ channel: "#ci", attachments: [{ text: expect.stringMatching(/^<[^|]+\|[0-9a-f]{7}>: only &lt;commit&gt; &amp; more - /) }] });
      expect(push.headers["x-gitea-signature"]).toBe(createHmac("sha256", "slack-secret").update(push.body).digest("hex"));
    });
  });
}
