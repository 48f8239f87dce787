// Builds the core's services from their dependencies. Nothing here is global:
// tests and the two deployments each create their own core.
import type { ServiceImpl } from "@connectrpc/connect";
import type { CatalogueService } from "../gen/router/v1/catalogue_pb.js";
import type { InferenceService } from "../gen/router/v1/inference_pb.js";
import { createMemoryKeyStore, type KeyStore } from "./auth/keys.ts";
import { createCatalogue, type Catalogue, type Environment } from "./catalogue/catalogue.ts";
import type { ProviderProtocol, RouterConfig } from "./config/schema.ts";
import { createHttpClient, type HttpClient } from "./providers/http-client.ts";
import { createAnthropicAdapter } from "./providers/anthropic/adapter.ts";
import { createGeminiAdapter } from "./providers/gemini/adapter.ts";
import { createOpenAiCompatibleAdapter } from "./providers/openai-compatible/adapter.ts";
import { createSimulatorAdapter } from "./providers/simulator/adapter.ts";
import type { ProviderAdapter } from "./providers/types.ts";
import { createCatalogueService } from "./services/catalogue.ts";
import { createInferenceService } from "./services/inference.ts";

export interface CoreDeps {
  config: RouterConfig;
  /** Where provider API keys and development keys are read from. */
  env: Environment;
  now?: () => Date;
  http?: HttpClient;
  keys?: KeyStore;
}

export interface Core {
  catalogue: Catalogue;
  services: {
    inference: ServiceImpl<typeof InferenceService>;
    catalogue: ServiceImpl<typeof CatalogueService>;
  };
  close(): Promise<void>;
}

export function createCore(deps: CoreDeps): Core {
  const catalogue = createCatalogue(deps.config, deps.env);
  const http = deps.http ?? createHttpClient();
  const adapters: Record<ProviderProtocol, ProviderAdapter> = {
    "openai-compatible": createOpenAiCompatibleAdapter(http),
    anthropic: createAnthropicAdapter(http),
    gemini: createGeminiAdapter(http),
    simulator: createSimulatorAdapter(),
  };
  const inferenceDeps = {
    catalogue,
    keys: deps.keys ?? createMemoryKeyStore(deps.config.organizations, deps.env),
    adapters,
    now: deps.now ?? (() => new Date()),
  };
  return {
    catalogue,
    services: {
      inference: createInferenceService(inferenceDeps),
      catalogue: createCatalogueService(catalogue),
    },
    close: () => http.close(),
  };
}
