/** Settings: Gitea's section/key names in GITEA__section__KEY form, validated at start-up. */
import { describe, expect, it } from "vitest";
import { formatGoDuration, loadSettings, parseGoDuration, SettingsError } from "../../functions/lib/settings.ts";

describe("loadSettings", () => {
  it("defaults are Gitea's", () => {
    const s = loadSettings({});
    expect(s.api).toEqual({ defaultPagingNum: 30, maxResponseItems: 50, enableSwagger: true });
    expect(s.repository).toEqual({ forcePrivate: false, defaultBranch: "main", disabledRepoUnits: [] });
    expect(s.mirror.minIntervalMs).toBe(600_000);
    expect(s.security.disableQueryAuthToken).toBe(false);
    expect(s.server.rootUrl).toBeNull();
  });

  it("reads GITEA__section__KEY values", () => {
    const s = loadSettings({
      GITEA__server__ROOT_URL: "https://git.example.com/sub",
      GITEA__repository__FORCE_PRIVATE: "true",
      GITEA__repository__DEFAULT_BRANCH: "trunk",
      GITEA__repository__DISABLED_REPO_UNITS: "repo.wiki, repo.projects",
      GITEA__mirror__MIN_INTERVAL: "1h30m",
      GITEA__api__DEFAULT_PAGING_NUM: "10",
      GITEA__api__MAX_RESPONSE_ITEMS: "20",
      GITEA__security__DISABLE_QUERY_AUTH_TOKEN: "1",
      GITEA__admin__USER_DISABLED_FEATURES: "deletion",
      GITEA__admin__EXTERNAL_USER_DISABLE_FEATURES: "manage_credentials",
    });
    expect(s.server.rootUrl).toBe("https://git.example.com/sub/");
    expect(s.repository).toEqual({ forcePrivate: true, defaultBranch: "trunk", disabledRepoUnits: ["repo.wiki", "repo.projects"] });
    expect(s.mirror.minIntervalMs).toBe(5_400_000);
    expect(s.api.defaultPagingNum).toBe(10);
    expect(s.security.disableQueryAuthToken).toBe(true);
    expect(s.admin).toEqual({ userDisabledFeatures: ["deletion"], externalUserDisableFeatures: ["manage_credentials"] });
  });

  it("MIN_INTERVAL below one minute is raised to one minute, as Gitea does", () => {
    expect(loadSettings({ GITEA__mirror__MIN_INTERVAL: "10s" }).mirror.minIntervalMs).toBe(60_000);
  });

  it.each([
    ["GITEA__repository__FORCE_PRIVATE", "maybe"],
    ["GITEA__api__DEFAULT_PAGING_NUM", "ten"],
    ["GITEA__api__MAX_RESPONSE_ITEMS", "0"],
    ["GITEA__repository__DISABLED_REPO_UNITS", "repo.code,repo.nope"],
    ["GITEA__mirror__MIN_INTERVAL", "soon"],
    ["GITEA__server__ROOT_URL", "not a url"],
    ["GITEA__admin__EXTERNAL_USER_DISABLE_FEATURES", "everything"],
    ["GITEA__repository__DEFAULT_BRANCH", "bad..branch"],
    ["GITEA__webhook__ALLOWED_HOST_LIST", "external,10.0.0.0/33"],
    ["GITEA__webhook__ALLOWED_HOST_LIST", "fd00::/129"],
    ["GITEA__webhook__ALLOWED_HOST_LIST", "http://hooks.example"],
  ])("an invalid %s stops start-up with a message naming the key", (key, value) => {
    expect(() => loadSettings({ [key]: value })).toThrow(SettingsError);
    expect(() => loadSettings({ [key]: value })).toThrow(key);
  });

  it("the webhook allow list is [security] ALLOWED_HOST_LIST (the spec's key), else the older [webhook] one, else external", () => {
    expect(loadSettings({}).webhook.allowedHostList).toEqual(["external"]);
    expect(loadSettings({ GITEA__webhook__ALLOWED_HOST_LIST: "loopback" }).webhook.allowedHostList).toEqual(["loopback"]);
    expect(loadSettings({ GITEA__security__ALLOWED_HOST_LIST: "Private, *.corp.example" }).webhook.allowedHostList).toEqual(["private", "*.corp.example"]);
    expect(loadSettings({ GITEA__security__ALLOWED_HOST_LIST: "private", GITEA__webhook__ALLOWED_HOST_LIST: "loopback" }).webhook.allowedHostList).toEqual(["private"]);
    expect(() => loadSettings({ GITEA__security__ALLOWED_HOST_LIST: "10.0.0.0/33" })).toThrow("GITEA__security__ALLOWED_HOST_LIST");
    expect(loadSettings({ GITEA__security__ALLOWED_HOST_LIST: " , ", GITEA__webhook__ALLOWED_HOST_LIST: "loopback" }).webhook.allowedHostList).toEqual(["loopback"]);
  });

  it("MAX_RESPONSE_ITEMS below DEFAULT_PAGING_NUM is refused", () => {
    expect(() => loadSettings({ GITEA__api__DEFAULT_PAGING_NUM: "40", GITEA__api__MAX_RESPONSE_ITEMS: "20" })).toThrow("GITEA__api__MAX_RESPONSE_ITEMS");
  });
});

describe("Go durations", () => {
  it("parse and format like Go", () => {
    expect(parseGoDuration("8h")).toBe(28_800_000);
    expect(parseGoDuration("1h30m15s")).toBe(5_415_000);
    expect(parseGoDuration("0")).toBe(0);
    expect(parseGoDuration("10x")).toBeNull();
    expect(parseGoDuration("")).toBeNull();
    expect(formatGoDuration(28_800_000)).toBe("8h0m0s");
    expect(formatGoDuration(600_000)).toBe("10m0s");
    expect(formatGoDuration(45_000)).toBe("45s");
  });
});
