// A media model's configured supported_parameters (issue 21, "The catalogue"):
// published as configured (the model, its provider entry and the entry's
// schemas), while a model configured without a list (or with the empty list the
// bundled configuration writes) gets the derived one; a configured parameter the
// route's adapter cannot serve is a configuration error at start, at its line,
// with the name meant; a parameter the list leaves out is a 400 naming it on
// both task endpoints, a default value (n 1, auto, url) asking nothing.
import { create } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ImageParametersSchema, ImageResponseType, VideoParametersSchema } from "../../../gen/router/v1/tasks_pb.js";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { modelToProto, providerEntryToProto } from "../../../core/catalogue/to-proto.ts";
import { ConfigError, parseConfig } from "../../../core/config/load.ts";
import { errorDetailOf } from "../../../core/errors.ts";
import { createMediaAdapters } from "../../../core/providers/registry.ts";
import { planImage } from "../../../core/tasks/image-request.ts";
import { planVideo } from "../../../core/tasks/video-request.ts";

/** A configuration in YAML (so problems have lines): the simulator, and the models given as YAML list items. */
const yamlConfig = (models: string) => `providers:
  - id: simulator
    label: Simulator
    protocol: simulator
models:
${models}`;

/** A model of the simulator, its supported_parameters and its route's lines as given. */
const modelYaml = (id: string, output: string, parameters: string, route = "") => `  - id: ${id}
    name: ${id}
    created: 0
    creator: test
    context_length: 1000
    max_completion_tokens: 1
    input_modalities: [text]
    output_modalities: [${output}]
    supported_parameters: ${parameters}
    supported_params_details:
      seconds: ["4", "8"]
    providers:
      - provider: simulator
        provider_model_id: ${output === "video" ? "video" : "image"}
        pricing: { prompt: "0", completion: "0", image_output: "0.01", video_output_per_second: "0.01" }
${route}`;

const problemsOf = (text: string) => {
  try {
    parseConfig(text, "router.yaml");
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  return [];
};

const adapters = createMediaAdapters();
const catalogueOf = (models: string) => createCatalogue(parseConfig(yamlConfig(models), "router.yaml"), {});

describe("a media model's configured supported_parameters at start", () => {
  it("refuses a name the route's adapter cannot serve, at its line, with the name meant and the ones served", () => {
    const problems = problemsOf(yamlConfig(modelYaml("test/image", "image", "[size, sead]")));
    expect(problems).toEqual([
      'models.0.supported_parameters.1: "sead" is not a parameter provider "simulator" (protocol simulator) serves for test/image; did you mean "seed"? it serves: n, size, seed, response_format (line 14)',
    ]);
  });

  it("refuses one that another kind of media takes (a video parameter on an image model), and checks a route's own list at its path", () => {
    const route = "        supported_parameters: [seconds, aspectRatio]\n";
    const problems = problemsOf(yamlConfig(modelYaml("test/video", "video", "[]", route)));
    expect(problems).toEqual([
      'models.0.providers.0.supported_parameters.1: "aspectRatio" is not a parameter provider "simulator" (protocol simulator) serves for test/video; it serves: image, seconds, size, seed (line 21)',
    ]);
    expect(problemsOf(yamlConfig(modelYaml("test/image", "image", "[seconds]")))).toEqual([expect.stringMatching(/^models\.0\.supported_parameters\.0: "seconds" is not a parameter/)]);
  });

  it("takes a served list, an empty one, and leaves a chat model's list alone", () => {
    expect(problemsOf(yamlConfig(modelYaml("test/image", "image", "[n, size]") + modelYaml("test/video", "video", "[]")))).toEqual([]);
    expect(problemsOf(yamlConfig(modelYaml("test/chat", "text", "[temperature, tools]")))).toEqual([]);
  });
});

describe("the catalogue of a media model", () => {
  it("publishes the configured list, in its order, on the model and its provider entry, with only those schemas", () => {
    const model = catalogueOf(modelYaml("test/image", "image", "[size, n]")).get("test/image")!;
    expect(modelToProto(model, adapters).supportedParameters).toEqual(["size", "n"]);
    const entry = providerEntryToProto(model, model.routes[0], adapters);
    expect(entry.supportedParameters).toEqual(["size", "n"]);
    expect(Object.keys(entry.supportedParametersV2 ?? {})).toEqual(["n", "size"]);
  });

  it("publishes a route's own list on its entry, and the derived list for a model configured without one", () => {
    const route = "        supported_parameters: [seconds]\n";
    const video = catalogueOf(modelYaml("test/video", "video", "[]", route)).get("test/video")!;
    expect(providerEntryToProto(video, video.routes[0], adapters).supportedParameters).toEqual(["seconds"]);
    expect(modelToProto(video, adapters).supportedParameters).toEqual(["seconds"]);
    const derived = catalogueOf(modelYaml("test/image", "image", "[]")).get("test/image")!;
    expect(modelToProto(derived, adapters).supportedParameters).toEqual(["n", "size", "seed", "response_format"]);
  });
});

describe("a parameter the configured list leaves out", () => {
  const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (caught: unknown) => caught as ConnectError);
  const catalogue = catalogueOf(modelYaml("test/image", "image", "[size]") + modelYaml("test/video", "video", "[seconds]"));

  it("is a 400 naming it on an image task; a listed one, and default values, are taken", async () => {
    const refused = await failure(planImage(catalogue, adapters, "test/image", create(ImageParametersSchema, { prompt: "x", seed: 7n })));
    expect([refused?.code, errorDetailOf(refused!)?.param, refused?.rawMessage]).toEqual([3, "seed", expect.stringMatching(/^test\/image does not take seed here: it is not among the supported_parameters configured for it/)]);
    const twice = await failure(planImage(catalogue, adapters, "test/image", create(ImageParametersSchema, { prompt: "x", n: 2 })));
    expect(errorDetailOf(twice!)?.param).toBe("n");
    const plan = await planImage(catalogue, adapters, "test/image", create(ImageParametersSchema, { prompt: "x", n: 1, size: "64x64", quality: "auto" }), { responseType: ImageResponseType.UNSPECIFIED, responseFormat: "url" });
    expect(plan.image.size).toBe("64x64");
  });

  it("is a 400 naming it on a video task", async () => {
    const refused = await failure(planVideo(catalogue, adapters, "test/video", create(VideoParametersSchema, { prompt: "x", seconds: 4, size: "720x1280" })));
    expect([errorDetailOf(refused!)?.param]).toEqual(["size"]);
    expect((await planVideo(catalogue, adapters, "test/video", create(VideoParametersSchema, { prompt: "x", seconds: 8 }))).heldSeconds).toBe(8);
  });
});
