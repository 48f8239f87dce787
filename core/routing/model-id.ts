// Finds the catalogue model a request's model string names (a bare name too,
// where the request's format allows one); the strings' grammar is the public
// wire's (wire/model-name.ts).
import type { GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import type { Catalogue, CatalogueModel } from "../catalogue/catalogue.ts";
import { ambiguousModel, Code, echoed, routerError } from "../errors.ts";
import { modelOfBareName, type ModelReference } from "../../wire/model-name.ts";

/**
 * The catalogue model a reference names: its id exactly, or, where the
 * request's format allows bare names (format_policy.bare_model_names: Anthropic's
 * SDK and the coding agents send `claude-sonnet-4-5`), the one model with that
 * bare name. Several with it: a 400 listing them; none: 404 model_not_found.
 */
export function findModel(catalogue: Catalogue, reference: ModelReference, request: Pick<GenerateRequest, "formatPolicy" | "model">): CatalogueModel {
  const param = reference.requested === request.model ? "model" : "models";
  const exact = catalogue.get(reference.baseId);
  if (exact) return exact;
  const bare = request.formatPolicy?.bareModelNames ? modelOfBareName(catalogue.models, (model) => model.config.id, reference.baseId, (ids) => ambiguousModel(reference.baseId, ids, param)) : undefined;
  if (bare) return bare;
  throw routerError(Code.NotFound, "model_not_found", `Model ${echoed(reference.baseId)} is not in the catalogue.`, { param });
}
