// The Anthropic entry of GenerateRequest.provider_options (a Messages
// request's, from its decoder): `betas`, the `anthropic-beta` header values,
// and `thinking.display`. Routing gives a route its own protocol's entry alone.
import type { JsonValue } from "@bufbuild/protobuf";
import type { GenerateRequest } from "../../../gen/router/v1/inference_pb.js";

export interface AnthropicOptions {
  betas: string[];
  /** Thinking `display` (`summarized`, `omitted`); empty: Anthropic's default. */
  thinkingDisplay: string;
}

const NONE: AnthropicOptions = { betas: [], thinkingDisplay: "" };

const isObject = (value: JsonValue | undefined): value is { [key: string]: JsonValue } => typeof value === "object" && value !== null && !Array.isArray(value);

export function anthropicOptions(request: Pick<GenerateRequest, "providerOptions">): AnthropicOptions {
  const options = request.providerOptions.anthropic;
  if (!options) return NONE;
  const betas = Array.isArray(options.betas) ? options.betas.filter((beta): beta is string => typeof beta === "string") : [];
  const display = isObject(options.thinking) ? options.thinking.display : undefined;
  return { betas, thinkingDisplay: typeof display === "string" ? display : "" };
}
