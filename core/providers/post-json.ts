// One JSON request and its JSON answer, for the small side calls a protocol
// makes besides generating (counting tokens): post, map a non-2xx answer to
// the protocol's UpstreamError (with the wait its headers ask for), parse the
// body, and always consume it.
import { ERROR_TEXT_BYTES } from "./answer-limits.ts";
import type { HttpClient } from "./http-client.ts";
import { toUpstreamError } from "./http-client.ts";
import { parseUpstreamJson } from "./http-exchange.ts";
import { retryAfterSecondsOf } from "./retry-after.ts";
import type { UpstreamCall, UpstreamError } from "./types.ts";

export interface JsonPost {
  url: URL;
  /** Authentication and protocol headers (content-type is set by the client). */
  headers: Record<string, string>;
  body: unknown;
  /** The protocol's error of a non-2xx answer, from its status and body text. */
  errorOf(status: number, bodyText: string): UpstreamError;
}

/** The parsed JSON answer; throws UpstreamError for a failed call or an answer that is not JSON. */
export async function postJson(http: HttpClient, call: Pick<UpstreamCall, "provider" | "signal">, post: JsonPost): Promise<unknown> {
  const { provider, signal } = call;
  const response = await http.stream(post.url, { accept: "application/json", ...post.headers }, JSON.stringify(post.body), {
    signal,
    // A count is answered at once: the stream's patience applies, not a whole generation's.
    headersTimeoutMs: provider.timeout_ms,
    bodyTimeoutMs: provider.timeout_ms,
    provider: provider.id,
  });
  try {
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const error = post.errorOf(response.statusCode, await response.body.text(ERROR_TEXT_BYTES, { truncate: true }));
      error.retryAfterSeconds = retryAfterSecondsOf(response.headers, Date.now()) ?? error.retryAfterSeconds;
      throw error;
    }
    return parseUpstreamJson(await response.body.text());
  } catch (error) {
    throw toUpstreamError(error, signal);
  }
}
