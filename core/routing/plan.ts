// Turns a request into the ordered list of (model, provider) attempts: the
// `model` then each of `models`, and for each the providers allowed by the
// caller's preferences, cheapest first unless `provider.order` says otherwise.
import { create } from "@bufbuild/protobuf";
import { ReasoningOptionsSchema, type GenerateRequest, type Warning } from "../../gen/router/v1/inference_pb.js";
import { supportedParametersOf, type Catalogue, type CatalogueModel, type ProviderRoute } from "../catalogue/catalogue.ts";
import { noFreeModelAvailable } from "../accounts/refusals.ts";
import { Code, echoed, invalidParameter, routerError } from "../errors.ts";
import { warning } from "../warnings.ts";
import { missingKeysMessage } from "./missing-keys.ts";
import { parseModelReference, type ModelReference } from "../../wire/model-name.ts";
import { findModel } from "./model-id.ts";
import { carriesNative, withoutNativeParts } from "./native-parts.ts";
import { requirementsOf, type Requirement } from "./capabilities.ts";
import { resolveAutoRouter, type SelectionCaller } from "./auto-router.ts";
import type { Selection } from "../selection/select.ts";
import { resolveReasoning } from "./reasoning.ts";
import { checkMakesText, makesText } from "./text-output.ts";
import { isIgnored, preferenceRequirements, sortOf, sortRoutes, type RouteSort } from "./preferences.ts";
import type { MeasurementsView } from "../route-stats/measurements.ts";
import type { MediaOutput } from "../providers/capabilities.ts";

export interface Attempt {
  model: CatalogueModel;
  route: ProviderRoute;
  /** The request as this provider gets it (suffix effects applied, unsupported options dropped). */
  request: GenerateRequest;
  free: boolean;
  warnings: Warning[];
  /** The routing rule that put this attempt first (prompt-cache stickiness), named in its trace entry when it serves. */
  rule?: string;
}

/** A route left out before dispatch because it lacks a capability the request needs. */
export interface SkippedRoute {
  modelId: string;
  provider: string;
  requirement: Requirement;
}

export interface Plan {
  attempts: Attempt[];
  skipped: SkippedRoute[];
  /** Whether the request is served from free quotas (every attempt free) or paid with credits. */
  free: boolean;
  /** Catalogue ids the request names itself (not those router/free chose among): the key's allow-list applies to them. */
  namedModelIds: string[];
  /** router/free is asked for: its model is drawn at random (spec rule 2); a list of :free models is tried in order. */
  randomFree: boolean;
  /** What router/auto picked and why, when it was asked for (the trace's first entry). */
  selection?: Selection;
}

export interface PlanOptions {
  /** The routes' measured throughput and latency, for `provider.sort` and `:nitro`; without: unmeasured. */
  measurements?: MeasurementsView;
  /** The key's allow-list and organisation, which router/auto's selection needs. */
  caller?: SelectionCaller;
}

export function planAttempts(request: GenerateRequest, catalogue: Catalogue, options: PlanOptions = {}): Plan {
  // router/auto is the model it selects from here on (auto-router.ts).
  const auto = resolveAutoRouter(request, catalogue, options.caller);
  if (auto) request = auto.request;
  const requested = [...new Set([request.model, ...request.models].filter(Boolean))];
  const references = requested.map((id) => parseModelReference(id, (candidate) => catalogue.get(candidate) !== undefined));
  const attempts: Attempt[] = [];
  const skipped: SkippedRoute[] = [];
  const unavailable: string[] = [];
  // The caller's require_parameters and max_price skip routes as a missing capability does (traced, then a 400).
  const requirements = [...requirementsOf(request), ...preferenceRequirements(request)];
  // The format's own (GenerateRequest.warnings) go with every attempt's.
  const requestWarnings = request.warnings;
  checkProvidersExist(request, catalogue);
  for (const reference of references) {
    if (isFreeRouter(reference.requested)) {
      attempts.push(...freeRouterAttempts(reference.requested, request, catalogue, requirements, requestWarnings, options));
      continue;
    }
    const model = findModel(catalogue, reference, request);
    // A video answer needs no text: its routes are checked for video output (capabilities.ts).
    const param = reference.requested === request.model ? "model" : "models";
    if (!request.media?.video) checkMakesText(model, param);
    const free = reference.suffixes.includes("free");
    const routes = orderRoutes(model, request, free, sortOf(reference, request, param), options);
    if (free && routes.length === 0 && !model.routes.some((r) => r.route.free?.enabled)) {
      throw routerError(Code.InvalidArgument, "free_slug_disabled", `Model ${model.config.id} is not enabled for :free.`, { param: "model" });
    }
    if (routes.length === 0) unavailable.push(describeUnavailable(model, request));
    for (const route of routes) {
      const unmet = requirements.find((requirement) => !requirement.isMetBy(route));
      if (unmet) {
        skipped.push({ modelId: model.config.id, provider: route.provider.id, requirement: unmet });
        continue;
      }
      const adapted = adaptRequest(request, reference, route);
      attempts.push({ model, route, free, request: adapted.request, warnings: [...adapted.warnings, ...requestWarnings] });
    }
  }
  if (attempts.length === 0 && skipped.length > 0 && unavailable.length === 0) throw capabilityMissing(skipped);
  if (attempts.length === 0) {
    throw routerError(Code.Unavailable, "no_provider_available", `No provider can serve this request now: ${unavailable.join("; ")}.`);
  }
  const free = attempts[0].free;
  if (attempts.some((attempt) => attempt.free !== free)) {
    // One request is paid from one place: a free quota or the credit balance.
    throw invalidParameter("models", "Free (:free, router/free) and paid models cannot be combined in one request.");
  }
  const named = references.filter((reference) => !isFreeRouter(reference.requested));
  return {
    attempts,
    skipped,
    free,
    namedModelIds: [...new Set(named.map((reference) => reference.baseId))],
    randomFree: named.length < references.length,
    ...(auto && { selection: auto.selection }),
  };
}

/**
 * `router/free` (spec, free-tier rule 2): every free model that can serve the
 * request (vision, tools, structured output, context: the same requirements as
 * any route), in catalogue order; the account store then picks one uniformly
 * among those with quota left. It takes no suffix (rule 3).
 */
function freeRouterAttempts(requested: string, request: GenerateRequest, catalogue: Catalogue, requirements: Requirement[], requestWarnings: Warning[], options: PlanOptions): Attempt[] {
  if (requested !== FREE_ROUTER_ID) {
    throw routerError(Code.InvalidArgument, "invalid_request_error", `${FREE_ROUTER_ID} takes no suffix.`, { param: "model" });
  }
  const attempts: Attempt[] = [];
  const reference: ModelReference = { requested: FREE_ROUTER_ID, baseId: FREE_ROUTER_ID, suffix: "free", suffixes: ["free"] };
  const sort = sortOf(reference, request, "model");
  for (const model of catalogue.models) {
    if (!request.media?.video && !makesText(model)) continue;
    for (const route of orderRoutes(model, request, true, sort, options)) {
      if (requirements.some((requirement) => !requirement.isMetBy(route))) continue;
      const adapted = adaptRequest(request, reference, route);
      attempts.push({ model, route, free: true, request: adapted.request, warnings: [...adapted.warnings, ...requestWarnings] });
    }
  }
  if (attempts.length === 0) throw noFreeModelAvailable();
  return attempts;
}

const isFreeRouter = (requested: string) => requested === FREE_ROUTER_ID || requested.startsWith(FREE_ROUTER_ID + ":");

/** Every route lacks something the request needs: a 400 that names it, never a dispatch bound to fail. */
function capabilityMissing(skipped: SkippedRoute[]) {
  const first = skipped[0].requirement;
  const byModel = new Map<string, string>();
  for (const { modelId, requirement } of skipped) if (!byModel.has(modelId)) byModel.set(modelId, requirement.description);
  const details = [...byModel].map(([modelId, description]) => `${modelId} lacks ${description}`).join("; ");
  return routerError(Code.InvalidArgument, "capability_not_supported", `No provider can serve this request: ${details}.`, {
    param: first.param,
    // The skipped routes, as the routing trace of an answer would list them.
    metadata: { missing: first.reason, attempts: skipped.map((s) => ({ model: s.modelId, provider: s.provider, outcome: "skipped", reason: s.requirement.reason })) },
  });
}

const FREE_ROUTER_ID = "router/free";

/**
 * A provider named in `provider.only` or `provider.order` that is nowhere in the
 * configuration is the caller's mistake (a typo, most likely): 400 naming it,
 * rather than a 503 that would suggest retrying later. A provider that exists but
 * does not serve the model, or lacks its key, is left to routing (see docs/routing.md).
 */
function checkProvidersExist(request: GenerateRequest, catalogue: Catalogue) {
  const preferences = request.provider;
  if (!preferences) return;
  for (const [field, ids] of [["only", preferences.only], ["order", preferences.order], ["ignore", preferences.ignore]] as const) {
    const unknown = ids.filter((id) => catalogue.provider(id) === undefined);
    if (unknown.length > 0) {
      const names = unknown.map((id) => `"${echoed(id)}"`).join(", ");
      throw invalidParameter(`provider.${field}`, `provider.${field} names ${unknown.length === 1 ? "a provider" : "providers"} that do${unknown.length === 1 ? "es" : ""} not exist: ${names}.`);
    }
  }
}

/**
 * The model's routes in the order they are tried. The rules, strongest last
 * (docs/routing.md, "Provider order"): the sort (cheapest first by default;
 * measured throughput or latency), then prompt-cache stickiness (applied
 * after admission: prefer-cached-provider.ts), then the conversation keeper,
 * then the caller's explicit `order`.
 */
function orderRoutes(model: CatalogueModel, request: GenerateRequest, free: boolean, sort: RouteSort | undefined, options: PlanOptions): ProviderRoute[] {
  const preferences = request.provider;
  let routes = model.routes.filter((r) => r.enabled && (!free || r.route.free?.enabled) && !isIgnored(request, r));
  if (preferences && preferences.only.length > 0) {
    routes = routes.filter((r) => preferences.only.includes(r.provider.id));
  }
  routes = sortRoutes(routes, sort, options.measurements);
  if (preferences && preferences.order.length > 0) {
    const named = preferences.order.flatMap((id) => routes.filter((r) => r.provider.id === id));
    const others = routes.filter((r) => !preferences.order.includes(r.provider.id));
    routes = preferences.allowFallbacks === false ? named : [...named, ...others];
  }
  // A continuation sticks to the provider that keeps the conversation on its side, unless the caller ordered otherwise.
  const keeper = request.conversation?.upstream?.provider;
  if (keeper && !(preferences && preferences.order.length > 0)) {
    routes = [...routes.filter((r) => r.provider.id === keeper), ...routes.filter((r) => r.provider.id !== keeper)];
  }
  // docs/contract.md: fallbacks off means no backup provider: the first of `order`
  // that serves the model, else the cheapest (of `only`, when given).
  if (preferences?.allowFallbacks === false) routes = routes.slice(0, 1);
  return routes;
}

/** Shallow copies: the request is shared between attempts and never mutated. */
function adaptRequest(request: GenerateRequest, reference: ModelReference, route: ProviderRoute) {
  let adapted = request;
  const warnings: Warning[] = [];
  if (reference.suffixes.includes("thinking") && !adapted.reasoning) {
    adapted = { ...adapted, reasoning: create(ReasoningOptionsSchema, { effort: "high" }) };
  }
  if (adapted.reasoning && !supportedParametersOf(route).includes("reasoning")) {
    // docs/contract.md: a model without reasoning support drops it, with a warning.
    adapted = { ...adapted, reasoning: undefined };
    warnings.push(unsupportedWarning("reasoning", route));
  } else if (adapted.reasoning) {
    const resolved = resolveReasoning(adapted, route);
    adapted = { ...adapted, reasoning: resolved.reasoning };
    warnings.push(...resolved.warnings);
  }
  const unsupported = unsupportedSampling(adapted, route);
  if (unsupported.length > 0) {
    const sampling = { ...adapted.sampling! };
    for (const { field, name } of unsupported) {
      if (field === "stop") sampling.stop = [];
      else sampling[field] = undefined;
      warnings.push(unsupportedWarning(name, route));
    }
    adapted = { ...adapted, sampling };
  }
  if (adapted.toolChoice && !supportedParametersOf(route).includes("tool_choice")) {
    adapted = { ...adapted, toolChoice: undefined };
    warnings.push(unsupportedWarning("tool_choice", route));
  }
  if (adapted.media?.aspectRatio && !generates(route, "image")) {
    // Only an image-generating model takes an aspect ratio; elsewhere the provider would refuse it.
    adapted = { ...adapted, media: { ...adapted.media, aspectRatio: "" } };
    warnings.push(unsupportedWarning("aspectRatio", route));
  }
  if (adapted.media && (adapted.media.audioPrompt || adapted.media.durationSeconds !== undefined) && !generates(route, "audio")) {
    adapted = { ...adapted, media: { ...adapted.media, audioPrompt: "", durationSeconds: undefined } };
    warnings.push(warning("unsupported_parameter", "prompt", `prompt and duration are not supported by ${route.model.id} on ${route.provider.id} and were ignored`));
  }
  if (!route.capabilities.cacheControl && request.messages.some((m) => m.content.some((part) => part.cacheControl))) {
    warnings.push(warning("unsupported_parameter", "cache_control", `cache_control breakpoints are not sent to ${route.provider.id}, which caches prompts automatically`));
  }
  if (route.capabilities.nativeFormat !== request.format && carriesNative(request)) {
    const stripped = withoutNativeParts(adapted, route);
    adapted = stripped.request;
    warnings.push(...stripped.warnings);
  }
  const own = withOwnProviderOptions(adapted, route);
  adapted = own.request;
  warnings.push(...own.dropped.map((field) => unsupportedWarning(field, route)));
  // Only the provider that keeps the conversation can continue it on its side; any other is sent the whole history.
  if (adapted.conversation?.upstream && adapted.conversation.upstream.provider !== route.provider.id) {
    adapted = { ...adapted, conversation: { ...adapted.conversation, upstream: undefined } };
  }
  const passthrough = adapted.passthrough;
  // The native format's own protocol takes every field the format's decoder did not model.
  if (passthrough && route.capabilities.nativeFormat !== request.format) {
    const carried = route.capabilities.passthrough;
    const dropped = Object.keys(passthrough).filter((field) => !carried.includes(field));
    if (dropped.length > 0) {
      adapted = { ...adapted, passthrough: Object.fromEntries(Object.entries(passthrough).filter(([field]) => carried.includes(field))) };
      for (const field of dropped) warnings.push(unsupportedWarning(field, route));
    }
  }
  return { request: adapted, warnings };
}

/**
 * The request with its route's protocol's provider options alone: no upstream
 * is sent another protocol's. The fields only other protocols carry (Google's
 * `service_tier` on an Anthropic route, Anthropic's `betas` on an
 * OpenAI-compatible one) are named, so the caller is told they were not sent.
 */
function withOwnProviderOptions(request: GenerateRequest, route: ProviderRoute): { request: GenerateRequest; dropped: string[] } {
  const options = request.providerOptions;
  const protocol = route.provider.protocol;
  if (Object.keys(options).every((key) => key === protocol)) return { request, dropped: [] };
  const kept = options[protocol];
  const others = Object.entries(options).flatMap(([key, entry]) => (key === protocol ? [] : Object.keys(entry)));
  const dropped = [...new Set(others)].filter((field) => !kept || !(field in kept));
  return { request: { ...request, providerOptions: kept ? { [protocol]: kept } : {} }, dropped };
}

/** Whether this route generates the modality and its protocol carries the fields that steer it. */
function generates(route: ProviderRoute, modality: MediaOutput): boolean {
  return route.capabilities.mediaOptions.includes(modality) && route.model.output_modalities.includes(modality);
}

const unsupportedWarning = (name: string, route: ProviderRoute) =>
  warning("unsupported_parameter", name, `${name} is not supported by ${route.model.id} on ${route.provider.id} and was ignored`);

/**
 * Optional sampling fields, each sent only where the route's supported_parameters
 * list it (OpenAI's reasoning models refuse temperature, for example).
 * max_tokens is always sent: every provider has a completion limit.
 */
const SAMPLING_FIELDS = [
  { field: "temperature", name: "temperature" },
  { field: "topP", name: "top_p" },
  { field: "topK", name: "top_k" },
  { field: "frequencyPenalty", name: "frequency_penalty" },
  { field: "presencePenalty", name: "presence_penalty" },
  { field: "repetitionPenalty", name: "repetition_penalty" },
  { field: "seed", name: "seed" },
  { field: "stop", name: "stop" },
] as const;

function unsupportedSampling(request: GenerateRequest, route: ProviderRoute) {
  const sampling = request.sampling;
  if (!sampling) return [];
  const supported = supportedParametersOf(route);
  return SAMPLING_FIELDS.filter(({ field, name }) => {
    const present = field === "stop" ? sampling.stop.length > 0 : sampling[field] !== undefined;
    return present && !supported.includes(name);
  });
}

function describeUnavailable(model: CatalogueModel, request: GenerateRequest): string {
  const preferences = request.provider;
  const only = preferences?.only ?? [];
  // With fallbacks off, `order` restricts routing just as `only` does (orderRoutes).
  const order = preferences?.allowFallbacks === false ? preferences.order : [];
  const servedBy = model.routes.map((r) => r.provider.id);
  const ignored = preferences?.ignore ?? [];
  if (ignored.length > 0 && servedBy.every((id) => ignored.includes(id))) {
    return `${model.config.id} is served only by providers that provider.ignore names (${[...new Set(servedBy)].join(", ")})`;
  }
  for (const named of [only, order]) {
    if (named.length > 0 && !named.some((id) => servedBy.includes(id))) {
      // The named providers exist (checked first) but none of them serves this model.
      return `${model.config.id} is not served by ${named.join(", ")} (served by ${[...new Set(servedBy)].join(", ")})`;
    }
  }
  const allowed = model.routes.filter((r) => (only.length === 0 || only.includes(r.provider.id)) && (order.length === 0 || order.includes(r.provider.id)));
  return missingKeysMessage(model.config.id, allowed) ?? `${model.config.id} has no provider matching the request's provider preferences`;
}

