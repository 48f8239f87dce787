// The OpenAI chat-completions protocol, spoken by OpenAI and by every vendor
// configured as `openai-compatible` (their differences are quirk flags).
import type { ProviderConfig } from "../../config/schema.ts";
import type { HttpClient } from "../http-client.ts";
import { toUpstreamError } from "../http-client.ts";
import { readServerSentEvents } from "../read-sse.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall, type UpstreamEvent } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { mapError } from "./map-error.ts";
import { chunkSchema, createChunkTranslator } from "./parse-stream.ts";

export function createOpenAiCompatibleAdapter(http: HttpClient): ProviderAdapter {
  const urls = new WeakMap<ProviderConfig, URL>();
  const chatCompletionsUrl = (provider: ProviderConfig) => {
    let url = urls.get(provider);
    if (!url) {
      url = new URL("chat/completions", provider.base_url!.endsWith("/") ? provider.base_url : provider.base_url + "/");
      urls.set(provider, url);
    }
    return url;
  };
  return {
    async *stream(call: UpstreamCall): AsyncGenerator<UpstreamEvent> {
      const { provider, signal } = call;
      const headers: Record<string, string> = { accept: call.stream ? "text/event-stream" : "application/json" };
      if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
      const response = await http.post(chatCompletionsUrl(provider), headers, JSON.stringify(convertRequest(call)), {
        signal,
        // A JSON answer comes only after the whole generation; a stream starts at once.
        headersTimeoutMs: call.stream ? provider.timeout_ms : provider.request_timeout_ms,
        bodyTimeoutMs: provider.timeout_ms,
      });
      try {
        if (response.statusCode < 200 || response.statusCode >= 300) {
          throw mapError(response.statusCode, await response.body.text());
        }
        const translator = createChunkTranslator();
        if (call.stream) {
          const contentType = String(response.headers["content-type"] ?? "");
          if (!contentType.startsWith("text/event-stream")) {
            throw new UpstreamError(`upstream answered a stream request with ${contentType || "no content type"}`, { retryable: true, reason: "invalid_answer" });
          }
          for await (const event of readServerSentEvents(response.body)) {
            // Read on to the body's end: leaving the loop early destroys the body with an AbortError.
            if (event.data !== "[DONE]") yield* translator.translate(parseChunk(event.data));
          }
        } else {
          yield* translator.translate(parseChunk(await response.body.text()));
        }
        if (!translator.complete()) {
          // A cut connection can look like a clean end: without finish and usage the answer is partial and unpriceable.
          throw new UpstreamError("upstream answer ended without its finish reason and usage", { retryable: true, reason: "truncated" });
        }
        yield* translator.end();
      } catch (error) {
        throw toUpstreamError(error, signal);
      } finally {
        // An unread body is cut (so an abandoned upstream stops generating). Destroying
        // it emits an AbortError, which must have a listener or it crashes the process.
        if (!response.body.readableEnded) {
          response.body.once("error", () => {});
          response.body.destroy();
        }
      }
    },
  };
}

function parseChunk(data: string) {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw new UpstreamError("upstream sent invalid JSON", { retryable: true, reason: "invalid_json" });
  }
  // Vendors report failures inside an open stream as an `error` object.
  const inStreamError = (json as { error?: { message?: string; code?: unknown } }).error;
  if (inStreamError) throw new UpstreamError(inStreamError.message ?? "upstream error", { retryable: true, reason: "stream_error" });
  const parsed = chunkSchema.safeParse(json);
  if (!parsed.success) throw new UpstreamError("upstream answer has an unexpected shape", { retryable: true, reason: "invalid_shape" });
  return parsed.data;
}
