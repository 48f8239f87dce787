// Provider options travel to their own protocol's routes only; a field that only
// another protocol carries is named in a warning (x-router-warnings) on the route
// that did not send it, rather than dropped unseen.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { planAttempts } from "../../../core/routing/plan.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";
import { testConfig } from "../../support/harness.ts";

const catalogue = createCatalogue(testConfig("http://127.0.0.1:9/v1"), { CHEAP_KEY: "c", DEAR_KEY: "d" });

function firstAttempt(providerOptions: { [protocol: string]: JsonObject }) {
  const request = create(GenerateRequestSchema, { model: "test/ok", messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }], providerOptions });
  const [attempt] = planAttempts(request, catalogue).attempts;
  return { sent: attempt.request.providerOptions, warned: attempt.warnings.filter((w) => w.code === "unsupported_parameter").map((w) => w.param) };
}

describe("provider options on a route of another protocol", () => {
  it("sends none of them and names each field it did not send", () => {
    expect(firstAttempt({ "gemini-interactions": { service_tier: "flex", environment: "env_1" }, gemini: { safety_settings: [] } })).toEqual({
      sent: {},
      warned: ["service_tier", "environment", "safety_settings"],
    });
  });

  it("sends its own protocol's entry, and warns only of fields that entry lacks", () => {
    expect(firstAttempt({ "openai-compatible": { safety_settings: [] }, gemini: { safety_settings: [], service_tier: "flex" } })).toEqual({
      sent: { "openai-compatible": { safety_settings: [] } },
      warned: ["service_tier"],
    });
    expect(firstAttempt({ "openai-compatible": { a: 1 } })).toEqual({ sent: { "openai-compatible": { a: 1 } }, warned: [] });
  });
});
