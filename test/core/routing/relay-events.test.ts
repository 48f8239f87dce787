// The core relays the adapter's own events (one vocabulary): it gives each
// block a stable id when the provider gave none, prices the usage event, and
// passes the rest through; runInference against the simulator.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccounts, type Accounts } from "../../../core/accounts/accounts.ts";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { createSimulatorAdapter } from "../../../core/providers/simulator/adapter.ts";
import { runInference } from "../../../core/routing/run-inference.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { BlockType, CallerSchema, GenerateRequestSchema, MessageSchema, Role, type GenerateResponse } from "../../../gen/router/v1/inference_pb.js";
import { testTextModel } from "../../support/test-model.ts";

const API_KEY = "sk-relay-events";

const config = parseConfig(
  JSON.stringify({
    providers: [{ id: "sim", label: "Sim", protocol: "simulator" }],
    models: ["echo", "tool-call", "reasoning"].map((id) =>
      testTextModel(id, {
        supported_parameters: ["max_tokens", "stop", "tools", "tool_choice", "reasoning"],
        providers: [{ provider: "sim", provider_model_id: id, pricing: { prompt: "0.000001", completion: "0.000002" } }],
      }),
    ),
    organizations: [{ id: "org_relay", name: "Relay", credits: "10", keys: [{ id: "key_relay", env: "RELAY_KEY" }] }],
  }),
);

let accounts: Accounts;
beforeAll(async () => {
  accounts = await createAccounts({ organizations: config.organizations, env: { RELAY_KEY: API_KEY }, stores: createMemoryAccountStores() });
});
afterAll(async () => {
  await accounts.close();
});

async function generate(init: MessageInitShape<typeof GenerateRequestSchema>): Promise<GenerateResponse[]> {
  const request = create(GenerateRequestSchema, init);
  request.caller = create(CallerSchema, { apiKey: API_KEY });
  request.messages = [create(MessageSchema, { role: Role.USER, content: [{ part: { case: "text", value: { text: "the weather in Paris. Thanks" } } }] })];
  const deps = { catalogue: createCatalogue(config, {}), accounts, adapters: { simulator: createSimulatorAdapter() }, now: () => new Date(Date.UTC(2026, 10, 3)), random: () => 0 };
  const events: GenerateResponse[] = [];
  for await (const event of runInference(request, new AbortController().signal, deps)) events.push(event);
  await accounts.idle();
  return events;
}

const starts = (events: GenerateResponse[]) => events.flatMap((e) => (e.event.case === "blockStart" ? [e.event.value] : []));

describe("relaying the adapter's events", () => {
  it("a block without a provider id gets <request id>_<index>; usage is priced; the stop sequence reaches finish", async () => {
    const events = await generate({ model: "test/echo", requestId: "gen-relay-1", sampling: { stop: ["Paris"] } });
    expect(starts(events).map((s) => [BlockType[s.type], s.id])).toEqual([["TEXT", "gen-relay-1_0"]]);
    const [usage, finish] = events.slice(-2).map((e) => e.event);
    expect(usage.case === "usage" && usage.value.cost).toMatch(/^0\.\d+$/);
    expect(finish.case === "finish" && finish.value.stopSequence).toBe("Paris");
  });

  it("a tool call keeps its call id as the block id", async () => {
    const events = await generate({
      model: "test/tool-call",
      requestId: "gen-relay-2",
      tools: [{ name: "get_weather", description: "", parameters: { type: "object" } }],
    });
    const [start] = starts(events);
    expect(start.type).toBe(BlockType.TOOL_CALL);
    expect(start.id).toBe(start.toolCallId);
    expect(start.id).toMatch(/^call_/);
  });

  it("withheld reasoning leaves the answer's block its own index and id", async () => {
    const events = await generate({ model: "test/reasoning", requestId: "gen-relay-3", reasoning: { exclude: true, effort: "low" } });
    expect(starts(events).map((s) => [BlockType[s.type], s.index, s.id])).toEqual([["TEXT", 1, "gen-relay-3_1"]]);
    expect(events.some((e) => e.event.case === "blockDelta" && e.event.value.index === 0)).toBe(false);
  });
});
