/** The interactive API page renders in a real browser (Debian's Chromium) on both targets, from local assets only. */
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { targets } from "../fixtures/targets.ts";

let browser: Browser;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});
afterAll(async () => {
  await browser?.close();
});

for (const target of targets()) {
  describe(`/api/swagger on ${target.name}`, () => {
    it("renders Gitea's operations from /swagger.v1.json without fetching anything off the machine", async () => {
      const page = await browser.newPage();
      const external: string[] = [];
      page.on("request", (r) => {
        if (!r.url().startsWith(target.url) && !r.url().startsWith("data:")) external.push(r.url());
      });
      const res = await page.goto(`${target.url}/api/swagger`);
      expect(res?.status()).toBe(200);
      await page.waitForSelector(".opblock-summary-operation-id, .opblock-summary-path", { timeout: 30_000 });
      const title = await page.locator(".info .title").first().textContent();
      expect(title).toContain("Gitea API");
      const text = await page.locator("#swagger-ui").innerText();
      expect(text).toContain("/users/{username}/tokens");
      expect(text).toContain("/admin/users");
      expect(external).toEqual([]);
      await page.close();
    });
  });
}
