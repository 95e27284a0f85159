/**
 * Repositories: a create or fork whose write fails maps only its own unique indexes to Gitea's
 * refusals (the owner's name → 409, a second fork by one owner → 409 naming the fork). Another
 * failure stays a 500: a client must not be told to change a name that is not the problem.
 * The races that trip those indexes for real are tested over HTTP (test/e2e); here the driver fails
 * the write with the database's message.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRepo, expectRefusal, failingWrites, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
/** The next write batch fails with the error given to `failNext`. */
const writes = failingWrites();

beforeAll(async () => {
  t = await testApp({}, { wrap: writes.wrap });
  alice = await seedUser(t.db);
  bob = await seedUser(t.db);
});
afterAll(() => t.close());

const unique = (cols: string) => new Error(`SQLITE_CONSTRAINT_UNIQUE: UNIQUE constraint failed: ${cols}`);

describe("create, edit and fork: only their own conflicts are refusals", () => {
  it("create: the owner/name index → 409; another unique index → 500", async () => {
    const tk = await alice.token();
    writes.failNext(unique("repository.owner_id, repository.lower_name"));
    await expectRefusal(t.request("/api/v1/user/repos", { method: "POST", headers: token(tk), json: { name: uniq("c") } }), 409, "The repository with the same name already exists.");
    writes.failNext(unique("repo_unit.repo_id, repo_unit.type"));
    expect((await t.request("/api/v1/user/repos", { method: "POST", headers: token(tk), json: { name: uniq("c") } })).status).toBe(500);
  });

  it("edit: a rename onto a name taken meanwhile (the owner/name index) → 422; another unique index → 500", async () => {
    const tk = await alice.token();
    const r = await apiRepo(t, tk, { name: uniq("e") });
    const name = uniq("taken");
    writes.failNext(unique("repository.owner_id, repository.lower_name"));
    await expectRefusal(t.request(`/api/v1/repos/${alice.name}/${r.name}`, { method: "PATCH", headers: token(tk), json: { name } }), 422, `repository already exists [uname: ${alice.name}, name: ${name}]`);
    writes.failNext(unique("repo_redirect.owner_id, repo_redirect.lower_name"));
    expect((await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { method: "PATCH", headers: token(tk), json: { name } })).status).toBe(500);
    expect((await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(tk) })).status).toBe(200);
  });

  it("fork: a concurrent fork by the same owner (the fork index) → 409 naming the fork being made", async () => {
    const base = await apiRepo(t, await alice.token(), { name: uniq("b") });
    writes.failNext(unique("repository.owner_id, repository.fork_id"));
    const name = uniq("f");
    await expectRefusal(
      t.request(`/api/v1/repos/${alice.name}/${base.name}/forks`, { method: "POST", headers: token(await bob.token()), json: { name } }),
      409,
      `repository is already forked by user [uname: ${bob.name}, repo path: ${alice.name}/${base.name}, fork path: ${bob.name}/${name}]`,
    );
  });
});

describe("a DELETE whose route takes no body refuses one", () => {
  // A WHATWG URL parser (browsers, Node's fetch, gitea-js; workerd and Cloudflare's edge too)
  // resolves `…/contents/%2e%2e` to `…/repos/{owner}/{repo}`: a file delete, body and all, arrives
  // as a repository delete. Gitea's DeleteRepo takes no body, so one that carries a body is refused.
  it("DELETE /repos/{owner}/{repo} with a file delete's body (JSON or form) → 422, the repository stays; what generic clients send with any DELETE is no body", async () => {
    const tk = await alice.token();
    const r = await apiRepo(t, tk, { name: uniq("kept") });
    const del = (body: string, type = "application/json") => t.request(`/api/v1/repos/${alice.name}/${r.name}`, { method: "DELETE", headers: { ...token(tk), "Content-Type": type }, body });
    await expectRefusal(del(JSON.stringify({ sha: "b64bf7c03676cb7970a29ce456f4d15ad02b87d1", message: "m" })), 422, "[Body]: this request takes no body");
    await expectRefusal(del("sha=b64bf7c0&message=m", "application/x-www-form-urlencoded"), 422, "[Body]: this request takes no body");
    // Node's fetch sends a string body as text/plain: the file delete's JSON is still another route's body
    await expectRefusal(del(JSON.stringify({ sha: "b64bf7c0", message: "m" }), "text/plain;charset=UTF-8"), 422, "[Body]: this request takes no body");
    expect((await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { headers: token(tk) })).status).toBe(200);
    // what generic clients send with any DELETE is no body: blank, {}, null, [], "" as JSON; `curl -d '{}'` (a form field without a value); text
    for (const [body, type] of [["", "application/json"], [" ", "application/json"], ["{}", "application/json"], ["null", "application/json"], ["[]", "application/json"], ['""', "application/json"], ["{}", "application/x-www-form-urlencoded"], ["{}", "text/plain"], ["{not json", "application/json"]]) {
      const again = await apiRepo(t, tk, { name: uniq("gone") });
      const res = await t.request(`/api/v1/repos/${alice.name}/${again.name}`, { method: "DELETE", headers: { ...token(tk), "Content-Type": type! }, body });
      expect(res.status, `${type} ${JSON.stringify(body)}`).toBe(204);
    }
    // without a body it deletes
    const tf = await t.request(`/api/v1/repos/${alice.name}/${r.name}`, { method: "DELETE", headers: token(tk) });
    expect(tf.status).toBe(204);
  });
});
