// Parses the model strings of a request: `<provider>/<model>` with an optional
// shortcut suffix (`:thinking`, `:free`), and finds the catalogue model they
// name (a bare name too, where the request's format allows one).
import type { GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import type { Catalogue, CatalogueModel } from "../catalogue/catalogue.ts";
import { Code, echoed, routerError } from "../errors.ts";
export type ModelSuffix = "thinking" | "free";

export interface ModelReference {
  /** What the caller wrote. */
  requested: string;
  /** The catalogue id without the suffix. */
  baseId: string;
  suffix: ModelSuffix | undefined;
}

const SUFFIXES: readonly ModelSuffix[] = ["thinking", "free"];

/**
 * Splits a known suffix off a model id. Ids that are in the catalogue as written
 * win, so a model whose own name contains a colon is never misread.
 */
export function parseModelReference(requested: string, isKnownId: (id: string) => boolean): ModelReference {
  const colon = requested.lastIndexOf(":");
  if (colon > 0 && !isKnownId(requested)) {
    const suffix = requested.slice(colon + 1) as ModelSuffix;
    if (SUFFIXES.includes(suffix)) return { requested, baseId: requested.slice(0, colon), suffix };
  }
  return { requested, baseId: requested, suffix: undefined };
}

/** The bare model name of a catalogue id: `openai/gpt-4o` -> `gpt-4o`. */
export function bareModelName(id: string): string {
  return id.slice(id.indexOf("/") + 1);
}

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
  const bare = request.formatPolicy?.bareModelNames ? modelOfBareName(catalogue.models, (model) => model.config.id, reference.baseId, param) : undefined;
  if (bare) return bare;
  throw routerError(Code.NotFound, "model_not_found", `Model ${echoed(reference.baseId)} is not in the catalogue.`, { param });
}

/**
 * The one model whose bare name `name` is (a name with no provider: `claude-sonnet-4-5`), for
 * the Messages route and Anthropic's GET /v1/models/{id} alike. Several with it: a 400 listing
 * them; none, or a name with a provider: undefined.
 */
export function modelOfBareName<M>(models: readonly M[], idOf: (model: M) => string, name: string, param: string): M | undefined {
  if (name.includes("/")) return undefined;
  const matches = models.filter((model) => bareModelName(idOf(model)) === name);
  if (matches.length > 1) {
    const ids = matches.map(idOf);
    throw routerError(Code.InvalidArgument, "ambiguous_model", `Model ${echoed(name)} names several models: ${ids.join(", ")}; send one of these ids.`, {
      param,
      metadata: { candidates: ids },
    });
  }
  return matches[0];
}
