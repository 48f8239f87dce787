// The Gemini Interactions entry of GenerateRequest.provider_options (filled by
// a format's decoder; routing gives a route its own protocol's entry alone):
// `safety_settings` (a list), `service_tier` (a string) and `environment` (an
// environment's id, or the object that describes one), each sent on as given.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { GenerateRequest } from "../../../gen/router/v1/inference_pb.js";

/** The body fields the options fill, as the Interactions API names them; a field of the wrong type is left out. */
export function interactionsOptionFields(request: Pick<GenerateRequest, "providerOptions">): JsonObject {
  const options = request.providerOptions["gemini-interactions"];
  if (!options) return {};
  const fields: JsonObject = {};
  if (Array.isArray(options.safety_settings)) fields.safety_settings = options.safety_settings;
  if (typeof options.service_tier === "string" && options.service_tier) fields.service_tier = options.service_tier;
  if (isEnvironment(options.environment)) fields.environment = options.environment;
  return fields;
}

const isEnvironment = (value: JsonValue | undefined): value is string | JsonObject =>
  (typeof value === "string" && value !== "") || (typeof value === "object" && value !== null && !Array.isArray(value));
