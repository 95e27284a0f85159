/**
 * Secrets: password hashing (PBKDF2-HMAC-SHA256 through WebCrypto, which runs in Node and workerd)
 * and access tokens (160 random bits shown once; only their SHA-256 is stored).
 *
 * Work factor: 100,000 iterations by default ([security] PASSWORD_HASH_ITERATIONS, 10k–100k;
 * Cloudflare Workers cap PBKDF2 at 100,000). Measured cost: about 20 ms per hash in Node 24 and in
 * workerd on the reference machine. The iteration count is stored with each hash, so raising it
 * later keeps old hashes valid.
 */
import * as nodeCrypto from "node:crypto";
import { createHash, createHmac } from "node:crypto";

const enc = new TextEncoder();
const hex = (buf: ArrayBuffer | Uint8Array) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
const unhex = (s: string) => new Uint8Array((s.match(/../g) ?? []).map((h) => parseInt(h, 16)));

async function pbkdf2(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", enc.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations }, key, 256);
  return new Uint8Array(bits);
}

/** Constant-time comparison of two byte strings of equal length. */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!; // !: i < a.length === b.length
  return diff === 0;
}

export const PASSWORD_ALGO = "pbkdf2_sha256";

/** Hashes a password into the self-describing form `pbkdf2_sha256$<iterations>$<salt>$<hash>`. */
export async function hashPassword(password: string, iterations: number): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return `${PASSWORD_ALGO}$${iterations}$${hex(salt)}$${hex(await pbkdf2(password, salt, iterations))}`;
}

const DUMMY_HASH = `${PASSWORD_ALGO}$100000$00000000000000000000000000000000$${"0".repeat(64)}`;

/**
 * Verifies a password against a stored hash. With no stored hash (unknown user, external account)
 * it still spends the same work on a dummy hash, so timing does not reveal whether a user exists.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const usable = stored && stored.startsWith(`${PASSWORD_ALGO}$`);
  const seen = usable ? verifiedKey(password, stored) : null;
  if (seen !== null && recentlyVerified(seen)) return true;
  const [, iter, salt, hash] = (usable ? stored : DUMMY_HASH).split("$");
  // A stored hash missing its salt or its hash verifies nothing (not a TypeError: a 500 on sign-in).
  if (salt === undefined || hash === undefined) return false;
  const iterations = Number(iter);
  if (!Number.isSafeInteger(iterations) || iterations < 1 || iterations > 1_000_000) return false;
  const derived = await pbkdf2(password, unhex(salt), iterations);
  const ok = equalBytes(derived, unhex(hash)) && !!usable;
  if (ok && seen !== null) remember(seen);
  return ok;
}

/*
 * Basic authentication sends the password with every request, and PBKDF2 costs ~15–20 ms of CPU
 * each time. A successful verification is remembered for VERIFIED_TTL_MS: the key is an HMAC, under
 * a random key of this process, of the stored hash and the password — a changed password (new
 * stored hash) misses, nothing of the password is kept, and only correct passwords are cached, so a
 * hit tells nothing to someone who does not already know the password.
 */
const VERIFIED_TTL_MS = 5 * 60_000;
const VERIFIED_MAX = 1024;
const VERIFIED = new Map<string, number>();
// Made on first use: a Worker may not generate random values at start-up (global scope).
let processKey: Uint8Array | null = null;

const verifiedKey = (password: string, stored: string) => {
  processKey ??= crypto.getRandomValues(new Uint8Array(32));
  return createHmac("sha256", processKey).update(stored).update("\0").update(password).digest("hex");
};

function recentlyVerified(key: string): boolean {
  const at = VERIFIED.get(key);
  if (at === undefined) return false;
  if (Date.now() - at < VERIFIED_TTL_MS) return true;
  VERIFIED.delete(key);
  return false;
}

function remember(key: string) {
  VERIFIED.delete(key);
  VERIFIED.set(key, Date.now());
  // Insertion order is age order: drop the oldest beyond the bound.
  if (VERIFIED.size > VERIFIED_MAX) VERIFIED.delete(VERIFIED.keys().next().value as string);
}

/** A new access token: 40 hex characters (Gitea's format), from 160 random bits. */
export const newToken = () => hex(crypto.getRandomValues(new Uint8Array(20)));

type OneShot = (algorithm: string, data: string, encoding: "hex" | "base64url") => string;
/** node:crypto's one-shot `hash` (Node ≥ 21.7), where the runtime has it. */
const oneShot = (nodeCrypto as unknown as { hash?: OneShot }).hash;

/**
 * SHA-256 of a string, synchronously (node:crypto: Node, and workerd with nodejs_compat; no
 * WebCrypto job per request). The one-shot form costs about half of createHash's for the short
 * inputs of a request (a token, a response body).
 */
export const sha256 = (data: string, encoding: "hex" | "base64url"): string =>
  oneShot ? oneShot("sha256", data, encoding) : createHash("sha256").update(data).digest(encoding);

/** HMAC of `data` under `key` (webhook signatures: Gitea's X-Gitea-Signature and X-Hub-Signature in hex, Feishu's in base64). */
export const hmac = (algorithm: "sha1" | "sha256", key: string, data: string, encoding: "hex" | "base64" = "hex"): string =>
  createHmac(algorithm, key).update(data).digest(encoding);

/** SHA-1 of a string in hex (Matrix's transaction id of a webhook message). */
export const sha1Hex = (data: string): string => createHash("sha1").update(data).digest("hex");

/** The stored form of a token: SHA-256 hex. Tokens carry 160 random bits, so no salt is needed. */
export async function tokenHash(token: string): Promise<string> {
  return sha256(token, "hex");
}

/** Whether a string has the shape of one of our tokens (used to try basic-auth passwords as tokens). */
export const looksLikeToken = (s: string) => /^[0-9a-f]{40}$/i.test(s);

const b64 = (u: Uint8Array) => btoa(String.fromCharCode(...u));
const unb64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

async function secretKeyOf(secret: string) {
  const raw = await crypto.subtle.digest("SHA-256", enc.encode(`edge-gitea:secrets:${secret}`));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** Encrypts a stored secret (webhook secret, authorization header) with AES-256-GCM under [security] SECRET_KEY. */
export async function encryptSecret(secretKey: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await secretKeyOf(secretKey), enc.encode(plaintext)));
  return `v1:${b64(iv)}:${b64(ct)}`;
}

/** Decrypts what encryptSecret stored (for delivery); throws when the key does not match. */
export async function decryptSecret(secretKey: string, stored: string): Promise<string> {
  const [v, iv, ct] = stored.split(":");
  if (v !== "v1" || !iv || !ct) throw new Error("not an encrypted secret");
  let pt: ArrayBuffer;
  try {
    pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: unb64(iv) }, await secretKeyOf(secretKey), unb64(ct));
  } catch {
    // WebCrypto's own message ("The operation failed for an operation-specific reason") says nothing
    throw new Error("cannot decrypt the stored secret: [security] SECRET_KEY differs from the key it was saved with (or the stored value is damaged)");
  }
  return new TextDecoder().decode(pt);
}
