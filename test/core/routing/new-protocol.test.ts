// A provider protocol the core has never heard of plugs in with a descriptor
// and an adapter alone: routing plans by the descriptor, the adapter's own
// warnings reach the answer's start event beside routing's, and the answer is
// relayed and billed like any other.
import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccounts, type Accounts } from "../../../core/accounts/accounts.ts";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { createCatalogue } from "../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../core/config/load.ts";
import type { ProviderProtocol } from "../../../core/config/schema.ts";
import { BlockWriter } from "../../../core/providers/block-writer.ts";
import type { ProtocolCapabilities } from "../../../core/providers/capabilities.ts";
import type { ProviderAdapter, UpstreamCall, UpstreamStream } from "../../../core/providers/types.ts";
import { runInference } from "../../../core/routing/run-inference.ts";
import { warning } from "../../../core/warnings.ts";
import { BlockType, FinishReason, GenerateRequestSchema, Role, type GenerateResponse } from "../../../gen/router/v1/inference_pb.js";

const NEW_PROTOCOL = "brand-new-protocol" as ProviderProtocol;
const API_KEY = "sk-new-protocol";

const capabilities: ProtocolCapabilities = { reasoning: "budget", cacheControl: false, mediaOptions: [], passthrough: [], parallelToolCalls: true, serverTools: [] };

const config = parseConfig(
  JSON.stringify({
    providers: [{ id: "fresh", label: "Fresh", protocol: "simulator" }],
    models: [
      {
        id: "test/fresh",
        name: "fresh",
        created: 1,
        creator: "test",
        context_length: 8192,
        max_completion_tokens: 4000,
        input_modalities: ["text"],
        output_modalities: ["text"],
        supported_parameters: ["max_tokens", "reasoning"],
        providers: [{ provider: "fresh", provider_model_id: "fresh-1", pricing: { prompt: "0", completion: "0" } }],
      },
    ],
    organizations: [{ id: "org_new", name: "New", credits: "10", keys: [{ id: "key_new", env: "NEW_KEY" }] }],
  }),
);
config.providers[0].protocol = NEW_PROTOCOL;

/** The new protocol's adapter: says what it left out, and answers the reasoning budget it was given. */
function newProtocolAdapter(calls: UpstreamCall[]): ProviderAdapter {
  async function* answer(call: UpstreamCall): AsyncGenerator<GenerateResponse> {
    calls.push(call);
    const blocks = new BlockWriter();
    blocks.text(blocks.continueBlock(BlockType.TEXT), `budget ${call.request.reasoning?.maxTokens}`);
    blocks.end({ inputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2, reasoningTokens: 0 }, { reason: FinishReason.STOP, rawReason: "done" });
    yield* blocks.take();
  }
  return {
    capabilities,
    stream: (call): UpstreamStream => Object.assign(answer(call), { warnings: [warning("adjusted_parameter", "max_tokens", "max_tokens was sent as the new protocol's output limit")] }),
  };
}

let accounts: Accounts;
beforeEach(async () => {
  accounts = await createAccounts({ organizations: config.organizations, env: { NEW_KEY: API_KEY }, stores: createMemoryAccountStores() });
});
afterEach(async () => {
  await accounts.close();
});

describe("a new provider protocol", () => {
  it("is planned by its descriptor and served by its adapter, whose warnings join routing's on the start event", async () => {
    const calls: UpstreamCall[] = [];
    const catalogue = createCatalogue(config, {}, (protocol) => {
      expect(protocol).toBe(NEW_PROTOCOL);
      return capabilities;
    });
    const deps = { catalogue, accounts, adapters: { [NEW_PROTOCOL]: newProtocolAdapter(calls) }, now: () => new Date(Date.UTC(2026, 10, 3)), random: () => 0 };
    const request = create(GenerateRequestSchema, {
      caller: { apiKey: API_KEY },
      model: "test/fresh",
      sampling: { maxTokens: 4000, topK: 5 },
      reasoning: { effort: "high" },
      passthrough: { user: "u-1" },
      messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "Hi" } } }] }],
    });
    const events: GenerateResponse[] = [];
    for await (const event of runInference(request, new AbortController().signal, deps)) events.push(event);
    await accounts.idle();

    // The descriptor's `budget`: effort high is 80% of max_tokens.
    expect(calls[0].request.reasoning?.maxTokens).toBe(3200);
    // The descriptor's empty pass-through list: routing dropped `user`.
    expect(calls[0].request.passthrough).toEqual({});
    const start = events[0].event;
    expect(start.case).toBe("start");
    if (start.case !== "start") return;
    // Routing's (top_k is not in the route's supported_parameters), then the adapter's.
    expect(start.value.warnings.map((w) => [w.code, w.param])).toEqual([
      ["unsupported_parameter", "top_k"],
      ["unsupported_parameter", "user"],
      ["adjusted_parameter", "max_tokens"],
    ]);
    expect(events.some((e) => e.event.case === "blockDelta" && e.event.value.text === "budget 3200")).toBe(true);
    expect(events.at(-1)?.event.case).toBe("finish");
  });
});
