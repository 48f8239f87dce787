// The last step of an inference: hand its outcome to the meter, which settles
// the charge (what reached the caller) or releases the hold, and records the
// usage, in the background (docs/accounts.md, "Credits").
import type { GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import { deliveredUsage, type AdmittedRequest, type Answering } from "./inference-charge.ts";
import type { InferenceDeps } from "./inference-deps.ts";
import type { PreparedInference } from "./prepare-inference.ts";

export interface FinishedRequest {
  admission: AdmittedRequest["admission"];
  answering: Answering | undefined;
  /** The model recorded when no answer started: the first attempt's. */
  unansweredModelId: string;
  outcome: string;
  requestTags: GenerateRequest["requestTags"];
  streamed: boolean;
  /** An answer cut before its usage is charged the estimate of what it produced. */
  chargesCut: boolean;
  latencyMs: number;
  now: number;
}

/** Hands the outcome to the meter: settled for what was delivered, else released. */
export function finishRequest({ admission, answering, unansweredModelId, outcome, requestTags, streamed, chargesCut, latencyMs, now }: FinishedRequest) {
  const details = {
    model: answering?.attempt.model.config.id ?? unansweredModelId,
    provider: answering?.attempt.route.provider.id ?? "",
    outcome,
    requestTags,
    latencyMs,
    streamed,
    now,
  };
  const usage = deliveredUsage(answering, chargesCut);
  if (usage) admission.settle(usage, details);
  else admission.release(details);
}

/** Gives back the hold of a prepared request that will not be answered (its background turn could not be stored). */
export function releasePrepared(prepared: PreparedInference, outcome: string, deps: Pick<InferenceDeps, "now">) {
  const { admitted, request, started } = prepared;
  finishRequest({
    admission: admitted.admission,
    answering: undefined,
    unansweredModelId: admitted.attempts[0].model.config.id,
    outcome,
    requestTags: request.requestTags,
    streamed: request.stream,
    chargesCut: false,
    latencyMs: performance.now() - started,
    now: deps.now().getTime(),
  });
}
