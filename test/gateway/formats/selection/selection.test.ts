// POST /api/v1/model/selection and /v1/model/selection through HTTP, in process
// and split (the core's SelectionService over Connect): the picked model, its
// tags and candidates; an explicit id as is; the error when no model fits; the
// key required and its allow-list applied; bad bodies a 400; nothing charged.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { selectionConfigJson } from "../../../support/selection-catalogue.ts";

const KEYS = { main: "sk-select-main", limited: "sk-select-limited" };

const config = parseConfig(
  JSON.stringify(
    selectionConfigJson({
      organizations: [
        {
          id: "org_select",
          name: "Select",
          credits: "5",
          keys: [
            { id: "key_main", env: "SELECT_MAIN" },
            { id: "key_limited", env: "SELECT_LIMITED", allowed_models: ["test/mid"] },
          ],
        },
      ],
    }),
  ),
);

describe.each([{ split: false }, { split: true }])("model selection endpoint (split: $split)", ({ split }) => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway(config, { split, env: { KEYED_KEY: "k", SELECT_MAIN: KEYS.main, SELECT_LIMITED: KEYS.limited } });
  });
  afterAll(() => gateway?.close());

  const select = (body: unknown, key = KEYS.main, path = "/api/v1/model/selection") =>
    fetch(gateway.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key && { authorization: `Bearer ${key}` }) },
      body: JSON.stringify(body),
    });

  it("picks router/auto's model for chat messages, with tags and up to 5 candidates best first", async () => {
    const response = await select({ model: "router/auto", messages: [{ role: "user", content: "Prove, step by step and rigorously, that the algorithm's complexity is O(n log n)." }] });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as Record<string, any>;
    expect(answer).toMatchObject({ selected_model: "test/frontier", selection_strategy: "auto", difficulty: "hard", reasoning_effort: "high" });
    expect(answer.assigned_tags).toContain("math");
    // The spec's shape: model ids, best first; each one's score and why beside them.
    expect(answer.top_candidates).toEqual(["test/frontier", "test/eyes", "test/mid", "test/small"]);
    expect(answer.candidate_scores[0]).toEqual({ model: "test/frontier", score: 0.95, why: "math 0.95, coding 0.95, reasoning 0.95; $10 in, $40 out per million tokens; cheapest within 0.06 of the best score 0.95" });
    expect(answer.error).toBeUndefined();
  });

  it("reads a prompt or a Responses input, at /v1/model/selection too", async () => {
    const prompt = await (await select({ model: "router/auto", prompt: "hello, how are you?" }, KEYS.main, "/v1/model/selection")).json();
    expect(prompt).toMatchObject({ selected_model: "test/small", assigned_tags: ["general_chat"] });
    const input = await (await select({ model: "router/auto", input: [{ role: "user", content: [{ type: "input_text", text: "Look at this" }, { type: "input_image", image_url: "https://x.invalid/a.png" }] }] })).json();
    expect(input).toMatchObject({ selected_model: "test/eyes", assigned_tags: ["vision"] });
  });

  it("returns a named model as is, strategy explicit", async () => {
    const answer = await (await select({ model: "test/mid", prompt: "hi" })).json();
    expect(answer).toMatchObject({ selected_model: "test/mid", selection_strategy: "explicit", top_candidates: [] });
  });

  it("answers with an error when no model fits the needs", async () => {
    const response = await select({ model: "router/auto", prompt: "Call the weather tool", tools: [{ type: "function" }], context_tokens: 250000, max_tokens: 3000 });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      selected_model: "",
      selection_strategy: "auto",
      top_candidates: [],
      error: "no model fits the request: 3 lack a context of 253000 tokens; 1 lacks tool calling",
    });
  });

  it("applies the key's allow-list", async () => {
    const answer = (await (await select({ model: "router/auto", prompt: "Prove the theorem rigorously" }, KEYS.limited)).json()) as Record<string, any>;
    expect(answer.selected_model).toBe("test/mid");
    expect(answer.top_candidates).toEqual(["test/mid"]);
  });

  it("needs a key, and refuses bad bodies with a 400 naming the field", async () => {
    expect((await select({ model: "router/auto", prompt: "hi" }, "")).status).toBe(401);
    expect((await select({ model: "router/auto", prompt: "hi" }, "sk-unknown")).status).toBe(401);
    const both = await select({ model: "router/auto", prompt: "hi", messages: [{ role: "user", content: "hi" }] });
    expect(both.status).toBe(400);
    expect(((await both.json()) as Record<string, any>).error).toMatchObject({ param: "prompt", message: "Send the prompt once: messages and prompt were both given." });
    const none = await select({ model: "router/auto" });
    expect(none.status).toBe(400);
    const preference = await select({ model: "router/auto", prompt: "hi", selection: { preference: 2 } });
    expect(preference.status).toBe(400);
    expect(((await preference.json()) as Record<string, any>).error.message).toMatch(/selection.preference must be between 0 and 1/);
  });

  it("charges nothing", async () => {
    const before = await (await fetch(`${gateway.url}/api/v1/credits`, { headers: { authorization: `Bearer ${KEYS.main}` } })).json();
    await select({ model: "router/auto", prompt: "Write a poem" });
    const after = await (await fetch(`${gateway.url}/api/v1/credits`, { headers: { authorization: `Bearer ${KEYS.main}` } })).json();
    expect(after).toEqual(before);
  });
});
