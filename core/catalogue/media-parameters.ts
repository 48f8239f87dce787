// The public request parameters of an image or video model on one route, for
// the catalogue: what the route's media adapter carries (its imageParameters,
// videoParameters and image limit, core/providers/media-job.ts), less what the
// model's supported_params_details rules out (an empty list), each with a
// schema whose allowed values are the details' list. Derived, so the catalogue
// lists exactly what the task endpoints accept; where the operator configured
// the model's supported_parameters, only those (the configuration refuses at
// start one the adapter does not carry, core/config/configured-media-parameters.ts,
// and the task endpoints refuse the others, core/tasks/given-parameter.ts).
import { configuredMediaParameters } from "../config/configured-media-parameters.ts";
import type { ModelConfig, ProviderProtocol } from "../config/schema.ts";
import type { MediaJobAdapter } from "../providers/media-job.ts";
import type { ProviderRoute } from "./catalogue.ts";

export type MediaAdapters = Partial<Record<ProviderProtocol, MediaJobAdapter>>;

/** A parameter's schema as published in `supported_parameters_v2` (a small JSON Schema). */
export type ParameterSchema = Record<string, unknown>;

/** The spec's range of `n` for image generation. */
const IMAGE_N_MAX = 10;

/**
 * Most images one request may ask of a route: the spec's range, narrowed by
 * the model's configured `supported_params_details.n.maximum`, where it sets
 * one; 0 where the protocol makes no images. More than one job of the
 * protocol makes is split into several jobs (docs/tasks.md, "Fan-out").
 */
export function mostImagesPerRequest(adapter: MediaJobAdapter, details: Record<string, unknown>): number {
  if (adapter.maxImagesPerJob < 1) return 0;
  const configured = details.n && typeof details.n === "object" ? (details.n as { maximum?: unknown }).maximum : undefined;
  return Math.min(IMAGE_N_MAX, typeof configured === "number" && configured >= 1 ? Math.floor(configured) : IMAGE_N_MAX);
}

/**
 * The values the model's `supported_params_details.<name>` allows when it is a
 * list (an empty list: the model takes none of it); undefined when it sets no
 * list. The one reading of a details list, for the catalogue and the task endpoints.
 */
export function allowedValuesOf(details: Record<string, unknown>, name: string): readonly unknown[] | undefined {
  const listed = details[name];
  return Array.isArray(listed) ? listed : undefined;
}

const uri = { type: "string", format: "uri" };

/** The JSON types of the image parameters a protocol may carry (MediaJobAdapter.imageParameters); any other is a string. */
const IMAGE_SCHEMAS: Readonly<Record<string, ParameterSchema>> = {
  seed: { type: "integer" },
  // One input image's URL, or a list of them.
  image: { oneOf: [uri, { type: "array", items: uri }] },
};

/** The JSON types of the video parameters (MediaJobAdapter.videoParameters' public names); any other is a string. */
const VIDEO_SCHEMAS: Readonly<Record<string, ParameterSchema>> = {
  image: uri,
  length: { type: "integer" },
  seed: { type: "integer" },
  generateAudio: { type: "boolean" },
};

/** The model fields what a route serves depends on. */
type MediaModelFields = Pick<ModelConfig, "output_modalities" | "input_modalities" | "supported_params_details">;

/** Name to schema, in publishing order; empty for a route that runs no media task of what its model makes; only the configured ones where a list is configured. */
export function mediaParametersOf(route: ProviderRoute, adapters: MediaAdapters): Map<string, ParameterSchema> {
  const served = servedMediaParameters(route.provider.protocol, route.model, adapters);
  const configured = configuredMediaParameters(route.model, route.route);
  if (!configured) return served;
  return new Map([...served].filter(([name]) => configured.includes(name)));
}

/** Every parameter the protocol's adapter serves for the model, whatever the configured list says. */
export function servedMediaParameters(protocol: ProviderProtocol, model: MediaModelFields, adapters: MediaAdapters): Map<string, ParameterSchema> {
  const adapter = adapters[protocol];
  const parameters = new Map<string, ParameterSchema>();
  if (!adapter) return parameters;
  const output = model.output_modalities;
  const details = model.supported_params_details;
  const most = mostImagesPerRequest(adapter, details);
  if (output.includes("image") && adapter.submitImage && most > 0) {
    parameters.set("n", { type: "integer", minimum: 1, maximum: most });
    // Input images only for a model that takes images in (the task endpoint refuses them otherwise).
    const takesImages = model.input_modalities.includes("image");
    addCarried(parameters, IMAGE_SCHEMAS, adapter.imageParameters.filter((name) => name !== "image" || takesImages), details);
    // Every image task answers hosted URLs; only a synchronous provider's answer carries the bytes.
    parameters.set("response_format", { type: "string", enum: adapter.synchronousImages ? ["url", "b64_json"] : ["url"] });
  }
  if (output.includes("video") && adapter.submitVideo) addCarried(parameters, VIDEO_SCHEMAS, adapter.videoParameters ?? [], details);
  return parameters;
}

/** Each parameter the adapter carries, in its order; with the catalogue's list of allowed values where it has one. */
function addCarried(parameters: Map<string, ParameterSchema>, schemas: Readonly<Record<string, ParameterSchema>>, carried: readonly string[], details: Record<string, unknown>) {
  for (const name of carried) {
    const schema = schemas[name] ?? { type: "string" };
    const allowed = allowedValuesOf(details, name);
    if (!allowed) parameters.set(name, schema);
    // An empty list is the catalogue saying the model takes none of it (the task endpoints refuse it).
    else if (allowed.length > 0) parameters.set(name, { ...schema, enum: allowed });
  }
}
