/**
 * One narrowed run of test/mutation/rest.config.mjs with its own state, sandbox, events and
 * reports, named by MUTATION_RUN (e.g. `MUTATION_RUN=guards npx stryker run
 * test/mutation/narrow.config.mjs --mutate functions/lib/guards.ts`): two narrowed runs never share
 * an incremental file, and a run's report is not overwritten by the next one.
 */
import rest from "./rest.config.mjs";

const STATE = "test/mutation/.state";
const name = process.env.MUTATION_RUN;
if (!name || !/^[\w.-]+$/.test(name)) throw new Error("MUTATION_RUN must name the run (letters, digits, . _ -)");

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...rest,
  incrementalFile: `${STATE}/${name}-incremental.json`,
  tempDirName: `${STATE}/tmp-${name}`,
  eventReporter: { baseDir: `${STATE}/events-${name}` },
  htmlReporter: { fileName: `${STATE}/${name}.html` },
  jsonReporter: { fileName: `${STATE}/${name}.json` },
};
