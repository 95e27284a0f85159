/**
 * File contents of a repository (Gitea routers/api/v1/repo/file.go): read an entry or a directory,
 * the raw bytes of a file, and create / update / delete files, each write one commit.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { apiRoute, createRouter, ctxOf, type AppEnv } from "../lib/context.ts";
import { errorResponses } from "../lib/errors.ts";
import { objectsOf } from "../lib/git-storage.ts";
import { jsonBody, jsonResponse, pathParam, withSlashes } from "../lib/openapi.ts";
import { textParam } from "../lib/query.ts";
import { notModifiedSince, rangeAnswer, sizedStream } from "../lib/ranges.ts";
import { changeFiles, contentsWriterGuard, getContents, getContentsExt, getFileContents, getRawFile, parseIncludes, type FileOperation, type RawAt } from "../services/contents.ts";
import { codeReaderGuard } from "../services/repos.ts";
import {
  ChangeFilesOptionsSchema,
  ContentsExtResponseSchema,
  ContentsResponseSchema,
  CreateFileOptionsSchema,
  DeleteFileOptionsSchema,
  FileDeleteResponseSchema,
  FileResponseSchema,
  FilesResponseSchema,
  GetFilesOptionsSchema,
  UpdateFileOptionsSchema,
} from "../wire/contents.ts";

export const contents = createRouter();

const ownerRepo = { owner: pathParam("owner", "owner of the repo"), repo: pathParam("repo", "name of the repo") };
const withPath = (description: string) => z.object({ ...ownerRepo, filepath: pathParam("filepath", description) });
const refQuery = z.object({ ref: textParam("ref", "The name of the commit/branch/tag. Default to the repository’s default branch.") });
const read = { scopes: ["repository"] } as const;
const write = { scopes: ["repository"], signIn: true } as const;
const WRITE_ERRORS = errorResponses(403, 404, 409, 413, 422, 423);

const repoGetContentsList = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/contents",
  operationId: "repoGetContentsList",
  tags: ["repository"],
  summary: "Gets the metadata of all the entries of the root dir.",
  auth: read,
  request: { params: z.object(ownerRepo), query: refQuery },
  responses: { 200: jsonResponse(z.array(ContentsResponseSchema), "ContentsListResponse"), ...errorResponses(403, 404) },
});
contents.openapi(repoGetContentsList, async (c) => {
  const p = c.req.valid("param");
  return c.json((await getContents(ctxOf(c), objectsOf(c), p.owner, p.repo, "", c.req.valid("query").ref)) as never, 200);
});

// The metadata and contents of several files at once (Gitea 1.25). POST is a read, but as a POST
// Gitea's token scopes ask write on the repository; GET takes the same body JSON-encoded in `body`.
const fileContentsSummary = "Get the metadata and contents of requested files";
const repoGetFileContents = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/file-contents",
  operationId: "repoGetFileContents",
  tags: ["repository"],
  summary: fileContentsSummary,
  description: "See the POST method. This GET method supports using JSON encoded request body in query parameter.",
  auth: read,
  request: {
    params: z.object(ownerRepo),
    // required in Gitea's document, but only unmarshalled: a missing one is its 400, not a binding 422
    query: refQuery.extend({ body: z.string().optional().openapi({ param: { name: "body", in: "query", required: true }, description: 'The JSON encoded body (see the POST request): {"files": ["filename1", "filename2"]}' }) }),
  },
  responses: { 200: jsonResponse(z.array(ContentsResponseSchema), "ContentsListResponse"), ...errorResponses(400, 403, 404) },
});
contents.openapi(repoGetFileContents, async (c) => {
  const p = c.req.valid("param");
  const q = c.req.valid("query");
  const parsed = GetFilesOptionsSchema.safeParse((() => {
    try {
      return JSON.parse(q.body ?? "");
    } catch {
      return undefined;
    }
  })());
  return c.json((await getFileContents(ctxOf(c), objectsOf(c), p.owner, p.repo, parsed.success ? (parsed.data.files ?? []) : null, q.ref)) as never, 200);
});

const repoGetFileContentsPost = apiRoute({
  method: "post",
  path: "/repos/{owner}/{repo}/file-contents",
  operationId: "repoGetFileContentsPost",
  tags: ["repository"],
  summary: fileContentsSummary,
  description:
    "Uses automatic pagination based on default page size and max response size and returns the maximum allowed number of files. Files which could not be retrieved are null. Files which are too large are being returned with `encoding == null`, `content == null` and `size > 0`, they can be requested separately by using the `download_url`.",
  auth: read,
  guard: codeReaderGuard,
  request: { params: z.object(ownerRepo), query: refQuery, ...jsonBody(GetFilesOptionsSchema) },
  responses: { 200: jsonResponse(z.array(ContentsResponseSchema), "ContentsListResponse"), ...errorResponses(403, 404, 422) },
});
contents.openapi(repoGetFileContentsPost, async (c) => {
  const p = c.req.valid("param");
  return c.json((await getFileContents(ctxOf(c), objectsOf(c), p.owner, p.repo, c.req.valid("json").files ?? [], c.req.valid("query").ref, true)) as never, 200);
});

const repoGetContents = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/contents/{filepath}",
  operationId: "repoGetContents",
  tags: ["repository"],
  summary: "Gets the metadata and contents (if a file) of an entry in a repository, or a list of entries if a dir.",
  auth: read,
  request: { params: withPath("path of the dir, file, symlink or submodule in the repo"), query: refQuery },
  responses: { 200: jsonResponse(z.union([ContentsResponseSchema, z.array(ContentsResponseSchema)]), "ContentsResponse"), ...errorResponses(403, 404) },
});
withSlashes(repoGetContents, "filepath", (r) =>
  contents.openapi(r, async (c) => {
    const p = c.req.valid("param");
    return c.json((await getContents(ctxOf(c), objectsOf(c), p.owner, p.repo, p.filepath, c.req.valid("query").ref)) as never, 200);
  }),
);

const repoGetContentsExt = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/contents-ext/{filepath}",
  operationId: "repoGetContentsExt",
  tags: ["repository"],
  summary: 'The extended "contents" API, to get file metadata and/or content, or list a directory.',
  description:
    'It guarantees that only one of the response fields is set if the request succeeds. Users can pass "includes=file_content" or "includes=lfs_metadata" to retrieve more fields. "includes=file_content" only works for single file, if you need to retrieve file contents in batch, use "file-contents" API after listing the directory.',
  auth: read,
  request: {
    params: withPath('path of the dir, file, symlink or submodule in the repo. Swagger requires path parameter to be "required", you can leave it empty or pass a single dot (".") to get the root directory.'),
    query: refQuery.extend({
      includes: textParam(
        "includes",
        'By default this API\'s response only contains file\'s metadata. Use comma-separated "includes" options to retrieve more fields. Option "file_content" will try to retrieve the file content, "lfs_metadata" will try to retrieve LFS metadata, "commit_metadata" will try to retrieve commit metadata, and "commit_message" will try to retrieve commit message.',
      ),
    }),
  },
  responses: { 200: jsonResponse(ContentsExtResponseSchema, "ContentsExtResponse"), ...errorResponses(400, 403, 404) },
});
withSlashes(repoGetContentsExt, "filepath", (r) =>
  contents.openapi(r, async (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    return c.json((await getContentsExt(ctxOf(c), objectsOf(c), p.owner, p.repo, p.filepath, q.ref, parseIncludes(q.includes))) as never, 200);
  }),
);
// The root, as Gitea's `contents-ext/*` takes an empty path: `contents-ext/`, `contents-ext` and
// `contents-ext/.` (the URL parsers resolve the dot; lib/paths.ts lets it through) reach it.
contents.openapi({ ...repoGetContentsExt, path: "/repos/{owner}/{repo}/contents-ext", request: { ...repoGetContentsExt.request, params: z.object(ownerRepo) }, hide: true }, async (c) => {
  const p = c.req.valid("param");
  const q = c.req.valid("query");
  return c.json((await getContentsExt(ctxOf(c), objectsOf(c), p.owner, p.repo, "", q.ref, parseIncludes(q.includes))) as never, 200);
});
/** Gitea's StaticCacheTime (6 h), the max-age of served files in production. */
const STATIC_CACHE_SECONDS = 6 * 60 * 60;

/** How much of a file `sniffContentType` looks at. */
const SNIFF_BYTES = 4096;

/**
 * Gitea's typesniffer + ServeUserContentByReader: the Content-Type of served bytes, from `data` —
 * the file, or its first SNIFF_BYTES when it is `size` bytes long.
 */
export function sniffContentType(data: Uint8Array, size = data.length): string {
  const head = data.subarray(0, 1024);
  const starts = (sig: number[], at = 0) => sig.every((b, i) => head[at + i] === b);
  const ascii = (s: string, at = 0) => starts([...s].map((ch) => ch.charCodeAt(0)), at);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (ascii("GIF87a") || ascii("GIF89a")) return "image/gif";
  if (ascii("RIFF") && ascii("WEBP", 8)) return "image/webp";
  if (ascii("BM")) return "image/bmp";
  if (starts([0x00, 0x00, 0x01, 0x00])) return "image/x-icon";
  if (ascii("%PDF-")) return "application/pdf";
  if (ascii("OggS")) return "application/ogg";
  if (ascii("ID3")) return "audio/mpeg";
  if (ascii("RIFF") && ascii("WAVE", 8)) return "audio/wave";
  if (ascii("ftyp", 4)) return "video/mp4";
  if (starts([0x1a, 0x45, 0xdf, 0xa3])) return "video/webm";
  if (starts([0xfe, 0xff])) return "text/plain; charset=utf-16be";
  if (starts([0xff, 0xfe])) return "text/plain; charset=utf-16le";
  // http.DetectContentType: a byte no text holds makes it binary.
  for (const b of head.subarray(0, 512)) if (b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f)) return "application/octet-stream";
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(new TextDecoder().decode(head))) return "image/svg+xml";
  // Text is never served as HTML; its charset as detected (UTF-8 when it decodes as such).
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(size > SNIFF_BYTES ? data.subarray(0, SNIFF_BYTES) : data);
    return "text/plain; charset=utf-8";
  } catch {
    // A multi-byte character cut at the sample's end is still UTF-8.
    return size > SNIFF_BYTES && isUtf8Prefix(data.subarray(0, SNIFF_BYTES)) ? "text/plain; charset=utf-8" : "text/plain; charset=iso-8859-1";
  }
}

function isUtf8Prefix(b: Uint8Array): boolean {
  for (let cut = 1; cut <= 3; cut++) {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(b.subarray(0, b.length - cut));
      return true;
    } catch {}
  }
  return false;
}

/** Go's mime.FormatMediaType for `inline; filename=…` (Gitea's EncodeContentDisposition). */
export function contentDisposition(name: string, kind: "inline" | "attachment" = "inline"): string {
  const safe = [...name].map((ch) => ((ch < " " || ch > "~") && ch !== "\t" ? "_" : ch)).join("");
  const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(safe);
  const plain = `${kind}; filename=${token ? safe : `"${safe.replace(/(["\\])/g, "\\$1")}"`}`;
  if (safe === name) return plain;
  const encoded = [...new TextEncoder().encode(name)].map((b) => (/[!#$&+\-.^_`|~0-9A-Za-z]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`)).join("");
  return `${plain}; filename*=utf-8''${encoded}`;
}

/**
 * The raw answer with Gitea's ServeBlob headers (sandboxing CSP, nosniff, inline disposition,
 * caching): the API's raw and media routes and the web's `/{owner}/{repo}/raw/…` paths.
 */
export async function serveRaw(c: Context<AppEnv>, owner: string, repo: string, at: RawAt) {
  const ctx = ctxOf(c);
  const blob = await getRawFile(ctx, objectsOf(c), owner, repo, at, c.req.header("If-None-Match"));
  const headers: Record<string, string> = {
    ETag: `"${blob.oid}"`,
    "X-Gitea-Object-Type": blob.objectType,
    "Cache-Control":
      ctx.settings.runMode === "prod"
        ? `${blob.isPublic ? "public" : "private"}, max-age=${STATIC_CACHE_SECONDS}, no-transform`
        : `max-age=0, ${blob.isPublic ? "public" : "private"}, must-revalidate, no-transform`,
  };
  if (blob.lastModified) headers["Last-Modified"] = blob.lastModified.toUTCString();
  const src = blob.body;
  if (!src) return c.body(null, 304, headers);
  // Go's checkIfModifiedSince (http.ServeContent): without If-None-Match, a file not changed since → 304
  if (!c.req.header("If-None-Match") && notModifiedSince(c.req.header("If-Modified-Since"), blob.lastModified)) return c.body(null, 304, headers);
  const type = sniffContentType(src.data ?? (await bytesOf(src.range(0, Math.min(src.size, SNIFF_BYTES)))), src.size);
  Object.assign(headers, {
    "Content-Type": type,
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": type === "application/pdf" ? "default-src 'none'; style-src 'unsafe-inline'" : "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    "Content-Disposition": contentDisposition(blob.name),
    "Access-Control-Expose-Headers": "Content-Disposition",
    "Content-Length": String(src.size),
    "Accept-Ranges": "bytes",
  });
  // A HEAD's answer has no body: none is made (a streamed one would open storage and inflate).
  const head = c.req.method === "HEAD";
  // byte ranges (a resumed download) as Gitea's http.ServeContent answers them
  const body = src.data ?? { size: src.size, slice: (start: number, length: number) => (head ? new Uint8Array(0) : src.range(start, length)) };
  const part = rangeAnswer(body, { range: c.req.header("Range"), ifRange: c.req.header("If-Range") }, { etag: headers.ETag!, lastModified: blob.lastModified, contentType: type });
  if (part) return head ? c.body(null, part.status, { ...headers, ...part.headers }) : c.body(part.body as Uint8Array<ArrayBuffer>, part.status, { ...headers, ...part.headers });
  if (head) return c.body(null, 200, headers);
  return c.body((src.data ?? sizedStream(src.range(0, src.size), src.size)) as Uint8Array<ArrayBuffer>, 200, headers);
}

/** All of a (short) stream's bytes. */
async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The API's raw and media routes: `{ref}/{filepath}` or `?ref=`, guessed as Gitea's RepoRefForAPI. */
const rawOfApi = (c: Context<AppEnv>) => {
  const p = c.req.param() as { owner: string; repo: string; filepath: string };
  return serveRaw(c, p.owner, p.repo, { type: "legacy", path: p.filepath, ref: c.req.query("ref") });
};

const rawResponses = {
  200: { description: "Returns raw file content.", content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } } },
  206: { description: "the byte ranges the Range header asked for" },
  304: { description: "the file is unchanged (If-None-Match matched its ETag)" },
  416: { description: "no range of the Range header lies in the file, or the header is malformed" },
  ...errorResponses(403, 404),
};
const rawPath = 'path of the file to get, it should be "{ref}/{filepath}". If there is no ref could be inferred, it will be treated as the default branch';
const rawRef = z.object({ ref: textParam("ref", "The name of the commit/branch/tag. Default to the repository’s default branch") });

const repoGetRawFile = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/raw/{filepath}",
  operationId: "repoGetRawFile",
  tags: ["repository"],
  summary: "Get a file from a repository",
  auth: read,
  request: { params: withPath(rawPath), query: rawRef },
  responses: rawResponses,
});
withSlashes(repoGetRawFile, "filepath", (r) => contents.openapi(r, (async (c: Context<AppEnv>) => rawOfApi(c)) as never));

const repoGetRawFileOrLFS = apiRoute({
  method: "get",
  path: "/repos/{owner}/{repo}/media/{filepath}",
  operationId: "repoGetRawFileOrLFS",
  tags: ["repository"],
  summary: "Get a file or it's LFS object from a repository",
  auth: read,
  request: { params: withPath(rawPath), query: rawRef },
  responses: rawResponses,
});
withSlashes(repoGetRawFileOrLFS, "filepath", (r) => contents.openapi(r, (async (c: Context<AppEnv>) => rawOfApi(c)) as never));

const repoChangeFiles = apiRoute({
  method: "post",
  path: "/repos/{owner}/{repo}/contents",
  operationId: "repoChangeFiles",
  tags: ["repository"],
  summary: "Modify multiple files in a repository",
  auth: write,
  guard: contentsWriterGuard,
  request: { params: z.object(ownerRepo), ...jsonBody(ChangeFilesOptionsSchema) },
  responses: { 201: jsonResponse(FilesResponseSchema, "FilesResponse"), ...WRITE_ERRORS },
});
contents.openapi(repoChangeFiles, async (c) => {
  const p = c.req.valid("param");
  const b = c.req.valid("json");
  const ops: FileOperation[] = b.files.map((f) => ({ operation: f.operation, path: f.path, content: f.content, sha: f.sha, fromPath: f.from_path }));
  const out = await changeFiles(ctxOf(c), objectsOf(c), p.owner, p.repo, b, ops, "files");
  return c.json(out.body as never, 201);
});

const repoCreateFile = apiRoute({
  method: "post",
  path: "/repos/{owner}/{repo}/contents/{filepath}",
  operationId: "repoCreateFile",
  tags: ["repository"],
  summary: "Create a file in a repository",
  auth: write,
  guard: contentsWriterGuard,
  request: { params: withPath("path of the file to create"), ...jsonBody(CreateFileOptionsSchema) },
  responses: { 201: jsonResponse(FileResponseSchema, "FileResponse"), ...WRITE_ERRORS },
});
withSlashes(repoCreateFile, "filepath", (r) =>
  contents.openapi(r, async (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    const out = await changeFiles(ctxOf(c), objectsOf(c), p.owner, p.repo, b, [{ operation: "create", path: p.filepath, content: b.content }], "file");
    return c.json(out.body as never, 201);
  }),
);

const repoUpdateFile = apiRoute({
  method: "put",
  path: "/repos/{owner}/{repo}/contents/{filepath}",
  operationId: "repoUpdateFile",
  tags: ["repository"],
  summary: "Update a file in a repository if SHA is set, or create the file if SHA is not set",
  auth: write,
  guard: contentsWriterGuard,
  request: { params: withPath("path of the file to update"), ...jsonBody(UpdateFileOptionsSchema) },
  responses: { 200: jsonResponse(FileResponseSchema, "FileResponse"), 201: jsonResponse(FileResponseSchema, "FileResponse"), ...WRITE_ERRORS },
});
withSlashes(repoUpdateFile, "filepath", (r) =>
  contents.openapi(r, async (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    // Without `sha` a create (Gitea 1.26, as GitHub): an existing file is a 422, never replaced.
    const op: FileOperation = b.sha ? { operation: "update", path: p.filepath, content: b.content, sha: b.sha, fromPath: b.from_path || undefined } : { operation: "create", path: p.filepath, content: b.content };
    const out = await changeFiles(ctxOf(c), objectsOf(c), p.owner, p.repo, b, [op], "file");
    return c.json(out.body as never, out.created ? 201 : 200);
  }),
);

const repoDeleteFile = apiRoute({
  method: "delete",
  path: "/repos/{owner}/{repo}/contents/{filepath}",
  operationId: "repoDeleteFile",
  tags: ["repository"],
  summary: "Delete a file in a repository",
  auth: write,
  guard: contentsWriterGuard,
  request: { params: withPath("path of the file to delete"), ...jsonBody(DeleteFileOptionsSchema) },
  responses: { 200: jsonResponse(FileDeleteResponseSchema, "FileDeleteResponse"), ...WRITE_ERRORS },
});
withSlashes(repoDeleteFile, "filepath", (r) =>
  contents.openapi(r, async (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    const out = await changeFiles(ctxOf(c), objectsOf(c), p.owner, p.repo, b, [{ operation: "delete", path: p.filepath, sha: b.sha }], "delete");
    return c.json(out.body as never, 200);
  }),
);
