/**
 * AutoInit (create rules 1–2; Gitea services/repository/init.go and create.go prepareRepoCommit):
 * the first commit "Initial commit" on the default branch, the caller as author and committer,
 * with README.md from the readme template, .gitignore from the named templates and LICENSE from
 * the SPDX text. The commit is built before the repository row exists (in a staging store), its
 * ref, catalog row and the row's `is_empty`/`size` ride in the create's own write batch, its pack
 * files are staged before that batch (a batch that commits while its answer is lost still finds
 * them: withStagedPacks) and stored under the new id right after — create stays at two round trips.
 */
import { sql, type SQL } from "drizzle-orm";
import type { UserRow } from "../db/schema.ts";
import type { Caller } from "../lib/auth.ts";
import { badRequest, unprocessable } from "../lib/errors.ts";
import { fillLicense, gitignoreFile, hasLicense, licenseTemplate, readme, README_TEMPLATE_NAMES } from "../lib/repo-templates.ts";
import { identPart, type Signature } from "../git/objects/commit.ts";
import { createCommit, type FileChange } from "../git/repo/commit.ts";
import { MemoryObjectStore } from "../git/storage/memory-object-store.ts";
import { packFileNames, STAGED_NAMESPACE, type ObjectStore } from "../git/storage/object-store.ts";
import type { PackRecord, RefStore, RefTransaction } from "../git/storage/ref-store.ts";

/** What the create form asks of AutoInit. */
export interface AutoInitForm {
  readme: string;
  gitignores?: string;
  license?: string;
}

/** Create rules 1–2 and the template names, checked before anything is written. */
export async function checkAutoInit(form: { auto_init?: boolean; readme?: string; gitignores?: string; license?: string }): Promise<AutoInitForm | null> {
  if (!form.auto_init) return null;
  // Create rule 1: an empty Readme means the template named Default.
  const name = form.readme || "Default";
  // Create rule 2: a readme template that does not exist → 400.
  if (!README_TEMPLATE_NAMES.includes(name)) throw badRequest(`readme template does not exist, available templates: [${README_TEMPLATE_NAMES.join(" ")}]`);
  // Unknown gitignore / license names fail Gitea's CreateRepository (GetRepoInitFile[name]) after
  // the row exists; here they are refused before it, as the label template's ErrTemplateLoad (422).
  if (form.gitignores) {
    const g = await gitignoreFile(form.gitignores);
    if ("unknown" in g) throw unprocessable(`GetRepoInitFile[${g.unknown}]: failed to load gitignore template`);
  }
  if (form.license && !(await hasLicense(form.license))) throw unprocessable(`GetRepoInitFile[${form.license}]: failed to load license template`);
  return { readme: name, gitignores: form.gitignores || undefined, license: form.license || undefined };
}

/** The repository an initial commit is made for (before its row exists). */
export interface InitTarget {
  ownerName: string;
  /** The owner's e-mail as Gitea's NewGitSig gives it (for the license placeholder). */
  ownerEmail: string;
  name: string;
  description: string;
  defaultBranch: string;
  cloneHttps: string;
  cloneSsh: string;
}

/** A prepared initial commit: statements for the create's batch, then the files to store. */
export interface PreparedInit {
  /** Statements for the create's write batch (`rid` = the new repository's id in SQL). */
  statements(rid: SQL): SQL[];
  /** Stores the pack files in STAGED_NAMESPACE, before the batch: reads find them there if the batch commits unseen. */
  stage(objects: ObjectStore): Promise<void>;
  /** Stores them under the new repository id (after the batch), then drops the staged copy. */
  store(objects: ObjectStore, repoId: number): Promise<void>;
  /** Drops the staged copy: the batch was not applied. */
  unstage(objects: ObjectStore): Promise<void>;
}

const STAGING = "auto-init";

/** A RefStore for a repository that does not exist yet: empty, and it records the one commit. */
function stagingRefs(head: string): RefStore & { tx: RefTransaction | null } {
  return {
    tx: null,
    async read() {
      return { head, refs: [], packs: [] };
    },
    async commit(_id, tx) {
      this.tx = tx;
      return { ok: true };
    },
  };
}

/** Builds the initial commit in memory (Gitea's prepareRepoCommit + initRepoCommit). */
export async function prepareAutoInit(form: AutoInitForm, t: InitTarget, caller: Caller, noReplyAddress: string, now = new Date()): Promise<PreparedInit> {
  const changes: { op: "put"; path: string; content: string }[] = [];
  const readmeText = readme(form.readme, { Name: t.name, Description: t.description, "CloneURL.SSH": t.cloneSsh, "CloneURL.HTTPS": t.cloneHttps, OwnerName: t.ownerName })!;
  changes.push({ op: "put", path: "README.md", content: readmeText });
  if (form.gitignores) {
    const g = await gitignoreFile(form.gitignores);
    if ("text" in g && g.text.length > 0) changes.push({ op: "put", path: ".gitignore", content: g.text });
  }
  if (form.license) {
    const text = fillLicense(form.license, (await licenseTemplate(form.license))!, { owner: t.ownerName, email: t.ownerEmail, repo: t.name, year: String(now.getUTCFullYear()) });
    changes.push({ op: "put", path: "LICENSE", content: text });
  }
  // The caller as author and committer (Gitea's doer.NewGitSig).
  const sig = signatureOf(caller.row, noReplyAddress, now);
  return stageCommit(t.defaultBranch, sig, changes);
}

/**
 * Gitea's NewGitSig: the full name or the name, the e-mail or its no-reply placeholder. A full name
 * git would write as nothing (only punctuation git drops, see identPart) gives way to the name.
 */
export function signatureOf(u: UserRow, noReplyAddress: string, now = new Date()): Signature {
  return {
    name: identPart(u.fullName) ? u.fullName.trim() : u.name,
    email: u.keepEmailPrivate || !u.email ? `${u.lowerName}@${noReplyAddress}` : u.email,
    timestamp: Math.floor(now.getTime() / 1000),
    timezone: "+0000",
  };
}

/**
 * Builds a first commit "Initial commit" on `branch` in memory, for a repository whose row does
 * not exist yet (auto-init, generate with git content): its rows for the create batch, its files
 * to stage before the batch and store under the new id afterwards.
 */
export async function stageCommit(branch: string, sig: Signature, changes: FileChange[]): Promise<PreparedInit> {
  const staging = new MemoryObjectStore();
  const head = `refs/heads/${branch}`;
  const refs = stagingRefs(head);
  const out = await createCommit({ repoId: STAGING, objects: staging, refs }, { branch, message: "Initial commit\n", author: sig, committer: sig, changes });
  const pack: PackRecord = out.pack;
  const size = pack.size + pack.idxSize;
  const putAll = async (objects: ObjectStore, namespace: string) => {
    for (const name of packFileNames(pack.id)) {
      const bytes = await staging.get(STAGING, name);
      if (bytes) await objects.put(namespace, name, bytes);
    }
  };
  return {
    statements: (rid) => [
      sql`INSERT INTO git_ref (repo_id, name, oid, peeled) VALUES (${rid}, ${head}, ${out.commit}, NULL)`,
      sql`INSERT INTO git_pack (id, repo_id, catalog_repo_id, objects, size, idx_size, checksum) VALUES (${pack.id}, ${rid}, ${rid}, ${pack.objects}, ${pack.size}, ${pack.idxSize}, ${pack.checksum})`,
      sql`UPDATE repository SET is_empty = 0, size = ${size} WHERE id = ${rid}`,
      sql`INSERT INTO git_identity (repo_id, email) VALUES (${rid}, ${identPart(sig.email).toLowerCase()})`,
    ],
    async stage(objects) {
      await putAll(objects, STAGED_NAMESPACE);
    },
    async store(objects, repoId) {
      await putAll(objects, String(repoId));
      await objects.delete(STAGED_NAMESPACE, packFileNames(pack.id));
    },
    unstage: (objects) => objects.delete(STAGED_NAMESPACE, packFileNames(pack.id)),
  };
}
