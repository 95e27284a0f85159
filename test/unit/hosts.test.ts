/** Webhook host checks (GHSA-2r5c-gw76-rh3w, go-gitea/gitea#4624): internal targets are refused in every spelling. */
import { describe, expect, it } from "vitest";
import { hostKind, isAllowedHost } from "../../functions/lib/hosts.ts";

describe("the default allow list (external) refuses internal targets", () => {
  it.each([
    "http://127.0.0.1/hook",
    "http://localhost:8080/",
    "http://foo.localhost/",
    "http://10.1.2.3/",
    "http://172.20.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:7f00:1::]/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://2130706433/",
    "http://0x7f.0.0.1/",
    "http://017700000001/",
    "http://intranet/",
    "http://printer.local/",
  ])("%s", (url) => expect(isAllowedHost(url, ["external"])).toBe(false));

  it("public hosts and addresses are allowed", () => {
    expect(isAllowedHost("https://hooks.example.com/x", ["external"])).toBe(true);
    expect(isAllowedHost("http://93.184.216.34/", ["external"])).toBe(true);
    expect(isAllowedHost("http://[2606:4700::1111]/", ["external"])).toBe(true);
  });
});

describe("other allow lists", () => {
  it("private, loopback, CIDR, globs and * as Gitea's ALLOWED_HOST_LIST", () => {
    expect(isAllowedHost("http://10.0.0.5/", ["private"])).toBe(true);
    expect(isAllowedHost("http://127.0.0.1/", ["loopback"])).toBe(true);
    expect(isAllowedHost("http://10.0.0.5/", ["10.0.0.0/24"])).toBe(true);
    expect(isAllowedHost("http://10.0.1.5/", ["10.0.0.0/24"])).toBe(false);
    expect(isAllowedHost("http://ci.corp.example/", ["*.corp.example"])).toBe(true);
    expect(isAllowedHost("http://169.254.169.254/", ["*"])).toBe(true);
    expect(isAllowedHost("not a url", ["*"])).toBe(false);
  });

  it("classifies hosts", () => {
    expect(hostKind("[::1]")).toBe("loopback");
    expect(hostKind("169.254.169.254")).toBe("blocked");
    expect(hostKind("example.org")).toBe("external");
  });
});
