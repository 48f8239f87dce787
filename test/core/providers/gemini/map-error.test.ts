import { describe, expect, it } from "vitest";
import { mapError } from "../../../../core/providers/gemini/map-error.ts";

const googleError = (code: number, message: string, status: string) => JSON.stringify({ error: { code, message, status } });

describe("mapError", () => {
  it.each([
    [400, googleError(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"), false, "API key not valid. Please pass a valid API key. (INVALID_ARGUMENT)"],
    [403, googleError(403, "Permission denied.", "PERMISSION_DENIED"), true, "Permission denied. (PERMISSION_DENIED)"],
    [429, googleError(429, "You exceeded your current quota.", "RESOURCE_EXHAUSTED"), true, "You exceeded your current quota. (RESOURCE_EXHAUSTED)"],
    [500, googleError(500, "An internal error has occurred.", "INTERNAL"), true, "An internal error has occurred. (INTERNAL)"],
    [503, googleError(503, "The model is overloaded. Please try again later.", "UNAVAILABLE"), true, "The model is overloaded. Please try again later. (UNAVAILABLE)"],
    [503, `[${googleError(503, "overloaded", "UNAVAILABLE")}]`, true, "overloaded (UNAVAILABLE)"],
    [502, "<html>Bad Gateway</html>", true, "<html>Bad Gateway</html>"],
    [500, "", true, "upstream answered HTTP 500"],
  ])("HTTP %i", (status, body, retryable, message) => {
    const error = mapError(status, body);
    expect(error).toMatchObject({ status, retryable, reason: `http_${status}`, message });
  });
});
