// Starts an inference on the core and waits for its first event, with the
// client's disconnect wired to abort the call (and so the upstream request),
// unless the answer is kept for the client to fetch later.
import type { ServerResponse } from "node:http";
import type { Context } from "koa";
import { ConnectError, errorDetailOf, routerError } from "../core/errors.ts";
import type { GenerateRequest, GenerateResponse, ResponseStart } from "../gen/router/v1/inference_pb.js";
import type { CoreClient } from "./core-client.ts";
import { foldEvents, type FoldedResponse } from "./fold.ts";
import { headerList, headerText, rateLimitHeaders, traceHeader } from "./headers.ts";

export interface StartedCall {
  /** The core's first event, always its start. */
  start: ResponseStart;
  first: GenerateResponse;
  rest: AsyncIterator<GenerateResponse>;
  signal: AbortSignal;
}

export interface StartCallOptions {
  /**
   * Let the answer finish when the client leaves (Interactions: a stored
   * interaction can be fetched later, so a finished result is never lost);
   * the stream loop reads it to its end, writing nothing.
   */
  finishWhenClientLeaves?: boolean;
}

export async function startCall(ctx: Context, core: CoreClient, request: GenerateRequest, { finishWhenClientLeaves = false }: StartCallOptions = {}): Promise<StartedCall> {
  const controller = finishWhenClientLeaves ? new AbortController() : abortWhenClientLeaves(ctx.res);
  // The client may have left while its body was read, before the listener existed.
  if (ctx.req.socket.destroyed && !finishWhenClientLeaves) controller.abort();
  const rest = core.inference.generate(request, { signal: controller.signal })[Symbol.asyncIterator]();
  const step = await rest.next();
  if (step.done || step.value.event.case !== "start") throw new Error("the core's stream must open with a start event");
  return { start: step.value.event.value, first: step.value, rest, signal: controller.signal };
}

/**
 * A controller that aborts when the response closes before it finished (the
 * client went away). `close` also fires after a normal finish: then there is
 * nothing left to cancel, and an abort is not free (a DOMException with its
 * stack, abort events down the linked signals). Its listener holds only the
 * response and the controller: a stream keeps it for its whole life.
 */
function abortWhenClientLeaves(res: ServerResponse): AbortController {
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller;
}

/**
 * A non-streamed answer: the routing headers first, so that an answer that
 * breaks off keeps them on its error, then the fold of the whole stream.
 */
export async function foldAnswer(ctx: Context, call: StartedCall): Promise<FoldedResponse> {
  try {
    ctx.set(routingHeaders(call.start));
  } catch (error) {
    // Nothing will read the answer: end the call, so its hold is released now rather than by the sweep hours later.
    stopCall(call.rest);
    throw error;
  }
  try {
    return await foldEvents(call.start, call.rest);
  } catch (error) {
    throw brokeOff(error, call.start);
  }
}

/**
 * An answer that broke off after the start event: its 502 carries the routing trace
 * (metadata.attempts, and so the trace header): the core's, which says the serving attempt
 * failed, else the start's.
 */
function brokeOff(error: unknown, start: ResponseStart): unknown {
  if (!(error instanceof ConnectError)) return error;
  const detail = errorDetailOf(error);
  if (detail?.reason !== "upstream_error") return error;
  const attempts = traceEntries(start);
  return routerError(error.code, "upstream_error", error.rawMessage, {
    retryAfterSeconds: detail.retryAfterSeconds,
    metadata: { attempts, ...detail.metadata },
    cause: error,
  });
}

/** The start's routing attempts as the trace header and error metadata spell them. */
function traceEntries(start: ResponseStart) {
  return start.attempts.map((a) => ({ model: a.modelId, provider: a.provider, outcome: a.outcome, reason: a.reason }));
}

/** The routing trace (docs/routing.md: a user can see why a fallback happened), warnings and rate-limit windows. */
export function routingHeaders(start: ResponseStart): Record<string, string> {
  const headers: Record<string, string> = {
    "x-router-provider": headerText(start.provider),
    "x-router-trace": traceHeader(traceEntries(start)),
  };
  // Warnings quote the caller's own words (a dropped tool's name, an unknown key): headerList makes them safe.
  if (start.warnings.length > 0) headers["x-router-warnings"] = headerList(start.warnings.map((w) => w.message), "; ");
  const now = Number(start.created) * 1000;
  const windows = [["requests", start.requestsWindow], ["tokens", start.tokensWindow]] as const;
  for (const [unit, window] of windows) {
    if (window) Object.assign(headers, rateLimitHeaders(unit, window.limit, window.remaining, Math.ceil((Number(window.resetAtMs) - now) / 1000)));
  }
  return headers;
}

/** Ends a call nobody will read further: its upstream request and its hold go (a call already over ignores it). */
export function stopCall(rest: AsyncIterator<GenerateResponse>): void {
  rest.return?.().catch(() => {
    // Its own failure to close is the call's to log; the answer is already decided.
  });
}
