import { defineConfig } from "vitest/config";
import base from "../vitest.config.ts";

/**
 * The `rules` project alone, for StrykerJS (test/mutation/rest.config.mjs): the REST rules run the
 * real app in-process, which Stryker can instrument; the `e2e` project spawns servers it cannot follow.
 *
 * Without isolation: every test file builds its own app on its own database file and no test
 * mocks a module, so the files can share one module graph. That saves importing the app for each
 * file, which was two thirds of a run's time (the whole project: 110 s isolated on two workers,
 * 75 s in one worker without isolation).
 */
const rules = base.test?.projects?.find((p) => typeof p === "object" && "test" in p && p.test?.name === "rules");
if (!rules || typeof rules !== "object" || !("test" in rules)) throw new Error("test/vitest.config.ts has no `rules` project");

export default defineConfig({ test: { projects: [{ ...rules, test: { ...rules.test, isolate: false } }] } });
