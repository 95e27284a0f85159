/**
 * Test helpers: the real git CLI (isolated from any user or system configuration), scratch
 * directories, and generators of repositories with real history.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { CommitResult, RefStore, RefTransaction } from "../../functions/git/storage/ref-store.ts";

const run = promisify(execFile);

/** An environment where git reads no user/system config and never prompts. */
export function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: join(home, ".gitconfig"),
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "Ada Lovelace",
    GIT_AUTHOR_EMAIL: "ada@example.com",
    GIT_COMMITTER_NAME: "Ada Lovelace",
    GIT_COMMITTER_EMAIL: "ada@example.com",
    GIT_AUTHOR_DATE: "1700000000 +0000",
    GIT_COMMITTER_DATE: "1700000000 +0000",
    LANG: "C",
  };
}

/** A scratch directory with a git home; `git()` runs the CLI there. */
export class Scratch {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;

  constructor(prefix = "git-test-") {
    this.dir = mkdtempSync(join(tmpdir(), prefix));
    this.env = gitEnv(this.dir);
    writeFileSync(join(this.dir, ".gitconfig"), "[init]\n\tdefaultBranch = main\n[protocol]\n\tversion = 2\n[advice]\n\tdetachedHead = false\n");
  }

  path(...p: string[]): string {
    return join(this.dir, ...p);
  }

  /** Runs git; resolves with stdout (Buffer) and stderr, rejects on a non-zero exit. */
  async git(args: string[], opts: { cwd?: string; input?: Uint8Array | string | Iterable<string>; env?: NodeJS.ProcessEnv } = {}): Promise<{ stdout: Buffer; stderr: string }> {
    return gitRun(args, { cwd: opts.cwd ?? this.dir, input: opts.input, env: { ...this.env, ...opts.env } });
  }

  /** Runs git and returns trimmed stdout as text. */
  async gitText(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
    return (await this.git(args, opts)).stdout.toString("utf8").trim();
  }

  /** Runs git expecting failure; resolves with exit code and stderr. */
  async gitFail(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stderr: string; stdout: string }> {
    try {
      const r = await this.git(args, opts);
      throw new Error(`git ${args.join(" ")} succeeded unexpectedly: ${r.stderr}`);
    } catch (e) {
      const err = e as { code?: number; stderr?: string; stdout?: Buffer; message: string };
      if (err.message.startsWith("git ") && err.message.includes("succeeded unexpectedly")) throw e;
      return { code: err.code ?? -1, stderr: String(err.stderr ?? ""), stdout: String(err.stdout ?? "") };
    }
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs git with stdin; rejects with code/stderr attached on failure. */
export function gitRun(args: string[], opts: { cwd: string; input?: Uint8Array | string | Iterable<string>; env: NodeJS.ProcessEnv }): Promise<{ stdout: Buffer; stderr: string }> {
  return new Promise((ok, fail) => {
    const p = spawn("git", args, { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    p.stdout.on("data", (d: Buffer) => out.push(d));
    p.stderr.on("data", (d: Buffer) => (err += d));
    p.on("error", fail);
    p.on("close", (code) => {
      if (code === 0) ok({ stdout: Buffer.concat(out), stderr: err });
      else fail(Object.assign(new Error(`git ${args.join(" ")} exited with ${code}: ${err}`), { code, stderr: err, stdout: Buffer.concat(out) }));
    });
    p.stdin.on("error", () => {});
    const input = opts.input;
    if (input === undefined) p.stdin.end();
    else if (typeof input === "string" || input instanceof Uint8Array) p.stdin.end(input);
    else {
      // a generator: write with backpressure, never holding the whole input
      void (async () => {
        for (const chunk of input) if (!p.stdin.write(chunk)) await new Promise((ok) => p.stdin.once("drain", ok));
        p.stdin.end();
      })();
    }
  });
}

/**
 * A `git fast-import` stream of `commits` commits on `branch` over a tree of `files` text files in
 * nested directories; each commit edits a few files (so packs get real deltas). Deterministic.
 */
export function fastImportStream(opts: FastImportOptions): string {
  return [...fastImportChunks(opts)].join("");
}

export interface FastImportOptions {
  commits: number;
  files?: number;
  /** Files edited per commit (default 3). */
  touch?: number;
  branch?: string;
  seed?: number;
  /** Commit to build on (the first commit's parent). */
  from?: string;
  startMark?: number;
  time?: number;
}

/** The same stream one commit at a time (10,000 commits exceed a JavaScript string). */
export function* fastImportChunks(opts: FastImportOptions): Generator<string> {
  const files = opts.files ?? 40;
  const branch = opts.branch ?? "refs/heads/main";
  let seed = opts.seed ?? 1;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  const contents: string[][] = [];
  for (let f = 0; f < files; f++) {
    const lines: string[] = [];
    for (let l = 0; l < 30; l++) lines.push(`file ${f} line ${l} ${"lorem ipsum dolor sit amet ".repeat(1 + (rnd() % 3))}`);
    contents.push(lines);
  }
  const pathOf = (f: number) => `dir${f % 5}/sub${f % 3}/file${f}.txt`;
  const time = opts.time ?? 1700000000;
  const mark0 = opts.startMark ?? 1;
  for (let c = 0; c < opts.commits; c++) {
    const out: string[] = [];
    const msg = `commit ${c + mark0}\n\nbody of commit ${c + mark0}\n`;
    out.push(`commit ${branch}`, `mark :${c + mark0}`, `author Ada Lovelace <ada@example.com> ${time + c * 60} +0000`, `committer Ada Lovelace <ada@example.com> ${time + c * 60} +0000`);
    out.push(`data ${Buffer.byteLength(msg)}`, msg);
    if (c === 0 && opts.from) out.push(`from ${opts.from}`);
    const touched = c === 0 && !opts.from ? [...Array(files).keys()] : Array.from({ length: opts.touch ?? 3 }, () => rnd() % files);
    for (const f of touched) {
      const lines = contents[f]!;
      lines[rnd() % lines.length] = `edited in commit ${c + mark0}: ${rnd()}`;
      if (rnd() % 4 === 0) lines.push(`appended ${c + mark0}`);
      if (lines.length > 45) lines.splice(rnd() % lines.length, 1); // files stay a few KiB
      const body = `${lines.join("\n")}\n`;
      out.push(`M 100644 inline ${pathOf(f)}`, `data ${Buffer.byteLength(body)}`, body);
    }
    out.push("");
    yield `${out.join("\n")}\n`;
  }
}

/** Creates a non-bare repository at `dir` with generated history (via fast-import). */
export async function makeHistory(s: Scratch, dir: string, opts: FastImportOptions): Promise<void> {
  await s.git(["init", "-q", "-b", "main", dir]);
  await s.git(["fast-import", "--quiet"], { cwd: dir, input: fastImportChunks(opts) });
  await s.git(["reset", "-q", "--hard", "main"], { cwd: dir }).catch(() => {});
}

export { run };

/**
 * A RefStore over `inner` whose first commit waits for the second: two concurrent pushes reach the
 * store each having read the same state, then commit one after the other (race tests).
 */
export function commitBarrier(inner: RefStore): RefStore {
  let waiting: (() => void) | null = null;
  return {
    read: (r) => inner.read(r),
    commit: async (r: string, tx: RefTransaction): Promise<CommitResult> => {
      if (!waiting) await new Promise<void>((ok) => (waiting = ok));
      else waiting();
      return inner.commit(r, tx);
    },
  };
}
