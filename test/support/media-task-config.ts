// The configuration every media task test starts from: the providers and
// models under test, the simulator beside them, two organisations (so
// ownership can be tested), fast polling and a private assets directory.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { TEST_KEY } from "./harness.ts";

export const OTHER_KEY = "sk-other-org";
/** The two organisations' keys, as the configuration's key variables name them. */
export const TASK_ACCOUNTS_ENV = { TEST_API_KEY: TEST_KEY, OTHER_API_KEY: OTHER_KEY };

type ProviderEntry = Record<string, unknown> & { id: string; protocol: string };
type Pricing = Record<string, string>;

/** A route of a media model: its provider, the provider's model id and the price fields beyond prompt and completion. */
export interface MediaRoute {
  provider: string;
  providerModelId: string;
  pricing: Pricing;
}

export interface MediaModel {
  id: string;
  name?: string;
  /** `text`: a chat model beside the media ones (a text model asked for media is refused). */
  output: "image" | "video" | "text";
  /** Default: text only for images, text and image for videos. */
  inputModalities?: string[];
  /** The model's supported_params_details: the values each parameter may take. */
  details?: Record<string, unknown>;
  routes: MediaRoute[];
  /** Default 4096 and 1: the most input tokens and output tokens per image that a route priced per token is held for. */
  contextLength?: number;
  maxCompletionTokens?: number;
}

/** One catalogue entry of a media model. */
export function mediaModelEntry(model: MediaModel): Record<string, unknown> {
  return {
    id: model.id,
    name: model.name ?? model.id,
    created: 1700000000,
    creator: model.id.split("/")[0],
    context_length: model.contextLength ?? 4096,
    max_completion_tokens: model.maxCompletionTokens ?? 1,
    input_modalities: model.inputModalities ?? (model.output === "video" ? ["text", "image"] : ["text"]),
    output_modalities: [model.output],
    supported_parameters: [],
    supported_params_details: model.details ?? {},
    providers: model.routes.map((route) => ({ provider: route.provider, provider_model_id: route.providerModelId, pricing: { prompt: "0", completion: "0", ...route.pricing } })),
  };
}

/** The providers and models under test (the simulator added), both organisations, fast polling, a fresh assets directory. */
export function mediaTaskConfig(providers: ProviderEntry[], models: MediaModel[], tasks: Partial<RouterConfig["tasks"]> = {}): RouterConfig {
  return parseConfig(
    JSON.stringify({
      providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }, ...providers.map((provider) => ({ label: provider.id, ...provider }))],
      models: models.map(mediaModelEntry),
      organizations: [
        { id: "org_test", name: "Test", credits: "10", keys: [{ id: "key_test", env: "TEST_API_KEY" }] },
        { id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY" }] },
      ],
      tasks: {
        poll_interval_ms: 5,
        poll_max_interval_ms: 20,
        lease_seconds: 1,
        timeout_seconds: 30,
        assets_dir: mkdtempSync(join(tmpdir(), "router-assets-test-")),
        // The image servers, webhook receivers and fakes of the tests listen on 127.0.0.1.
        fetch_private_urls: true,
        ...tasks,
      },
    }),
  );
}
