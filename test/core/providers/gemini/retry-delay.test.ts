// Gemini asks for a wait in its error body (google.rpc.RetryInfo), not in a Retry-After header.
import { describe, expect, it } from "vitest";
import { mapError } from "../../../../core/providers/gemini/map-error.ts";

const quotaError = (details: unknown[]) =>
  JSON.stringify({ error: { code: 429, message: "You exceeded your current quota.", status: "RESOURCE_EXHAUSTED", details } });
const retryInfo = (retryDelay: string) => ({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay });

describe("Gemini's RetryInfo", () => {
  it.each([
    ["37s", 37],
    ["0.5s", 1],
    ["12.000000001s", 13],
  ])("retryDelay %s is a wait of %i whole seconds", (delay, seconds) => {
    const body = quotaError([{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [] }, retryInfo(delay)]);
    expect(mapError(429, body).retryAfterSeconds).toBe(seconds);
  });

  it("reads the JSON-array form of streamGenerateContent's error too", () => {
    expect(mapError(429, `[${quotaError([retryInfo("4s")])}]`).retryAfterSeconds).toBe(4);
  });

  it.each([
    ["no details", quotaError([])],
    ["an unreadable delay", quotaError([retryInfo("soon")])],
    ["a body that is not JSON", "<html>Too Many Requests</html>"],
  ])("%s: no wait", (_name, body) => {
    expect(mapError(429, body).retryAfterSeconds).toBeUndefined();
  });
});
