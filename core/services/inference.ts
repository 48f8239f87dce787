import type { ServiceImpl } from "@connectrpc/connect";
import type { InferenceService } from "../../gen/router/v1/inference_pb.js";
import { authenticate } from "../accounts/check-key.ts";
import { fromStore } from "../accounts/refusals.ts";
import { usageRecordToProto } from "../accounts/usage-proto.ts";
import { countTokens } from "../count-tokens/count-tokens.ts";
import { Code, echoed, routerError } from "../errors.ts";
import { runInference, type InferenceDeps } from "../routing/run-inference.ts";
import { describeCredits, describeKey } from "./key-report.ts";

export function createInferenceService(deps: InferenceDeps): ServiceImpl<typeof InferenceService> {
  return {
    generate: (request, context) => runInference(request, context.signal, deps),
    countTokens: (request, context) => countTokens(request, context.signal, deps),
    getKey: (request) => describeKey(request.caller, deps),
    getCredits: (request) => describeCredits(request.caller, deps),
    async getGeneration(request) {
      const key = await authenticate(deps.accounts, request.caller);
      const record = await fromStore(deps.accounts.usage.get(key.organizationId, request.id));
      // Another organisation's request is as unknown as a missing one.
      if (!record) throw routerError(Code.NotFound, "generation_not_found", `No generation ${echoed(request.id)} for this organisation.`, { param: "id" });
      return { generation: usageRecordToProto(record) };
    },
  };
}
