// When no provider of a model is enabled for want of its keys, the 503 names
// every variable still to set: api_key_env, and secret_key_env for a provider
// that signs with a second key (Kling's access and secret keys).
import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { planAttempts } from "../../../core/routing/plan.ts";
import { GenerateRequestSchema, Role } from "../../../gen/router/v1/inference_pb.js";

const config = parseConfig(
  JSON.stringify({
    providers: [
      { id: "kling", label: "Kling AI", protocol: "kling", base_url: "https://kling.invalid", api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY" },
      { id: "keyed", label: "Keyed", protocol: "openai-compatible", base_url: "https://keyed.invalid/v1", api_key_env: "KEYED_KEY" },
    ],
    models: [
      {
        id: "test/video",
        name: "Video",
        created: 0,
        creator: "test",
        context_length: 1000,
        max_completion_tokens: 1,
        input_modalities: ["text"],
        // Text too: planning refuses a model that makes no text before it looks at keys.
        output_modalities: ["text", "video"],
        supported_parameters: [],
        providers: [
          { provider: "kling", provider_model_id: "video", pricing: { prompt: "0", completion: "0", video_output_per_second: "0.1" } },
          { provider: "keyed", provider_model_id: "video", pricing: { prompt: "0", completion: "0", video_output_per_second: "0.2" } },
        ],
      },
    ],
  }),
);

/** The message of the 503 a chat request for the model gets with this environment. */
function unavailableWith(env: Record<string, string>): string {
  const request = create(GenerateRequestSchema, { model: "test/video", messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }] });
  try {
    planAttempts(request, createCatalogue(config, env));
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    return (error as ConnectError).rawMessage;
  }
  throw new Error("the request was planned");
}

describe("a model whose providers lack their keys", () => {
  it("names both of Kling's variables when neither is set, bracketed beside the other provider's", () => {
    expect(unavailableWith({})).toContain("test/video needs (KLING_ACCESS_KEY and KLING_SECRET_KEY) or KEYED_KEY to be set");
  });

  it("names only the variable still missing", () => {
    expect(unavailableWith({ KLING_ACCESS_KEY: "ak" })).toContain("test/video needs KLING_SECRET_KEY or KEYED_KEY to be set");
    expect(unavailableWith({ KLING_SECRET_KEY: "sk" })).toContain("test/video needs KLING_ACCESS_KEY or KEYED_KEY to be set");
  });
});
