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

describe("names a write may use (Gitea's bindings)", () => {
  it("paths up to 500 characters (files[].path, from_path: MaxSize(500)); longer → 422, nothing written", async () => {
    const long = `d/${"p".repeat(499)}`;
    const files = (path: string, extra: Record<string, string> = {}) => ({ files: [{ operation: "create", path, content: "eA==", ...extra }] });
    const refused = await t.request(`/api/v1/repos/${repo}/contents`, { method: "POST", headers: token(tok), json: files(long) });
    expect({ status: refused.status, message: (await refused.json()).message }).toEqual({ status: 422, message: "[Path]: MaxSize" });
    expect((await t.request(`/api/v1/repos/${repo}/contents/${long}`, { headers: token(tok) })).status).toBe(404);
    const fits = await t.request(`/api/v1/repos/${repo}/contents`, { method: "POST", headers: token(tok), json: files(long.slice(0, 500)) });
    expect(fits.status).toBe(201);
    const rename = await t.request(`/api/v1/repos/${repo}/contents/x.txt`, { method: "PUT", headers: token(tok), json: { content: "eA==", from_path: long, sha: "0".repeat(40) } });
    expect({ status: rename.status, message: (await rename.json()).message }).toEqual({ status: 422, message: "[FromPath]: MaxSize" });
  });

  it("branch and new_branch are git ref names: '@' alone, '..', a trailing '.lock' → 422 naming FileOptions' Go fields (BranchName, NewBranchName); a new branch of a fine name is made", async () => {
    for (const name of ["@", "a..b", "x.lock", "a b"]) {
      for (const [key, field] of [["new_branch", "NewBranchName"], ["branch", "BranchName"]] as const) {
        const res = await t.request(`/api/v1/repos/${repo}/contents/n.txt`, { method: "POST", headers: token(tok), json: { content: "eA==", [key]: name } });
        expect({ name, status: res.status, message: (await res.json()).message }).toEqual({ name, status: 422, message: `[${field}]: GitRefName` });
      }
    }
    const long = await t.request(`/api/v1/repos/${repo}/contents`, { method: "POST", headers: token(tok), json: { branch: "b".repeat(101), files: [{ operation: "create", path: "l.txt" }] } });
    expect({ status: long.status, message: (await long.json()).message }).toEqual({ status: 422, message: "[BranchName]: MaxSize" });
    const ok = await t.request(`/api/v1/repos/${repo}/contents/n.txt`, { method: "POST", headers: token(tok), json: { content: "eA==", new_branch: "@fine" } });
    expect(ok.status).toBe(201);
    for (const [path, body] of [["branches", { new_branch_name: "@" }], ["tags", { tag_name: "@" }]] as const) {
      const res = await t.request(`/api/v1/repos/${repo}/${path}`, { method: "POST", headers: token(tok), json: body });
      expect(res.status, path).toBe(422);
    }
  });
});

describe("file options as Gitea binds them", () => {
  it("content rule: an absent content is \"\" (ContentBase64 has no Required binding) — POST creates and PUT writes an empty file", async () => {
    const created = await t.request(`/api/v1/repos/${repo}/contents/empty.txt`, { method: "POST", headers: token(tok), json: { message: "no content" } });
    expect(created.status).toBe(201);
    const c = (await created.json()).content;
    expect({ size: c.size, sha: c.sha }).toEqual({ size: 0, sha: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391" });
    const readme = (await (await t.request(`/api/v1/repos/${repo}/contents/README.md`, { headers: token(tok) })).json()).sha;
    const put = await t.request(`/api/v1/repos/${repo}/contents/README.md`, { method: "PUT", headers: token(tok), json: { sha: readme } });
    expect(put.status).toBe(200);
    expect((await put.json()).content.size).toBe(0);
    const raw = await t.request(`/api/v1/repos/${repo}/raw/README.md`, { headers: token(tok) });
    expect([raw.status, await raw.text()]).toEqual([200, ""]);
  });

  it("signoff rule: the message ends \"\\n\\nSigned-off-by: Name <email>\" with no newline after it (Gitea's CommitTreeWithDate), the given message trimmed first", async () => {
    const committer = { name: "Sig Ner", email: "sig@example.com" };
    for (const [i, message] of ["subject", "subject\n\nbody\n\n"].entries()) {
      const res = await t.request(`/api/v1/repos/${repo}/contents/signed-${i}.txt`, { method: "PUT", headers: token(tok), json: { content: "eA==", message, signoff: true, committer } });
      expect(res.status).toBeLessThan(300);
      expect((await res.json()).commit.message).toBe(`${message.trim()}\n\nSigned-off-by: Sig Ner <sig@example.com>`);
    }
    const plain = await t.request(`/api/v1/repos/${repo}/contents/unsigned.txt`, { method: "POST", headers: token(tok), json: { content: "eA==", message: "no trailer\n" } });
    expect((await plain.json()).commit.message).toBe("no trailer\n");
  });
});
