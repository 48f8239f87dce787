// The catalogue model a media create names, read as chat reads a model id
// (routing/model-id.ts): the id as written when the catalogue has it, else a
// shortcut suffix split off. `:free` gets chat's answers: a model whose free
// tier is not enabled is 400 free_slug_disabled; one whose free tier is
// enabled is refused by name too, since media tasks are not yet served from
// free quotas (docs/tasks.md, "Not built yet"). `:thinking` means nothing to
// a media model. And the 503 for a media model with no enabled route of the
// kind, naming the key variables to set as chat's does.
import type { Catalogue, CatalogueModel, ProviderRoute } from "../catalogue/catalogue.ts";
import { Code, invalidParameter, NO_MEDIA_ROUTE, routerError } from "../errors.ts";
import { parseModelReference } from "../../wire/model-name.ts";
import { findModel } from "../routing/model-id.ts";
import { missingKeysMessage } from "../routing/missing-keys.ts";

export function mediaModelOf(catalogue: Catalogue, modelId: string): CatalogueModel {
  const reference = parseModelReference(modelId, (candidate) => catalogue.get(candidate) !== undefined);
  // Media endpoints take full ids only (no format policy allows bare names).
  const model = findModel(catalogue, reference, { model: modelId });
  if (reference.suffix === "free") {
    if (!model.routes.some((route) => route.route.free?.enabled)) {
      throw routerError(Code.InvalidArgument, "free_slug_disabled", `Model ${model.config.id} is not enabled for :free.`, { param: "model" });
    }
    throw invalidParameter("model", `Media tasks are not served from the free tier yet: send ${model.config.id} without :free.`);
  }
  if (reference.suffix) throw invalidParameter("model", `The :${reference.suffix} suffix does not apply to media models: send ${model.config.id}.`);
  return model;
}

/**
 * 503 no_provider_available for a media model none of whose routes of the kind
 * is enabled, naming the key variables to set, as chat's answer does; a 400
 * naming model when it has no route whose protocol runs that kind at all
 * (no key would help: the configuration has to change).
 */
export function noMediaProvider(kind: "image" | "video", modelId: string, routes: readonly ProviderRoute[]) {
  if (routes.length === 0) return routerError(Code.InvalidArgument, NO_MEDIA_ROUTE, `${modelId} has no provider whose protocol runs ${kind} tasks.`, { param: "model" });
  const keys = missingKeysMessage(modelId, routes);
  return routerError(Code.Unavailable, "no_provider_available", `No provider that runs ${kind} tasks is available for ${modelId}${keys ? `: ${keys}` : ""}.`, { param: "model" });
}
