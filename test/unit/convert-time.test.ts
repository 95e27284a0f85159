/** Times on the wire: Gitea marshals Go's time.Time as RFC 3339 in UTC without fractional seconds. */
import { describe, expect, it } from "vitest";
import { goTime, utcTime } from "../../functions/convert/time.ts";
import { isoTime, ZERO_TIME } from "../../functions/convert/user.ts";

describe("isoTime", () => {
  it("formats unix seconds as RFC 3339 UTC, second by second across days, leap days and centuries", () => {
    expect(isoTime(0)).toBe("1970-01-01T00:00:00Z");
    expect(isoTime(86_399)).toBe("1970-01-01T23:59:59Z");
    expect(isoTime(86_400)).toBe("1970-01-02T00:00:00Z");
    expect(isoTime(951_782_399)).toBe("2000-02-28T23:59:59Z");
    expect(isoTime(951_868_799)).toBe("2000-02-29T23:59:59Z");
    expect(isoTime(951_868_800)).toBe("2000-03-01T00:00:00Z");
    expect(isoTime(4_107_542_400)).toBe("2100-03-01T00:00:00Z");
    expect(isoTime(2_147_483_648)).toBe("2038-01-19T03:14:08Z");
    expect(isoTime(253_402_300_799)).toBe("9999-12-31T23:59:59Z");
  });

  it("drops fractional seconds as Go's marshalling of a unix-second time does", () => {
    expect(isoTime(1_700_000_000.999)).toBe("2023-11-14T22:13:20Z");
  });

  it("agrees with Date for every second of a day and 10,000 spread instants", () => {
    const viaDate = (unix: number) => `${new Date(unix * 1000).toISOString().slice(0, -5)}Z`;
    const instants = Array.from({ length: 86_400 }, (_, s) => 1_700_006_400 + s);
    for (let i = 0; i < 10_000; i++) instants.push(i * 25_340_230 + (i % 86_400));
    expect(instants.filter((t) => isoTime(t) !== viaDate(t))).toEqual([]);
  });
});

describe("signature times (goTime, utcTime)", () => {
  const sig = (timestamp: number, timezone = "+0000") => ({ name: "a", email: "a@b", timestamp, timezone });

  it("show the commit's own offset (goTime) or UTC (utcTime)", () => {
    expect(goTime(sig(1_700_000_000, "+0530"))).toBe("2023-11-15T03:43:20+05:30");
    expect(goTime(sig(1_700_000_000, "-0000"))).toBe("2023-11-14T22:13:20Z");
    expect(utcTime(sig(1_700_000_000, "+0530"))).toBe("2023-11-14T22:13:20Z");
    expect(goTime(sig(253_402_300_799))).toBe("9999-12-31T23:59:59Z");
    expect(goTime(sig(-62_167_219_200))).toBe("0000-01-01T00:00:00Z");
  });

  it("a time git stores but RFC 3339 cannot show (a year past 9999 or before 0, in the offset shown) is Go's zero time, never an error", () => {
    for (const t of [253_402_300_800, 9_000_000_000_000, 1e20, Number.MAX_SAFE_INTEGER, -62_167_219_201, -1e20]) {
      expect(goTime(sig(t))).toBe(ZERO_TIME);
      expect(utcTime(sig(t))).toBe(ZERO_TIME);
    }
    // in range in UTC, past 9999 in its own offset
    expect(goTime(sig(253_402_300_799, "+0100"))).toBe(ZERO_TIME);
    expect(utcTime(sig(253_402_300_799, "+0100"))).toBe("9999-12-31T23:59:59Z");
  });
});
