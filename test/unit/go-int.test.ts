/**
 * parseGoInt reads a path or form value as Go's strconv.ParseInt(s, base, 64) does in Gitea: each
 * expectation below is what Go returns (the value beside a range error, with `saturate`).
 */
import { describe, expect, it } from "vitest";
import { parseGoInt } from "../../functions/lib/query.ts";

const MAX = 9223372036854775807n;
const MIN = -9223372036854775808n;

describe("parseGoInt is Go's strconv.ParseInt", () => {
  it.each([
    ["12", 12],
    ["+1", 1],
    ["-1", -1],
    ["0", 0],
    ["-0", 0],
    ["0x1f", 31],
    ["0X1F", 31],
    ["0o17", 15],
    ["017", 15],
    ["0b101", 5],
    ["1_000", 1000],
    ["0x_1f", 31],
    ["0_17", 15],
    ["9223372036854775807", MAX],
    ["-9223372036854775808", MIN],
  ] as const)("base 0: %s is %s", (s, v) => {
    expect(parseGoInt(s, 0)).toBe(v);
  });

  it.each(["", "+", "-", "0x", "0b", "08", "0b2", "1__0", "_1", "1_", "0_", "0x_", "1e3", " 1", "1 ", "٣", "0x1g", "--1"])("base 0: %j is a syntax error", (s) => {
    expect(parseGoInt(s, 0)).toBeNull();
    expect(parseGoInt(s, 0, true)).toBeNull();
  });

  it("base 10 takes a sign and decimal digits only", () => {
    expect(parseGoInt("010", 10)).toBe(10);
    expect(parseGoInt("-5", 10)).toBe(-5);
    expect(parseGoInt("0x10", 10)).toBeNull();
    expect(parseGoInt("1_0", 10)).toBeNull();
  });

  it("out of range is null, or with saturate the bound Go returns beside its range error", () => {
    expect(parseGoInt("9223372036854775808")).toBeNull();
    expect(parseGoInt("9223372036854775808", 0, true)).toBe(MAX);
    expect(parseGoInt("-9223372036854775809", 0, true)).toBe(MIN);
    expect(parseGoInt("99999999999999999999", 0, true)).toBe(MAX);
    expect(parseGoInt("0xffffffffffffffffff", 0, true)).toBe(MAX);
  });

  it("a value that passes 64 bits is a range error at once, whatever follows; below that a bad character is a syntax error", () => {
    // ParseUint returns as soon as the value overflows uint64, before it reads the "x".
    expect(parseGoInt("18446744073709551616x", 0, true)).toBe(MAX);
    expect(parseGoInt("-18446744073709551616x", 0, true)).toBe(MIN);
    expect(parseGoInt("18446744073709551616x")).toBeNull();
    // Past int64 but not uint64: the "x" is reached, a syntax error (0 in Gitea, so a name lookup).
    expect(parseGoInt("9223372036854775808x", 0, true)).toBeNull();
    expect(parseGoInt("18446744073709551615x", 0, true)).toBeNull();
    // Underscores are judged only at the end, after any range error.
    expect(parseGoInt("1__8446744073709551616", 0, true)).toBe(MAX);
    expect(parseGoInt("1__844674407370955161", 0, true)).toBeNull();
  });
});
