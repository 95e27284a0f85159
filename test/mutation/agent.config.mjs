// StrykerJS for the attestation agent's input validation and evidence checks:
// `npm run test:mutation:agent`. Mutants run against the fast in-process unit tests in
// test/agent/unit (no child processes: Stryker cannot see code that runs in another process).
// Incremental: results are kept in reports/ (gitignored), so a rerun only tests changed code.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "vitest",
  vitest: { configFile: "test/mutation/vitest.agent.config.ts", related: false },
  checkers: ["typescript"],
  tsconfigFile: "test/mutation/tsconfig.agent.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  // Modules whose mistakes are security or correctness incidents (docs/testing.md lists why).
  mutate: [
    "attestation-agent/service.ts",
    "attestation-agent/limits.ts",
    "attestation-agent/tpm/marshal.ts",
    "attestation-agent/verify/tpm.ts",
    "attestation-agent/verify/snp.ts",
    "attestation-agent/verify/tdx.ts",
    "attestation-agent/tsm/report.ts",
    "attestation-agent/tsm/snp.ts",
  ],
  coverageAnalysis: "perTest",
  incremental: true,
  incrementalFile: "reports/mutation/agent-incremental.json",
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  ignorePatterns: ["functions", "drizzle", "bench", "docs", "reports", ".wrangler", "data", ".data"],
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation/agent.json" },
  thresholds: { high: 90, low: 85, break: 85 },
  concurrency: 2,
  timeoutMS: 10_000,
};
