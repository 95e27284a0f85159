import { defineConfig } from "vitest/config";

/** The agent's in-process unit tests, which StrykerJS runs against each mutant. */
export default defineConfig({
  test: {
    root: ".",
    include: ["test/agent/unit/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
