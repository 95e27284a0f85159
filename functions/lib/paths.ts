/**
 * Request paths as Gitea's router takes them (routers/common/middleware.go, stripSlashesMiddleware):
 * repeated slashes collapse and trailing ones go (`/api/v1//version/` is `/api/v1/version`), and a
 * `.` or `..` segment is never resolved — chi routes the escaped path as it came. The URL parsers in
 * front of the app (Node's adapter, workerd) resolve dot segments, raw or escaped as `%2e`, so
 * `DELETE /api/v1/teams/../repos/o/r` would reach `DELETE /api/v1/repos/o/r`. Here a request whose
 * path names one is answered 404 before routing (Gitea routes it literally and finds nothing, or —
 * inside a contents path — cleans it; we refuse it: docs/api.md).
 */

/** A `.` or `..` segment, raw or escaped (`%2e`, any case), between `/` or `\` (WHATWG reads `\` as `/`). */
const DOT_SEGMENT = /(?:^|[/\\])(?:\.|%2e){1,2}(?=[/\\]|$)/i;

/** The path of a request target or URL (no scheme, host, query or fragment). */
function pathOf(target: string): string {
  let start = 0;
  if (target[0] !== "/") {
    const scheme = target.indexOf("://");
    start = scheme < 0 ? 0 : target.indexOf("/", scheme + 3);
    if (start < 0) return "/";
  }
  let end = target.length;
  for (let i = start; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 0x3f || c === 0x23) {
      end = i;
      break;
    }
  }
  return target.slice(start, end);
}

/**
 * A single `.` as the whole file path of the contents routes: Gitea's documented way to name the
 * root directory (`contents-ext/.`: "pass a single dot"), which a Go client sends as written.
 */
const CONTENTS_ROOT_DOT = /^(\/api\/v1\/repos\/[^/\\]+\/[^/\\]+\/contents(?:-ext)?)\/(?:\.|%2e)\/*$/i;

/**
 * Whether the request target (as the client sent it: a path or an absolute URL) names a `.` or `..`
 * segment — but for the contents routes' root named `.` (the URL parsers resolve it to the root).
 */
export const hasDotSegment = (target: string): boolean => {
  const path = pathOf(target);
  return DOT_SEGMENT.test(CONTENTS_ROOT_DOT.exec(path)?.[1] ?? path);
};

/** `url` with its path's repeated slashes collapsed and trailing ones dropped (the root stays `/`), or null when it has neither. */
export function withoutStraySlashes(url: string): string | null {
  const path = pathOf(url);
  if (!path.includes("//") && (path.length <= 1 || !path.endsWith("/"))) return null;
  const clean = path.replace(/\/{2,}/g, "/").replace(/\/+$/, "") || "/";
  const at = url.indexOf(path, url[0] === "/" ? 0 : url.indexOf("://") + 3);
  return url.slice(0, at) + clean + url.slice(at + path.length);
}

/**
 * The methods served at a path, from the app's route table (Hono patterns: `:name` is one segment,
 * `:name{regex}` its regex): a path some route serves under another method is answered 405 with
 * `Allow`, as Gitea's router (chi) does, instead of 404. The answer depends on the path's shape only.
 */
export function servedMethods(routes: readonly { method: string; path: string }[], prefix: string): (path: string) => string[] {
  const segment = (s: string) => {
    if (!s.startsWith(":")) return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const brace = s.indexOf("{");
    return brace < 0 ? "[^/]+" : `(?:${s.slice(brace + 1, -1)})`;
  };
  const table = routes.map((r) => ({ method: r.method, re: new RegExp(`^${prefix}${r.path.split("/").map(segment).join("/")}$`) }));
  return (path) => {
    const methods = new Set(table.filter((t) => t.re.test(path)).map((t) => t.method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods];
  };
}
