/**
 * `npm run check` (part of `npm test`): regenerating what is committed changes nothing.
 * - attestation-agent/gen/ from proto/ (`buf generate`, into a temporary directory);
 * - drizzle/ from functions/db/schema.ts (`drizzle-kit generate` over a temporary copy of drizzle/:
 *   a schema change without its migration shows up as a new or changed file there).
 * Exits 1 naming every difference.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = join(import.meta.dirname, "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

/** Every file under `dir`, as paths relative to it. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/** The differences between two trees: missing, extra and changed files. */
function diff(committed: string, regenerated: string, label: string): string[] {
  const a = files(committed);
  const b = files(regenerated);
  const problems: string[] = [];
  for (const f of a) if (!b.includes(f)) problems.push(`${label}/${f}: committed but not generated`);
  for (const f of b) {
    if (!a.includes(f)) problems.push(`${label}/${f}: generated but not committed`);
    else if (!readFileSync(join(committed, f)).equals(readFileSync(join(regenerated, f)))) problems.push(`${label}/${f}: differs from what the generator writes`);
  }
  return problems;
}

// The generators' plugins (protoc-gen-es) are found on PATH, as under `npm run`.
const env = { ...process.env, PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH ?? ""}` };
const tmp = mkdtempSync(join(tmpdir(), "check-generated-"));
const problems: string[] = [];
try {
  execFileSync(bin("buf"), ["generate", "-o", tmp], { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] });
  problems.push(...diff(join(root, "attestation-agent/gen"), join(tmp, "attestation-agent/gen"), "attestation-agent/gen"));

  const out = join(tmp, "drizzle");
  cpSync(join(root, "drizzle"), out, { recursive: true });
  // drizzle-kit reads `out` relative to the working directory.
  const said = execFileSync(bin("drizzle-kit"), ["generate", "--config", "scripts/drizzle.config.ts"], {
    cwd: root,
    env: { ...env, DRIZZLE_OUT: relative(root, out) },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const changed = files(out).length !== files(join(root, "drizzle")).length;
  if (!changed && !/No schema changes/i.test(said)) problems.push(`drizzle-kit generate did not run cleanly:\n${said}`);
  problems.push(...diff(join(root, "drizzle"), out, "drizzle").map((p) => `${p} (the schema and the migrations disagree: run npm run db:generate)`));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
if (problems.length) {
  console.error(`Generated files are out of date:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log("generated files: attestation-agent/gen/ and drizzle/ match their sources");
