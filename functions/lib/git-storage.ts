/**
 * The git object store of the request (DirectoryObjectStore under DATA_DIR on Node,
 * R2ObjectStore over the GIT_OBJECTS binding on the Worker), set by the app's middleware and read
 * by the routes that touch git data.
 */
import type { Context, MiddlewareHandler } from "hono";
import { type ObjectStore, withStagedPacks } from "../git/storage/object-store.ts";

/** How an entry point makes the object store from the runtime's bindings. */
export type ObjectStoreOf = (env: Record<string, unknown>) => ObjectStore;

type GitVars = { Bindings: Record<string, unknown>; Variables: { gitObjects: ObjectStore } };

/** Middleware: the request's object store (a pack still staged by a create is read where it waits: withStagedPacks). */
export const gitStorage = (of: ObjectStoreOf): MiddlewareHandler<GitVars> => async (c, next) => {
  c.set("gitObjects", withStagedPacks(of(c.env ?? {})));
  await next();
};

/** The request's object store (see `gitStorage`). */
export const objectsOf = (c: Context): ObjectStore => (c as unknown as Context<GitVars>).get("gitObjects");
