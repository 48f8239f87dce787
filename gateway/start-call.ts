// Starts an inference on the core and waits for its first event, with the
// client's disconnect wired to abort the call (and so the upstream request).
import type { Context } from "koa";
import type { GenerateRequest, GenerateResponse, ResponseStart } from "../gen/router/v1/inference_pb.js";
import type { CoreClient } from "./core-client.ts";

export interface StartedCall {
  /** The core's first event, always its start. */
  start: ResponseStart;
  first: GenerateResponse;
  rest: AsyncIterator<GenerateResponse>;
  signal: AbortSignal;
}

export async function startCall(ctx: Context, core: CoreClient, request: GenerateRequest): Promise<StartedCall> {
  const controller = new AbortController();
  // `close` on the response fires when the client goes away, and also after a
  // normal finish: then there is nothing left to cancel, and an abort is not
  // free (a DOMException with its stack, abort events down the linked signals).
  ctx.res.once("close", () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  // The client may have left while its body was read, before the listener existed.
  if (ctx.req.socket.destroyed) controller.abort();
  const rest = core.inference.generate(request, { signal: controller.signal })[Symbol.asyncIterator]();
  const step = await rest.next();
  if (step.done || step.value.event.case !== "start") throw new Error("the core's stream must open with a start event");
  return { start: step.value.event.value, first: step.value, rest, signal: controller.signal };
}

/** The routing trace (ARCHITECTURE.md: a user can see why a fallback happened), warnings and rate-limit windows. */
export function routingHeaders(start: ResponseStart): Record<string, string> {
  const headers: Record<string, string> = {
    "x-router-provider": start.provider,
    "x-router-trace": start.attempts.map((a) => `${a.modelId}@${a.provider};${a.outcome}${a.reason ? `;${a.reason}` : ""}`).join(", "),
  };
  if (start.warnings.length > 0) headers["x-router-warnings"] = start.warnings.join("; ");
  const now = Number(start.created) * 1000;
  if (start.requestsWindow) Object.assign(headers, rateLimitHeaders("requests", start.requestsWindow, now));
  if (start.tokensWindow) Object.assign(headers, rateLimitHeaders("tokens", start.tokensWindow, now));
  return headers;
}

/**
 * OpenAI's rate-limit headers (decisions.md), so OpenAI-style clients can pace
 * themselves: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, the reset
 * as a duration ("12s").
 */
export function rateLimitHeaders(unit: "requests" | "tokens", window: { limit: number; remaining: number; resetAtMs: bigint }, nowMs: number) {
  const seconds = Math.max(0, Math.ceil((Number(window.resetAtMs) - nowMs) / 1000));
  return {
    [`x-ratelimit-limit-${unit}`]: String(window.limit),
    [`x-ratelimit-remaining-${unit}`]: String(window.remaining),
    [`x-ratelimit-reset-${unit}`]: `${seconds}s`,
  };
}
