/**
 * An in-memory RefStore with the exact `commit` contract of `ref-store.ts` (used by tests, the
 * benchmark and the workerd fixture). It also counts calls, so tests can assert round trips.
 */
import { Buffer } from "node:buffer";
import type { PushEvent } from "../events.ts";
import { RefNames } from "../refname.ts";
import { type CommitResult, type PackRecord, type Ref, type RefStore, type RefTransaction, type RepoState, asciiLower, refusals } from "./ref-store.ts";

interface RepoRecord {
  head: string | null;
  refs: Map<string, Ref>;
  packs: PackRecord[];
  size: number;
  empty: boolean;
  events: PushEvent[];
  unreachable: boolean;
}

/** RefStore kept in a Map; `calls` counts reads and commits like database round trips. */
export class MemoryRefStore implements RefStore {
  private readonly repos = new Map<string, RepoRecord>();
  calls = { read: 0, commit: 0 };

  /** Creates (or resets) a repository with HEAD pointing at `head`. */
  create(repoId: string, head = "refs/heads/main", packs: PackRecord[] = [], unreachable = false): void {
    this.repos.set(repoId, { head, refs: new Map(), packs: [...packs], size: 0, empty: true, events: [], unreachable });
  }

  private repo(repoId: string): RepoRecord {
    let r = this.repos.get(repoId);
    if (!r) {
      this.create(repoId);
      r = this.repos.get(repoId)!;
    }
    return r;
  }

  async read(repoId: string): Promise<RepoState> {
    this.calls.read++;
    const r = this.repo(repoId);
    const refs = [...r.refs.values()].sort((a, b) => (Buffer.compare(Buffer.from(a.name), Buffer.from(b.name))));
    return structuredClone({ head: r.head, refs, packs: r.packs, unreachable: r.unreachable });
  }

  async commit(repoId: string, tx: RefTransaction): Promise<CommitResult> {
    this.calls.commit++;
    const r = this.repo(repoId);
    const twin = (name: string) => [...r.refs.keys()].find((n) => n !== name && asciiLower(n) === asciiLower(name)) ?? null;
    const rejected = refusals(tx, (name) => r.refs.get(name)?.oid ?? null, new RefNames(r.refs.keys()), twin, r.head);
    if (rejected.length > 0) return { ok: false, rejected };
    if (tx.removePacks?.some((id) => !r.packs.some((p) => p.id === id))) return { ok: false, rejected: [] };
    if (tx.removePacks) r.packs = r.packs.filter((p) => !tx.removePacks!.includes(p.id));
    for (const u of tx.updates) {
      if (u.new === null) r.refs.delete(u.name);
      else r.refs.set(u.name, { name: u.name, oid: u.new, peeled: u.peeled ?? null });
    }
    if (tx.pack) r.packs.push(structuredClone(tx.pack));
    if (tx.head) r.head = tx.head;
    r.size += tx.sizeDelta;
    r.empty = ![...r.refs.keys()].some((n) => n.startsWith("refs/heads/"));
    if (tx.event) r.events.push(structuredClone(tx.event));
    if (tx.orphans || tx.updates.some((u) => u.new === null)) r.unreachable = true;
    return { ok: true };
  }

  /** Size, emptiness and recorded push events of a repository (test assertions). */
  stats(repoId: string): { size: number; empty: boolean; events: PushEvent[] } {
    const r = this.repo(repoId);
    return { size: r.size, empty: r.empty, events: r.events };
  }

  /** Replaces catalog entries by id (a fork re-pointed at its own copies of shared packs). */
  replacePacks(repoId: string, records: readonly PackRecord[]): void {
    const r = this.repo(repoId);
    r.packs = r.packs.map((p) => records.find((n) => n.id === p.id) ?? p);
  }

  /** Points HEAD at another branch (what the lead does for edit rule 4). */
  setHead(repoId: string, head: string): void {
    this.repo(repoId).head = head;
  }
}
