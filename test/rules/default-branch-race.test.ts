/**
 * The default branch cannot be deleted — also when it became the default after the request read
 * the repository (docs/git.md: "a branch deleted in between never becomes HEAD"). A PATCH of
 * `default_branch` lands between the request's read and its write here (the driver runs it just
 * before the write batch); the deletion is refused and the branch stays. Before, the check used
 * the state read first, so the repository was left with a default branch that did not exist.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZERO_OID } from "../../functions/git/bytes.ts";
import { FLUSH, pkt } from "../../functions/git/pkt-line.ts";
import { basic, interleavedWrites, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let owner: SeededUser;
let tok: string;
const writes = interleavedWrites();

beforeAll(async () => {
  t = await testApp({}, { wrap: writes.wrap });
  owner = await seedUser(t.db);
  tok = await owner.token();
});
afterAll(() => t.close());

const api = (path: string, init: { method?: string; json?: unknown } = {}) => t.request(`/api/v1${path}`, { ...init, headers: token(tok) });

/** A repository with `main` (its default) and the branches `names` at the same commit. */
async function repoWith(names: string[]): Promise<{ name: string; id: number; tip: string }> {
  const name = uniq("race");
  const created = await api("/user/repos", { method: "POST", json: { name, auto_init: true, readme: "Default" } });
  expect(created.status).toBe(201);
  const id = (await created.json()).id as number;
  for (const b of names) expect((await api(`/repos/${owner.name}/${name}/branches`, { method: "POST", json: { new_branch_name: b } })).status).toBe(201);
  const tip = (await (await api(`/repos/${owner.name}/${name}/branches/main`)).json()).commit.id as string;
  return { name, id, tip };
}

/** Makes `branch` the default branch of repository `id` the moment the next write batch is sent. */
const defaultBecomes = (id: number, branch: string) => writes.beforeNextWrite("UPDATE repository SET default_branch = ? WHERE id = ?", [branch, id]);

async function state(repo: string) {
  const r = await (await api(`/repos/${owner.name}/${repo}`)).json();
  const branches = ((await (await api(`/repos/${owner.name}/${repo}/branches`)).json()) as { name: string }[]).map((b) => b.name).sort();
  return { defaultBranch: r.default_branch as string, branches };
}

describe("the default branch cannot be deleted, as it is when the deletion commits", () => {
  it("DELETE /branches/{branch} of a branch made the default meanwhile → 403, the branch stays", async () => {
    const r = await repoWith(["x"]);
    defaultBecomes(r.id, "x");
    const res = await api(`/repos/${owner.name}/${r.name}/branches/x`, { method: "DELETE" });
    expect({ status: res.status, message: (await res.json()).message }).toEqual({ status: 403, message: "can not delete default branch" });
    expect(await state(r.name)).toEqual({ defaultBranch: "x", branches: ["main", "x"] });
    // the branch that is no longer the default may go
    expect((await api(`/repos/${owner.name}/${r.name}/branches/main`, { method: "DELETE" })).status).toBe(204);
  });

  it("renaming a branch made the default meanwhile → 409, nothing renamed", async () => {
    const r = await repoWith(["x"]);
    defaultBecomes(r.id, "x");
    const res = await api(`/repos/${owner.name}/${r.name}/branches/x`, { method: "PATCH", json: { name: "y" } });
    expect(res.status).toBe(409);
    expect(await state(r.name)).toEqual({ defaultBranch: "x", branches: ["main", "x"] });
  });

  it("a push deleting a branch made the default meanwhile: that command is refused with Gitea's reason, the push's other commands apply", async () => {
    const r = await repoWith(["x", "y"]);
    defaultBecomes(r.id, "x");
    const body = Buffer.concat([
      pkt(`${r.tip} ${ZERO_OID} refs/heads/x\0report-status\n`),
      pkt(`${r.tip} ${ZERO_OID} refs/heads/y\n`),
      FLUSH,
    ]);
    const res = await t.request(`/${owner.name}/${r.name}.git/git-receive-pack`, {
      method: "POST",
      body,
      headers: { ...basic(owner.name, tok), "Content-Type": "application/x-git-receive-pack-request" },
    });
    expect(res.status).toBe(200);
    const report = Buffer.from(await res.arrayBuffer()).toString("latin1");
    expect(report).toContain("ng refs/heads/x branch x is the default branch and cannot be deleted");
    expect(report).toContain("ok refs/heads/y");
    expect(await state(r.name)).toEqual({ defaultBranch: "x", branches: ["main", "x"] });
  });
});
