/**
 * The shape of the code (issue 9 A.1): no module of `functions/` imports itself back through
 * others at run time — the services meet in the query layer (`functions/db/queries/`), never in
 * each other's lookups. Type-only imports are erased and do not count.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../functions");

function modules(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) modules(path, out);
    else if (path.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Runtime imports (not `import type`) of one module, resolved to files of `functions/`. */
function runtimeImports(file: string, known: Set<string>): string[] {
  const src = readFileSync(file, "utf8");
  return [...src.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"(\.[^"]+)"/gms)].map((m) => resolve(dirname(file), m[1]!)).filter((f) => known.has(f));
}

/** Strongly connected components of more than one module (Tarjan), as paths relative to functions/. */
function importCycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(relative(ROOT, w));
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe("architecture", () => {
  const files = modules(ROOT);
  const known = new Set(files);
  const graph = new Map(files.map((f) => [f, runtimeImports(f, known)]));

  it("the import graph is read from the sources (the check sees the services and the query layer)", () => {
    const rel = (f: string) => relative(ROOT, f);
    expect(graph.get(join(ROOT, "services/repos.ts"))!.map(rel)).toContain("db/queries/repos.ts");
    expect(graph.get(join(ROOT, "services/teams.ts"))!.map(rel)).toContain("services/repos.ts");
  });

  it("the cycle finder reports a cycle when there is one", () => {
    const g = new Map([
      [join(ROOT, "a.ts"), [join(ROOT, "b.ts")]],
      [join(ROOT, "b.ts"), [join(ROOT, "c.ts")]],
      [join(ROOT, "c.ts"), [join(ROOT, "a.ts")]],
      [join(ROOT, "d.ts"), [join(ROOT, "a.ts")]],
    ]);
    expect(importCycles(g)).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  it("no module of functions/ imports itself back at run time (no import cycle)", () => {
    expect(importCycles(graph)).toEqual([]);
  });
});
