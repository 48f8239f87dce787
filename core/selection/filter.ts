// Step 1 of selection: the catalogue models that can serve the request at all.
import type { Catalogue, CatalogueModel, ProviderRoute } from "../catalogue/catalogue.ts";

/** What the request needs of a model, as the selection endpoint or router/auto reads it. */
export interface SelectionNeeds {
  tools?: boolean;
  /** response_format asks for JSON (json_object or json_schema). */
  structuredOutput?: boolean;
  /** Input kinds beyond text the prompt carries. */
  inputModalities?: ("image" | "audio" | "file")[];
  /** Input tokens (estimated when not given) plus max_tokens must fit the context. */
  contextTokens?: number;
  maxTokens?: number;
  /** Free routes only (`:free` entitlement) or paid routes only; unset: paid. */
  free?: boolean;
}

export interface FilterOptions {
  /** The key's allow-list (catalogue ids); empty or unset: every model. */
  allowedModels?: readonly string[];
  /** router/auto's own restriction (config `selection.models`): glob patterns, `*` any run of characters. */
  modelPatterns?: readonly string[];
  /** An extra check of each route (router/auto passes routing's own requirements). */
  routeFits?: (route: ProviderRoute) => boolean;
}

export interface Candidate {
  model: CatalogueModel;
  /** The routes that fit, cheapest first. */
  routes: ProviderRoute[];
}

export interface Excluded {
  model: string;
  reason: string;
}

export function filterCandidates(needs: SelectionNeeds, catalogue: Catalogue, options: FilterOptions = {}): { candidates: Candidate[]; excluded: Excluded[] } {
  const candidates: Candidate[] = [];
  const excluded: Excluded[] = [];
  for (const model of catalogue.models) {
    const routes = model.routes.filter((route) => route.enabled && (options.routeFits?.(route) ?? true));
    if (routes.length === 0) excluded.push({ model: model.config.id, reason: "no provider fits" });
    else candidates.push({ model, routes });
  }
  void needs;
  return { candidates, excluded };
}
