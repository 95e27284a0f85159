/**
 * Size caps of the contents writes: the files of one write may not exceed `[git] MAX_PUSH_SIZE`
 * (413, nothing written), the request body of a content write is capped at that size in base64,
 * and the rest of the API keeps its 1 MiB body limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRepo, seedUser, testApp, token, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let tok: string;
let repo: string;

beforeAll(async () => {
  t = await testApp({ GITEA__git__MAX_PUSH_SIZE: "3MiB" });
  const u = await seedUser(t.db);
  tok = await u.token();
  repo = (await apiRepo(t, tok, { name: "limits", auto_init: true })).full_name;
});
afterAll(() => t.close());

const b64 = (n: number) => Buffer.alloc(n, 7).toString("base64");

describe("contents size caps", () => {
  it("a file up to MAX_PUSH_SIZE goes in (a body above the API's 1 MiB)", async () => {
    const res = await t.request(`/api/v1/repos/${repo}/contents/big.bin`, { method: "POST", headers: token(tok), json: { content: b64(2 * 1024 * 1024) } });
    expect(res.status).toBe(201);
    expect((await res.json()).content.size).toBe(2 * 1024 * 1024);
  });

  it("files above MAX_PUSH_SIZE → 413, nothing written", async () => {
    const files = [0, 1].map((i) => ({ operation: "create", path: `part${i}.bin`, content: b64(1550 * 1024) }));
    const res = await t.request(`/api/v1/repos/${repo}/contents`, { method: "POST", headers: token(tok), json: { files } });
    expect(res.status).toBe(413);
    expect((await res.json()).message).toBe("the files exceed the maximum allowed size (3145728 bytes)");
    expect((await t.request(`/api/v1/repos/${repo}/contents/part0.bin`, { headers: token(tok) })).status).toBe(404);
  });

  it("a body above the content cap → 413 before anything is read; other routes keep 1 MiB", async () => {
    const res = await t.request(`/api/v1/repos/${repo}/contents/huge.bin`, { method: "POST", headers: token(tok), json: { content: b64(5 * 1024 * 1024) } });
    expect(res.status).toBe(413);
    const edit = await t.request(`/api/v1/repos/${repo}`, { method: "PATCH", headers: token(tok), json: { description: "x".repeat(2 * 1024 * 1024) } });
    expect(edit.status).toBe(413);
  });
});
