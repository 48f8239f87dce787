// The OpenAI-compatible adapter against a real HTTP server: a thinking-mode tool
// loop on a vendor that wants its reasoning back (DeepSeek, Kimi) works only with
// quirks.reasoning_passback set.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelProviderSchema, providerSchema } from "../../../../core/config/schema.ts";
import { createHttpClient, type HttpClient } from "../../../../core/providers/http-client.ts";
import { createOpenAiCompatibleAdapter } from "../../../../core/providers/openai-compatible/adapter.ts";
import { UpstreamError, type ProviderAdapter, type UpstreamCall } from "../../../../core/providers/types.ts";
import { viewOf, type EventView } from "../../../support/event-view.ts";
import { BlockType, GenerateRequestSchema, Role } from "../../../../gen/router/v1/inference_pb.js";
import { REASONING_PASSBACK_ERROR, startFakeUpstream, type FakeUpstream } from "../../../support/fake-openai-upstream.ts";

let upstream: FakeUpstream;
let http: HttpClient;
let adapter: ProviderAdapter;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  http = createHttpClient();
  adapter = createOpenAiCompatibleAdapter(http);
});
afterAll(async () => {
  await http.close();
  await upstream.close();
});

type RequestInit = MessageInitShape<typeof GenerateRequestSchema>;
type Messages = NonNullable<RequestInit["messages"]>;
const text = (value: string) => ({ part: { case: "text" as const, value: { text: value } } });
const QUESTION = { role: Role.USER, content: [text("Weather in Paris?")] };
const TOOLS = [{ name: "get_weather", parameters: { type: "object" } }];

function call(messages: Messages, quirks: Record<string, string>, stream: boolean): UpstreamCall {
  return {
    request: create(GenerateRequestSchema, { messages, tools: TOOLS }),
    provider: providerSchema.parse({ id: "deepseek", label: "DeepSeek", protocol: "openai-compatible", base_url: upstream.url, timeout_ms: 5000, quirks }),
    route: modelProviderSchema.parse({ provider: "deepseek", provider_model_id: "thinking-tools", pricing: { prompt: "0", completion: "0" } }),
    apiKey: "key",
    stream,
    maxCompletionTokens: 1024,
    signal: new AbortController().signal,
  };
}

async function collect(upstreamCall: UpstreamCall): Promise<EventView[]> {
  const events: EventView[] = [];
  for await (const event of adapter.stream(upstreamCall)) events.push(viewOf(event));
  return events;
}

/** The assistant turn the client sends back: the first answer's reasoning and tool call, as the hub folds them. */
function assistantTurn(events: EventView[]): Messages[number] {
  const blocks = new Map<number, { type: BlockType; id?: string; name?: string; text: string }>();
  for (const event of events) {
    if (event.type === "block_start") blocks.set(event.index, { type: event.blockType, id: event.toolCallId, name: event.toolName, text: "" });
    if (event.type === "block_delta") blocks.get(event.index)!.text += event.text;
  }
  const content = [...blocks.values()].map((block) =>
    block.type === BlockType.REASONING
      ? { part: { case: "reasoning" as const, value: { text: block.text } } }
      : { part: { case: "toolCall" as const, value: { id: block.id!, name: block.name!, arguments: block.text } } },
  );
  return { role: Role.ASSISTANT, content };
}

describe.each([false, true])("OpenAI-compatible thinking-mode tool loop (stream: %s)", (stream) => {
  async function firstTurn(quirks: Record<string, string>) {
    const events = await collect(call([QUESTION], quirks, stream));
    const assistant = assistantTurn(events);
    expect(assistant.content?.map((part) => part.part?.case)).toEqual(["reasoning", "toolCall"]);
    const toolCallId = (assistant.content![1].part as { value: { id: string } }).value.id;
    const result = { role: Role.TOOL, content: [{ part: { case: "toolResult" as const, value: { toolCallId, content: [text("21C")] } } }] };
    return [QUESTION, assistant, result];
  }

  it("sends the reasoning back as reasoning_content, and the vendor answers", async () => {
    const quirks = { reasoning_field: "thinking", reasoning_passback: "reasoning_content" };
    const events = await collect(call(await firstTurn(quirks), quirks, stream));
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.messages[1]).toMatchObject({ role: "assistant", reasoning_content: "Let me think.", tool_calls: [{ id: "call_fake1" }] });
    const answer = events.flatMap((e) => (e.type === "block_delta" ? [e.text] : [])).join("");
    expect(answer).toBe("Let me think.Hello from thinking-tools");
  });

  it("without the quirk the vendor refuses the history: a 400 that no other provider would accept either", async () => {
    const quirks = { reasoning_field: "thinking" };
    const error = await collect(call(await firstTurn(quirks), quirks, stream)).then(() => undefined, (caught: unknown) => caught);
    expect(upstream.requests.at(-1)!.body.messages[1]).not.toHaveProperty("reasoning_content");
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as Error).message).toContain(REASONING_PASSBACK_ERROR);
  });
});
