/**
 * How TPM command bytes reach a TPM: the kernel character device (`/dev/tpmrm0`, one write =
 * one command, then one read) or the swtpm data channel over a unix or TCP socket (raw command
 * and response bytes, no framing). Callers serialise commands (see client.ts).
 */
import { open, type FileHandle } from "node:fs/promises";
import net from "node:net";

/** One TPM command in, one TPM response out. */
export interface TpmTransport {
  /** Human-readable target, for logs and errors. */
  readonly describe: string;
  send(command: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** The transport failed (device missing, connection refused, timeout); maps to UNAVAILABLE. */
export class TpmTransportError extends Error {
  override name = "TpmTransportError";
  /** What a client is told: the kind of TPM and the error code, no host path (`message`, for the log, has it). */
  readonly publicMessage: string;
  constructor(message: string, publicMessage = message) {
    super(message);
    this.publicMessage = publicMessage;
  }
}

/** `syscall CODE` of a node system error ("connect ENOENT"), without the path node's message names. */
export function errnoOf(e: unknown): string {
  const x = e as NodeJS.ErrnoException;
  return [x.syscall, x.code].filter(Boolean).join(" ") || "error";
}

const MAX_RESPONSE = 4096;

/** Parses `--tpm` values: a device path, `unix:PATH` or `tcp:HOST:PORT`. */
export function openTransport(spec: string, commandTimeoutMs = 30_000): TpmTransport {
  if (spec.startsWith("unix:")) return new SocketTransport({ path: spec.slice(5) }, spec, commandTimeoutMs);
  if (spec.startsWith("tcp:")) {
    const rest = spec.slice(4);
    const i = rest.lastIndexOf(":");
    const port = Number(rest.slice(i + 1));
    if (i < 0 || !Number.isInteger(port) || port <= 0 || port > 65535) throw new TpmTransportError(`bad TPM address ${spec}: want tcp:HOST:PORT`);
    return new SocketTransport({ host: rest.slice(0, i), port }, spec, commandTimeoutMs);
  }
  return new DeviceTransport(spec);
}

/**
 * Kernel TPM device. In blocking mode the command runs inside write(); the response is then
 * read in one read(). Both run on the libuv threadpool.
 */
export class DeviceTransport implements TpmTransport {
  readonly describe: string;
  private fh: FileHandle | undefined;
  private readonly path: string;
  constructor(path: string) {
    this.path = path;
    this.describe = path;
  }
  async send(command: Uint8Array): Promise<Uint8Array> {
    try {
      this.fh ??= await open(this.path, "r+");
      const { bytesWritten } = await this.fh.write(command, 0, command.length, null);
      if (bytesWritten !== command.length) throw new TpmTransportError(`short write to ${this.path}: ${bytesWritten}/${command.length}`, `TPM device: short write ${bytesWritten}/${command.length}`);
      const buf = new Uint8Array(MAX_RESPONSE);
      const { bytesRead } = await this.fh.read(buf, 0, MAX_RESPONSE, null);
      return buf.slice(0, bytesRead);
    } catch (e) {
      // A failed fd is dropped so the next command reopens the device.
      await this.close();
      if (e instanceof TpmTransportError) throw e;
      throw new TpmTransportError(`TPM device ${this.path}: ${(e as Error).message}`, `TPM device: ${errnoOf(e)}`);
    }
  }
  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    await fh?.close().catch(() => {});
  }
}

/**
 * swtpm data channel. One connection is kept open (swtpm serves one client at a time); a
 * response is complete once the byte count in its header has arrived. A command that gets no
 * answer within the timeout drops the connection, so a wedged TPM cannot wedge the agent.
 */
export class SocketTransport implements TpmTransport {
  readonly describe: string;
  /** What clients are told the TPM is (no path or address). */
  private readonly kind: string;
  private sock: net.Socket | undefined;
  private readonly addr: net.NetConnectOpts;
  private readonly timeoutMs: number;
  constructor(addr: { path: string } | { host: string; port: number }, describe: string, timeoutMs: number) {
    this.addr = addr as net.NetConnectOpts;
    this.describe = describe;
    this.kind = "path" in addr ? "TPM socket" : "TPM TCP socket";
    this.timeoutMs = timeoutMs;
  }

  /** A failure: the full text (with the TPM's address) for the log, `publicDetail` for clients. */
  private fail(detail: string, publicDetail = detail): TpmTransportError {
    return new TpmTransportError(`TPM ${this.describe}: ${detail}`, `${this.kind}: ${publicDetail}`);
  }

  private connect(): Promise<net.Socket> {
    if (this.sock && !this.sock.destroyed) return Promise.resolve(this.sock);
    return new Promise((resolve, reject) => {
      const s = net.connect(this.addr);
      const onError = (e: Error) => {
        s.destroy();
        reject(this.fail(e.message, errnoOf(e)));
      };
      s.once("error", onError);
      s.once("connect", () => {
        s.off("error", onError);
        s.on("error", () => s.destroy());
        s.setNoDelay(true);
        this.sock = s;
        resolve(s);
      });
    });
  }

  async send(command: Uint8Array): Promise<Uint8Array> {
    const s = await this.connect();
    return new Promise<Uint8Array>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let have = 0;
      let want = -1;
      const done = (err?: Error, res?: Uint8Array) => {
        clearTimeout(timer);
        s.off("data", onData);
        s.off("close", onClose);
        if (err) {
          s.destroy();
          this.sock = undefined;
          reject(err);
        } else resolve(res!);
      };
      const onData = (d: Buffer) => {
        chunks.push(d);
        have += d.length;
        if (want < 0 && have >= 6) {
          const head = Buffer.concat(chunks);
          want = head.readUInt32BE(2);
          if (want < 10 || want > MAX_RESPONSE) return done(this.fail(`bad response size ${want}`));
        }
        if (want >= 0 && have >= want) {
          const all = Buffer.concat(chunks);
          if (have > want) return done(this.fail(`${have - want} unexpected trailing bytes`));
          done(undefined, new Uint8Array(all.buffer, all.byteOffset, all.length));
        }
      };
      const onClose = () => done(this.fail("connection closed mid-command"));
      const timer = setTimeout(() => done(this.fail(`no response within ${this.timeoutMs} ms`)), this.timeoutMs);
      s.on("data", onData);
      s.once("close", onClose);
      s.write(command);
    });
  }

  async close(): Promise<void> {
    const s = this.sock;
    this.sock = undefined;
    if (!s || s.destroyed) return;
    await new Promise<void>((r) => {
      s.once("close", () => r());
      s.end();
      setTimeout(() => s.destroy(), 200).unref();
    });
  }
}
