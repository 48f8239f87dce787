// A model that makes no text (output_modalities without `text`) is refused on
// the text formats (chat completions, Responses, Messages and its
// count_tokens) with a 400 naming model and the endpoint that makes its
// output, holding nothing; models with text and image or audio output stay
// served, and a video body on chat completions still makes a video task.
// Bundled default, no keys needed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../../core/config/load.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";

const DEV_KEY = "sk-dev-text-formats";

let gateway: Gateway;

beforeAll(async () => {
  gateway = await startGateway(loadConfigFile(), { env: { ROUTER_DEV_KEY: DEV_KEY } });
});
afterAll(async () => {
  await gateway?.close();
});

async function post(path: string, body: unknown, on = gateway) {
  const response = await fetch(on.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${DEV_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

async function balance() {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance("org_dev");
}

const messages = [{ role: "user", content: "Make me something" }];

/** Each text format's request on a model. */
const textRequests: [string, (model: string) => [string, unknown]][] = [
  ["chat completions", (model) => ["/api/v1/chat/completions", { model, messages }]],
  ["chat completions, streamed", (model) => ["/api/v1/chat/completions", { model, messages, stream: true }]],
  ["Responses", (model) => ["/api/v1/responses", { model, input: "Make me something" }]],
  ["Messages", (model) => ["/v1/messages", { model, max_tokens: 64, messages }]],
  ["Messages count_tokens", (model) => ["/v1/messages/count_tokens", { model, messages }]],
];

describe.each([
  ["simulator/video", "POST /api/v1/videos"],
  ["simulator/image", "POST /api/v1/images/generations"],
])("%s on the text formats", (model, endpoint) => {
  it.each(textRequests)("%s: 400 naming model and %s's endpoint, nothing charged", async (_format, request) => {
    const before = await balance();
    const [path, body] = request(model);
    const { status, json } = await post(path, body);
    expect(status).toBe(400);
    expect(json.error.param).toBe("model");
    const message: string = json.error.message;
    expect(message).toContain(model);
    expect(message).toContain("not text");
    expect(message).toContain(endpoint);
    expect(await balance()).toBe(before);
  });
});

describe("what stays served", () => {
  it("a model with text and audio output answers chat", async () => {
    const { status, json } = await post("/api/v1/chat/completions", { model: "simulator/audio", messages });
    expect(status).toBe(200);
    expect(json.choices[0].message.content).toEqual(expect.any(String));
  });

  it("a video model in models behind a text model is refused by name (models), not skipped", async () => {
    const { status, json } = await post("/api/v1/chat/completions", { model: "simulator/echo", models: ["simulator/video"], messages });
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ param: "models", code: "invalid_parameter" });
    expect(json.error.message).toContain("simulator/video");
  });

  it("the video request body on chat completions still makes a video task", async () => {
    const { status, json } = await post("/api/v1/chat/completions", { model: "simulator/video", prompt: "a wave", seconds: 4 });
    expect(status).toBe(200);
    expect(json.taskId).toEqual(expect.any(String));
  });
});

describe("router/free", () => {
  let withFreeVideo: Gateway;

  beforeAll(async () => {
    // simulator/video opted into the free tier: router/free must still never draw it.
    const config = loadConfigFile();
    const video = config.models.find((model) => model.id === "simulator/video")!;
    video.providers[0].free = { enabled: true, daily_quota: 10 };
    // The draw's last candidate: simulator/video (after simulator/echo in catalogue order) if it were one.
    withFreeVideo = await startGateway(config, { env: { ROUTER_DEV_KEY: DEV_KEY }, core: { random: () => 0.999 } });
  });
  afterAll(async () => {
    await withFreeVideo?.close();
  });

  it("draws only among models that make text", async () => {
    for (let i = 0; i < 3; i++) {
      const { status, json } = await post("/api/v1/chat/completions", { model: "router/free", messages }, withFreeVideo);
      expect(status).toBe(200);
      // The answer's model is the simulator's behaviour that answered (simulator/video's would be "video").
      expect(json.model).toBe("echo");
    }
  });

  it("refuses simulator/video:free on the text formats by name", async () => {
    const { status, json } = await post("/api/v1/chat/completions", { model: "simulator/video:free", messages }, withFreeVideo);
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ param: "model" });
    expect(json.error.message).toContain("POST /api/v1/videos");
  });
});
