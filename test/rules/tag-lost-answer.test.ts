/**
 * An annotated tag whose commit's answer never came (the query timeout) may have landed: its pack
 * (the tag object) is kept, so the tag the refs may name reads whole. One the database refused
 * leaves nothing (see test/git/lost-answer.test.ts for pushes, API commits and compactions).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { DatabaseUnavailable, type Driver } from "../../functions/db/driver.ts";
import { apiRepo, seedUser, testApp, token, type TestApp } from "../fixtures/app.ts";

let t: TestApp;
let tok = "";
let mode: "pass" | "lost" | "refused" = "pass";

/** Write batches that commit a ref: run and then lost ("lost"), or failed by the database ("refused"). */
const faulty = (d: Driver): Driver => ({
  async batch(items, m) {
    if (m !== "write" || mode === "pass" || !items.some((i) => /INSERT INTO git_ref\b/.test(i.text))) return d.batch(items, m);
    if (mode === "refused") throw new Error("SQLITE_CONSTRAINT: FOREIGN KEY constraint failed");
    await d.batch(items, m);
    throw new DatabaseUnavailable("no answer within 10 ms");
  },
  close: () => d.close(),
});

beforeAll(async () => {
  t = await testApp({}, { wrap: faulty });
  tok = await (await seedUser(t.db)).token();
});
afterAll(() => t.close());

it("an annotated tag whose answer was lost keeps its tag object; a refused one stores nothing", async () => {
  const repo = (await apiRepo(t, tok, { name: "tags", auto_init: true })).full_name;
  const files = async () => (await t.objects.list(String((await (await t.request(`/api/v1/repos/${repo}`, { headers: token(tok) })).json()).id))).length;
  const before = await files();
  mode = "refused";
  expect((await t.request(`/api/v1/repos/${repo}/tags`, { method: "POST", headers: token(tok), json: { tag_name: "v0", message: "refused" } })).status).toBe(500);
  expect(await files()).toBe(before);
  mode = "lost";
  expect((await t.request(`/api/v1/repos/${repo}/tags`, { method: "POST", headers: token(tok), json: { tag_name: "v1", message: "annotated" } })).status).toBe(503);
  mode = "pass";
  const tag = await t.request(`/api/v1/repos/${repo}/tags/v1`, { headers: token(tok) });
  expect(tag.status).toBe(200);
  const { id } = await tag.json();
  const object = await t.request(`/api/v1/repos/${repo}/git/tags/${id}`, { headers: token(tok) });
  expect(object.status).toBe(200);
  expect((await object.json()).message).toBe("annotated\n");
});
