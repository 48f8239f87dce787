// router/auto as the model of every text format, through the official SDKs
// (openai: chat completions and Responses; @anthropic-ai/sdk: Messages) and
// HTTP (Interactions): the selector's pick serves, the answer names it (its bare name, as every answer does), and
// x-router-trace says why (the tags and strategy). The key's allow-list, the
// per-request preference, and a 400 when no model fits.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../core/config/load.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";

const KEYS = { main: "sk-auto-main", budget: "sk-auto-budget" };

const model = (id: string, prompt: string, quality: Record<string, number>, extra: Record<string, unknown> = {}) => ({
  id,
  name: id,
  created: 0,
  creator: "test",
  context_length: 32000,
  max_completion_tokens: 4000,
  input_modalities: ["text"],
  output_modalities: ["text"],
  supported_parameters: ["max_tokens", "temperature", "tools", "reasoning"],
  quality,
  providers: [{ provider: "simulator", provider_model_id: "echo", pricing: { prompt, completion: prompt } }],
  ...extra,
});

const config = parseConfig(
  JSON.stringify({
    providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }],
    models: [
      model("test/genius", "0.00001", { coding: 0.95, math: 0.95, reasoning: 0.95, general_chat: 0.9 }),
      model("test/budget", "0.0000001", { coding: 0.6, math: 0.5, reasoning: 0.5, general_chat: 0.85 }, { supported_parameters: ["max_tokens"] }),
      // Never picked: no quality scores.
      model("test/unranked", "0", {}, { quality: undefined }),
    ],
    organizations: [
      {
        id: "org_auto",
        name: "Auto",
        credits: "10",
        keys: [
          { id: "key_main", env: "AUTO_MAIN" },
          { id: "key_budget", env: "AUTO_BUDGET", allowed_models: ["test/budget"] },
        ],
      },
    ],
  }),
);

const HARD_CODING = "Refactor this function for performance, step by step, and prove the complexity bound rigorously:\n```ts\nfunction f(xs: number[]) { return xs.map((x) => x * 2); }\n```";

describe("router/auto", () => {
  let gateway: Gateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  beforeAll(async () => {
    gateway = await startGateway(config, { env: { AUTO_MAIN: KEYS.main, AUTO_BUDGET: KEYS.budget } });
    openai = new OpenAI({ apiKey: KEYS.main, baseURL: gateway.apiUrl, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: KEYS.main, baseURL: gateway.url, maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  it("serves a hard coding prompt with the best model through chat completions, naming it, the trace saying why", async () => {
    const { data, response } = await openai.chat.completions.create({ model: "router/auto", messages: [{ role: "user", content: HARD_CODING }] }).withResponse();
    expect(data.model).toBe("genius");
    expect(data.choices[0].message.content).toBeTruthy();
    const trace = response.headers.get("x-router-trace")!;
    expect(trace).toMatch(/^router\/auto@selection;selected;test\/genius tags=coding[+a-z_]* difficulty=hard strategy=auto, test\/genius@simulator;ok$/);
  });

  it("serves a greeting with the cheap model through Messages (the Anthropic SDK)", async () => {
    const { data, response } = await anthropic.messages.create({ model: "router/auto", max_tokens: 100, messages: [{ role: "user", content: "hello, how are you today?" }] }).withResponse();
    expect(data.model).toBe("budget");
    expect(response.headers.get("x-router-trace")).toMatch(/^router\/auto@selection;selected;test\/budget tags=general_chat difficulty=easy strategy=auto, /);
  });

  it("works in Responses and Interactions too", async () => {
    const { data } = await openai.responses.create({ model: "router/auto", input: HARD_CODING }).withResponse();
    expect(data.model).toBe("genius");
    const interaction = await fetch(`${gateway.url}/v1/interactions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": KEYS.main },
      body: JSON.stringify({ model: "router/auto", input: "hello there" }),
    });
    expect(interaction.status).toBe(200);
    expect(interaction.headers.get("x-router-trace")).toMatch(/^router\/auto@selection;selected;test\/budget /);
  });

  it("follows the request's preference (selection.preference) over the configuration's", async () => {
    const best = await openai.chat.completions.create({ model: "router/auto", messages: [{ role: "user", content: "hello, how are you today?" }], selection: { preference: 1 } } as never);
    expect((best as unknown as { model: string }).model).toBe("genius");
    const bad = await openai.chat.completions
      .create({ model: "router/auto", messages: [{ role: "user", content: "hi" }], selection: { preference: -1 } } as never)
      .catch((error: unknown) => error);
    expect(bad).toMatchObject({ status: 400, error: { param: "selection.preference" } });
  });

  it("picks among the key's allowed models only", async () => {
    const limited = new OpenAI({ apiKey: KEYS.budget, baseURL: gateway.apiUrl, maxRetries: 0 });
    const data = await limited.chat.completions.create({ model: "router/auto", messages: [{ role: "user", content: HARD_CODING }] });
    expect(data.model).toBe("budget");
  });

  it("answers 400 naming what is missing when no model fits, and refuses a suffix", async () => {
    const tooLong = await openai.chat.completions.create({ model: "router/auto", messages: [{ role: "user", content: "hi" }], max_tokens: 10_000 }).catch((error: unknown) => error);
    expect(tooLong).toMatchObject({ status: 400, error: { code: "no_model_fits", param: "model", message: "router/auto: no model fits the request: 2 lack a completion limit of at least 10000 tokens." } });
    const suffixed = await openai.chat.completions.create({ model: "router/auto:free", messages: [{ role: "user", content: "hi" }] }).catch((error: unknown) => error);
    expect(suffixed).toMatchObject({ status: 400, error: { message: "router/auto takes no suffix." } });
  });
});
