// Relays one provider's events to the caller as the hub's stream. The loop
// that drives it stays inside runInference (one async step fewer per event);
// this holds what it does to each event and how the answer ends.
import { create } from "@bufbuild/protobuf";
import { BlockType, GenerateResponseSchema, type GenerateResponse, type Usage } from "../../gen/router/v1/inference_pb.js";
import { costOf } from "../billing/cost.ts";
import { formatMoney } from "../billing/money.ts";
import type { TurnRecorder } from "../conversations/conversations.ts";
import type { Answering } from "./inference-charge.ts";

/**
 * Relays one provider's events, which are the hub's own: block starts get
 * their stable id when the provider gave none, usage gets its exact cost and
 * comes right before finish. With `reasoning.exclude` the reasoning blocks are
 * withheld (their tokens are still counted and billed, as the provider spent them).
 * The recorder sees every event as relayed (ids filled, cost set), withheld
 * reasoning included: a stored turn keeps it for the next turn's provider.
 */
export class Relay {
  private usageEvent: GenerateResponse | undefined;
  private finishEvent: GenerateResponse | undefined;
  /** Indexes of withheld blocks; made only when reasoning is excluded. */
  private readonly withheld: Set<number> | undefined;
  private readonly id: string;
  private readonly progress: Answering;
  private readonly recorder: TurnRecorder | undefined;

  constructor(id: string, progress: Answering, recorder: TurnRecorder | undefined, excludeReasoning: boolean) {
    this.id = id;
    this.progress = progress;
    this.recorder = recorder;
    this.withheld = excludeReasoning ? new Set() : undefined;
  }

  /** The event to pass on now, if any (usage and finish wait for the end; withheld blocks never go). */
  pass(response: GenerateResponse): GenerateResponse | undefined {
    const event = response.event;
    // Unique across requests, stable within this one (the Responses format's item ids).
    if (event.case === "blockStart" && !event.value.id) event.value.id = `${this.id}_${event.value.index}`;
    if (event.case !== "usage" && event.case !== "finish") this.recorder?.observe(response);
    switch (event.case) {
      case "blockStart":
        if (this.withheld && event.value.type === BlockType.REASONING) {
          this.withheld.add(event.value.index);
          return undefined;
        }
        return response;
      case "blockDelta":
        // Withheld reasoning was generated all the same.
        this.progress.outputCharacters += event.value.text.length;
        return this.withheld?.has(event.value.index) ? undefined : response;
      case "blockStop":
        return this.withheld?.has(event.value.index) ? undefined : response;
      case "usage":
        this.usageEvent = response;
        return undefined;
      case "finish":
        this.finishEvent = response;
        return undefined;
      default:
        return response;
    }
  }

  /** After the last event: the usage with its exact cost; from here on the answer counts as served. */
  usage(): GenerateResponse {
    const usageEvent = (this.usageEvent ??= create(GenerateResponseSchema, { event: { case: "usage", value: {} } }));
    const { attempt } = this.progress;
    const usage = usageEvent.event.value as Usage;
    const cost = attempt.free ? 0n : costOf(usage, attempt.route.prices);
    usage.cost = formatMoney(cost);
    // Served from here on: a caller leaving after the usage event still pays the real cost.
    this.progress.served = { tokens: usage, cost };
    this.recorder?.observe(usageEvent);
    return usageEvent;
  }

  /** The finish, last. */
  finish(): GenerateResponse {
    const finishEvent = (this.finishEvent ??= create(GenerateResponseSchema, { event: { case: "finish", value: {} } }));
    this.recorder?.observe(finishEvent);
    return finishEvent;
  }
}
