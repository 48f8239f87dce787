// Errors of the Interactions API. A non-2xx answer is Google's
// `{error: {code, message, status, details}}`, as for generateContent: the same
// statuses (429 RESOURCE_EXHAUSTED and 5xx retryable) and the same RetryInfo
// wait, so Gemini's mapping serves both. A failure inside an open stream is an
// `error` event, `{event_type: "error", error: {code, message}}`.
export { googleErrorMessage, mapError } from "../gemini/map-error.ts";

/** The message of an `error` event's error, with its code when it has one. */
export function streamErrorMessage(error: { code?: unknown; message?: unknown } | undefined): string {
  const message = typeof error?.message === "string" && error.message ? error.message : "upstream error";
  return typeof error?.code === "string" && error.code ? `${message} (${error.code})` : message;
}
