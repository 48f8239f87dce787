// The text formats (chat completions, Responses, Messages...) answer with text,
// so a model that makes none (an image or a video model) cannot serve them:
// planning refuses it by name, pointing at the endpoint that makes its output,
// rather than letting a route answer text no one asked of the model.
import type { CatalogueModel } from "../catalogue/catalogue.ts";
import { invalidParameter } from "../errors.ts";

/** Where each non-text output is made, for the refusal's message. */
const ENDPOINT_OF: Readonly<Record<string, string>> = {
  image: "POST /api/v1/images/generations",
  video: "POST /api/v1/videos",
};

export function makesText(model: CatalogueModel): boolean {
  return model.config.output_modalities.includes("text");
}

/** A 400 naming `param` (`model`, or `models` for a fallback) when the model makes no text. */
export function checkMakesText(model: CatalogueModel, param: string): void {
  if (makesText(model)) return;
  const output = model.config.output_modalities;
  const endpoints = output.flatMap((modality) => (ENDPOINT_OF[modality] ? [ENDPOINT_OF[modality]] : []));
  const instead = endpoints.length > 0 ? `: use ${endpoints.join(" or ")}` : "";
  throw invalidParameter(param, `${model.config.id} makes ${output.join(" and ")}, not text, so it does not answer this endpoint${instead}.`);
}
