/**
 * A Worker for the workerd tests: the git engine's smart HTTP handlers over the R2 bucket binding
 * `GIT_OBJECTS` (miniflare's local R2) and an in-memory RefStore held by the isolate.
 * `/<repoId>.git/…` serves git; `/__files/<repoId>[/<name>]` lists or returns stored files (so the
 * test can check what R2 holds); `/__r2ops` counts R2 calls by method since the last call (so the
 * benchmark can report storage operations per push and clone); header `x-git-limits` (JSON)
 * overrides limits per request.
 */
import { serveGit } from "../../../functions/git/http.ts";
import type { GitLimits } from "../../../functions/git/protocol/common.ts";
import { MemoryRefStore } from "../../../functions/git/storage/memory-ref-store.ts";
import { type R2BucketLike, R2ObjectStore } from "../../../functions/git/storage/r2-store.ts";

const refs = new MemoryRefStore();
let ops: Record<string, number> = {};

/** The bucket with every call counted by method. */
function counted(bucket: R2BucketLike): R2BucketLike {
  return new Proxy(bucket, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        ops[String(prop)] = (ops[String(prop)] ?? 0) + 1;
        const r = v.apply(target, args);
        // parts of a multipart upload are R2 calls too
        if (prop === "createMultipartUpload") {
          const count = (k: string) => {
            ops[k] = (ops[k] ?? 0) + 1;
          };
          return (r as Promise<Awaited<ReturnType<R2BucketLike["createMultipartUpload"]>>>).then((u) => ({
            uploadPart: (...a: Parameters<typeof u.uploadPart>) => {
              count("uploadPart");
              return u.uploadPart(...a);
            },
            complete: (...a: Parameters<typeof u.complete>) => {
              count("complete");
              return u.complete(...a);
            },
            abort: () => u.abort(),
          }));
        }
        return r;
      };
    },
  });
}

export default {
  async fetch(req: Request, env: { GIT_OBJECTS: R2BucketLike }): Promise<Response> {
    const objects = new R2ObjectStore(counted(env.GIT_OBJECTS));
    const url = new URL(req.url);
    if (url.pathname === "/__r2ops") {
      const out = ops;
      ops = {};
      return Response.json(out);
    }
    const files = /^\/__files\/([A-Za-z0-9_-]+)(?:\/(.+))?$/.exec(url.pathname);
    if (files) {
      if (!files[2]) return Response.json(await objects.list(files[1]!));
      const bytes = await objects.get(files[1]!, files[2]);
      return bytes ? new Response(bytes as Uint8Array<ArrayBuffer>) : new Response("missing", { status: 404 });
    }
    const m = /^\/([A-Za-z0-9_-]+?)(?:\.git)?(\/.*)$/.exec(url.pathname);
    if (!m) return new Response("Not found\n", { status: 404 });
    const limits = JSON.parse(req.headers.get("x-git-limits") ?? "{}") as Partial<GitLimits>;
    return serveGit({ repoId: m[1]!, objects, refs, limits }, req, m[2]!);
  },
};
