/**
 * tsm/report.ts against the configfs-tsm double (kernel semantics): one private entry per
 * request, the generation check after every read, EBUSY and generation retries, privlevel as
 * ASCII decimal, the errno texts, and the entry always removed.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GenerationError, TsmClient, TsmError, nodeConfigFs, type ConfigFs } from "../../../attestation-agent/tsm/report.ts";
import { FakeConfigFs } from "../fixtures/fake-configfs.ts";

const ROOT = "/sys/kernel/config/tsm/report";
const IN = new Uint8Array(64).fill(3);
const snp = () => new FakeConfigFs(ROOT, "sev_guest", (inblob, vmpl) => ({ outblob: new Uint8Array([...inblob.subarray(0, 2), vmpl]), auxblob: new Uint8Array([9]) }));

function errno(code: string): NodeJS.ErrnoException {
  const e = new Error(`raw ${code}`) as NodeJS.ErrnoException;
  e.code = code;
  return e;
}

describe("TsmClient", () => {
  it("provider(): the provider's name through a throwaway entry that is removed; undefined without one", async () => {
    const fs = snp();
    expect(await new TsmClient(ROOT, fs).provider()).toBe("sev_guest");
    expect([fs.made.length, fs.entries.size]).toEqual([1, 0]);
    expect(fs.made[0]!.startsWith(`${ROOT}/probe-`)).toBe(true);
    expect(await new TsmClient(ROOT, new FakeConfigFs(ROOT, undefined, () => ({ outblob: new Uint8Array(1) }))).provider()).toBeUndefined();
    expect(await new TsmClient("/elsewhere", fs).provider()).toBeUndefined();
    const blank: ConfigFs = { ...fs, mkdtemp: (p) => fs.mkdtemp(p), rmdir: (d) => fs.rmdir(d), writeFile: (f, d) => fs.writeFile(f, d), readFile: async () => new TextEncoder().encode(" \n") };
    expect(await new TsmClient(ROOT, blank).provider()).toBeUndefined();
    const unreadable: ConfigFs = { mkdtemp: (p) => fs.mkdtemp(p), rmdir: (d) => fs.rmdir(d), writeFile: (f, d) => fs.writeFile(f, d), readFile: async () => Promise.reject(errno("EIO")) };
    expect(await new TsmClient(ROOT, unreadable).provider()).toBeUndefined();
    expect(fs.entries.size).toBe(0);
  });

  it("getReport: writes inblob (and privlevel as ASCII decimal), reads auxblob, outblob, provider; removes the entry", async () => {
    const fs = snp();
    const r = await new TsmClient(ROOT, fs).getReport({ inblob: IN, privilege: 2, getAuxblob: true });
    expect([Array.from(r.outblob), Array.from(r.auxblob!), r.provider]).toEqual([[3, 3, 2], [9], "sev_guest"]);
    expect(fs.made[0]!.startsWith(`${ROOT}/entry-`)).toBe(true);
    expect(fs.removed).toEqual(fs.made);
    const plain = await new TsmClient(ROOT, fs).getReport({ inblob: IN });
    expect([plain.auxblob, Array.from(plain.outblob)]).toEqual([undefined, [3, 3, 0]]);
  });

  it("inblob must be exactly 64 bytes (checked before any entry is made)", async () => {
    const fs = snp();
    for (const n of [63, 65]) await expect(new TsmClient(ROOT, fs).getReport({ inblob: new Uint8Array(n) })).rejects.toMatchObject({ errno: "EINVAL", message: `inblob must be exactly 64 bytes, got ${n}` });
    expect(fs.made).toEqual([]);
  });

  it("auxblob absent (TDX: ENOENT) is empty; other errors name the attribute and the kernel's meaning", async () => {
    const tdx = new FakeConfigFs(ROOT, "tdx_guest", () => ({ outblob: new Uint8Array([1]) }));
    const r = await new TsmClient(ROOT, tdx).getReport({ inblob: IN, getAuxblob: true });
    expect([Array.from(r.auxblob!), r.provider]).toEqual([[], "tdx_guest"]);
    const floor = snp();
    floor.privlevelFloor = 3;
    await expect(new TsmClient(ROOT, floor).getReport({ inblob: IN, privilege: 2 })).rejects.toMatchObject({ errno: "EINVAL", message: "configfs-tsm write privlevel: the provider rejected the request (EINVAL)" });
    expect(floor.entries.size).toBe(0);
    await expect(new TsmClient(ROOT, new FakeConfigFs(ROOT, undefined, () => ({ outblob: new Uint8Array(1) }))).getReport({ inblob: IN })).rejects.toMatchObject({
      errno: "ENXIO",
      message: "configfs-tsm mkdir: no configfs-tsm provider is registered (ENXIO)",
    });
    await expect(new TsmClient("/nope", snp()).getReport({ inblob: IN })).rejects.toMatchObject({ errno: "ENOENT", message: "configfs-tsm mkdir: configfs-tsm report directory not found (ENOENT)" });
    const empty = new FakeConfigFs(ROOT, "sev_guest", () => ({ outblob: new Uint8Array(0) }));
    await expect(new TsmClient(ROOT, empty).getReport({ inblob: IN })).rejects.toThrow(new TsmError("configfs-tsm returned an empty outblob"));
    expect(empty.entries.size).toBe(0);
  });

  it("each errno is explained; an unknown one keeps the kernel's text", async () => {
    const texts: Record<string, string> = {
      EBUSY: "the TSM is busy with an earlier request",
      ENOTTY: "the guest's VMPCK is disabled; attestation is unavailable until reboot",
      ETIMEDOUT: "the host did not produce a quote in time",
      EFBIG: "inblob larger than 64 bytes",
    };
    for (const [code, text] of Object.entries(texts)) {
      if (code === "EBUSY") continue; // retried until the signal aborts, see below
      const fs = snp();
      const failing: ConfigFs = { ...fs, mkdtemp: (p) => fs.mkdtemp(p), rmdir: (d) => fs.rmdir(d), writeFile: (f, d) => fs.writeFile(f, d), readFile: (f) => (f.endsWith("outblob") ? Promise.reject(errno(code)) : fs.readFile(f)) };
      await expect(new TsmClient(ROOT, failing).getReport({ inblob: IN })).rejects.toMatchObject({ errno: code, message: `configfs-tsm read outblob: ${text} (${code})` });
      expect(fs.entries.size).toBe(0);
    }
    const fs = snp();
    const odd: ConfigFs = { mkdtemp: (p) => fs.mkdtemp(p), rmdir: (d) => fs.rmdir(d), writeFile: () => Promise.reject(errno("EIO")), readFile: (f) => fs.readFile(f) };
    await expect(new TsmClient(ROOT, odd).getReport({ inblob: IN })).rejects.toMatchObject({ errno: "EIO", message: "configfs-tsm write inblob: raw EIO" });
    const gen: ConfigFs = { mkdtemp: (p) => fs.mkdtemp(p), rmdir: (d) => fs.rmdir(d), writeFile: (f, d) => fs.writeFile(f, d), readFile: () => Promise.reject(errno("EIO")) };
    await expect(new TsmClient(ROOT, gen).getReport({ inblob: IN })).rejects.toMatchObject({ message: "configfs-tsm read generation: raw EIO" });
    expect(fs.entries.size).toBe(0);
  });

  it("an abort during a read passes through as is; an auxblob that fails otherwise than ENOENT fails the report", async () => {
    const fs = snp();
    const abortErr = new DOMException("stop", "AbortError");
    const aborting: ConfigFs = { mkdtemp: (p) => fs.mkdtemp(p), rmdir: (d) => fs.rmdir(d), writeFile: (f, d) => fs.writeFile(f, d), readFile: (f) => (f.endsWith("outblob") ? Promise.reject(abortErr) : fs.readFile(f)) };
    await expect(new TsmClient(ROOT, aborting).getReport({ inblob: IN })).rejects.toBe(abortErr);
    const auxFails: ConfigFs = { mkdtemp: (p) => fs.mkdtemp(p), rmdir: (d) => fs.rmdir(d), writeFile: (f, d) => fs.writeFile(f, d), readFile: (f) => (f.endsWith("auxblob") ? Promise.reject(errno("EIO")) : fs.readFile(f)) };
    await expect(new TsmClient(ROOT, auxFails).getReport({ inblob: IN, getAuxblob: true })).rejects.toMatchObject({ name: "TsmError", errno: "EIO", message: "configfs-tsm read auxblob: raw EIO" });
    const auxGone: ConfigFs = { ...auxFails, readFile: (f) => (f.endsWith("auxblob") ? Promise.reject(new Error("not errno")) : fs.readFile(f)) };
    await expect(new TsmClient(ROOT, auxGone).getReport({ inblob: IN, getAuxblob: true })).rejects.toMatchObject({ name: "TsmError", message: "configfs-tsm read auxblob: not errno" });
    expect(new GenerationError("g").name).toBe("GenerationError");
    expect(fs.entries.size).toBe(0);
  });

  it("nodeConfigFs: the real filesystem calls, with the read abortable", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agent-cfs-"));
    try {
      const entry = await nodeConfigFs.mkdtemp(path.join(dir, "entry-"));
      await nodeConfigFs.writeFile(path.join(entry, "inblob"), IN);
      expect(Buffer.from(await nodeConfigFs.readFile(path.join(entry, "inblob")))).toEqual(Buffer.from(IN));
      const ac = new AbortController();
      ac.abort();
      await expect(nodeConfigFs.readFile(path.join(entry, "inblob"), ac.signal)).rejects.toMatchObject({ name: "AbortError" });
      await writeFile(path.join(entry, "x"), "");
      await expect(nodeConfigFs.rmdir(entry)).rejects.toMatchObject({ code: "ENOTEMPTY" }); // never recursive
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("EBUSY is retried (a fresh entry each time) until generation succeeds", async () => {
    const fs = snp();
    fs.busy = 2;
    const r = await new TsmClient(ROOT, fs).getReport({ inblob: IN });
    expect(Array.from(r.outblob)).toEqual([3, 3, 0]);
    expect([fs.made.length, fs.entries.size]).toEqual([3, 0]);
  });

  it("EBUSY retries stop when the signal aborts", async () => {
    const fs = snp();
    fs.busy = 1_000_000;
    const ac = new AbortController();
    const p = new TsmClient(ROOT, fs).getReport({ inblob: IN }, ac.signal);
    setTimeout(() => ac.abort(new Error("deadline")), 120);
    await expect(p).rejects.toThrow("deadline");
    expect(fs.entries.size).toBe(0);
  });

  it("a concurrent writer (generation moved) is retried twice, then GenerationError", async () => {
    const fs = snp();
    let races = 2;
    fs.afterGenerate = (dir) => races-- > 0 && fs.touch(dir);
    expect(Array.from((await new TsmClient(ROOT, fs).getReport({ inblob: IN })).outblob)).toEqual([3, 3, 0]);
    expect(fs.made).toHaveLength(3);
    const always = snp();
    always.afterGenerate = (dir) => always.touch(dir);
    const err = await new TsmClient(ROOT, always).getReport({ inblob: IN }).catch((e) => e);
    expect(err).toBeInstanceOf(GenerationError);
    expect(err.message).toBe("configfs-tsm generation is 2 after reading outblob, expected 1: a concurrent writer touched the entry");
    expect([always.made.length, always.entries.size]).toEqual([3, 0]);
  });

  it("an aborted signal stops before reading, and requests are served one at a time", async () => {
    const fs = snp();
    const ac = new AbortController();
    ac.abort(new Error("gone"));
    await expect(new TsmClient(ROOT, fs).getReport({ inblob: IN }, ac.signal)).rejects.toThrow("gone");
    const client = new TsmClient(ROOT, fs);
    let open = 0;
    let most = 0;
    const slow: ConfigFs = {
      mkdtemp: async (p) => {
        most = Math.max(most, ++open);
        return fs.mkdtemp(p);
      },
      rmdir: async (d) => {
        open--;
        return fs.rmdir(d);
      },
      writeFile: (f, d) => fs.writeFile(f, d),
      readFile: (f) => fs.readFile(f),
    };
    const c2 = new TsmClient(ROOT, slow);
    await Promise.all([c2.getReport({ inblob: IN }), c2.getReport({ inblob: IN }), c2.getReport({ inblob: IN })]);
    expect(most).toBe(1);
    void client;
  });
});
