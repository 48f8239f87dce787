// Measured image cost: a route priced per token (completion_image, no
// per-image price) is charged from the token counts OpenAI's gpt-image models
// report, held for the most tokens its limits allow, and the counts are kept
// in the task, answered to the SDK and shown by GET /api/v1/generation.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TINY_PNG } from "../../../support/fake-media-common.ts";
import { OPENAI_MEDIA_KEY, startFakeOpenAiMedia, type FakeOpenAiMedia } from "../../../support/fake-media-openai.ts";
import { femtosOf, nanosRoundedUp } from "../../../support/exact-money.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { mediaTaskConfig, TASK_ACCOUNTS_ENV } from "../../../support/media-task-config.ts";
import { taskClient, type TaskClient } from "../../../support/video-task-harness.ts";

const TOKENS_MODEL = "openai/gpt-image-tokens";
/** gpt-image-1.5's token prices (the price snapshot's), per token. */
const PRICES = { prompt: "0.000005", prompt_image: "0.000008", completion: "0.00001", completion_image: "0.000032" };
/** Output tokens held per image: 4 USD an image at completion_image, so 3 images (12 USD) pass the organisation's 10. */
const MOST_OUTPUT_TOKENS = 125_000;
/** The fake's output per image of a GPT image model. */
const FAKE_OUTPUT_PER_IMAGE = 272;

let openai: FakeOpenAiMedia;
let gateway: Gateway;
let sdk: OpenAI;
let images: TaskClient;

beforeAll(async () => {
  openai = await startFakeOpenAiMedia();
  const config = mediaTaskConfig(
    [{ id: "openai", label: "OpenAI", protocol: "openai-compatible", base_url: openai.url, api_key_env: "OPENAI_API_KEY", request_timeout_ms: 5000 }],
    [{ id: TOKENS_MODEL, output: "image", contextLength: 32000, maxCompletionTokens: MOST_OUTPUT_TOKENS, routes: [{ provider: "openai", providerModelId: "gpt-image-1.5", pricing: PRICES }] }],
  );
  gateway = await startGateway(config, { env: { OPENAI_API_KEY: OPENAI_MEDIA_KEY, ...TASK_ACCOUNTS_ENV } });
  sdk = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  images = taskClient(gateway, { kind: "images", model: TOKENS_MODEL });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

/** The spec's `usage.cost`, beside OpenAI's token counts (the SDK's type has none). */
const costOf = (answer: OpenAI.ImagesResponse) => (answer.usage as unknown as { cost: number }).cost;
const imageCalls = () => openai.requests.filter((request) => request.method === "POST" && request.path === "/v1/images/generations");

describe("images priced per token", () => {
  it("charges the reported tokens at the route's prices, and shows them in the answer, the task and the generation", async () => {
    const before = await images.balance();
    const answer = await sdk.images.generate({ model: TOKENS_MODEL, prompt: "three little words", n: 2 });
    expect(answer.data).toHaveLength(2);
    // The fake reports 3 text tokens in (one a word) and 272 image tokens out per image.
    const output = 2 * FAKE_OUTPUT_PER_IMAGE;
    const cost = 3n * femtosOf(PRICES.prompt) + BigInt(output) * femtosOf(PRICES.completion_image);
    expect(femtosOf(costOf(answer))).toBe(cost);
    expect(answer.usage).toEqual({
      images: 2,
      cost: expect.any(Number),
      input_tokens: 3,
      output_tokens: output,
      total_tokens: 3 + output,
      input_tokens_details: { text_tokens: 3, image_tokens: 0 },
      output_tokens_details: { image_tokens: output, text_tokens: 0 },
    });
    expect(await images.balance()).toBe(before - nanosRoundedUp(cost));

    const chatId = (answer as unknown as { chat_id: string }).chat_id;
    const task = await images.read(chatId);
    expect(task.json.usage).toMatchObject({ images: 2, input_tokens: 3, output_tokens: output, cost: costOf(answer) });
    const generation = await fetch(`${gateway.apiUrl}/generation?id=${chatId}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(((await generation.json()) as any).data).toMatchObject({ tokens_prompt: 3, tokens_completion: output, total_cost: costOf(answer), outcome: "ok" });
  });

  it("holds the worst case: n images of the route's max_completion_tokens each, so 3 are refused (402) where 2 pass, before the provider is called", async () => {
    const calls = imageCalls().length;
    const refused = await images.create({ prompt: "many", n: 3 });
    expect(refused.status, JSON.stringify(refused.json)).toBe(402);
    expect(refused.json.error.message).toContain("lower n");
    expect(imageCalls().length).toBe(calls);
    // 2 images hold 8 USD of the 10 and are charged what they used.
    const before = await images.balance();
    const answer = await images.create({ prompt: "two", n: 2 });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    const cost = 1n * femtosOf(PRICES.prompt) + BigInt(2 * FAKE_OUTPUT_PER_IMAGE) * femtosOf(PRICES.completion_image);
    expect(await images.balance()).toBe(before - nanosRoundedUp(cost));
  });

  it("charges output text tokens at completion and input image tokens at prompt_image when the provider breaks them down", async () => {
    const usage = { input_tokens: 50, input_tokens_details: { text_tokens: 10, image_tokens: 40 }, output_tokens: 300, output_tokens_details: { image_tokens: 280, text_tokens: 20 }, total_tokens: 350 };
    openai.answerNextWith("POST", /^\/v1\/images\/generations$/, 200, { created: 1, data: [{ b64_json: TINY_PNG.toString("base64") }], usage });
    const before = await images.balance();
    const answer = await sdk.images.generate({ model: TOKENS_MODEL, prompt: "broken down" });
    const cost = 10n * femtosOf(PRICES.prompt) + 40n * femtosOf(PRICES.prompt_image) + 280n * femtosOf(PRICES.completion_image) + 20n * femtosOf(PRICES.completion);
    expect(femtosOf(costOf(answer))).toBe(cost);
    expect(answer.usage).toMatchObject({ input_tokens: 50, output_tokens: 300, input_tokens_details: { text_tokens: 10, image_tokens: 40 }, output_tokens_details: { image_tokens: 280, text_tokens: 20 } });
    expect(await images.balance()).toBe(before - nanosRoundedUp(cost));
  });
});
