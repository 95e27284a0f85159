/**
 * The mutation score of every mutated module from a StrykerJS JSON report, and a failing exit when
 * one is below the bar (issue 12: at least 85 % on each module, not only on average).
 * Usage: node test/mutation/scores.mjs [report.json] [minimum %]
 */
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? "test/mutation/.state/rest.json";
const min = Number(process.argv[3] ?? 85);
const report = JSON.parse(readFileSync(file, "utf8"));
const DETECTED = new Set(["Killed", "Timeout"]);
const VALID = new Set(["Killed", "Timeout", "Survived", "NoCoverage"]);

let failed = false;
const rows = Object.entries(report.files).map(([name, f]) => {
  const valid = f.mutants.filter((m) => VALID.has(m.status));
  const detected = valid.filter((m) => DETECTED.has(m.status)).length;
  const score = valid.length ? (100 * detected) / valid.length : 100;
  if (score < min) failed = true;
  const left = valid.filter((m) => !DETECTED.has(m.status)).map((m) => `${m.location.start.line}:${m.location.start.column} ${m.mutatorName} ${m.status}`);
  return { name, score, detected, valid: valid.length, left };
});
for (const r of rows.sort((a, b) => a.name.localeCompare(b.name))) {
  console.log(`${r.score.toFixed(2).padStart(6)} %  ${String(r.detected).padStart(4)}/${String(r.valid).padEnd(4)}  ${r.name}${r.score < min ? `  < ${min} %` : ""}`);
}
if (failed) {
  console.error(`\nA module is below ${min} %: kill its survivors with tests, or record them as equivalent in docs/testing.md.`);
  process.exit(1);
}
