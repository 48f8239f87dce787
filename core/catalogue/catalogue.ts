// The catalogue in memory: models from the configuration, each with the provider
// routes that serve it and their prices parsed into exact money.
import { Modality } from "../../gen/router/v1/inference_pb.js";
import { parseMoney } from "../billing/money.ts";
import type { TokenPrices } from "../billing/cost.ts";
import type { ModelConfig, ModelProviderConfig, ProviderConfig, ProviderProtocol, RouterConfig } from "../config/schema.ts";
import type { ProtocolCapabilities } from "../providers/capabilities.ts";
import { capabilitiesOf as registeredCapabilities } from "../providers/registry.ts";

export interface ProviderRoute {
  model: ModelConfig;
  provider: ProviderConfig;
  route: ModelProviderConfig;
  /** What the provider's protocol can carry: routing decides by this, never by the protocol's name. */
  capabilities: ProtocolCapabilities;
  prices: TokenPrices;
  /** Usable now: active, and the provider's key is present (the simulator needs none; a protocol with ambient credentials finds its own). */
  enabled: boolean;
  apiKey: string;
  /** The provider's secret_key_env, read as apiKey is, for providers that sign with a second key. */
  secretKey?: string;
  contextLength: number;
  maxCompletionTokens: number;
}

export interface CatalogueModel {
  config: ModelConfig;
  /** Cheapest first (prompt + completion price), config order on ties. */
  routes: ProviderRoute[];
}

export interface Catalogue {
  idPrefix: string;
  models: CatalogueModel[];
  get(id: string): CatalogueModel | undefined;
  provider(id: string): ProviderConfig | undefined;
  /** router/auto's settings (config `selection`, organisations' `selection_preference`); absent: the defaults. */
  selection?: SelectionSettings;
}

export interface SelectionSettings {
  /** Patterns of the models router/auto may pick; empty: those with quality scores. */
  models: readonly string[];
  preference: number;
  /** Organisation id -> its preference, where it sets one. */
  organizationPreferences: ReadonlyMap<string, number>;
}

export type Environment = Record<string, string | undefined>;

/** A protocol's descriptor by name; the core passes the provider registry's. */
export type CapabilitiesOf = (protocol: ProviderProtocol) => ProtocolCapabilities;

export function createCatalogue(config: RouterConfig, env: Environment, capabilitiesOf: CapabilitiesOf = registeredCapabilities): Catalogue {
  const providers = new Map(config.providers.map((p) => [p.id, p]));
  const models = config.models.map((model) => ({
    config: model,
    routes: sortCheapestFirst(model.providers.map((route) => {
      const provider = providers.get(route.provider)!;
      return toRoute(model, provider, route, capabilitiesOf(provider.protocol), env);
    })),
  }));
  const byId = new Map(models.map((m) => [m.config.id, m]));
  return {
    idPrefix: config.id_prefix,
    models,
    get: (id) => byId.get(id),
    provider: (id) => providers.get(id),
    selection: selectionSettingsOf(config),
  };
}

function toRoute(model: ModelConfig, provider: ProviderConfig, route: ModelProviderConfig, capabilities: ProtocolCapabilities, env: Environment): ProviderRoute {
  const prompt = parseMoney(route.pricing.prompt);
  const apiKey = provider.api_key_env ? (env[provider.api_key_env] ?? "") : "";
  const secretKey = provider.secret_key_env ? env[provider.secret_key_env] : undefined;
  // A provider that names no key variable (a local server, the simulator) needs none; nor one whose
  // protocol finds credentials of its own in the environment (Vertex: application default credentials).
  const keyPresent = (!provider.api_key_env || apiKey !== "" || capabilities.ambientCredentials?.present(env, provider) === true) && (!provider.secret_key_env || !!secretKey);
  return {
    model,
    provider,
    route,
    capabilities,
    prices: {
      prompt,
      completion: parseMoney(route.pricing.completion),
      request: parseMoney(route.pricing.request),
      // Without a cache price, cached tokens cost what prompt tokens cost: never a silent discount.
      inputCacheRead: route.pricing.input_cache_read ? parseMoney(route.pricing.input_cache_read) : prompt,
      inputCacheWrite: route.pricing.input_cache_write ? parseMoney(route.pricing.input_cache_write) : prompt,
      // A protocol that reports hour-long writes says their usual rate; others' are priced as any cache write.
      inputCacheWrite1h: route.pricing.input_cache_write_1h
        ? parseMoney(route.pricing.input_cache_write_1h)
        : capabilities.oneHourCacheWritePriceMultiple !== undefined
          ? BigInt(capabilities.oneHourCacheWritePriceMultiple) * prompt
          : route.pricing.input_cache_write
            ? parseMoney(route.pricing.input_cache_write)
            : prompt,
      completionByModality: completionByModalityOf(route.pricing),
    },
    enabled: route.is_active && keyPresent,
    apiKey,
    secretKey,
    contextLength: route.context_length ?? model.context_length,
    maxCompletionTokens: route.max_completion_tokens ?? model.max_completion_tokens,
  };
}

/** The output token prices a route sets for images, audio and video (undefined: none, all output at `completion`). */
function completionByModalityOf(pricing: ModelProviderConfig["pricing"]): TokenPrices["completionByModality"] {
  const set: [Modality, string | undefined][] = [
    [Modality.IMAGE, pricing.completion_image],
    [Modality.AUDIO, pricing.completion_audio],
    [Modality.VIDEO, pricing.completion_video],
  ];
  const prices = Object.fromEntries(set.filter(([, price]) => price !== undefined).map(([modality, price]) => [modality, parseMoney(price!)]));
  return Object.keys(prices).length > 0 ? prices : undefined;
}

function selectionSettingsOf(config: RouterConfig): SelectionSettings {
  const organizationPreferences = new Map(config.organizations.flatMap((o) => (o.selection_preference === undefined ? [] : [[o.id, o.selection_preference] as const])));
  return { models: config.selection.models, preference: config.selection.preference, organizationPreferences };
}

/** What a model accepts on one provider: the route's own list, else the model's. */
export function supportedParametersOf(route: ProviderRoute): string[] {
  return route.route.supported_parameters ?? route.model.supported_parameters;
}

function sortCheapestFirst(routes: ProviderRoute[]): ProviderRoute[] {
  const price = (r: ProviderRoute) => r.prices.prompt + r.prices.completion;
  // Array.prototype.sort is stable, so equal prices keep the configuration's order.
  return routes.sort((a, b) => (price(a) < price(b) ? -1 : price(a) > price(b) ? 1 : 0));
}
