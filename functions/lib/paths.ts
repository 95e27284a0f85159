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

/** Whether the request target (as the client sent it: a path or an absolute URL) names a `.` or `..` segment. */
export const hasDotSegment = (target: string): boolean => DOT_SEGMENT.test(pathOf(target));

/** `url` with its path's repeated slashes collapsed and trailing ones dropped (the root stays `/`), or null when it has neither. */
export function withoutStraySlashes(url: string): string | null {
  const path = pathOf(url);
  if (!path.includes("//") && (path.length <= 1 || !path.endsWith("/"))) return null;
  const clean = path.replace(/\/{2,}/g, "/").replace(/\/+$/, "") || "/";
  const at = url.indexOf(path, url[0] === "/" ? 0 : url.indexOf("://") + 3);
  return url.slice(0, at) + clean + url.slice(at + path.length);
}
