// A media task's prompt is bounded: blank and too long prompts are a 400 naming
// `prompt` on both endpoints and over gRPC, under the global cap or a model's
// own limit (supported_params_details.prompt.max_length); and ListTasks answers
// a page a default gRPC client takes (4 MiB), however long the prompts were.
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateImageRequestSchema, ListTasksRequestSchema, ListTasksResponseSchema, type ListTasksResponse } from "../../../gen/router/v1/tasks_pb.js";
import { loadConfigFile } from "../../../core/config/load.ts";
import { MEDIA_PROMPT_MAX_CHARACTERS, promptLimitOf } from "../../../core/tasks/prompt.ts";
import { grpcMethod } from "../../support/grpc-js.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { taskClient, type TaskClient } from "../../support/video-task-harness.ts";

const DEV_KEY = "sk-dev-prompts";
/** A model with a provider's own limit, as Kling's 2500 characters. */
const LIMITED_VIDEO = "simulator/video";
const KLING_LIMIT = 2500;

const ListClient = grpc.makeGenericClientConstructor({ ListTasks: grpcMethod("/router.v1.TaskService/ListTasks", ListTasksRequestSchema, ListTasksResponseSchema) }, "TaskService");

let gateway: Gateway;
let images: TaskClient;
let videos: TaskClient;
let grpcClient: grpc.Client;

beforeAll(async () => {
  const config = loadConfigFile();
  const video = config.models.find((model) => model.id === LIMITED_VIDEO)!;
  video.supported_params_details = { ...video.supported_params_details, prompt: { max_length: KLING_LIMIT } };
  gateway = await startGateway(config, { env: { ROUTER_DEV_KEY: DEV_KEY }, split: true });
  images = taskClient(gateway, { kind: "images", model: "simulator/image", key: DEV_KEY, organizationId: "org_dev" });
  videos = taskClient(gateway, { kind: "videos", model: LIMITED_VIDEO, key: DEV_KEY, organizationId: "org_dev" });
  // Default options: the 4 MiB limit on a received message stands.
  grpcClient = new ListClient(new URL(gateway.coreServer!.url).host, grpc.credentials.createInsecure());
}, 30_000);
afterAll(async () => {
  grpcClient?.close();
  await gateway?.close();
});

const listTasks = (limit: number) =>
  new Promise<ListTasksResponse>((resolve, reject) => {
    const call = (grpcClient as unknown as Record<string, (request: unknown, callback: (error: Error | null, response: ListTasksResponse) => void) => void>).ListTasks.bind(grpcClient);
    call(create(ListTasksRequestSchema, { caller: { apiKey: DEV_KEY }, limit }), (error, response) => (error ? reject(error) : resolve(response)));
  });

describe("prompt limits", () => {
  it("refuses a 20,000,000-character prompt on both endpoints, nothing held", async () => {
    const before = await images.balance();
    const huge = "a".repeat(20_000_000);
    for (const client of [images, videos]) {
      const answer = await client.create({ prompt: huge });
      expect([answer.status, answer.json.error.code, answer.json.error.param]).toEqual([400, "invalid_parameter", "prompt"]);
    }
    expect(await images.balance()).toBe(before);
  });

  it("takes the global cap exactly, counting characters (an emoji is one), and refuses one more", async () => {
    const atCap = "🌊".repeat(MEDIA_PROMPT_MAX_CHARACTERS);
    expect((await images.create({ prompt: atCap })).status).toBe(200);
    const over = await images.create({ prompt: `${atCap}x` });
    expect([over.status, over.json.error.param]).toEqual([400, "prompt"]);
    expect(over.json.error.message).toContain(String(MEDIA_PROMPT_MAX_CHARACTERS));
  });

  it("applies the model's own limit from the catalogue", async () => {
    expect((await videos.create({ prompt: "v".repeat(KLING_LIMIT) })).status).toBe(200);
    const over = await videos.create({ prompt: "v".repeat(KLING_LIMIT + 1) });
    expect([over.status, over.json.error.param]).toEqual([400, "prompt"]);
    expect(over.json.error.message).toBe(`prompt must be at most ${KLING_LIMIT} characters for ${LIMITED_VIDEO}.`);
  });

  it("the bundled default gives Kling's model Kling's own limit", () => {
    const kling = loadConfigFile().models.find((model) => model.id === "kling/kling-v2-5-turbo")!;
    expect(promptLimitOf(kling.supported_params_details)).toBe(KLING_LIMIT);
  });

  it("refuses a prompt of only whitespace, also through chat completions' video body", async () => {
    for (const answer of [await images.create({ prompt: " \n\t " }), await videos.create({ prompt: "   " }), await videos.post("/chat/completions", { model: LIMITED_VIDEO, prompt: "  " })]) {
      expect([answer.status, answer.json.error.param]).toEqual([400, "prompt"]);
    }
  });

  it("refuses over gRPC too (CreateImage)", async () => {
    const error = await Promise.resolve(
      gateway.core.services.tasks.createImage(
        create(CreateImageRequestSchema, { caller: { apiKey: DEV_KEY }, model: "simulator/image", image: { prompt: "x".repeat(MEDIA_PROMPT_MAX_CHARACTERS + 1) } }),
        {} as never,
      ),
    ).then(
      () => undefined,
      (failure: unknown) => failure as { rawMessage: string },
    );
    expect(error?.rawMessage).toContain("prompt must be at most");
  });
});

describe("ListTasks", () => {
  it("answers a default gRPC client whatever the prompts' size: items leave the prompt out, GetTask has it", async () => {
    // Each prompt is 128 KB of UTF-8, kept in the task and in the simulator's polling URL: 12 of them pass 4 MiB.
    const prompt = "🌊".repeat(MEDIA_PROMPT_MAX_CHARACTERS);
    const ids: string[] = [];
    for (let index = 0; index < 12; index++) ids.push(await images.created({ prompt, seed: index }));
    const { tasks } = await listTasks(100);
    expect(tasks.map((task) => task.id)).toEqual(expect.arrayContaining(ids));
    for (const task of tasks) {
      expect(task.image?.prompt ?? task.video?.prompt).toBe("");
      expect(task.polling).toBeUndefined();
    }
    const whole = await images.stored(ids[0]);
    expect(whole.image?.prompt).toBe(prompt);
  }, 30_000);
});
