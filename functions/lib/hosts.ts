/**
 * Which hosts outbound requests (webhooks) may reach: Gitea's `[webhook] ALLOWED_HOST_LIST`
 * semantics (`external` by default; `private`, `loopback`, `*`, CIDRs, host globs). IP literals are
 * classified, including the IPv4-mapped, NAT64 and 6to4 IPv6 forms that wrap internal addresses
 * (GHSA-2r5c-gw76-rh3w); names that can only mean this machine count as loopback. Names are not
 * resolved here: delivery must re-check the resolved address and every redirect hop.
 */

type Kind = "loopback" | "private" | "external" | "blocked";
/** An IPv4 address's 4 octets; an IPv6 address's 8 groups. */
type V4 = [number, number, number, number];
type V6 = [number, number, number, number, number, number, number, number];

const v4 = (s: string): V4 | null => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const p: V4 = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
  return p.every((x) => x <= 255) ? p : null;
};

function classifyV4([a, b, c]: V4): Kind {
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  // link-local (incl. cloud metadata 169.254.169.254), CGNAT, "this network", benchmarking, multicast, reserved
  if ((a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127) || a === 0 || (a === 198 && (b === 18 || b === 19)) || a >= 224) return "blocked";
  // 192.0.0.0/24 (IETF protocol assignments) and 192.0.2.0/24 (TEST-NET-1) only: the rest of
  // 192.0.0.0/16 is public address space (Gitea counts it external).
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "blocked";
  return "external";
}

/** Expands an IPv6 literal to 8 16-bit groups, or null. */
function v6Groups(s: string): V6 | null {
  let str = s;
  const tail = /(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(str)?.[1];
  if (tail !== undefined) {
    const p = v4(tail);
    if (!p) return null;
    str = str.slice(0, -tail.length) + `${((p[0] << 8) | p[1]).toString(16)}:${((p[2] << 8) | p[3]).toString(16)}`;
  }
  const halves = str.split("::");
  if (halves.length > 2) return null;
  const parse = (h: string) => (h ? h.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)) : []);
  const [left = "", right] = halves; // split returns at least one part; `right` only after a "::"
  const head = parse(left);
  const rest = right === undefined ? [] : parse(right);
  const fill = right === undefined ? 0 : 8 - head.length - rest.length;
  const groups = [...head, ...Array(Math.max(fill, 0)).fill(0), ...rest];
  return isV6(groups) ? groups : null;
}

const isV6 = (g: number[]): g is V6 => g.length === 8 && g.every((x) => Number.isInteger(x));

function classifyV6(g: V6): Kind {
  const embedded = (hi: number, lo: number) => classifyV4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  if (g.every((x, i) => (i < 7 ? x === 0 : x === 1))) return "loopback";
  if (g.every((x) => x === 0)) return "blocked";
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return embedded(g[6], g[7]); // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b) return "blocked"; // NAT64 reaches IPv4 through a translator
  if (g[0] === 0x2002) return "blocked"; // 6to4
  if (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) return "blocked"; // SIIT ::ffff:0:a.b.c.d
  if (g[0] === 0x2001 && g[1] === 0) return "blocked"; // Teredo wraps an IPv4 address
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "blocked"; // documentation
  if (g[0] === 0x100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return "blocked"; // discard-only 100::/64
  if ((g[0] & 0xfe00) === 0xfc00) return "private"; // unique local
  if ((g[0] & 0xffc0) === 0xfec0) return "private"; // site-local (deprecated, routed inside a site)
  if ((g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xff00) === 0xff00) return "blocked"; // link-local, multicast
  if (g.slice(0, 6).every((x) => x === 0)) return "blocked"; // deprecated IPv4-compatible forms
  return "external";
}

/** The kind of a URL hostname (as WHATWG URL normalizes it: decimal/hex IPv4 forms become dotted). */
export function hostKind(hostname: string): Kind {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  const p4 = v4(h);
  if (p4) return classifyV4(p4);
  if (h.includes(":")) {
    const g = v6Groups(h.replace(/%[\s\S]*$/, "")); // without the zone
    return g ? classifyV6(g) : "blocked";
  }
  if (h === "localhost" || h.endsWith(".localhost")) return "loopback";
  if (!h.includes(".") || h.endsWith(".local") || h.endsWith(".internal")) return "private";
  return "external";
}

/** A CIDR entry as Go's net.ParseCIDR reads one (`10.0.0.0/8`, `fd00::/8`): the network's bytes and prefix, or null. */
type Cidr = { bytes: number[]; bits: number };

const v6Bytes = (g: V6) => g.flatMap((x) => [x >> 8, x & 255]);

function parseCidr(entry: string): Cidr | null {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(entry);
  if (!m) return null;
  const [addr, len] = [m[1]!, Number(m[2])]; // !: both groups always participate
  // An octet with a leading zero is refused, as Go refuses it (octal in other parsers).
  const p4 = /(^|\.)0\d/.test(addr) ? null : v4(addr);
  if (p4) return len <= 32 ? { bytes: [...p4], bits: len } : null;
  const g = addr.includes(":") ? v6Groups(addr) : null;
  if (!g || len > 128) return null;
  // Go's IPNet on an IPv4-mapped network (`::ffff:10.0.0.0/104`) is the IPv4 network under the
  // mask's last 32 bits (10.0.0.0/8); a shorter prefix leaves none of them (every IPv4 address)
  const bytes = v6Bytes(g);
  return mapped(bytes) ? { bytes: bytes.slice(12), bits: Math.max(0, len - 96) } : { bytes, bits: len };
}

/** An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), which Go's To4 turns into its IPv4 address. */
const mapped = (b: number[]) => b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255;

/**
 * Whether the address `ip` is in the network, as Go's net.IPNet.Contains: an IPv4-mapped address
 * is its IPv4 address, and an IPv4 address is never in an IPv6 network (`::/0` holds no IPv4).
 */
function inCidr(c: Cidr, ip: string): boolean {
  const p4 = v4(ip);
  const g = p4 ? null : v6Groups(ip);
  let bytes = p4 ? [...p4] : g ? v6Bytes(g) : null;
  if (bytes && mapped(bytes)) bytes = bytes.slice(12);
  if (!bytes || bytes.length !== c.bytes.length) return false;
  for (let i = 0, left = c.bits; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if ((bytes[i]! & mask) !== (c.bytes[i]! & mask)) return false; // !: i < bits / 8 ≤ length
  }
  return true;
}

const BUILTIN = new Set(["*", "external", "private", "loopback"]);
/** A host-name pattern: a name, or a glob of one (`*.corp.example`). */
const HOST_PATTERN = /^[a-z0-9*_.:-]+$/;

/**
 * Whether `entry` (trimmed, lower case) means something in an ALLOWED_HOST_LIST: a kind, a valid
 * CIDR or a host-name pattern. Start-up refuses any other, so a typo in a prefix (`10.0.0.0/33`)
 * cannot become a different network.
 */
export const isHostListEntry = (entry: string) => BUILTIN.has(entry) || (entry.includes("/") ? parseCidr(entry) !== null : HOST_PATTERN.test(entry));

/** Whether `hostname` matches one entry of an ALLOWED_HOST_LIST. */
function matches(entry: string, hostname: string, kind: Kind): boolean {
  const e = entry.trim().toLowerCase();
  if (!e) return false;
  if (e === "*") return true;
  if (e === "external" || e === "private" || e === "loopback") return kind === e;
  if (e.includes("/")) {
    // An entry that is not a valid CIDR matches nothing (never a wider network).
    const cidr = parseCidr(e);
    return cidr !== null && inCidr(cidr, hostname);
  }
  const re = new RegExp(`^${e.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
  return re.test(hostname.toLowerCase());
}

/** Whether a webhook may target `url` under the allow list (default `external`). */
export function isAllowedHost(url: string, allowList: readonly string[]): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const kind = hostKind(u.hostname);
  if (kind === "blocked" && !allowList.includes("*")) return false;
  return allowList.some((e) => matches(e, u.hostname.replace(/^\[|\]$/g, ""), kind));
}

const isIpEntry = (e: string) => BUILTIN.has(e) || e.includes("/");

/**
 * Whether a connection to `address` (what `hostname` resolved to) is allowed — Gitea's
 * hostmatcher at dial time: a host-name entry matches the name, the built-in kinds and CIDRs match
 * the address. An address that is neither loopback, private nor external (link-local, metadata,
 * NAT64, …) only passes `*`.
 */
export function isAllowedAddress(hostname: string, address: string, allowList: readonly string[]): boolean {
  const kind = hostKind(address);
  const entries = allowList.map((e) => e.trim().toLowerCase()).filter(Boolean);
  if (entries.includes("*")) return true;
  if (kind === "blocked") return false;
  // (an IPv4-mapped address is its IPv4 address to a CIDR: inCidr)
  return entries.some((e) => (isIpEntry(e) ? matches(e, address, kind) : matches(e, hostname.toLowerCase().replace(/^\[|\]$/g, ""), kind)));
}
