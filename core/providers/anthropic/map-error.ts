import { httpErrorWithMessage } from "../http-exchange.ts";
import type { UpstreamError } from "../types.ts";

/** The message of Anthropic's `{"type":"error","error":{"type","message"}}`, with its type. */
export function anthropicErrorMessage(json: unknown): string | undefined {
  const error = (json as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  if (!error || typeof error.message !== "string") return undefined;
  return typeof error.type === "string" ? `${error.message} (${error.type})` : error.message;
}

/** Anthropic's non-2xx answer; 529 overloaded and 5xx fall back, as isRetryableStatus says. */
export function mapError(status: number, bodyText: string): UpstreamError {
  return httpErrorWithMessage(status, bodyText, anthropicErrorMessage);
}
