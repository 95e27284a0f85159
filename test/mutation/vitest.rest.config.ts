import { defineConfig } from "vitest/config";
import base from "../vitest.config.ts";

/**
 * The `rules` project alone, for StrykerJS (test/mutation/rest.config.mjs): the REST rules run the
 * real app in-process, which Stryker can instrument; the `e2e` project spawns servers it cannot follow.
 */
const rules = base.test?.projects?.find((p) => typeof p === "object" && "test" in p && p.test?.name === "rules");
if (!rules) throw new Error("test/vitest.config.ts has no `rules` project");

export default defineConfig({ test: { projects: [rules] } });
