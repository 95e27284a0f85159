/**
 * Git's object model: the four object types, their pack type numbers, and the object id
 * (SHA-1 of `"<type> <size>\0"` followed by the content).
 */
import { createHash } from "node:crypto";
import { utf8 } from "../bytes.ts";

export type ObjectType = "commit" | "tree" | "blob" | "tag";

/** An object's type and full (inflated, delta-resolved) content. */
export interface GitObject {
  type: ObjectType;
  data: Uint8Array;
}

/** Pack type numbers of the four object types (gitformat-pack). */
export const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
/** Object type of a pack type number 1–4. */
export const TYPE_NAME: readonly (ObjectType | undefined)[] = [undefined, "commit", "tree", "blob", "tag"];

/** The loose-object header `"<type> <size>\0"` that prefixes the hashed content. */
export const objectHeader = (type: ObjectType, size: number): Uint8Array => utf8(`${type} ${size}\0`);

/** The object id of `data` as `type`. */
export function hashObject(type: ObjectType, data: Uint8Array): string {
  // the header is ASCII: hashing it as a latin1 string skips a TextEncoder call per object
  return createHash("sha1").update(`${type} ${data.length}\0`, "latin1").update(data).digest("hex");
}

/** The object id of `data` as `type`, as 20 raw bytes. */
export function hashObjectBytes(type: ObjectType, data: Uint8Array): Uint8Array {
  return createHash("sha1").update(`${type} ${data.length}\0`, "latin1").update(data).digest();
}
