import { httpErrorWithMessage } from "../http-exchange.ts";
import type { UpstreamError } from "../types.ts";

/** An upstream's non-2xx answer, with its own message (`error.message`, or `error` as a string) when it has one. */
export function mapError(status: number, bodyText: string): UpstreamError {
  return httpErrorWithMessage(status, bodyText, (json) => {
    const error = (json as { error?: { message?: unknown } | string }).error;
    const message = typeof error === "string" ? error : error?.message;
    return typeof message === "string" ? message : undefined;
  });
}
