/**
 * A `.cpuprofile` (V8 sampling profile) summarized by package: which code the server's CPU time went
 * to. Every sample counts once. Frames are grouped by where their code lives:
 * `node_modules/<package>`, app code (`functions/`), Node internals (`node:` URLs), and V8's own
 * `(garbage collector)` / `(program)`. Native and built-in frames (no URL: `JSON.stringify`,
 * the libsql addon's `prepare`, …) are charged to the nearest JavaScript caller, so the native half
 * of a package's work stays with that package. `(idle)` is left out of every percentage.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The group a frame belongs to, or null for native/built-in frames (charged to their caller). */
export function groupOf(f: CallFrame): string | null {
  if (f.functionName === "(garbage collector)") return "V8: garbage collector";
  if (f.functionName === "(program)") return "V8: (program)";
  if (f.functionName === "(idle)") return "(idle)";
  if (f.functionName === "(root)") return null;
  const url = f.url;
  if (!url) return null;
  if (url.startsWith("node:") || !url.includes("/")) return "node internals";
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "/node_modules/".length).split("/");
    const pkg = rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
    // @libsql/core and @libsql/hrana-client are parts of @libsql/client.
    return pkg === "@libsql/core" || pkg === "@libsql/hrana-client" ? "@libsql/client" : pkg === "libsql" ? "libsql (native binding)" : pkg;
  }
  if (url.includes("/functions/")) return "app code (functions/)";
  if (url.includes("/bench/")) return "bench hook";
  return "other";
}

const shortUrl = (url: string) => {
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) return url.slice(nm + "/node_modules/".length);
  const fn = url.lastIndexOf("/functions/");
  if (fn >= 0) return url.slice(fn + 1);
  return url.replace(/^file:\/\/.*\//, "");
};

export interface Summary {
  seconds: number;
  samples: number;
  busy: number;
  idlePct: number;
  /** Self time by group (native callees folded in), % of busy samples. */
  self: [string, number][];
  /** % of busy samples with the group anywhere on the stack. */
  inclusive: [string, number][];
  /** Top functions by self time. */
  functions: { group: string; name: string; where: string; pct: number }[];
  /** Top-down tree with consecutive frames of one group merged; lines pre-indented. */
  tree: string[];
}

export function summarize(p: CpuProfile, opts: { topFunctions?: number; treeMinPct?: number; treeDepth?: number } = {}): Summary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Per node: its group (nearest non-null upward for native frames) and its stack of groups.
  const ownGroup = new Map<number, string | null>();
  const effective = new Map<number, string>();
  const frameKey = new Map<number, string>();
  const stackOf = new Map<number, { groups: string[]; keys: string[] }>();
  const resolve = (id: number): string => {
    const cached = effective.get(id);
    if (cached !== undefined) return cached;
    const n = byId.get(id)!;
    let g = groupOf(n.callFrame);
    ownGroup.set(id, g);
    let key = `${n.callFrame.functionName || "(anonymous)"}\t${n.callFrame.url ? `${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}` : "(native)"}`;
    if (g === null) {
      const up = parent.get(id);
      g = up === undefined ? "other" : resolve(up);
      // V8 names native functions unreliably (every addon function may carry the same name): say whose native part it is.
      if (up !== undefined) {
        const [callerName, callerWhere] = (frameKey.get(up) ?? "?\t").split("\t");
        key = `${callerName!.replace(/ \(native part\)$/, "")} (native part)\t${callerWhere}`;
      }
    }
    effective.set(id, g);
    frameKey.set(id, key);
    return g;
  };
  const stack = (id: number) => {
    const cached = stackOf.get(id);
    if (cached) return cached;
    const path: number[] = [];
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) path.push(x);
    path.reverse();
    const groups: string[] = [];
    const keys: string[] = [];
    for (const x of path) {
      const n = byId.get(x)!;
      if (n.callFrame.functionName === "(root)") continue;
      const g = resolve(x);
      if (groups.at(-1) !== g) groups.push(g);
      keys.push(frameKey.get(x)!);
    }
    const s = { groups, keys };
    stackOf.set(id, s);
    return s;
  };

  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const fn = new Map<string, number>();
  interface TreeNode {
    n: number;
    kids: Map<string, TreeNode>;
  }
  const root: TreeNode = { n: 0, kids: new Map() };
  let busy = 0;
  let idle = 0;
  for (const id of p.samples) {
    const g = resolve(id);
    if (g === "(idle)") {
      idle++;
      continue;
    }
    busy++;
    self.set(g, (self.get(g) ?? 0) + 1);
    const s = stack(id);
    for (const x of new Set(s.groups)) incl.set(x, (incl.get(x) ?? 0) + 1);
    const k = `${g}\t${frameKey.get(id)}`;
    fn.set(k, (fn.get(k) ?? 0) + 1);
    let t = root;
    t.n++;
    for (const x of s.groups) {
      let next = t.kids.get(x);
      if (!next) {
        next = { n: 0, kids: new Map() };
        t.kids.set(x, next);
      }
      next.n++;
      t = next;
    }
  }
  const pct = (n: number) => (100 * n) / Math.max(1, busy);
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, pct(v)] as [string, number]);
  const tree: string[] = [];
  const minPct = opts.treeMinPct ?? 2;
  const maxDepth = opts.treeDepth ?? 8;
  const walk = (t: TreeNode, depth: number) => {
    for (const [g, k] of [...t.kids].sort((a, b) => b[1].n - a[1].n)) {
      if (pct(k.n) < minPct) continue;
      tree.push(`${"  ".repeat(depth)}${pct(k.n).toFixed(1).padStart(5)} %  ${g}`);
      if (depth + 1 < maxDepth) walk(k, depth + 1);
    }
  };
  walk(root, 0);
  return {
    seconds: (p.endTime - p.startTime) / 1e6,
    samples: p.samples.length,
    busy,
    idlePct: (100 * idle) / Math.max(1, p.samples.length),
    self: sorted(self),
    inclusive: sorted(incl),
    functions: sorted(fn)
      .slice(0, opts.topFunctions ?? 25)
      .map(([k, v]) => {
        const [group = "", name = "", where = ""] = k.split("\t");
        return { group, name, where, pct: v };
      }),
    tree,
  };
}

/** The summary as Markdown (tables and a fenced top-down tree). */
export function summaryMarkdown(s: Summary): string {
  const inc = new Map(s.inclusive);
  const selfOf = (...gs: string[]) => s.self.filter(([g]) => gs.includes(g) || gs.some((x) => x.endsWith("/") && g.startsWith(x))).reduce((a, [, v]) => a + v, 0);
  const short = [
    `the database driver (the \`libsql\` binding; @libsql/client where used) **${selfOf("@libsql/client", "libsql (native binding)").toFixed(1)} %**`,
    `drizzle-orm **${selfOf("drizzle-orm").toFixed(1)} %**`,
    `hono and @hono/* **${selfOf("hono", "@hono/").toFixed(1)} %**`,
    `zod **${selfOf("zod").toFixed(1)} %**`,
    `app code **${selfOf("app code (functions/)").toFixed(1)} %**`,
    `Node internals **${selfOf("node internals").toFixed(1)} %**`,
    `V8 (program, GC) **${selfOf("V8: (program)", "V8: garbage collector").toFixed(1)} %**`,
  ];
  return [
    `In short (self time): ${short.join(", ")}.`,
    "",
    `${s.samples.toLocaleString("en-US")} samples over ${s.seconds.toFixed(1)} s; the server was idle in ${s.idlePct.toFixed(1)} % of them; percentages are of the busy samples.`,
    "",
    "**By package** — self time (own code plus the native and built-in functions it calls) and inclusive time (the package anywhere on the stack):",
    "",
    "| Package | Self % | Inclusive % |",
    "|---|---|---|",
    ...s.self.map(([g, v]) => `| ${g} | ${v.toFixed(1)} | ${(inc.get(g) ?? 0).toFixed(1)} |`),
    "",
    "**Top-down by package** (consecutive frames of one package merged; entries ≥ 2 %):",
    "",
    "```",
    ...s.tree,
    "```",
    "",
    "**Top functions by self time:**",
    "",
    "| Self % | Package | Function | Where |",
    "|---|---|---|---|",
    ...s.functions.map((f) => `| ${f.pct.toFixed(1)} | ${f.group} | \`${f.name.replace(/\|/g, "\\|")}\` | ${f.where} |`),
  ].join("\n");
}
