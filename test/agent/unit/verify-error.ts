/** The one assertion of the verifier tests: `f` throws a VerifyError of `check` with `message` (exact text, or matching). */
import { expect } from "vitest";
import { VerifyError } from "../../../attestation-agent/verify/tpm.ts";

export function failsCheck(f: () => unknown, check: string, message: RegExp | string) {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err, `expected VerifyError(${check})`).toBeInstanceOf(VerifyError);
  expect([(err as VerifyError).check, (err as VerifyError).message]).toEqual([check, typeof message === "string" ? message : expect.stringMatching(message)]);
}
