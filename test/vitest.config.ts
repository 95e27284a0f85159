import { defineConfig } from "vitest/config";

/**
 * Three projects, one `npm test`:
 * - `rules`: spec rules and unit tests, in-process (`app.request`) on an embedded libSQL file.
 * - `e2e`: over HTTP against BOTH targets (Node + embedded file, workerd + real sqld).
 * - `agent`: the attestation agent over real gRPC on a unix socket, swtpm behind it.
 * - `git`: the git engine (functions/git) against the real git CLI, on Node and inside workerd.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "rules",
          root: ".",
          include: ["test/rules/**/*.test.ts", "test/unit/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "e2e",
          root: ".",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "agent",
          root: ".",
          include: ["test/agent/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "git",
          root: ".",
          include: ["test/git/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
