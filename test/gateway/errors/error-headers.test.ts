// The headers every error answer carries, whatever format shapes its body.
import { describe, expect, it } from "vitest";
import { errorHeaders } from "../../../gateway/errors/error-headers.ts";
import type { PublicError } from "../../../gateway/errors/http-status.ts";

const error = (status: number, fields: Partial<PublicError> = {}): PublicError => ({
  status,
  type: "invalid_request_error",
  code: "x",
  message: "m",
  param: null,
  retryAfterSeconds: 0,
  metadata: undefined,
  ...fields,
});

describe("error headers", () => {
  it("tell the SDKs not to retry what a retry cannot fix (x-should-retry: false), and leave their own rule for the rest", () => {
    for (const status of [400, 401, 402, 403, 404, 413, 415]) expect(errorHeaders(error(status))["x-should-retry"], String(status)).toBe("false");
    for (const status of [408, 409, 429, 500, 502, 503]) expect(errorHeaders(error(status))).not.toHaveProperty("x-should-retry");
  });

  it("tell them not to retry a 503 that the configuration causes (no provider has its key)", () => {
    expect(errorHeaders(error(503, { code: "no_provider_available" }))["x-should-retry"]).toBe("false");
  });

  it("tell them not to retry the exhausted daily free quota (it resets at midnight), and keep ordinary rate limits retryable", () => {
    expect(errorHeaders(error(429, { code: "free_quota_exhausted", retryAfterSeconds: 43_200 }))["x-should-retry"]).toBe("false");
    for (const code of ["rate_limit_exceeded", "upstream_rate_limited"]) expect(errorHeaders(error(429, { code, retryAfterSeconds: 7 }))).not.toHaveProperty("x-should-retry");
  });

  it("pass the longest wait asked for as Retry-After", () => {
    expect(errorHeaders(error(429, { retryAfterSeconds: 7 }))["retry-after"]).toBe("7");
    expect(errorHeaders(error(429))).not.toHaveProperty("retry-after");
  });
});
