// A configuration for image task tests: the BFL protocol at a fake, one
// priced FLUX model, and the shared task test setup (media-task-config.ts:
// two organisations, fast polling, a private assets directory).
import type { RouterConfig } from "../../core/config/schema.ts";
import { BFL_KEY } from "./fake-media-bfl.ts";
import { mediaTaskConfig, OTHER_KEY, TASK_ACCOUNTS_ENV } from "./media-task-config.ts";

export { OTHER_KEY };
export const FLUX_MODEL = "bfl/flux-2-pro";
/** The catalogue's price per generated image, USD. */
export const FLUX_IMAGE_PRICE = "0.03";
/** What the tests' environment gives the gateway: the BFL key and both organisations' keys. */
export const IMAGE_TASK_ENV = { BFL_API_KEY: BFL_KEY, ...TASK_ACCOUNTS_ENV };

export function imageTaskConfig(bflUrl: string, tasks: Partial<RouterConfig["tasks"]> = {}): RouterConfig {
  return mediaTaskConfig(
    [{ id: "bfl", label: "Black Forest Labs", protocol: "bfl", base_url: bflUrl, api_key_env: "BFL_API_KEY", timeout_ms: 5000 }],
    [
      {
        id: FLUX_MODEL,
        name: "FLUX.2 [pro]",
        output: "image",
        details: { output_format: ["jpeg", "png"], n: { min: 1, max: 1 } },
        routes: [{ provider: "bfl", providerModelId: "flux-2-pro", pricing: { image_output: FLUX_IMAGE_PRICE } }],
      },
    ],
    tasks,
  );
}
