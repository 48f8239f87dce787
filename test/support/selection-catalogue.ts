// A small catalogue for the selector's tests: three text models of different
// quality and price on a keyed provider, a vision model, a model without
// quality scores, and an image model (never a router/auto candidate).
import { create } from "@bufbuild/protobuf";
import { createCatalogue, type Catalogue } from "../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../core/config/load.ts";
import { MessageSchema, Role, type Message } from "../../gen/router/v1/inference_pb.js";

const model = (id: string, prompt: string, completion: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: id,
  created: 0,
  creator: "test",
  context_length: 16000,
  max_completion_tokens: 4000,
  input_modalities: ["text"],
  output_modalities: ["text"],
  supported_parameters: ["max_tokens", "tools", "response_format"],
  providers: [{ provider: "keyed", provider_model_id: id.split("/")[1], pricing: { prompt, completion } }],
  ...extra,
});

export function selectionConfigJson(overrides: Record<string, unknown> = {}) {
  return {
    providers: [{ id: "keyed", label: "Keyed", protocol: "openai-compatible", base_url: "https://keyed.invalid/v1", api_key_env: "KEYED_KEY" }],
    models: [
      model("test/frontier", "0.000010", "0.000040", {
        quality: { coding: 0.95, math: 0.95, reasoning: 0.95, general_chat: 0.9, translation: 0.9, creative_writing: 0.9 },
        supported_parameters: ["max_tokens", "tools", "response_format", "reasoning"],
        context_length: 200000,
      }),
      model("test/mid", "0.000002", "0.000008", { quality: { coding: 0.85, math: 0.8, reasoning: 0.8, general_chat: 0.85, translation: 0.85 } }),
      model("test/small", "0.0000001", "0.0000004", {
        quality: { coding: 0.6, math: 0.5, reasoning: 0.5, general_chat: 0.8, translation: 0.8 },
        supported_parameters: ["max_tokens"],
        context_length: 8000,
      }),
      model("test/eyes", "0.000003", "0.000012", { quality: { vision: 0.9, general_chat: 0.8 }, input_modalities: ["text", "image"] }),
      model("test/unscored", "0.0000001", "0.0000001"),
      model("test/painter", "0", "0", { output_modalities: ["image"], supported_parameters: [], quality: { general_chat: 1 } }),
    ],
    ...overrides,
  };
}

export function selectionCatalogue(overrides: Record<string, unknown> = {}, env: Record<string, string> = { KEYED_KEY: "k" }): Catalogue {
  return createCatalogue(parseConfig(JSON.stringify(selectionConfigJson(overrides))), env);
}

export const userMessage = (text: string): Message => create(MessageSchema, { role: Role.USER, content: [{ part: { case: "text", value: { text } } }] });
