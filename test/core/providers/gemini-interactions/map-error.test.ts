// The Interactions API answers errors as generateContent does (Google's body, RetryInfo), and reports a failure mid-stream as an error event.
import { describe, expect, it } from "vitest";
import { mapError, streamErrorMessage } from "../../../../core/providers/gemini-interactions/map-error.ts";

const googleError = (code: number, message: string, status: string, details?: unknown[]) => JSON.stringify({ error: { code, message, status, ...(details && { details }) } });

describe("mapError", () => {
  it.each([
    [400, googleError(400, "Invalid JSON payload received.", "INVALID_ARGUMENT"), false, "Invalid JSON payload received. (INVALID_ARGUMENT)"],
    [404, googleError(404, "Model not found.", "NOT_FOUND"), true, "Model not found. (NOT_FOUND)"],
    [429, googleError(429, "You exceeded your current quota.", "RESOURCE_EXHAUSTED"), true, "You exceeded your current quota. (RESOURCE_EXHAUSTED)"],
    [503, googleError(503, "The model is overloaded.", "UNAVAILABLE"), true, "The model is overloaded. (UNAVAILABLE)"],
    [502, "<html>Bad Gateway</html>", true, "<html>Bad Gateway</html>"],
  ])("HTTP %i", (status, body, retryable, message) => {
    expect(mapError(status, body)).toMatchObject({ status, retryable, reason: `http_${status}`, message });
  });

  it("reads the wait of Google's RetryInfo", () => {
    const body = googleError(429, "Quota exceeded.", "RESOURCE_EXHAUSTED", [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37.2s" }]);
    expect(mapError(429, body).retryAfterSeconds).toBe(38);
  });
});

describe("streamErrorMessage", () => {
  it.each([
    [{ code: "UNAVAILABLE", message: "Overloaded." }, "Overloaded. (UNAVAILABLE)"],
    [{ message: "Overloaded." }, "Overloaded."],
    [undefined, "upstream error"],
  ])("%j", (error, message) => {
    expect(streamErrorMessage(error)).toBe(message);
  });
});
