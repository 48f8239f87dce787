// The OpenAI chat-completions protocol, spoken by OpenAI and by every vendor
// configured as `openai-compatible` (their differences are quirk flags).
import type { HttpClient } from "../http-client.ts";
import { toUpstreamError } from "../http-client.ts";
import { readServerSentEvents } from "../read-sse.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall, type UpstreamEvent } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { mapError } from "./map-error.ts";
import { chunkSchema, createChunkTranslator } from "./parse-stream.ts";

export function createOpenAiCompatibleAdapter(http: HttpClient): ProviderAdapter {
  const urls = new WeakMap<object, URL>();
  const urlOf = (provider: { base_url?: string }) => {
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
      const url = urlOf(provider);
      const response = await http.post(
        url,
        { authorization: `Bearer ${call.apiKey}`, accept: call.stream ? "text/event-stream" : "application/json" },
        JSON.stringify(convertRequest(call)),
        { signal, timeoutMs: provider.timeout_ms },
      );
      try {
        if (response.statusCode < 200 || response.statusCode >= 300) {
          throw mapError(response.statusCode, await response.body.text());
        }
        const translator = createChunkTranslator();
        if (call.stream) {
          let done = false;
          for await (const event of readServerSentEvents(response.body)) {
            // Read on to the body's end: leaving the loop early destroys the body with an AbortError.
            if (done) continue;
            if (event.data === "[DONE]") {
              done = true;
              continue;
            }
            yield* translator.translate(parseChunk(event.data));
          }
        } else {
          yield* translator.translate(parseChunk(await response.body.text()));
        }
        yield* translator.end();
      } catch (error) {
        throw toUpstreamError(error, signal);
      } finally {
        // Release the pooled connection whatever happened (a no-op once consumed).
        response.body.destroy();
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
