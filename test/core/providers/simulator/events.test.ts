// The simulator writes its blocks through the shared BlockWriter: every
// behaviour that answers yields a well-formed block lifecycle, and a reply cut
// by a stop sequence names it on Finish.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { ModelProviderConfig, ProviderConfig } from "../../../../core/config/schema.ts";
import { createSimulatorAdapter } from "../../../../core/providers/simulator/adapter.ts";
import type { UpstreamCall } from "../../../../core/providers/types.ts";
import { BlockType, GenerateRequestSchema, Role, type GenerateResponse } from "../../../../gen/router/v1/inference_pb.js";
import { expectWellFormedBlocks } from "../../../support/block-lifecycle.ts";
import { viewOf } from "../../../support/event-view.ts";

const adapter = createSimulatorAdapter();

async function run(behaviour: string, init: { stop?: string[]; tools?: boolean } = {}): Promise<GenerateResponse[]> {
  const request = create(GenerateRequestSchema, {
    messages: [{ role: Role.USER, content: [{ part: { case: "text", value: { text: "hello there, simulator" } } }] }],
    sampling: { stop: init.stop ?? [] },
    tools: init.tools ? [{ name: "lookup" }] : [],
  });
  const call = {
    request,
    provider: { id: "sim", chunk_delay_ms: 0 } as ProviderConfig,
    route: { provider_model_id: behaviour } as ModelProviderConfig,
    apiKey: "",
    stream: true,
    maxCompletionTokens: 1000,
    signal: new AbortController().signal,
  } satisfies UpstreamCall;
  const events: GenerateResponse[] = [];
  for await (const event of adapter.stream(call)) events.push(event);
  return events;
}

const blockTypes = (events: GenerateResponse[]) => events.flatMap((e) => (e.event.case === "blockStart" ? [BlockType[e.event.value.type]] : []));

describe("simulator events", () => {
  it.each([
    ["echo", {}, ["TEXT"]],
    ["reasoning", {}, ["REASONING", "TEXT"]],
    ["tool-call", { tools: true }, ["TOOL_CALL"]],
    ["audio", {}, ["TEXT", "AUDIO"]],
  ] as const)("%s: blocks %j, well formed, usage then finish last", async (behaviour, init, types) => {
    const events = await run(behaviour, init);
    expectWellFormedBlocks(events);
    expect(blockTypes(events)).toEqual(types);
    expect(events.slice(-2).map((e) => e.event.case)).toEqual(["usage", "finish"]);
  });

  it("names the stop sequence that cut the reply", async () => {
    const finish = viewOf((await run("echo", { stop: ["there"] })).at(-1)!);
    expect(finish).toMatchObject({ type: "finish", rawReason: "stop", stopSequence: "there" });
    expect(viewOf((await run("echo")).at(-1)!)).not.toHaveProperty("stopSequence");
  });
});
