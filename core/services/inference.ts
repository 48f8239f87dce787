import type { ServiceImpl } from "@connectrpc/connect";
import type { InferenceService } from "../../gen/router/v1/inference_pb.js";
import { checkKey } from "../accounts/check-key.ts";
import { fromStore } from "../accounts/refusals.ts";
import { usageRecordToProto } from "../accounts/usage-proto.ts";
import { sha256Hex } from "../auth/keys.ts";
import { countTokens } from "../count-tokens/count-tokens.ts";
import { Code, echoed, missingApiKey, routerError } from "../errors.ts";
import { runInference, type InferenceDeps } from "../routing/run-inference.ts";
import { describeCredits, describeKey } from "./key-report.ts";

export function createInferenceService(deps: InferenceDeps): ServiceImpl<typeof InferenceService> {
  return {
    generate: (request, context) => runInference(request, context.signal, deps),
    countTokens: (request, context) => countTokens(request, context.signal, deps),
    getKey: (request) => describeKey(request.caller?.apiKey, deps),
    getCredits: (request) => describeCredits(request.caller?.apiKey, deps),
    async getGeneration(request) {
      const apiKey = request.caller?.apiKey ?? "";
      if (!apiKey) throw missingApiKey();
      const key = await checkKey(deps.accounts, sha256Hex(apiKey));
      const record = await fromStore(deps.accounts.usage.get(key.organizationId, request.id));
      // Another organisation's request is as unknown as a missing one.
      if (!record) throw routerError(Code.NotFound, "generation_not_found", `No generation ${echoed(request.id)} for this organisation.`, { param: "id" });
      return { generation: usageRecordToProto(record) };
    },
  };
}
