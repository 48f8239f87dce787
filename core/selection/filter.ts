// Step 1 of selection: the catalogue models that can serve the request at all.
// A model is a candidate when router/auto may pick it (selection.models, else
// its quality scores), the key allows it, it makes text, and one of its usable
// routes has every capability the request needs (routing applies the same
// checks to the chosen model's routes: core/routing/capabilities.ts).
import { supportedParametersOf, type Catalogue, type CatalogueModel, type ProviderRoute } from "../catalogue/catalogue.ts";
import { matchesAnyPattern } from "./model-patterns.ts";

/** What the request needs of a model, as the selection endpoint or router/auto reads it. */
export interface SelectionNeeds {
  tools?: boolean;
  /** response_format asks for JSON (json_object or json_schema). */
  structuredOutput?: boolean;
  /** Input kinds beyond text the prompt carries. */
  inputModalities?: ("image" | "audio" | "file")[];
  /** Input tokens (estimated from the prompt when not given); with maxTokens, it must fit the context. */
  contextTokens?: number;
  maxTokens?: number;
  /** Free routes only (`:free` entitlement); unset or false: paid routes. */
  free?: boolean;
}

export interface FilterOptions {
  /** The key's allow-list (catalogue ids); empty or unset: every model. */
  allowedModels?: readonly string[];
  /** router/auto's own restriction (config `selection.models`): patterns, `*` any run of characters. Empty or unset: the models with quality scores. */
  modelPatterns?: readonly string[];
  /** Further checks of each route (router/auto passes routing's own requirements). */
  routeChecks?: readonly RouteCheck[];
}

export interface Candidate {
  model: CatalogueModel;
  /** The routes that fit, cheapest first. */
  routes: ProviderRoute[];
}

export interface Excluded {
  model: string;
  /** What it lacks, in words: "tool calling", "a context of 9000 tokens". */
  reason: string;
}

export interface RouteCheck {
  /** What a route that fails it lacks, in words ("tool calling"). */
  lacks: string;
  isMetBy(route: ProviderRoute): boolean;
}

export function filterCandidates(needs: SelectionNeeds, catalogue: Catalogue, options: FilterOptions = {}): { candidates: Candidate[]; excluded: Excluded[] } {
  const checks = routeChecks(needs, options);
  const patterns = options.modelPatterns ?? [];
  const allowed = options.allowedModels ?? [];
  const candidates: Candidate[] = [];
  const excluded: Excluded[] = [];
  for (const model of catalogue.models) {
    const id = model.config.id;
    // Not a model router/auto picks from at all: no reason to tell.
    if (!model.config.output_modalities.includes("text")) continue;
    if (patterns.length > 0 ? !matchesAnyPattern(id, patterns) : model.config.quality === undefined) continue;
    if (allowed.length > 0 && !allowed.includes(id)) {
      excluded.push({ model: id, reason: "not in the key's allowed models" });
      continue;
    }
    const usable = model.routes.filter((route) => route.enabled && (needs.free ? route.route.free?.enabled === true : true));
    if (usable.length === 0) {
      excluded.push({ model: id, reason: needs.free ? "a free route" : "a provider available now" });
      continue;
    }
    const routes = usable.filter((route) => checks.every((check) => check.isMetBy(route)));
    if (routes.length === 0) excluded.push({ model: id, reason: checks.find((check) => !check.isMetBy(usable[0]))!.lacks });
    else candidates.push({ model, routes });
  }
  return { candidates, excluded };
}

function routeChecks(needs: SelectionNeeds, options: FilterOptions): RouteCheck[] {
  const checks: RouteCheck[] = [{ lacks: "a provider that serves chat", isMetBy: (route) => route.capabilities.chat !== false }];
  const parameter = (name: string, lacks: string): RouteCheck => ({ lacks, isMetBy: (route) => supportedParametersOf(route).includes(name) });
  if (needs.tools) checks.push(parameter("tools", "tool calling"));
  if (needs.structuredOutput) checks.push(parameter("response_format", "structured output (response_format)"));
  for (const modality of needs.inputModalities ?? []) {
    // A PDF is a file to some models' lists (capabilities.ts does the same).
    const accepted = modality === "file" ? ["file", "pdf"] : [modality];
    checks.push({ lacks: `${modality} input`, isMetBy: (route) => accepted.some((m) => route.model.input_modalities.includes(m as never)) });
  }
  const maxTokens = needs.maxTokens;
  if (maxTokens !== undefined) {
    checks.push({ lacks: `a completion limit of ${maxTokens} tokens`, isMetBy: (route) => route.maxCompletionTokens >= maxTokens });
  }
  const context = (needs.contextTokens ?? 0) + (maxTokens ?? 0);
  if (context > 0) checks.push({ lacks: `a context of ${context} tokens`, isMetBy: (route) => route.contextLength >= context });
  checks.push(...(options.routeChecks ?? []));
  return checks;
}

/** "no model fits: 2 lack tool calling; 1 not in the key's allowed models" (the selection's `error`). */
export function describeExcluded(excluded: readonly Excluded[]): string {
  if (excluded.length === 0) return "no model is configured for router/auto (selection.models, or models with quality scores)";
  const counts = new Map<string, number>();
  for (const { reason } of excluded) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const parts = [...counts].map(([reason, n]) => (reason.startsWith("not ") ? `${n} ${reason}` : `${n} lack${n === 1 ? "s" : ""} ${reason}`));
  return `no model fits the request: ${parts.join("; ")}`;
}
