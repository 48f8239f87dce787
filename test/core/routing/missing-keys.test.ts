// When no provider of a model is enabled for want of its keys, the 503 names
// every variable still to set: api_key_env, and secret_key_env for a provider
// that signs with a second key (Kling's access and secret keys).
import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { missingKeysMessage } from "../../../core/routing/missing-keys.ts";
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

describe("a Vertex model, whose protocol also takes application default credentials", () => {
  const vertexConfig = (project: string) =>
    parseConfig(
      JSON.stringify({
        providers: [
          { id: "vertex", label: "Vertex AI", protocol: "vertex", base_url: `https://us-central1-aiplatform.googleapis.com/v1/projects/${project}/locations/us-central1`, api_key_env: "VERTEX_ACCESS_TOKEN" },
          { id: "kling", label: "Kling AI", protocol: "kling", base_url: "https://kling.invalid", api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY" },
        ],
        models: [
          {
            id: "google/veo",
            name: "Veo",
            created: 0,
            creator: "google",
            context_length: 1000,
            max_completion_tokens: 1,
            input_modalities: ["text"],
            output_modalities: ["video"],
            supported_parameters: [],
            providers: [{ provider: "vertex", provider_model_id: "veo", pricing: { prompt: "0", completion: "0", video_output_per_second: "0.4" } }],
          },
          {
            id: "both/video",
            name: "Both",
            created: 0,
            creator: "test",
            context_length: 1000,
            max_completion_tokens: 1,
            input_modalities: ["text"],
            output_modalities: ["video"],
            supported_parameters: [],
            providers: [
              { provider: "vertex", provider_model_id: "veo", pricing: { prompt: "0", completion: "0", video_output_per_second: "0.4" } },
              { provider: "kling", provider_model_id: "video", pricing: { prompt: "0", completion: "0", video_output_per_second: "0.1" } },
            ],
          },
        ],
      }),
    );
  const routesOf = (id: string, project: string, env: Record<string, string>) => createCatalogue(vertexConfig(project), env).get(id)!.routes;

  it("names the token's variable or GOOGLE_APPLICATION_CREDENTIALS, bracketed beside another provider's", () => {
    expect(missingKeysMessage("google/veo", routesOf("google/veo", "my-project", {}))).toBe("google/veo needs VERTEX_ACCESS_TOKEN or GOOGLE_APPLICATION_CREDENTIALS to be set");
    expect(missingKeysMessage("both/video", routesOf("both/video", "my-project", {}))).toBe(
      "both/video needs (VERTEX_ACCESS_TOKEN or GOOGLE_APPLICATION_CREDENTIALS) or (KLING_ACCESS_KEY and KLING_SECRET_KEY) to be set",
    );
  });

  it("is enabled by GOOGLE_APPLICATION_CREDENTIALS only when base_url names a project, not the bundled placeholder", () => {
    const credentials = { GOOGLE_APPLICATION_CREDENTIALS: "/etc/google/credentials.json" };
    expect(routesOf("google/veo", "my-project", credentials)[0].enabled).toBe(true);
    expect(routesOf("google/veo", "your-project-id", credentials)[0].enabled).toBe(false);
    // The token stands for the key whatever base_url says, as any provider's key does.
    expect(routesOf("google/veo", "your-project-id", { VERTEX_ACCESS_TOKEN: "ya29.token" })[0].enabled).toBe(true);
  });
});
