/**
 * git's wildmatch (wildmatch.c): shell globs over bytes as git matches `.gitattributes` patterns,
 * `git describe --match` and ref patterns. `*` and `?` do not cross `/` with `pathname`; `**`
 * between slashes (or at an end) crosses directories; `[...]` classes with ranges, `!`/`^`
 * negation and the POSIX `[:name:]` classes in git's ASCII ctype; `\` escapes. Bytes past ASCII
 * match only themselves. The recursion gives up early as git's does (ABORT_ALL /
 * ABORT_TO_STARSTAR), so a pattern of many stars stays polynomial.
 */

const MATCH = 0;
const NOMATCH = 1;
const ABORT_ALL = -1;
const ABORT_TO_STARSTAR = -2;

const isGlobSpecial = (c: number) => c === 0x2a || c === 0x3f || c === 0x5b || c === 0x5c;
const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const isLower = (c: number) => c >= 0x61 && c <= 0x7a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isAlpha = (c: number) => isUpper(c) || isLower(c);
const lower = (c: number) => (isUpper(c) ? c + 32 : c);

/** git's ctype classes (sane_ctype: ASCII only; `space` is tab, LF, CR and space). */
const CLASSES: Record<string, (c: number) => boolean> = {
  alnum: (c) => isAlpha(c) || isDigit(c),
  alpha: isAlpha,
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: isDigit,
  graph: (c) => c > 0x20 && c < 0x7f,
  lower: isLower,
  print: (c) => c >= 0x20 && c < 0x7f,
  punct: (c) => c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c),
  space: (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d,
  upper: isUpper,
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

// p and t index NUL-terminated copies, as the C code reads past the end to find the terminator
function dowild(p: Uint8Array, pi: number, t: Uint8Array, ti: number, pathname: boolean, fold: boolean): number {
  const start = pi;
  for (; p[pi] !== 0; ti++, pi++) {
    let pCh = p[pi]!;
    let tCh = t[ti]!;
    if (tCh === 0 && pCh !== 0x2a) return ABORT_ALL;
    if (fold) {
      tCh = lower(tCh);
      pCh = lower(pCh);
    }
    switch (pCh) {
      case 0x5c: // backslash: the next byte literally (not folded: git folds before the switch)
        pCh = p[++pi]!;
        if (tCh !== pCh) return NOMATCH;
        continue;
      case 0x3f: // ?
        if (pathname && tCh === 0x2f) return NOMATCH;
        continue;
      case 0x2a: {
        let matchSlash: boolean;
        if (p[++pi] === 0x2a) {
          const prev = pi - 2;
          while (p[++pi] === 0x2a) {}
          if (!pathname) matchSlash = true;
          else if ((prev < start || p[prev] === 0x2f) && (p[pi] === 0 || p[pi] === 0x2f || (p[pi] === 0x5c && p[pi + 1] === 0x2f))) {
            // `**/` may match nothing: try the rest of the pattern here first
            if (p[pi] === 0x2f && dowild(p, pi + 1, t, ti, pathname, fold) === MATCH) return MATCH;
            matchSlash = true;
          } else matchSlash = false;
        } else matchSlash = !pathname;
        if (p[pi] === 0) {
          if (!matchSlash && t.indexOf(0x2f, ti) >= 0 && t.indexOf(0x2f, ti) < t.length - 1) return NOMATCH;
          return MATCH;
        }
        if (!matchSlash && p[pi] === 0x2f) {
          const slash = t.indexOf(0x2f, ti);
          if (slash < 0 || slash >= t.length - 1) return NOMATCH;
          ti = slash;
          break; // the slash is consumed by the loop
        }
        for (;;) {
          if (tCh === 0) break;
          if (!isGlobSpecial(p[pi]!)) {
            // skip ahead to the next occurrence of the literal that follows the star
            pCh = fold ? lower(p[pi]!) : p[pi]!;
            for (;;) {
              tCh = t[ti]!;
              if (tCh === 0 || (!matchSlash && tCh === 0x2f)) break;
              if (fold) tCh = lower(tCh);
              if (tCh === pCh) break;
              ti++;
            }
            if (tCh !== pCh) return NOMATCH;
          }
          const matched = dowild(p, pi, t, ti, pathname, fold);
          if (matched !== NOMATCH) {
            if (!matchSlash || matched !== ABORT_TO_STARSTAR) return matched;
          } else if (!matchSlash && tCh === 0x2f) return ABORT_TO_STARSTAR;
          tCh = t[++ti]!;
        }
        return ABORT_ALL;
      }
      case 0x5b: {
        pCh = p[++pi]!;
        if (pCh === 0x5e) pCh = 0x21;
        const negated = pCh === 0x21;
        if (negated) pCh = p[++pi]!;
        let prevCh = 0;
        let matched = false;
        do {
          if (!pCh) return ABORT_ALL;
          if (pCh === 0x5c) {
            pCh = p[++pi]!;
            if (!pCh) return ABORT_ALL;
            if (tCh === pCh) matched = true;
          } else if (pCh === 0x2d && prevCh && p[pi + 1] && p[pi + 1] !== 0x5d) {
            pCh = p[++pi]!;
            if (pCh === 0x5c) {
              pCh = p[++pi]!;
              if (!pCh) return ABORT_ALL;
            }
            if (tCh <= pCh && tCh >= prevCh) matched = true;
            else if (fold && isLower(tCh) && tCh - 32 <= pCh && tCh - 32 >= prevCh) matched = true;
            pCh = 0; // so that prevCh becomes 0
          } else if (pCh === 0x5b && p[pi + 1] === 0x3a) {
            pi += 2;
            const s = pi;
            while (p[pi] && p[pi] !== 0x5d) pi++;
            pCh = p[pi]!;
            if (!pCh) return ABORT_ALL;
            if (pi - s - 1 < 0 || p[pi - 1] !== 0x3a) {
              // no `:]`: a plain `[` in the set
              pi = s - 2;
              pCh = 0x5b;
              if (tCh === pCh) matched = true;
              prevCh = pCh;
              pCh = p[++pi]!;
              continue;
            }
            const name = String.fromCharCode(...p.subarray(s, pi - 1));
            const test = Object.hasOwn(CLASSES, name) ? CLASSES[name] : undefined;
            if (!test) return ABORT_ALL; // malformed [:class:]
            if (test(tCh) || (fold && name === "upper" && isLower(tCh))) matched = true;
            pCh = 0;
          } else if (tCh === pCh) matched = true;
          prevCh = pCh;
          pCh = p[++pi]!;
        } while (pCh !== 0x5d);
        if (matched === negated || (pathname && tCh === 0x2f)) return NOMATCH;
        continue;
      }
      default:
        if (tCh !== pCh) return NOMATCH;
        continue;
    }
  }
  return t[ti] !== 0 ? NOMATCH : MATCH;
}

const terminated = (b: Uint8Array) => {
  const out = new Uint8Array(b.length + 1);
  out.set(b);
  return out;
};

/**
 * True when `text` matches `pattern` as git's `wildmatch(pattern, text, flags)` returns WM_MATCH.
 * `pathname` = WM_PATHNAME (wildcards stop at `/`), `casefold` = WM_CASEFOLD.
 */
export function wildmatch(pattern: Uint8Array, text: Uint8Array, opts: { pathname?: boolean; casefold?: boolean } = {}): boolean {
  // C strings: both end at their first NUL
  const p = pattern.indexOf(0) >= 0 ? pattern.subarray(0, pattern.indexOf(0)) : pattern;
  const t = text.indexOf(0) >= 0 ? text.subarray(0, text.indexOf(0)) : text;
  return dowild(terminated(p), 0, terminated(t), 0, opts.pathname ?? false, opts.casefold ?? false) === MATCH;
}
