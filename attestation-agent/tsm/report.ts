/**
 * Linux configfs-tsm reports (Documentation/ABI/testing/configfs-tsm), after google/go-configfs-tsm
 * report/report.go: one private entry per request, write `inblob` (and `privlevel`), read
 * `auxblob`/`outblob`/`provider` checking `generation` after each read, always `rmdir`.
 */
import fs from "node:fs/promises";
import path from "node:path";

/** The few filesystem calls a report needs; the real configfs or a test double. */
export interface ConfigFs {
  mkdtemp(prefix: string): Promise<string>;
  rmdir(dir: string): Promise<void>;
  readFile(file: string, signal?: AbortSignal): Promise<Uint8Array>;
  writeFile(file: string, data: Uint8Array | string): Promise<void>;
}

/** node:fs on the real configfs (async calls run on the libuv threadpool). */
export const nodeConfigFs: ConfigFs = {
  mkdtemp: (prefix) => fs.mkdtemp(prefix),
  rmdir: (dir) => fs.rmdir(dir),
  readFile: async (file, signal) => new Uint8Array(await fs.readFile(file, { signal })),
  writeFile: (file, data) => fs.writeFile(file, data),
};

export interface ReportRequest {
  /** Exactly 64 bytes (both providers require it at generation time). */
  inblob: Uint8Array;
  /** SEV-SNP VMPL to request (`privlevel`); omitted when undefined. */
  privilege?: number;
  getAuxblob?: boolean;
}

export interface Report {
  provider: string;
  outblob: Uint8Array;
  auxblob?: Uint8Array;
}

/** A report could not be produced; `errno` is the kernel's code when one was given. */
export class TsmError extends Error {
  override name = "TsmError";
  readonly errno: string | undefined;
  /** What a client is told, without host paths (`message`, for the log, may name them). */
  readonly publicMessage: string;
  constructor(message: string, errno?: string, publicMessage = message) {
    super(message);
    this.errno = errno;
    this.publicMessage = publicMessage;
  }
}

/** Someone else wrote to our entry between our write and our read (generation mismatch). */
export class GenerationError extends TsmError {
  override name = "GenerationError";
}

function wrap(op: string, e: unknown): TsmError {
  if (e instanceof TsmError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  if ((e as Error).name === "AbortError") throw e;
  const why: Record<string, string> = {
    ENXIO: "no configfs-tsm provider is registered",
    ENOENT: "configfs-tsm report directory not found",
    EBUSY: "the TSM is busy with an earlier request",
    ENOTTY: "the guest's VMPCK is disabled; attestation is unavailable until reboot",
    ETIMEDOUT: "the host did not produce a quote in time",
    EINVAL: "the provider rejected the request",
    EFBIG: "inblob larger than 64 bytes",
  };
  if (code && why[code]) return new TsmError(`configfs-tsm ${op}: ${why[code]} (${code})`, code);
  return new TsmError(`configfs-tsm ${op}: ${(e as Error).message}`, code, `configfs-tsm ${op}: ${code ?? "error"}`);
}

export class TsmClient {
  readonly root: string;
  readonly fs: ConfigFs;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(root: string, configFs: ConfigFs = nodeConfigFs) {
    this.root = root;
    this.fs = configFs;
  }

  /** The provider name (`sev_guest`, `tdx_guest`, …) via a throwaway entry, or undefined. */
  async provider(): Promise<string | undefined> {
    let dir: string;
    try {
      dir = await this.fs.mkdtemp(path.join(this.root, "probe-"));
    } catch {
      return undefined;
    }
    try {
      return new TextDecoder().decode(await this.fs.readFile(path.join(dir, "provider"))).trim() || undefined;
    } catch {
      return undefined;
    } finally {
      await this.fs.rmdir(dir).catch(() => {});
    }
  }

  /**
   * Produces one report. Requests are queued in-process (the kernel serialises generation
   * anyway); EBUSY is retried with backoff until `signal` aborts.
   */
  getReport(req: ReportRequest, signal?: AbortSignal): Promise<Report> {
    if (req.inblob.length !== 64) return Promise.reject(new TsmError(`inblob must be exactly 64 bytes, got ${req.inblob.length}`, "EINVAL"));
    const job = this.tail.then(async () => {
      for (let attempt = 0; ; attempt++) {
        signal?.throwIfAborted();
        try {
          return await this.once(req, signal);
        } catch (e) {
          const retry = (e instanceof TsmError && e.errno === "EBUSY") || (e instanceof GenerationError && attempt < 2);
          if (!retry) throw e;
          await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1000)));
        }
      }
    });
    this.tail = job.catch(() => {});
    return job;
  }

  private async once(req: ReportRequest, signal?: AbortSignal): Promise<Report> {
    let dir: string;
    try {
      dir = await this.fs.mkdtemp(path.join(this.root, "entry-"));
    } catch (e) {
      throw wrap("mkdir", e);
    }
    try {
      // Every read of the generation is wrapped: the raw error names the entry's path.
      const gen = async () =>
        Number(
          new TextDecoder()
            .decode(
              await this.fs.readFile(path.join(dir, "generation")).catch((e: unknown) => {
                throw wrap("read generation", e);
              }),
            )
            .trim(),
        );
      const start = await gen();
      let writes = 0;
      const write = async (attr: string, data: Uint8Array | string) => {
        try {
          await this.fs.writeFile(path.join(dir, attr), data);
        } catch (e) {
          throw wrap(`write ${attr}`, e);
        }
        writes++;
      };
      const read = async (attr: string) => {
        signal?.throwIfAborted();
        let b: Uint8Array;
        try {
          b = await this.fs.readFile(path.join(dir, attr), signal);
        } catch (e) {
          throw wrap(`read ${attr}`, e);
        }
        const now = await gen();
        if (now !== start + writes) throw new GenerationError(`configfs-tsm generation is ${now} after reading ${attr}, expected ${start + writes}: a concurrent writer touched the entry`);
        return b;
      };
      await write("inblob", req.inblob);
      // The kernel parses privlevel as ASCII decimal (CoCo's raw-byte write is a known bug).
      if (req.privilege !== undefined) await write("privlevel", `${req.privilege}\n`);
      const auxblob = req.getAuxblob ? await read("auxblob").catch((e) => (e instanceof TsmError && e.errno === "ENOENT" ? new Uint8Array(0) : Promise.reject(e))) : undefined;
      const outblob = await read("outblob");
      if (outblob.length === 0) throw new TsmError("configfs-tsm returned an empty outblob");
      const provider = new TextDecoder().decode(await read("provider")).trim();
      return { provider, outblob, auxblob };
    } finally {
      // Never recursive: configfs attribute files cannot be unlinked; rmdir removes the entry.
      await this.fs.rmdir(dir).catch(() => {});
    }
  }
}
