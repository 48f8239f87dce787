// GenerateRequest sampling, response format, reasoning and media -> generationConfig.
import type { JsonObject } from "@bufbuild/protobuf";
import { ResponseFormat_Type, type Warning } from "../../../gen/router/v1/inference_pb.js";
import type { UpstreamCall } from "../types.ts";
import { convertThinking } from "./convert-thinking.ts";

export function convertGenerationConfig(call: UpstreamCall, warnings: Warning[]): JsonObject | undefined {
  const { request } = call;
  const config: JsonObject = {};
  const sampling = request.sampling;
  if (sampling) {
    setIfDefined(config, "temperature", sampling.temperature);
    setIfDefined(config, "topP", sampling.topP);
    setIfDefined(config, "topK", sampling.topK);
    // Gemini needs no completion limit: without one it uses the model's own.
    setIfDefined(config, "maxOutputTokens", sampling.maxTokens);
    setIfDefined(config, "presencePenalty", sampling.presencePenalty);
    setIfDefined(config, "frequencyPenalty", sampling.frequencyPenalty);
    if (sampling.seed !== undefined) config.seed = Number(sampling.seed);
    if (sampling.stop.length > 0) config.stopSequences = sampling.stop;
  }
  const format = request.responseFormat;
  if (format?.type === ResponseFormat_Type.JSON_OBJECT || format?.type === ResponseFormat_Type.JSON_SCHEMA) {
    config.responseMimeType = "application/json";
    // responseJsonSchema takes JSON Schema as it is ($ref/$defs, anyOf,
    // additionalProperties included); responseSchema is an OpenAPI subset that
    // would need a lossy conversion.
    if (format.type === ResponseFormat_Type.JSON_SCHEMA && format.schema) config.responseJsonSchema = format.schema;
  }
  const thinking = convertThinking(call, warnings);
  if (thinking) config.thinkingConfig = thinking;
  const aspectRatio = request.media?.aspectRatio;
  if (aspectRatio) {
    // Image models answer with images only when asked for the IMAGE modality.
    config.responseModalities = ["TEXT", "IMAGE"];
    config.imageConfig = { aspectRatio };
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

function setIfDefined(config: JsonObject, key: string, value: number | undefined) {
  if (value !== undefined) config[key] = value;
}
