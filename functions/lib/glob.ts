/**
 * Globs with gobwas/glob's syntax (Gitea's modules/glob and webhook branch filters): `*` = any run
 * of non-separators, `**` = any run, `?` = one non-separator, `[abc]` / `[a-z]` / `[!abc]` classes,
 * `{a,b}` alternatives (nested), `\x` escapes. Without a separator (`separator: false`, a webhook's
 * branch filter) `*` and `?` cross `/` too.
 *
 * Matching runs the pattern as a state machine over the input's characters, every live state at
 * once (Thompson's construction): time grows with pattern × input, never exponentially — a
 * backtracking regular expression let a filter like `*a*a*a*a*a*a*a*a*a*a*c` hold the event loop
 * for minutes on a 60-character branch name. Patterns are user input (branch filters, a
 * template's `.gitea/template`), so that matters.
 */

/** A compiled glob. */
export interface Glob {
  test(input: string): boolean;
}

type Pred = (c: string) => boolean;
type Item = { kind: "one"; test: Pred } | { kind: "star"; test: Pred } | { kind: "alt"; alts: Item[][] };

/** Parses a pattern into items; null when invalid (an unclosed `[` or `{`, a trailing `\`, a reversed range). */
function parse(pattern: string, separator: boolean): Item[] | null {
  const chars = Array.from(pattern);
  let pos = 0;
  const notSep: Pred = separator ? (c) => c !== "/" : () => true;
  const any: Pred = () => true;

  const cls = (): Pred | null => {
    let negate = false;
    if (chars[pos] === "!") {
      pos++;
      negate = true;
    }
    const singles = new Set<string>();
    const ranges: [number, number][] = [];
    const members: string[] = [];
    while (pos < chars.length) {
      const c = chars[pos++]!;
      if (c === "]") {
        // Ranges: a member, `-`, a member (a `-` first or last stands for itself).
        for (let i = 0; i < members.length; i++) {
          const m = members[i]!;
          if (members[i + 1] === "-" && i + 2 < members.length && !escaped.has(i + 1)) {
            const lo = m.codePointAt(0)!;
            const hi = members[i + 2]!.codePointAt(0)!;
            if (lo > hi) return null;
            ranges.push([lo, hi]);
            i += 2;
          } else singles.add(m);
        }
        return (x) => {
          const cp = x.codePointAt(0)!;
          const hit = singles.has(x) || ranges.some(([lo, hi]) => cp >= lo && cp <= hi);
          return hit !== negate;
        };
      }
      if (c === "\\") {
        if (pos >= chars.length) return null;
        escaped.add(members.length);
        members.push(chars[pos++]!);
      } else members.push(c);
    }
    return null; // unterminated class
  };
  let escaped = new Set<number>();

  const seq = (sub: boolean): Item[] | null => {
    const items: Item[] = [];
    let alts: Item[][] | null = sub ? [] : null;
    while (pos < chars.length) {
      const c = chars[pos++]!;
      if (sub && c === "}") {
        alts!.push(items.splice(0));
        return [{ kind: "alt", alts: alts! }];
      }
      if (sub && c === ",") {
        alts!.push(items.splice(0));
        continue;
      }
      switch (c) {
        case "*":
          if (chars[pos] === "*") {
            pos++;
            items.push({ kind: "star", test: any });
          } else items.push({ kind: "star", test: notSep });
          break;
        case "?":
          items.push({ kind: "one", test: notSep });
          break;
        case "[": {
          escaped = new Set<number>();
          const p = cls();
          if (!p) return null;
          items.push({ kind: "one", test: p });
          break;
        }
        case "{": {
          const group = seq(true);
          if (!group) return null;
          items.push(...group);
          break;
        }
        case "\\": {
          if (pos >= chars.length) return null; // no character to escape
          const lit = chars[pos++]!;
          items.push({ kind: "one", test: (x) => x === lit });
          break;
        }
        default:
          items.push({ kind: "one", test: (x) => x === c });
      }
    }
    if (alts) return null; // an alternative never closed
    return items;
  };
  return seq(false);
}

interface State {
  test?: Pred;
  next?: number;
  split?: number[];
}

/** Compiles a glob (see the module's doc); null when the pattern is invalid (Gitea logs and skips it). */
export function compileGlob(pattern: string, opts: { separator?: boolean } = {}): Glob | null {
  const items = parse(pattern, opts.separator !== false);
  if (!items) return null;
  const states: State[] = [{}]; // 0: the match state
  const add = (s: State) => states.push(s) - 1;
  const build = (seq: Item[], next: number): number => {
    let cur = next;
    for (let i = seq.length - 1; i >= 0; i--) {
      const it = seq[i]!;
      if (it.kind === "one") cur = add({ test: it.test, next: cur });
      else if (it.kind === "star") {
        const loop = add({ split: [] });
        states[loop]!.split = [add({ test: it.test, next: loop }), cur];
        cur = loop;
      } else {
        const after = cur;
        cur = add({ split: it.alts.map((a) => build(a, after)) });
      }
    }
    return cur;
  };
  const start = build(items, 0);
  const seen = new Uint32Array(states.length);
  let generation = 0;
  /** The states reachable from `from` without reading a character. */
  const closure = (from: readonly number[]): number[] => {
    generation++;
    const out: number[] = [];
    const stack = [...from];
    while (stack.length) {
      const s = stack.pop()!;
      if (seen[s] === generation) continue;
      seen[s] = generation;
      const st = states[s]!;
      if (st.split) stack.push(...st.split);
      else out.push(s);
    }
    return out;
  };
  return {
    test(input: string): boolean {
      let live = closure([start]);
      for (const c of input) {
        const next: number[] = [];
        for (const s of live) {
          const st = states[s]!;
          if (st.test?.(c)) next.push(st.next!);
        }
        if (!next.length) return false;
        live = closure(next);
      }
      return live.includes(0);
    },
  };
}
