// A configuration for image task tests: the BFL protocol at a fake, one
// priced FLUX model, two organisations (so ownership can be tested), fast
// polling and a private assets directory.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { TEST_KEY } from "./harness.ts";
import { BFL_KEY } from "./fake-media-bfl.ts";

export const FLUX_MODEL = "bfl/flux-2-pro";
/** The catalogue's price per generated image, USD. */
export const FLUX_IMAGE_PRICE = "0.03";
export const OTHER_KEY = "sk-other-org";
/** What the tests' environment gives the gateway: the BFL key and the second organisation's key. */
export const IMAGE_TASK_ENV = { BFL_API_KEY: BFL_KEY, OTHER_API_KEY: OTHER_KEY, TEST_API_KEY: TEST_KEY };

export function imageTaskConfig(bflUrl: string, tasks: Partial<RouterConfig["tasks"]> = {}): RouterConfig {
  return parseConfig(
    JSON.stringify({
      providers: [
        { id: "simulator", label: "Simulator", protocol: "simulator" },
        { id: "bfl", label: "Black Forest Labs", protocol: "bfl", base_url: bflUrl, api_key_env: "BFL_API_KEY", timeout_ms: 5000 },
      ],
      models: [
        {
          id: FLUX_MODEL,
          name: "FLUX.2 [pro]",
          created: 1700000000,
          creator: "bfl",
          context_length: 4096,
          max_completion_tokens: 1,
          input_modalities: ["text"],
          output_modalities: ["image"],
          supported_parameters: [],
          supported_params_details: { output_format: ["jpeg", "png"], n: { min: 1, max: 1 } },
          providers: [{ provider: "bfl", provider_model_id: "flux-2-pro", pricing: { prompt: "0", completion: "0", image_output: FLUX_IMAGE_PRICE } }],
        },
      ],
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
        ...tasks,
      },
    }),
  );
}
