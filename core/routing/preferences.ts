// The caller's routing preferences beyond `only` and `order` (docs/routing.md):
// providers to ignore, the sort (price, measured throughput or latency; the
// `:nitro` and `:floor` suffixes), require_parameters and max_price. Each is
// one step that plan.ts calls; the sort reads measurements from memory only.
import type { GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import { parseMoney, type Money } from "../billing/money.ts";
import { supportedParametersOf, type ProviderRoute } from "../catalogue/catalogue.ts";
import { invalidParameter } from "../errors.ts";
import type { MeasurementsView } from "../route-stats/measurements.ts";
import { SORT_OF_SUFFIX, suffixConflict, type ModelReference } from "../../wire/model-name.ts";
import type { Requirement } from "./capabilities.ts";

export type RouteSort = "price" | "throughput" | "latency";

const SORTS: readonly string[] = ["price", "throughput", "latency"] satisfies RouteSort[];

/**
 * How this model's routes are sorted: its sort suffix, else `provider.sort`;
 * undefined: the default (cheapest first). Suffixes that cannot go together,
 * or a suffix that contradicts `provider.sort`, are a 400 naming them.
 */
export function sortOf(reference: ModelReference, request: GenerateRequest, param: string): RouteSort | undefined {
  const conflict = suffixConflict(reference.suffixes);
  if (conflict) throw invalidParameter(param, `${reference.requested}: ${conflict}.`);
  const asked = request.provider?.sort ?? "";
  if (asked !== "" && !SORTS.includes(asked)) throw invalidParameter("provider.sort", `provider.sort must be price, throughput or latency.`);
  const suffix = reference.suffixes.find((s) => s === "nitro" || s === "floor");
  const bySuffix = suffix && SORT_OF_SUFFIX[suffix];
  if (bySuffix && asked !== "" && asked !== bySuffix) {
    throw invalidParameter("provider.sort", `${reference.requested} sorts providers by ${bySuffix} (:${suffix}), but provider.sort asks for ${asked}: use one.`);
  }
  return bySuffix ?? ((asked || undefined) as RouteSort | undefined);
}

/**
 * Routes in the sort's order. Price is the catalogue's own order (cheapest
 * first). Throughput (highest first) and latency (lowest first) put the
 * measured routes first; a route not measured yet follows them in price order.
 * The sort is stable: equal figures keep the price order.
 */
export function sortRoutes(routes: ProviderRoute[], sort: RouteSort | undefined, measurements: MeasurementsView | undefined): ProviderRoute[] {
  if (sort === undefined || sort === "price" || !measurements) return routes;
  const figure = (route: ProviderRoute) => {
    const measured = measurements.get(route.provider.id, route.model.id);
    return sort === "throughput" ? measured?.throughputTokensPerSecond : measured?.firstTokenLatencyMs;
  };
  const better = sort === "throughput" ? (a: number, b: number) => b - a : (a: number, b: number) => a - b;
  return [...routes].sort((a, b) => {
    const [x, y] = [figure(a), figure(b)];
    if (x === undefined || y === undefined) return x === undefined ? (y === undefined ? 0 : 1) : -1;
    return better(x, y);
  });
}

export const isIgnored = (request: GenerateRequest, route: ProviderRoute) => request.provider?.ignore.includes(route.provider.id) === true;

/** What `require_parameters` and `max_price` ask of every route: skipped (and traced) as a missing capability is. */
export function preferenceRequirements(request: GenerateRequest): Requirement[] {
  const requirements: Requirement[] = [];
  if (request.provider?.requireParameters) {
    const sent = parametersSent(request);
    if (sent.length > 0) {
      requirements.push({
        reason: "require_parameters",
        param: "provider.require_parameters",
        description: `support for every parameter sent (provider.require_parameters: ${sent.join(", ")})`,
        isMetBy: (route) => sent.every((name) => supportedParametersOf(route).includes(name)),
      });
    }
  }
  const maxPrice = request.provider?.maxPrice;
  if (maxPrice) {
    const limits = {
      prompt: limitOf(maxPrice.prompt, "prompt"),
      completion: limitOf(maxPrice.completion, "completion"),
      request: limitOf(maxPrice.request, "request"),
    };
    const said = Object.entries(maxPrice)
      .filter(([field, value]) => field !== "$typeName" && value !== "")
      .map(([field, value]) => `${field} ${value}`)
      .join(", ");
    requirements.push({
      reason: "max_price",
      param: "provider.max_price",
      description: `a price within provider.max_price (${said}; prompt and completion per million tokens)`,
      isMetBy: (route) =>
        within(route.prices.prompt * PER_MILLION, limits.prompt) && within(route.prices.completion * PER_MILLION, limits.completion) && within(route.prices.request, limits.request),
    });
  }
  return requirements;
}

const PER_MILLION = 1_000_000n;

const within = (price: Money, limit: Money | undefined) => limit === undefined || price <= limit;

function limitOf(decimal: string, field: string): Money | undefined {
  if (decimal === "") return undefined;
  try {
    return parseMoney(decimal);
  } catch {
    throw invalidParameter(`provider.max_price.${field}`, `provider.max_price.${field} must be a non-negative decimal amount in USD.`);
  }
}

/**
 * The parameters a request sends, by their `supported_parameters` names. The
 * completion limit is always sent (every provider has one), so it is not counted.
 */
function parametersSent(request: GenerateRequest): string[] {
  const sent: string[] = [];
  const sampling = request.sampling;
  if (sampling) {
    const optional = [
      ["temperature", sampling.temperature],
      ["top_p", sampling.topP],
      ["top_k", sampling.topK],
      ["frequency_penalty", sampling.frequencyPenalty],
      ["presence_penalty", sampling.presencePenalty],
      ["repetition_penalty", sampling.repetitionPenalty],
      ["seed", sampling.seed],
    ] as const;
    for (const [name, value] of optional) if (value !== undefined) sent.push(name);
    if (sampling.stop.length > 0) sent.push("stop");
  }
  if (request.tools.length > 0) sent.push("tools");
  if (request.toolChoice) sent.push("tool_choice");
  if (request.responseFormat && request.responseFormat.type !== 0) sent.push("response_format");
  if (request.reasoning) sent.push("reasoning");
  if (request.parallelToolCalls !== undefined) sent.push("parallel_tool_calls");
  return sent;
}
