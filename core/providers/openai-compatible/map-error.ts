import { upstreamHttpError, type UpstreamError } from "../types.ts";

/** An upstream's non-2xx answer, with its own message when its body has one. */
export function mapError(status: number, bodyText: string): UpstreamError {
  let message = bodyText.slice(0, 500);
  try {
    const parsed = JSON.parse(bodyText) as { error?: { message?: unknown } | string };
    const inner = typeof parsed.error === "string" ? parsed.error : parsed.error?.message;
    if (typeof inner === "string") message = inner;
  } catch {
    // Not JSON: keep the text.
  }
  return upstreamHttpError(status, message || `upstream answered HTTP ${status}`);
}
