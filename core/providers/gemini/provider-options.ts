// The Gemini entry of GenerateRequest.provider_options (filled by a format's
// decoder; routing gives a route its own protocol's entry alone):
// `safety_settings`, generateContent's safetySettings as Google spells them
// (`{category, threshold}`), sent on as given.
import type { JsonValue } from "@bufbuild/protobuf";
import type { GenerateRequest } from "../../../gen/router/v1/inference_pb.js";

export interface GeminiOptions {
  /** Empty: Google's default thresholds. */
  safetySettings: JsonValue[];
}

export function geminiOptions(request: Pick<GenerateRequest, "providerOptions">): GeminiOptions {
  const settings = request.providerOptions.gemini?.safety_settings;
  return { safetySettings: Array.isArray(settings) ? settings : [] };
}
