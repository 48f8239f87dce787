// The Google Gemini API (generativelanguage.googleapis.com/v1beta):
// POST {base_url}/models/{model}:generateContent for one JSON answer, and
// :streamGenerateContent?alt=sse for Server-Sent Events, key in `x-goog-api-key`.
import type { HttpClient } from "../http-client.ts";
import { toUpstreamError } from "../http-client.ts";
import { readServerSentEvents } from "../read-sse.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall, type UpstreamEvent } from "../types.ts";
import { convertRequest } from "./convert-request.ts";
import { googleErrorMessage, mapError } from "./map-error.ts";
import { createResponseTranslator, responseSchema } from "./parse-response.ts";
import { geminiWarnings } from "./warnings.ts";

export function createGeminiAdapter(http: HttpClient): ProviderAdapter {
  return {
    async *stream(call: UpstreamCall): AsyncGenerator<UpstreamEvent> {
      const { provider, signal } = call;
      const headers: Record<string, string> = { accept: call.stream ? "text/event-stream" : "application/json" };
      if (call.apiKey) headers["x-goog-api-key"] = call.apiKey;
      const response = await http.post(methodUrl(call), headers, JSON.stringify(convertRequest(call)), {
        signal,
        // A JSON answer comes only after the whole generation; a stream starts at once.
        headersTimeoutMs: call.stream ? provider.timeout_ms : provider.request_timeout_ms,
        bodyTimeoutMs: provider.timeout_ms,
      });
      try {
        if (response.statusCode < 200 || response.statusCode >= 300) {
          throw mapError(response.statusCode, await response.body.text());
        }
        const translator = createResponseTranslator();
        if (call.stream) {
          const contentType = String(response.headers["content-type"] ?? "");
          if (!contentType.startsWith("text/event-stream")) {
            throw new UpstreamError(`upstream answered a stream request with ${contentType || "no content type"}`, { retryable: true, reason: "invalid_answer" });
          }
          for await (const event of readServerSentEvents(response.body)) {
            // Read on to the body's end: leaving the loop early destroys the body with an AbortError.
            yield* translator.translate(parseResponse(event.data));
          }
        } else {
          yield* translator.translate(parseResponse(await response.body.text()));
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
    warningsFor: geminiWarnings,
  };
}

/** `{base_url}/models/{model}:method`; the model id may carry Google's `models/` prefix. */
function methodUrl(call: UpstreamCall): URL {
  const base = call.provider.base_url!.replace(/\/+$/, "");
  const model = encodeURIComponent(call.route.provider_model_id.replace(/^models\//, ""));
  return new URL(`${base}/models/${model}:${call.stream ? "streamGenerateContent?alt=sse" : "generateContent"}`);
}

function parseResponse(data: string) {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw new UpstreamError("upstream sent invalid JSON", { retryable: true, reason: "invalid_json" });
  }
  // Google reports a failure inside an open stream as an `error` object.
  const inStreamError = googleErrorMessage(json);
  if (inStreamError !== undefined) throw new UpstreamError(inStreamError, { retryable: true, reason: "stream_error" });
  const parsed = responseSchema.safeParse(json);
  if (!parsed.success) throw new UpstreamError("upstream answer has an unexpected shape", { retryable: true, reason: "invalid_shape" });
  return parsed.data;
}
