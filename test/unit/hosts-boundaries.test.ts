/**
 * The edges of every range in the webhook host classification (issue 12, GHSA-2r5c-gw76-rh3w): the
 * first and last address of each blocked, private and loopback range and the allowed address just
 * outside it, in every spelling that reaches the classifier — dotted IPv4; decimal, hex and octal
 * forms (the URL parser turns them into dotted ones); the IPv4-mapped IPv6 form in hex and dotted
 * notation; and the NAT64 and 6to4 prefixes, which are refused whatever IPv4 address they wrap.
 */
import { describe, expect, it } from "vitest";
import { hostKind, isAllowedAddress, isAllowedHost, isHostListEntry } from "../../functions/lib/hosts.ts";

type Kind = ReturnType<typeof hostKind>;

/** [first address, last address, kind] of each IPv4 range, and the kind of the addresses around it. */
const V4_RANGES: { range: string; first: string; last: string; kind: Kind; below?: string; above?: string }[] = [
  { range: "0.0.0.0/8 (this network)", first: "0.0.0.0", last: "0.255.255.255", kind: "blocked", above: "1.0.0.0" },
  { range: "10.0.0.0/8", first: "10.0.0.0", last: "10.255.255.255", kind: "private", below: "9.255.255.255", above: "11.0.0.0" },
  { range: "100.64.0.0/10 (CGNAT)", first: "100.64.0.0", last: "100.127.255.255", kind: "blocked", below: "100.63.255.255", above: "100.128.0.0" },
  { range: "127.0.0.0/8", first: "127.0.0.0", last: "127.255.255.255", kind: "loopback", below: "126.255.255.255", above: "128.0.0.0" },
  { range: "169.254.0.0/16 (link-local, cloud metadata)", first: "169.254.0.0", last: "169.254.255.255", kind: "blocked", below: "169.253.255.255", above: "169.255.0.0" },
  { range: "172.16.0.0/12", first: "172.16.0.0", last: "172.31.255.255", kind: "private", below: "172.15.255.255", above: "172.32.0.0" },
  { range: "192.0.0.0/24 (IETF protocol assignments)", first: "192.0.0.0", last: "192.0.0.255", kind: "blocked", below: "191.255.255.255", above: "192.0.1.0" },
  { range: "192.0.2.0/24 (TEST-NET-1)", first: "192.0.2.0", last: "192.0.2.255", kind: "blocked", below: "192.0.1.255", above: "192.0.3.0" },
  { range: "192.168.0.0/16", first: "192.168.0.0", last: "192.168.255.255", kind: "private", below: "192.167.255.255", above: "192.169.0.0" },
  { range: "198.18.0.0/15 (benchmarking)", first: "198.18.0.0", last: "198.19.255.255", kind: "blocked", below: "198.17.255.255", above: "198.20.0.0" },
  { range: "224.0.0.0/3 (multicast, reserved, broadcast)", first: "224.0.0.0", last: "255.255.255.255", kind: "blocked", below: "223.255.255.255" },
];

/** Every address of the table with its expected kind. */
const V4_CASES: [string, Kind][] = V4_RANGES.flatMap((r) => [
  [r.first, r.kind],
  [r.last, r.kind],
  ...(r.below ? [[r.below, "external"] as [string, Kind]] : []),
  ...(r.above ? [[r.above, "external"] as [string, Kind]] : []),
]);

const octets = (ip: string) => ip.split(".").map(Number);
const toNumber = (ip: string) => octets(ip).reduce((n, o) => n * 256 + o, 0);
const hex16 = (ip: string) => {
  const [a, b, c, d] = octets(ip);
  return `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
};
/** What the default allow list (`external`) decides for an address of this kind. */
const allowedByDefault = (kind: Kind) => kind === "external";

describe("IPv4 ranges: first, last and the neighbours outside", () => {
  it.each(V4_CASES)("%s is %s", (ip, kind) => {
    expect(hostKind(ip)).toBe(kind);
    expect(isAllowedHost(`http://${ip}/hook`, ["external"])).toBe(allowedByDefault(kind));
  });

  it.each(V4_CASES)("%s (%s) in decimal, hex and octal spellings", (ip, kind) => {
    const n = toNumber(ip);
    const spellings = [`${n}`, `0x${n.toString(16)}`, `0${n.toString(8)}`, octets(ip).map((o) => `0x${o.toString(16)}`).join("."), octets(ip).map((o) => `0${o.toString(8)}`).join(".")];
    for (const s of spellings) expect(isAllowedHost(`http://${s}/`, ["external"]), s).toBe(allowedByDefault(kind));
  });

  it.each(V4_CASES)("%s (%s) mapped into IPv6 (::ffff:a.b.c.d, hex and dotted) keeps its kind", (ip, kind) => {
    for (const s of [`::ffff:${ip}`, `::ffff:${hex16(ip)}`, `0:0:0:0:0:ffff:${hex16(ip)}`, `[::FFFF:${ip}]`]) expect(hostKind(s), s).toBe(kind);
    expect(isAllowedHost(`http://[::ffff:${ip}]/`, ["external"])).toBe(allowedByDefault(kind));
  });

  it.each(V4_CASES)("%s wrapped in NAT64 (64:ff9b::/32) or 6to4 (2002::/16) is refused, whatever it is", (ip) => {
    for (const s of [`64:ff9b::${ip}`, `64:ff9b::${hex16(ip)}`, `2002:${hex16(ip)}::`, `2002:${hex16(ip)}::1`]) expect(hostKind(s), s).toBe("blocked");
    expect(isAllowedHost(`http://[64:ff9b::${ip}]/`, ["external"])).toBe(false);
    expect(isAllowedHost(`http://[2002:${hex16(ip)}::]/`, ["external"])).toBe(false);
  });
});

/** [first, last, kind] of each IPv6 range, with the addresses just outside it. */
const V6_RANGES: { range: string; first: string; last: string; kind: Kind; below?: string; above?: string }[] = [
  { range: ":: (unspecified)", first: "::", last: "::", kind: "blocked" },
  { range: "::1 (loopback)", first: "::1", last: "::1", kind: "loopback" },
  // The deprecated IPv4-compatible form ::a.b.c.d (everything else in ::/96).
  { range: "::/96 (IPv4-compatible)", first: "::2", last: "::ffff:ffff", kind: "blocked", above: "0:0:0:0:0:1::" },
  { range: "64:ff9b::/32 (NAT64)", first: "64:ff9b::", last: "64:ff9b:ffff:ffff:ffff:ffff:ffff:ffff", kind: "blocked", below: "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", above: "64:ff9c::" },
  { range: "2002::/16 (6to4)", first: "2002::", last: "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kind: "blocked", below: "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", above: "2003::" },
  { range: "fc00::/7 (unique local)", first: "fc00::", last: "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kind: "private", below: "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", above: "fe00::" },
  { range: "fe80::/10 (link-local)", first: "fe80::", last: "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kind: "blocked", below: "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
  { range: "fec0::/10 (site-local, deprecated)", first: "fec0::", last: "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kind: "private" },
  { range: "::ffff:0:0/96 (SIIT)", first: "::ffff:0:0:0", last: "::ffff:0:ffff:ffff", kind: "blocked", below: "0:0:0:0:fffe:ffff:ffff:ffff", above: "0:0:0:0:ffff:1::" },
  { range: "2001::/32 (Teredo)", first: "2001::", last: "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", kind: "blocked", below: "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", above: "2001:1::" },
  { range: "2001:db8::/32 (documentation)", first: "2001:db8::", last: "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", kind: "blocked", below: "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", above: "2001:db9::" },
  { range: "100::/64 (discard-only)", first: "100::", last: "100::ffff:ffff:ffff:ffff", kind: "blocked", below: "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", above: "100:0:0:1::" },
  { range: "ff00::/8 (multicast)", first: "ff00::", last: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kind: "blocked" },
];
const V6_CASES: [string, Kind][] = V6_RANGES.flatMap((r) => [
  [r.first, r.kind],
  [r.last, r.kind],
  ...(r.below ? [[r.below, "external"] as [string, Kind]] : []),
  ...(r.above ? [[r.above, "external"] as [string, Kind]] : []),
]);

describe("IPv4 ranges: the second octet counts only after the first", () => {
  // 172.16–31, 192.168, 169.254, 100.64–127 and 198.18–19: the same second octet after another first octet is external.
  it.each(["1.16.0.1", "1.31.0.1", "1.168.0.1", "1.254.0.1", "1.64.0.1", "1.127.0.1", "1.18.0.1", "1.19.0.1", "8.168.8.8"])("%s is external", (ip) => {
    expect(hostKind(ip)).toBe("external");
    expect(isAllowedHost(`http://${ip}/`, ["external"])).toBe(true);
  });
});

describe("IPv6 ranges: first, last and the neighbours outside", () => {
  it.each(V6_CASES)("%s is %s", (ip, kind) => {
    expect(hostKind(ip)).toBe(kind);
    expect(hostKind(`[${ip.toUpperCase()}]`)).toBe(kind);
    expect(isAllowedHost(`http://[${ip}]:8080/hook`, ["external"])).toBe(allowedByDefault(kind));
  });

  it("the IPv4-mapped prefix ends where it ends: ::fffe:… and ::1:0:0:0 are not mapped", () => {
    expect(hostKind("::fffe:7f00:1")).toBe("external");
    expect(hostKind("0:0:0:0:1:ffff:7f00:1")).toBe("external");
    expect(hostKind("::ffff:7f00:1")).toBe("loopback");
  });

  it("NAT64 is 64:ff9b::/32 only: ff9b as the second group after another first group is external", () => {
    expect(hostKind("2001:ff9b::1")).toBe("external");
    expect(hostKind("65:ff9b::808:808")).toBe("external");
    expect(hostKind("64:ff9b::808:808")).toBe("blocked");
  });

  it("a zone index is ignored; anything that does not parse as IPv6 is refused", () => {
    expect(hostKind("fe80::1%eth0")).toBe("blocked");
    expect(hostKind("2606:4700::1111%eth0")).toBe("external");
    for (const bad of ["1::2::3", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "12345::1", "g::1", "::ffff:256.0.0.1", "::ffff:1.2.3"]) expect(hostKind(bad), bad).toBe("blocked");
    expect(hostKind("1:2:3:4:5:6:7:8")).toBe("external");
    expect(hostKind("1:2:3:4:5:6:1.2.3.4")).toBe("external");
    expect(hostKind("::1.2.3.4")).toBe("blocked");
  });
});

describe("names", () => {
  it.each([
    ["localhost", "loopback"],
    ["LOCALHOST.", "loopback"],
    ["api.localhost", "loopback"],
    ["localhost.example.com", "external"],
    ["notlocalhost", "private"],
    ["intranet", "private"],
    ["printer.local", "private"],
    ["db.internal", "private"],
    ["local.example.com", "external"],
    ["internal.example.com", "external"],
    ["hooks.example.com", "external"],
    ["1.2.3.4.5", "external"],
    ["256.1.1.1", "external"],
    // A name that starts with an address is a name (the address is no prefix match).
    ["10.0.0.1.example.com", "external"],
    ["127.0.0.1.nip.io", "external"],
  ] as const)("%s is %s", (name, kind) => expect(hostKind(name)).toBe(kind));
});

describe("ALLOWED_HOST_LIST entries", () => {
  it("a CIDR covers its first and last address and nothing outside", () => {
    for (const [ip, inside] of [
      ["10.0.0.0", true],
      ["10.0.0.255", true],
      ["9.255.255.255", false],
      ["10.0.1.0", false],
    ] as const) {
      expect(isAllowedHost(`http://${ip}/`, ["10.0.0.0/24"]), ip).toBe(inside);
    }
    expect(isAllowedHost("http://10.1.2.3/", ["10.0.0.0/8"])).toBe(true);
    expect(isAllowedHost("http://11.0.0.0/", ["10.0.0.0/8"])).toBe(false);
    expect(isAllowedHost("http://10.0.0.7/", ["10.0.0.7/32"])).toBe(true);
    expect(isAllowedHost("http://10.0.0.8/", ["10.0.0.7/32"])).toBe(false);
    expect(isAllowedHost("http://8.8.8.8/", ["0.0.0.0/0"])).toBe(true);
    expect(isAllowedHost("http://200.1.1.1/", ["128.0.0.0/1"])).toBe(true);
    expect(isAllowedHost("http://127.0.0.1/", ["128.0.0.0/1"])).toBe(false);
  });

  it("a CIDR entry is the whole entry, its octets one to three digits wide, its network masked at any prefix", () => {
    expect(isAllowedHost("http://192.168.10.7/", ["192.168.10.0/24"])).toBe(true);
    expect(isAllowedHost("http://192.168.11.7/", ["192.168.10.0/24"])).toBe(false);
    expect(isAllowedHost("http://192.168.10.7/", ["x192.168.10.0/24"])).toBe(false);
    expect(isAllowedHost("http://192.168.10.7/", ["192.168.10.0/24x"])).toBe(false);
    expect(isAllowedHost("http://10.1.5.9/", ["10.1.0.0/16"])).toBe(true);
    expect(isAllowedHost("http://10.2.0.0/", ["10.1.0.0/16"])).toBe(false);
  });

  it("a CIDR never matches a name or an IPv6 address; an invalid network matches nothing", () => {
    expect(isAllowedHost("http://ten.example/", ["10.0.0.0/8"])).toBe(false);
    expect(isAllowedHost("http://[fd00::1]/", ["10.0.0.0/8"])).toBe(false);
    expect(isAllowedHost("http://10.0.0.1/", ["999.0.0.0/8"])).toBe(false);
  });

  it("a prefix out of range, a malformed network or a zero-led octet is no CIDR and matches nothing, never a wider network", () => {
    // 10.0.0.0/33 was read as 0.0.0.0/1 (a shift by 33 - 32 bits wraps), which allowed 127.0.0.1.
    for (const entry of ["10.0.0.0/33", "10.0.0.0/99", "0.0.0.0/33", "10.0.0.0/", "10.0.0/8", "010.0.0.0/8", "::1/129", "fd00::/200", "10.0.0.0/8/8", "x/10.0.0.0/8"]) {
      for (const url of ["http://127.0.0.1/", "http://10.0.0.1/", "http://8.8.8.8/", "http://[::1]/", "http://[fd00::1]/"]) {
        expect(isAllowedHost(url, [entry]), `${entry} ${url}`).toBe(false);
        expect(isAllowedAddress("hook.example", new URL(url).hostname.replace(/^\[|\]$/g, ""), [entry]), `${entry} ${url} at dial`).toBe(false);
      }
      expect(isHostListEntry(entry), entry).toBe(false);
    }
    for (const entry of ["10.0.0.0/8", "10.0.0.1/8", "0.0.0.0/0", "10.0.0.7/32", "fd00::/8", "::1/128", "::/0", "external", "*", "*.corp.example", "hooks"]) expect(isHostListEntry(entry), entry).toBe(true);
  });

  it("an IPv6 CIDR covers its addresses (and an IPv4 CIDR the IPv4-mapped form of its own), as Go's net.IPNet", () => {
    expect(isAllowedHost("http://[fd00::1]/", ["fd00::/8"])).toBe(true);
    expect(isAllowedHost("http://[fdff:ffff::1]/", ["fd00::/8"])).toBe(true);
    expect(isAllowedHost("http://[fe00::1]/", ["fd00::/8"])).toBe(false);
    expect(isAllowedHost("http://[fd12:3456::9]/", ["fd12:3456::/32"])).toBe(true);
    expect(isAllowedHost("http://[fd12:3457::9]/", ["fd12:3456::/32"])).toBe(false);
    expect(isAllowedHost("http://10.0.0.1/", ["fd00::/8"])).toBe(false);
    expect(isAllowedHost("http://[::ffff:10.1.2.3]/", ["10.0.0.0/8"])).toBe(true);
    expect(isAllowedHost("http://[::ffff:11.1.2.3]/", ["10.0.0.0/8"])).toBe(false);
    // an IPv6 network holds no IPv4 address, mapped or not: `::/0` never reaches 127.0.0.1
    for (const entry of ["::/0", "::/1", "::ffff:0:0/96", "::ffff:0:0/80"]) {
      for (const url of ["http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://127.0.0.1/", "http://10.0.0.1/"]) {
        const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
        const ipv4Net = entry.startsWith("::ffff:0:0/");
        expect(isAllowedHost(url, [entry]), `${entry} ${url}`).toBe(ipv4Net);
        expect(isAllowedAddress("hook.example", host, [entry]), `${entry} ${url} at dial`).toBe(ipv4Net);
      }
    }
    // ... but an IPv4-mapped network is the IPv4 network under its last 32 bits, as in Go
    expect(isAllowedAddress("hook.example", "10.9.9.9", ["::ffff:10.0.0.0/104"])).toBe(true);
    expect(isAllowedAddress("hook.example", "11.9.9.9", ["::ffff:10.0.0.0/104"])).toBe(false);
    expect(isAllowedAddress("hook.example", "::ffff:10.9.9.9", ["::ffff:10.0.0.0/104"])).toBe(true);
    expect(isAllowedAddress("hook.example", "fd00::5", ["fd00::/8"])).toBe(true);
    expect(isAllowedAddress("hook.example", "fc00::5", ["fd00::/8"])).toBe(false);
    // A name resolving into the network is matched at dial time by its address, not its name.
    expect(isAllowedAddress("fd00.example", "8.8.8.8", ["fd00::/8"])).toBe(false);
    // only ::ffff:a.b.c.d is an IPv4 address: other IPv6 addresses whose low 32 bits spell one are not
    for (const v6 of ["2001:db8::a00:1", "::a00:1", "::fffe:a00:1", "1::ffff:a00:1"]) expect(isAllowedAddress("hook.example", v6, ["10.0.0.0/8"]), v6).toBe(false);
    expect(isAllowedAddress("hook.example", "::ffff:a00:1", ["10.0.0.0/8"])).toBe(true);
  });

  it("at dial time a blocked address (link-local, the cloud metadata service, NAT64, …) passes only `*`, whatever entry names the host or covers the address (a name that resolves there: DNS rebinding)", () => {
    for (const address of ["169.254.169.254", "fe80::1", "64:ff9b::a9fe:a9fe", "0.0.0.0", "::ffff:169.254.169.254"]) {
      for (const entry of ["hooks.example.com", "*.example.com", "169.254.0.0/16", "::/0", "0.0.0.0/0", "external", "private", "loopback"]) {
        expect(isAllowedAddress("hooks.example.com", address, [entry]), `${address} ${entry}`).toBe(false);
      }
      expect(isAllowedAddress("hooks.example.com", address, ["*"]), address).toBe(true);
    }
    // a host entry admits the name it names at any address that is not blocked
    expect(isAllowedAddress("hooks.example.com", "10.0.0.5", ["hooks.example.com"])).toBe(true);
    expect(isAllowedAddress("other.example.com", "10.0.0.5", ["hooks.example.com"])).toBe(false);
  });

  it("a CIDR may allow a blocked address only with `*`; the kind entries allow exactly their kind", () => {
    expect(isAllowedHost("http://169.254.169.254/", ["169.254.0.0/16"])).toBe(false);
    expect(isAllowedHost("http://169.254.169.254/", ["*"])).toBe(true);
    expect(isAllowedHost("http://169.254.169.254/", ["external", "private", "loopback"])).toBe(false);
    expect(isAllowedHost("http://10.0.0.1/", ["private"])).toBe(true);
    expect(isAllowedHost("http://10.0.0.1/", ["external", "loopback"])).toBe(false);
    expect(isAllowedHost("http://[::1]/", ["loopback"])).toBe(true);
    expect(isAllowedHost("http://[::1]/", ["private"])).toBe(false);
    expect(isAllowedHost("http://[fd00::1]/", ["private"])).toBe(true);
    expect(isAllowedHost("http://8.8.8.8/", ["private", "loopback"])).toBe(false);
    expect(isAllowedHost("http://8.8.8.8/", [])).toBe(false);
  });

  it("entries are trimmed and case-insensitive; blank entries match nothing", () => {
    expect(isAllowedHost("http://10.0.0.1/", [" PRIVATE "])).toBe(true);
    expect(isAllowedHost("http://Hooks.Example.COM/", [" *.EXAMPLE.com"])).toBe(true);
    expect(isAllowedHost("http://8.8.8.8/", ["", "  "])).toBe(false);
  });

  it("a glob matches whole names, its dots literally", () => {
    expect(isAllowedHost("http://ci.corp.example/", ["*.corp.example"])).toBe(true);
    expect(isAllowedHost("http://a.b.corp.example/", ["*.corp.example"])).toBe(true);
    expect(isAllowedHost("http://corp.example/", ["*.corp.example"])).toBe(false);
    expect(isAllowedHost("http://cixcorpxexample/", ["ci.corp.example"])).toBe(false);
    expect(isAllowedHost("http://ci.corp.example.evil.test/", ["*.corp.example"])).toBe(false);
    expect(isAllowedHost("http://evil-ci.corp.example/", ["ci.corp.example"])).toBe(false);
    expect(isAllowedHost("http://ci.corp.example/", ["ci.corp.example"])).toBe(true);
    // Regular-expression characters in an entry are literal.
    expect(isAllowedHost("http://a.b/", ["a+b"])).toBe(false);
    expect(isAllowedHost("http://aab/", ["a+b"])).toBe(false);
  });

  it("an IPv6 host matches a literal entry without its brackets", () => {
    expect(isAllowedHost("http://[fd00::1]/", ["fd00::1"])).toBe(true);
    expect(isAllowedHost("http://[fd00::1]/", ["[fd00::1]"])).toBe(false);
  });

  it("what is not a URL is never allowed", () => {
    for (const bad of ["not a url", "", "http://", "//example.com/x"]) expect(isAllowedHost(bad, ["*"]), bad).toBe(false);
  });
});
