import { httpErrorWithMessage } from "../http-exchange.ts";
import { wholeSeconds } from "../retry-after.ts";
import type { UpstreamError } from "../types.ts";

interface GoogleErrorBody {
  error?: { code?: unknown; message?: unknown; status?: unknown; details?: unknown };
}

/** The message of Google's `{error:{code,message,status}}`, when the text is one. */
export function googleErrorMessage(json: unknown): string | undefined {
  // The JSON-array form of streamGenerateContent wraps the error in a one-element array.
  const body = (Array.isArray(json) ? json[0] : json) as GoogleErrorBody | undefined;
  const error = body?.error;
  if (!error || typeof error !== "object" || typeof error.message !== "string") return undefined;
  return typeof error.status === "string" && error.status ? `${error.message} (${error.status})` : error.message;
}

/** Gemini's non-2xx answer (429 RESOURCE_EXHAUSTED and 5xx retryable, per isRetryableStatus), with the wait its RetryInfo asks for. */
export function mapError(status: number, bodyText: string): UpstreamError {
  const error = httpErrorWithMessage(status, bodyText, googleErrorMessage);
  error.retryAfterSeconds = retryDelaySeconds(bodyText);
  return error;
}

/** Gemini says when to retry in the body, not in a header: `details: [{"@type": "...google.rpc.RetryInfo", "retryDelay": "37s"}]`. */
function retryDelaySeconds(bodyText: string): number | undefined {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  const details = ((Array.isArray(json) ? json[0] : json) as GoogleErrorBody | undefined)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details as { "@type"?: unknown; retryDelay?: unknown }[]) {
    if (!String(detail?.["@type"]).endsWith("google.rpc.RetryInfo") || typeof detail.retryDelay !== "string") continue;
    // A protobuf Duration in JSON: seconds with up to nine decimals and an "s".
    const match = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay);
    if (match) return wholeSeconds(Number(match[1]));
  }
  return undefined;
}
