/**
 * Ref name rules exactly as `git check-ref-format` applies them (refs.c `check_refname_component`),
 * plus what receive-pack adds: pushed names must be full names under `refs/`.
 */

/** Why `name` is not a valid full ref name, or null if it is (check-ref-format without options). */
export function refNameProblem(name: string): string | null {
  if (name.length === 0) return "empty ref name";
  if (name === "@") return "'@' is not a valid ref name";
  if (name.endsWith("/")) return "ends with '/'";
  if (name.endsWith(".")) return "ends with '.'";
  const parts = name.split("/");
  // check-ref-format (without --allow-onelevel) requires at least two components
  if (parts.length < 2) return "must contain at least one '/'";
  for (const part of parts) {
    if (part.length === 0) return "contains an empty component ('//' or a leading '/')";
    if (part.startsWith(".")) return "a component begins with '.'";
    if (part.endsWith(".lock")) return "a component ends with '.lock'";
  }
  if (name.includes("..")) return "contains '..'";
  if (name.includes("@{")) return "contains '@{'";
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return "contains a control character";
    if (" ~^:?*[\\".includes(name[i]!)) return `contains '${name[i]}'`;
  }
  return null;
}

/** True when `name` passes check-ref-format and lives under `refs/` (what a push may create). */
export const isPushableRef = (name: string): boolean => name.startsWith("refs/") && refNameProblem(name) === null;

/** True for a full branch name (`refs/heads/…`). */
export const isBranchRef = (name: string): boolean => name.startsWith("refs/heads/");

/** True for a full tag name (`refs/tags/…`). */
export const isTagRef = (name: string): boolean => name.startsWith("refs/tags/");
