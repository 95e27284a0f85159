/**
 * The git engine's one error type. `code` lets callers map failures without parsing messages
 * (e.g. `conflict` → 409 in the contents API, `bad-request` → 400 on the smart HTTP routes).
 */
export type GitErrorCode =
  | "bad-request" // malformed protocol input from the client
  | "corrupt" // a pack or object that does not parse or does not hash
  | "missing" // an object or base that should exist does not
  | "too-large" // a configured limit was exceeded
  | "not-found" // a ref, path or object the caller named does not exist
  | "conflict" // a compare-and-swap expectation failed
  | "invalid" // an argument that breaks a rule (ref name, path)
  | "aborted"; // the request's client went away while its work ran (git/pace.ts)

/** A failure of the git engine with a machine-readable code. */
export class GitError extends Error {
  readonly code: GitErrorCode;
  constructor(code: GitErrorCode, message: string) {
    super(message);
    this.name = "GitError";
    this.code = code;
  }
}

/** Throws a `corrupt` GitError when `cond` is false (pack parsing). */
export function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new GitError("corrupt", message);
}

/**
 * What a failure says to a git client (an `unpack` status, the error band): the engine's own
 * messages as they are; a system error of the storage (a directory gone under a push, EACCES, a
 * full disk) by its code only — its message holds the server's file paths and process id, which
 * go to the log instead.
 */
export function clientReason(e: unknown): string {
  if (e instanceof GitError) return e.message;
  const sys = e as { code?: unknown; path?: unknown; syscall?: unknown } | null;
  if (typeof sys?.code === "string" && (sys.path !== undefined || sys.syscall !== undefined)) {
    console.error("git: object storage failed:", e);
    return `object storage failed (${sys.code})`;
  }
  return e instanceof Error ? e.message : String(e);
}
