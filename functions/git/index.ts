/**
 * The git engine: storage interfaces, pack reading/writing, the smart HTTP handlers and the
 * object-level API. Runtime-agnostic (Node and workerd with `nodejs_compat`); the Node-only
 * directory store is imported from `./storage/fs-store.ts` by the Node entry point alone.
 */
export { ZERO_OID, isOid } from "./bytes.ts";
export { GitError, type GitErrorCode } from "./errors.ts";
export { buildPushEvent, type CommitSummary, type PushEvent, type RefChange } from "./events.ts";
export { gitService, serveGit } from "./http.ts";
export { type Commit, parseCommit, parseTag, type Signature, type Tag } from "./objects/commit.ts";
export { hashObject, type GitObject, type ObjectType } from "./objects/object.ts";
export { MODE, parseTree, type TreeEntry } from "./objects/tree.ts";
export { type IndexLimits, indexPack } from "./pack/indexer.ts";
export { ObjectReader, setSharedIndexBudget } from "./pack/reader.ts";
export { handleInfoRefs, type Service } from "./protocol/advertise.ts";
export { DEFAULT_LIMITS, type GitContext, type GitLimits } from "./protocol/common.ts";
export { handleReceivePack, type PushCommand, type PushResult } from "./protocol/receive-pack.ts";
export { handleUploadPack } from "./protocol/upload-pack.ts";
export { isBranchRef, isPushableRef, isTagRef, refNameProblem } from "./refname.ts";
export { type CommitOutcome, type CommitRequest, createCommit, type Expect, type FileChange } from "./repo/commit.ts";
export { type Compaction, compactPacks } from "./repo/compact.ts";
export { type CommitInfo, type PathEntry, Repository, type Resolved, splitPath } from "./repo/repository.ts";
export { copyPacks, forkCatalog, sharedPacks } from "./storage/fork.ts";
export { MemoryRefStore } from "./storage/memory-ref-store.ts";
export { type ByteRange, idxFileName, type ObjectStore, packFileName, packFileNames, revFileName, type StoredFile } from "./storage/object-store.ts";
export { R2ObjectStore, type R2BucketLike } from "./storage/r2-store.ts";
export type { CommitResult, PackRecord, Ref, RefStore, RefTransaction, RefUpdate, RejectedRef, RepoState } from "./storage/ref-store.ts";
