// The HTTP exchange every upstream protocol shares: post the body, refuse a
// non-2xx answer or a "stream" that is not SSE, feed each event (or the one JSON
// answer) to the protocol's translator, insist on a complete answer, and always
// release the body. A protocol only says how its bytes look.
import type { z } from "zod";
import { ERROR_TEXT_BYTES } from "./answer-limits.ts";
import type { HttpClient } from "./http-client.ts";
import { toUpstreamError } from "./http-client.ts";
import { createServerSentEventReader, type ServerSentEvent } from "./read-sse.ts";
import { retryAfterSecondsOf } from "./retry-after.ts";
import type { StreamedBody } from "./streamed-response.ts";
import type { GenerateResponse } from "../../gen/router/v1/inference_pb.js";
import { UpstreamError, upstreamHttpError, type ConvertedRequest, type UpstreamCall, type UpstreamStream } from "./types.ts";

/** Turns a protocol's answer pieces into hub events, remembering what it has seen. */
export interface Translator<Chunk> {
  translate(chunk: Chunk): GenerateResponse[];
  /** Whether the answer's end (finish reason and usage) has arrived. */
  complete(): boolean;
  /** Closes the open block and emits usage and finish. */
  end(): GenerateResponse[];
}

export interface HttpProtocol<Chunk> {
  url(call: UpstreamCall): URL;
  /** Authentication and protocol headers (content-type and accept are set here). */
  headers(call: UpstreamCall): Record<string, string>;
  /** The request body and what it leaves out (a convert-request.ts); throws UpstreamError for a request the protocol cannot carry. */
  convertRequest(call: UpstreamCall): ConvertedRequest;
  /** The error of a non-2xx answer, from its status and body text. */
  errorOf(status: number, bodyText: string): UpstreamError;
  /** One SSE event's data (`event` is its name), or the whole JSON answer; undefined skips it (keep-alives, `[DONE]`). */
  parse(data: string, event: string | undefined): Chunk | undefined;
  translator(): Translator<Chunk>;
}

/**
 * Builds the body at once, so its warnings come with the stream; the request is
 * sent when the stream is first read. A request the protocol cannot carry fails
 * on that first read, where routing handles every upstream error.
 */
export function exchange<Chunk>(http: HttpClient, call: UpstreamCall, protocol: HttpProtocol<Chunk>): UpstreamStream {
  let converted: ConvertedRequest;
  try {
    converted = protocol.convertRequest(call);
  } catch (error) {
    return failed(error);
  }
  const events = send(http, call, protocol, converted.body);
  // Only when there are some: a property added to the generator lives as long as the stream.
  return converted.warnings.length > 0 ? Object.assign(events, { warnings: converted.warnings }) : events;
}

const NO_EVENTS: GenerateResponse[] = [];

async function* failed(error: unknown): AsyncGenerator<GenerateResponse> {
  throw error;
}

async function* send<Chunk>(http: HttpClient, call: UpstreamCall, protocol: HttpProtocol<Chunk>, requestBody: unknown): AsyncGenerator<GenerateResponse> {
  const { signal, stream } = call;
  let body: StreamedBody | undefined;
  try {
    body = await open(http, call, protocol, requestBody);
    // This frame lasts as long as the answer, and a suspended frame keeps every
    // variable it has: it lets the request go once it is sent.
    call = requestBody = undefined!;
    const translator = protocol.translator();
    if (stream) {
      // The body is read here, not through a generator of SSE events: one async step fewer per chunk.
      // Arrays are yielded element by element: `yield*` over one wraps it in an async iterator (a promise and a closure per element).
      const reader = createServerSentEventReader();
      for await (const bytes of body) {
        for (const event of reader.feed(bytes)) for (const response of translate(protocol, translator, event)) yield response;
      }
      for (const event of reader.end()) for (const response of translate(protocol, translator, event)) yield response;
    } else {
      const chunk = protocol.parse(await body.text(), undefined);
      if (chunk !== undefined) for (const response of translator.translate(chunk)) yield response;
    }
    if (!translator.complete()) {
      // A cut connection can look like a clean end: without finish and usage the answer is partial and unpriceable.
      throw new UpstreamError("upstream answer ended without its finish reason and usage", { retryable: true, reason: "truncated" });
    }
    for (const response of translator.end()) yield response;
  } catch (error) {
    throw toUpstreamError(error, signal);
  } finally {
    // An unread body is cut (so an abandoned upstream stops generating).
    body?.cancel();
  }
}

/** Posts the request; the body of a 2xx answer (an SSE one for a stream), else the protocol's error. */
async function open<Chunk>(http: HttpClient, call: UpstreamCall, protocol: HttpProtocol<Chunk>, requestBody: unknown): Promise<StreamedBody> {
  const { provider } = call;
  const headers = { accept: call.stream ? "text/event-stream" : "application/json", ...protocol.headers(call) };
  const response = await http.stream(protocol.url(call), headers, JSON.stringify(requestBody), {
    signal: call.signal,
    // A JSON answer comes only after the whole generation; a stream starts at once.
    headersTimeoutMs: call.stream ? provider.timeout_ms : provider.request_timeout_ms,
    bodyTimeoutMs: provider.timeout_ms,
    provider: provider.id,
  });
  try {
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const error = protocol.errorOf(response.statusCode, await response.body.text(ERROR_TEXT_BYTES, { truncate: true }));
      // The headers' wait, else what the protocol read from the body (Gemini's RetryInfo).
      error.retryAfterSeconds = retryAfterSecondsOf(response.headers, Date.now()) ?? error.retryAfterSeconds;
      throw error;
    }
    const contentType = String(response.headers["content-type"] ?? "");
    if (call.stream && !contentType.startsWith("text/event-stream")) {
      throw new UpstreamError(`upstream answered a stream request with ${contentType || "no content type"}`, { retryable: true, reason: "invalid_answer" });
    }
    return response.body;
  } catch (error) {
    response.body.cancel();
    throw error;
  }
}

/** One SSE event's hub events. */
function translate<Chunk>(protocol: HttpProtocol<Chunk>, translator: Translator<Chunk>, event: ServerSentEvent): GenerateResponse[] {
  const chunk = protocol.parse(event.data, event.event);
  return chunk === undefined ? NO_EVENTS : translator.translate(chunk);
}

/** JSON text from upstream; anything else is a retryable bad answer. */
export function parseUpstreamJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new UpstreamError("upstream sent invalid JSON", { retryable: true, reason: "invalid_json" });
  }
}

/** An upstream answer checked against the protocol's schema. */
export function checkShape<Schema extends z.ZodType>(schema: Schema, json: unknown): z.infer<Schema> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new UpstreamError("upstream answer has an unexpected shape", { retryable: true, reason: "invalid_shape" });
  return parsed.data;
}

/** A failure reported inside an open stream (after a 200): retryable before the first event. */
export function inStreamError(message: string): UpstreamError {
  return new UpstreamError(message, { retryable: true, reason: "stream_error" });
}

/** A non-2xx answer, with the protocol's own message when the body has one (else its first 500 characters). */
export function httpErrorWithMessage(status: number, bodyText: string, messageOf: (json: unknown) => string | undefined): UpstreamError {
  let message = bodyText.slice(0, 500);
  try {
    message = messageOf(JSON.parse(bodyText)) ?? message;
  } catch {
    // Not JSON (a proxy's page): keep the text.
  }
  return upstreamHttpError(status, message || `upstream answered HTTP ${status}`);
}
