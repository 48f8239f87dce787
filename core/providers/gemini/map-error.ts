import { httpErrorWithMessage } from "../http-exchange.ts";
import type { UpstreamError } from "../types.ts";

interface GoogleErrorBody {
  error?: { code?: unknown; message?: unknown; status?: unknown };
}

/** The message of Google's `{error:{code,message,status}}`, when the text is one. */
export function googleErrorMessage(json: unknown): string | undefined {
  // The JSON-array form of streamGenerateContent wraps the error in a one-element array.
  const body = (Array.isArray(json) ? json[0] : json) as GoogleErrorBody | undefined;
  const error = body?.error;
  if (!error || typeof error !== "object" || typeof error.message !== "string") return undefined;
  return typeof error.status === "string" && error.status ? `${error.message} (${error.status})` : error.message;
}

/** Gemini's non-2xx answer (429 RESOURCE_EXHAUSTED and 5xx retryable, per isRetryableStatus). */
export function mapError(status: number, bodyText: string): UpstreamError {
  return httpErrorWithMessage(status, bodyText, googleErrorMessage);
}
