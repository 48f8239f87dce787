// A video answer (MediaOptions.video) from the Interactions API. Google makes
// videos in the background, minutes long: the create asks `background: true`
// without a stream (and `store: true`, which a background interaction needs:
// GET must find it), then reads the interaction with GET {base_url}/interactions/{id},
// first soon and then less and less often, until it has ended. Once the
// upstream took the job the answer opens with a Progress event, so routing
// settles on this provider and the gateway keeps its client waiting. The
// finished interaction is read whole (parse-stream.ts): its video content as
// a VIDEO block of the decoded bytes, its usage by modality. A failed or
// cancelled interaction is an upstream error. A job left unfinished (the
// caller left, or a poll failed) is cancelled upstream, fire and forget: a
// stored turn keeps no video, so nobody could read it later.
// An interaction the caller does not keep is deleted upstream once read.
import { create } from "@bufbuild/protobuf";
import { setTimeout as sleep } from "node:timers/promises";
import { GenerateResponseSchema, type GenerateResponse } from "../../../gen/router/v1/inference_pb.js";
import type { HttpClient } from "../http-client.ts";
import { toUpstreamError } from "../http-client.ts";
import { checkShape, inStreamError } from "../http-exchange.ts";
import { mediaJson } from "../media-http.ts";
import { postJson } from "../post-json.ts";
import { UpstreamError, type UpstreamCall, type UpstreamStream } from "../types.ts";
import { isStored } from "./continuation.ts";
import { convertRequest } from "./convert-request.ts";
import { deleteInteraction } from "./delete-interaction.ts";
import { interactionsUrl, keyHeaders } from "./endpoint.ts";
import { googleErrorMessage, mapError } from "./map-error.ts";
import { FINAL_STATUSES } from "./map-finish-reason.ts";
import { createEventTranslator, interactionSchema, type Interaction } from "./parse-stream.ts";

export interface VideoPolling {
  /** The first pause before reading the interaction again; each next one half again as long, up to maxPollMs. */
  firstPollMs: number;
  maxPollMs: number;
}

/** Google's video models take one to several minutes: a read every few seconds at most tells the end soon enough. Tests shorten it (shared on purpose). */
export const VIDEO_POLLING: VideoPolling = { firstPollMs: 250, maxPollMs: 5_000 };

export function videoInteraction(http: HttpClient, call: UpstreamCall, polling: VideoPolling = VIDEO_POLLING): UpstreamStream {
  let converted;
  try {
    converted = convertRequest(call);
  } catch (error) {
    return failed(error);
  }
  const body = { ...converted.body, stream: false, background: true, store: true };
  const events = run(http, call, body, polling);
  return converted.warnings.length > 0 ? Object.assign(events, { warnings: converted.warnings }) : events;
}

async function* failed(error: unknown): AsyncGenerator<GenerateResponse> {
  throw error;
}

async function* run(http: HttpClient, call: UpstreamCall, body: object, polling: VideoPolling): AsyncGenerator<GenerateResponse> {
  const { provider, signal } = call;
  const kept = isStored(call.request);
  let interaction: Interaction;
  try {
    interaction = readInteraction(await postJson(http, call, { url: interactionsUrl(provider), headers: keyHeaders(call), body, errorOf: mapError }));
  } catch (error) {
    throw toUpstreamError(error, signal);
  }
  const id = interaction.id;
  if (!id) throw new UpstreamError("upstream answered a background interaction without its id", { retryable: true, reason: "invalid_answer" });
  let ended = false;
  try {
    yield create(GenerateResponseSchema, { event: { case: "progress", value: { status: interaction.status ?? "in_progress" } } });
    let pause = polling.firstPollMs;
    while (!hasEnded(interaction)) {
      await sleep(pause, undefined, { signal });
      pause = Math.min(pause * 1.5, polling.maxPollMs);
      const read = await mediaJson(interactionsUrl(provider, id).href, { method: "GET", headers: keyHeaders(call), signal, timeoutMs: provider.timeout_ms }, (status, text) => mapError(status, text).message);
      interaction = readInteraction(read);
    }
    ended = true;
    if (interaction.status === "failed" || interaction.status === "cancelled") throw interactionFailed(interaction);
    const translator = createEventTranslator({ stored: kept });
    for (const event of translator.translate({ event_type: "interaction.completed", interaction })) yield event;
    for (const event of translator.end()) yield event;
  } catch (error) {
    throw toUpstreamError(error, signal);
  } finally {
    // Fire and forget: the caller's answer does not wait for them.
    if (!ended) cancelInteraction(call, id);
    else if (ended && !kept) deleteInteraction(call, id).catch(() => {});
  }
}

const hasEnded = (interaction: Interaction) => interaction.status !== undefined && FINAL_STATUSES.has(interaction.status);

/** An interaction as the API answers it; Google's error body in its place is thrown. */
function readInteraction(json: unknown): Interaction {
  const error = googleErrorMessage(json);
  if (error !== undefined) throw inStreamError(error);
  return checkShape(interactionSchema, json);
}

/** A failed or cancelled interaction, with Google's reasons (`errors`) when it gives them. */
function interactionFailed(interaction: Interaction): UpstreamError {
  const errors = (interaction as { errors?: { message?: unknown }[] }).errors;
  const reasons = Array.isArray(errors) ? errors.flatMap((error) => (typeof error?.message === "string" ? [error.message] : [])) : [];
  const message = `the upstream video interaction ${interaction.status}${reasons.length > 0 ? `: ${reasons.join("; ")}` : ""}`;
  // A job that failed may succeed elsewhere; one someone cancelled upstream is not retried.
  return new UpstreamError(message, { retryable: interaction.status === "failed", reason: `interaction_${interaction.status}` });
}

/** POST {base_url}/interactions/{id}/cancel: the upstream stops making a video nobody will read. */
function cancelInteraction({ provider, apiKey }: UpstreamCall, id: string): void {
  fetch(interactionsUrl(provider, id, "cancel"), {
    method: "POST",
    headers: { "content-type": "application/json", ...(apiKey ? { "x-goog-api-key": apiKey } : {}) },
    body: "{}",
    signal: AbortSignal.timeout(provider.timeout_ms),
  })
    .then((response) => response.body?.cancel())
    .catch(() => {
      // Nothing to tell anyone: the interaction ends upstream by itself.
    });
}
