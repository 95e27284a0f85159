/**
 * StrykerJS on the REST API's security and accounting rules (issue 12): the permission model,
 * authentication and token scopes, the webhook host classification and delivery (outbound requests,
 * branch-filter globs), pagination, the metered
 * database client and the repository, team and collaborator rule services.
 *
 * `npm run test:mutation:rest` runs it incrementally: only mutants in changed code, or covered by
 * changed tests, are run again. `-- --force` rebuilds everything; `-- --mutate <file>` (or
 * `<file>:START-END`) narrows a run. The incremental file then keeps only that run's files: give a
 * narrowed run its own (`-- --incrementalFile <file>`) to keep the others' state.
 * Results and state stay in test/mutation/.state/ (ignored by git).
 */
const STATE = "test/mutation/.state";

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  mutate: [
    "functions/lib/permissions.ts",
    "functions/lib/auth.ts",
    "functions/lib/guards.ts",
    "functions/lib/hosts.ts",
    "functions/lib/outbound.ts",
    "functions/lib/outbound-node.ts",
    "functions/lib/glob.ts",
    "functions/services/hook-delivery.ts",
    "functions/convert/chat-hooks.ts",
    "functions/lib/pagination.ts",
    "functions/db/driver.ts",
    "functions/services/repos.ts",
    "functions/services/teams.ts",
    "functions/services/collaborators.ts",
  ],
  testRunner: "vitest",
  // The `rules` project only: e2e tests spawn servers Stryker cannot follow. Forks, as `npm test`
  // runs them (libSQL is a native module).
  vitest: { configFile: "test/mutation/vitest.rest.config.ts", related: true, pool: "forks" },
  coverageAnalysis: "perTest",
  // Static mutants (module-level constants, and code that only the suites' beforeAll seeds reach)
  // would each need the whole suite with a fresh module graph: 954 of 2650 mutants and an estimated
  // 35 hours here. They are reported as Ignored, not counted as killed; mutants hit both at load and
  // by tests still run, against the tests that cover them.
  ignoreStatic: true,
  checkers: ["typescript"],
  tsconfigFile: "test/mutation/tsconfig.rest.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  incremental: true,
  incrementalFile: `${STATE}/rest-incremental.json`,
  tempDirName: `${STATE}/tmp-rest`,
  // Not copied into the sandbox: the state, reports and another run's sandbox (two narrowed runs
  // side by side, each with `--tempDirName`).
  ignorePatterns: ["/test/mutation/.state"],
  // The machine is shared: two workers at most, and generous timeouts so that load is not
  // mistaken for an endless loop (a timeout counts as a killed mutant).
  concurrency: 2,
  timeoutMS: 30_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 20,
  // event-recorder writes each tested mutant as it is done (`${STATE}/events/`): survivors can be
  // read while a long run goes on, not only from the report at its end.
  reporters: ["clear-text", "progress", "html", "json", "event-recorder"],
  eventReporter: { baseDir: `${STATE}/events` },
  htmlReporter: { fileName: `${STATE}/rest.html` },
  jsonReporter: { fileName: `${STATE}/rest.json` },
  clearTextReporter: { allowEmojis: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 90, low: 85, break: null },
};
