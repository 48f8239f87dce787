// One optional media parameter a request gives, checked the same way on both
// task endpoints: against the model's `supported_params_details` list where
// the catalogue has one (the list the catalogue publishes, read by
// allowedValuesOf), and within a length where any text is taken, so a
// free-text value is never stored and sent on at any size.
import type { ProviderRoute } from "../catalogue/catalogue.ts";
import { allowedValuesOf } from "../catalogue/media-parameters.ts";
import { configuredMediaParameters } from "../config/configured-media-parameters.ts";
import { invalidParameter } from "../errors.ts";

/** The longest input image URL taken: browsers' and CDNs' practical limit. */
export const MAX_URL_LENGTH = 2048;
/** The longest free-text value (a resolution, a mode, an aspect ratio, a size) taken when the catalogue lists none. */
const MAX_TEXT_LENGTH = 64;

/**
 * Refuses, with a 400 naming `param`, a value the model's list does not have
 * (compared as text: `seconds: ["4", "8"]` and `length: [5, 10]` both work;
 * an empty list takes nothing), or a value longer than `maxLength` where no list is given.
 */
export function checkGivenValue(modelId: string, details: Record<string, unknown>, param: string, value: string, maxLength = MAX_TEXT_LENGTH) {
  const allowed = allowedValuesOf(details, param);
  if (!allowed) {
    if (value.length > maxLength) throw invalidParameter(param, `${param} is at most ${maxLength} characters.`);
    return;
  }
  if (!allowed.map(String).includes(value)) {
    throw invalidParameter(param, allowed.length === 0 ? `${modelId} does not take ${param}.` : `${param} must be one of ${allowed.join(", ")} for ${modelId}.`);
  }
}

/**
 * Refuses, with a 400 naming it, the first parameter given that the route's
 * configured supported_parameters leave out: a media model configured with a
 * list takes only those (the catalogue publishes only those). A default value
 * (`n` 1, `auto`, `response_format` url) counts as not given.
 */
export function checkConfiguredParameters(modelId: string, route: Pick<ProviderRoute, "model" | "route">, given: readonly string[]) {
  const configured = configuredMediaParameters(route.model, route.route);
  const left = configured && given.find((name) => !configured.includes(name));
  if (left) throw invalidParameter(left, `${modelId} does not take ${left} here: it is not among the supported_parameters configured for it (GET /api/v1/models lists them).`);
}
