// A continuation sticks to the provider that keeps the conversation on its
// side (ConversationRef.upstream): its route is tried first even when it is
// not the cheapest, only that route is told the provider's id (every other
// is sent the whole history), and a caller's own provider.order still wins.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { planAttempts } from "../../../core/routing/plan.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";
import { testConfig } from "../../support/harness.ts";

const catalogue = createCatalogue(testConfig("http://127.0.0.1:9/v1"), { CHEAP_KEY: "c", DEAR_KEY: "d" });

function attempts(init: MessageInitShape<typeof GenerateRequestSchema>) {
  const request = create(GenerateRequestSchema, { model: "test/ok", messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }], ...init });
  return planAttempts(request, catalogue).attempts.map((attempt) => ({ provider: attempt.route.provider.id, upstream: attempt.request.conversation?.upstream?.upstreamId }));
}

const keptByDear = { conversation: { previousId: "rtr_1", upstream: { provider: "dear", upstreamId: "v1_dear-1", historyMessages: 2 } } };

describe("a continuation of a conversation its provider keeps", () => {
  it("tries the provider that keeps it first, and tells only that route its id", () => {
    expect(attempts({})).toEqual([{ provider: "cheap", upstream: undefined }, { provider: "dear", upstream: undefined }]);
    expect(attempts(keptByDear)).toEqual([{ provider: "dear", upstream: "v1_dear-1" }, { provider: "cheap", upstream: undefined }]);
  });

  it("follows the caller's provider.order instead, and only and no fallbacks as ever", () => {
    expect(attempts({ ...keptByDear, provider: { order: ["cheap", "dear"] } })).toEqual([{ provider: "cheap", upstream: undefined }, { provider: "dear", upstream: "v1_dear-1" }]);
    expect(attempts({ ...keptByDear, provider: { only: ["cheap"] } })).toEqual([{ provider: "cheap", upstream: undefined }]);
    expect(attempts({ ...keptByDear, provider: { allowFallbacks: false } })).toEqual([{ provider: "dear", upstream: "v1_dear-1" }]);
  });

  it("is planned as any other when the provider that keeps it does not serve the model", () => {
    expect(attempts({ conversation: { previousId: "rtr_1", upstream: { provider: "local", upstreamId: "x", historyMessages: 2 } } })).toEqual([
      { provider: "cheap", upstream: undefined },
      { provider: "dear", upstream: undefined },
    ]);
  });
});
