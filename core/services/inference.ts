import type { ServiceImpl } from "@connectrpc/connect";
import type { InferenceService } from "../../gen/router/v1/inference_pb.js";
import { runInference, type InferenceDeps } from "../routing/run-inference.ts";

export function createInferenceService(deps: InferenceDeps): ServiceImpl<typeof InferenceService> {
  return {
    generate: (request, context) => runInference(request, context.signal, deps),
  };
}
