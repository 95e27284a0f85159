/**
 * Limits of a push through the app (in-process, embedded file, directory store): `[git]
 * MAX_PUSH_SIZE`, a corrupt or truncated pack, bad ref names — nothing stored, no ref moved, the
 * repository row unchanged — and the request shapes Gitea refuses.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZERO_OID } from "../../functions/git/bytes.ts";
import { FLUSH, pkt } from "../../functions/git/pkt-line.ts";
import { LibsqlRefStore } from "../../functions/db/queries/git-refs.ts";
import { apiRepo, basic, roundTrips, seedUser, testApp, token, uniq, type SeededUser, type TestApp } from "../fixtures/app.ts";
import { makeHistory, Scratch } from "../git/helpers.ts";

const s = new Scratch("git-limits-");
let t: TestApp;
let owner: SeededUser;
let tok: string;
let pack: Buffer;
let tip: string;

beforeAll(async () => {
  t = await testApp({ GITEA__git__MAX_PUSH_SIZE: "20KiB" });
  owner = await seedUser(t.db);
  tok = await owner.token();
  const src = s.path("src");
  await makeHistory(s, src, { commits: 10, files: 5 });
  tip = await s.gitText(["rev-parse", "main"], { cwd: src });
  pack = (await s.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: "main\n" })).stdout;
});
afterAll(() => {
  t.close();
  s.cleanup();
});

/** The report lines of a raw receive-pack request. */
async function receive(repo: string, body: Uint8Array): Promise<{ res: Response; lines: string[] }> {
  const res = await t.request(`/${owner.name}/${repo}.git/git-receive-pack`, { method: "POST", body: body as Uint8Array<ArrayBuffer>, headers: { ...basic(owner.name, tok), "Content-Type": "application/x-git-receive-pack-request" } });
  const text = Buffer.from(await res.clone().arrayBuffer()).toString("latin1");
  const lines: string[] = [];
  for (let p = 0; p + 4 <= text.length; ) {
    const n = Number.parseInt(text.slice(p, p + 4), 16);
    if (n === 0) {
      p += 4;
      continue;
    }
    lines.push(text.slice(p + 4, p + n).replace(/\n$/, ""));
    p += n;
  }
  return { res, lines };
}

/** Nothing stored, no ref, the row still empty. */
async function untouched(repo: { id: number; name: string }) {
  expect(await t.objects.list(String(repo.id))).toEqual([]);
  expect((await new LibsqlRefStore(t.driver).read(String(repo.id))).refs).toEqual([]);
  expect(await (await t.request(`/api/v1/repos/${owner.name}/${repo.name}`, { headers: token(tok) })).json()).toMatchObject({ empty: true, size: 0 });
}

describe("push limits", () => {
  it("[git] MAX_PUSH_SIZE: a larger pack is refused with git's unpack message, nothing stored", async () => {
    // a real pack over the limit: one incompressible 30 KiB file
    const src = s.path("big");
    await s.git(["init", "-q", "-b", "main", src]);
    writeFileSync(s.path("big", "noise.bin"), randomBytes(30 * 1024));
    await s.git(["add", "noise.bin"], { cwd: src });
    await s.git(["commit", "-q", "-m", "noise"], { cwd: src });
    const bigTip = await s.gitText(["rev-parse", "main"], { cwd: src });
    const big = (await s.git(["pack-objects", "--stdout", "--revs", "-q"], { cwd: src, input: "main\n" })).stdout;
    expect(big.length).toBeGreaterThan(20 * 1024);
    const repo = await apiRepo(t, tok, { name: uniq("big") });
    const { lines } = await receive(repo.name, Buffer.concat([pkt(`${ZERO_OID} ${bigTip} refs/heads/main\0report-status\n`), FLUSH, big]));
    expect(lines[0]).toBe("unpack pack exceeds maximum allowed size (20480 bytes)");
    expect(lines[1]).toBe("ng refs/heads/main unpacker error");
    await untouched(repo);
  });

  it("a corrupt or truncated pack: unpack error, no ref moved, nothing stored, one round trip", async () => {
    const flipped = Buffer.from(pack);
    flipped[Math.floor(flipped.length / 2)]! ^= 0x55;
    for (const bad of [pack.subarray(0, pack.length - 50), flipped, pack.subarray(0, 30)]) {
      const repo = await apiRepo(t, tok, { name: uniq("bad") });
      const { res, lines } = await receive(repo.name, Buffer.concat([pkt(`${ZERO_OID} ${tip} refs/heads/main\0report-status\n`), FLUSH, bad]));
      expect(lines[0]).toMatch(/^unpack (pack truncated|bad zlib|pack checksum|.*corrupt)/);
      expect(lines[1]).toBe("ng refs/heads/main unpacker error");
      expect(roundTrips(res)).toBe(1);
      await untouched(repo);
    }
  });

  it("bad ref names are refused as git check-ref-format does; the good ones of the same push apply", async () => {
    const repo = await apiRepo(t, tok, { name: uniq("names") });
    const names = ["refs/heads/main", "refs/heads/a..b", "refs/heads/x.lock", "HEAD"];
    const { lines } = await receive(repo.name, Buffer.concat([pkt(`${ZERO_OID} ${tip} ${names[0]}\0report-status\n`), ...names.slice(1).map((n) => pkt(`${ZERO_OID} ${tip} ${n}\n`)), FLUSH, pack]));
    expect(lines).toEqual(["unpack ok", "ok refs/heads/main", "ng refs/heads/a..b funny refname", "ng refs/heads/x.lock funny refname", "ng HEAD funny refname"]);
    expect((await new LibsqlRefStore(t.driver).read(String(repo.id))).refs.map((r) => r.name)).toEqual(["refs/heads/main"]);
  });

  it("refuses a POST without git's content type (400) and an unknown service (404), as Gitea", async () => {
    const repo = await apiRepo(t, tok, { name: uniq("ct") });
    const res = await t.request(`/${owner.name}/${repo.name}.git/git-receive-pack`, { method: "POST", body: "0000", headers: { ...basic(owner.name, tok), "Content-Type": "text/plain" } });
    expect(res.status).toBe(400);
    expect((await t.request(`/${owner.name}/${repo.name}.git/info/refs?service=git-upload-archive`)).status).toBe(404);
    expect((await t.request(`/${owner.name}/${repo.name}.git/info/refs`)).status).toBe(404);
  });
});
