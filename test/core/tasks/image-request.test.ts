// planImage's answer for an image model none of whose routes' protocols makes
// images (a 400 naming model: a key would not help) against one whose image
// routes are all disabled for want of their key (the 503 naming the variable).
import { ConnectError, Code } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ImageParametersSchema } from "../../../gen/router/v1/tasks_pb.js";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { errorDetailOf } from "../../../core/errors.ts";
import { createSimulatorMediaAdapter } from "../../../core/providers/simulator/media.ts";
import { planImage } from "../../../core/tasks/image-request.ts";

const catalogue = createCatalogue(
  parseConfig(
    JSON.stringify({
      providers: [{ id: "keyed", label: "Keyed", protocol: "simulator", api_key_env: "UNSET_IMAGE_KEY" }],
      models: [
        {
          id: "keyed/image",
          name: "Image",
          created: 0,
          creator: "test",
          context_length: 1000,
          max_completion_tokens: 1,
          input_modalities: ["text"],
          output_modalities: ["image"],
          supported_parameters: [],
          providers: [{ provider: "keyed", provider_model_id: "image", pricing: { prompt: "0", completion: "0", image_output: "0.01" } }],
        },
      ],
    }),
  ),
  {},
);
const image = create(ImageParametersSchema, { prompt: "a red square" });
const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (caught: unknown) => caught as ConnectError);

describe("planImage without a provider", () => {
  it("is a 400 naming model when no route's protocol makes images", async () => {
    const { submitImage: _, ...videosOnly } = createSimulatorMediaAdapter();
    const error = await failure(planImage(catalogue, { simulator: videosOnly }, "keyed/image", image));
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(errorDetailOf(error!)?.param).toBe("model");
    expect(error?.rawMessage).toMatch(/has no provider whose protocol runs image tasks/);
  });

  it("is a 503 naming the key variable when the routes that make images are disabled", async () => {
    const error = await failure(planImage(catalogue, { simulator: createSimulatorMediaAdapter() }, "keyed/image", image));
    expect(error?.code).toBe(Code.Unavailable);
    expect(error?.rawMessage).toMatch(/keyed\/image needs UNSET_IMAGE_KEY to be set/);
  });
});
