// Continuation in the core, whatever the format: an answer that is kept is
// stored as a turn once it finishes, and a request naming it gets its history
// before its own messages, planned and charged as the prompt it is. Through
// the gateway's in-process client, on the simulator.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCore, type Core } from "../../../core/create-core.ts";
import { ConnectError, errorDetailOf } from "../../../core/errors.ts";
import { createInProcessCoreClient, type CoreClient } from "../../../gateway/core-client.ts";
import { BlockType, GenerateRequestSchema, PublicFormat, Role, type GenerateResponse, type Message } from "../../../gen/router/v1/inference_pb.js";
import { TEST_ENV, TEST_KEY, testConfig } from "../../support/harness.ts";
import { FORMAT_FIELDS } from "../../support/request-formats.ts";

const OTHER_KEY = "sk-other-org-key";

let core: Core;
let client: CoreClient;

beforeAll(async () => {
  const config = testConfig("http://127.0.0.1:9/v1");
  config.organizations.push({ id: "org_other", name: "Other", credits: "10", keys: [{ id: "key_other", env: "OTHER_API_KEY", disabled: false, allowed_models: [] }] });
  core = await createCore({ config, env: { ...TEST_ENV, OTHER_API_KEY: OTHER_KEY } });
  client = createInProcessCoreClient(core);
});

afterAll(async () => {
  await core?.close();
});

const user = (text: string) => ({ role: Role.USER, content: [{ part: { case: "text" as const, value: { text } } }] });

async function generate(fields: MessageInitShape<typeof GenerateRequestSchema>, apiKey = TEST_KEY): Promise<GenerateResponse[]> {
  const events: GenerateResponse[] = [];
  const init = { caller: { apiKey }, ...FORMAT_FIELDS.responses, model: "simulator/reasoning", stream: true, ...fields } as MessageInitShape<typeof GenerateRequestSchema>;
  const request = create(GenerateRequestSchema, init);
  for await (const event of client.inference.generate(request)) events.push(event);
  // Turns are saved off the answer's path; settlements too.
  await Promise.all([core.conversations.idle(), core.accounts.idle()]);
  return events;
}

const textOf = (events: GenerateResponse[]) => events.map((e) => (e.event.case === "blockDelta" ? e.event.value.text : "")).join("");
const inputTokensOf = (events: GenerateResponse[]) => events.flatMap((e) => (e.event.case === "usage" ? [e.event.value.inputTokens] : []))[0];
const turn = (id: string, apiKey = TEST_KEY) => client.conversations.getTurn({ caller: { apiKey }, id }).then((r) => r.turn);

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ConnectError)) throw new Error(`expected a ConnectError, got ${String(error)}`);
  return { code: error.code, detail: errorDetailOf(error) };
}

describe("conversations through the core", () => {
  it("stores a Responses answer with its reasoning signature and continues from it with the history prepended", async () => {
    await generate({ requestId: "resp_first", messages: [user("what is up")] });
    const first = await turn("resp_first");
    expect(first).toMatchObject({ id: "resp_first", organizationId: "org_test", previousId: "", modelId: "simulator/reasoning", provider: "simulator" });
    expect(first!.input).toHaveLength(1);
    const [reasoning, text] = first!.output[0].content.map((c) => c.part);
    expect(reasoning).toMatchObject({ case: "reasoning", value: { signature: expect.stringMatching(/^sim_/) } });
    expect(text).toMatchObject({ case: "text", value: { text: "You said: what is up" } });

    const second = await generate({ requestId: "resp_second", conversation: { previousId: "resp_first" }, messages: [user("and then")] });
    expect(textOf(second)).toContain("You said: and then");
    // Charged as the prompt it is: the same input tokens as sending the whole history by hand.
    const byHand = await generate({ store: false, messages: [...first!.input, ...first!.output, user("and then")] as Message[] });
    expect(inputTokensOf(second)).toBe(inputTokensOf(byHand));
    expect(inputTokensOf(second)).toBeGreaterThan(inputTokensOf(await generate({ store: false, messages: [user("and then")] })));

    // The second turn holds only its own input, chained to the first.
    const stored = await turn("resp_second");
    expect(stored).toMatchObject({ previousId: "resp_first" });
    expect(stored!.input.map((m) => m.content[0].part.value)).toEqual([expect.objectContaining({ text: "and then" })]);
  });

  it("stores the reasoning that reasoning.exclude withheld from the caller, with the block ids the caller saw", async () => {
    const events = await generate({ requestId: "resp_excluded", reasoning: { exclude: true }, messages: [user("think quietly")] });
    const started = events.flatMap((e) => (e.event.case === "blockStart" ? [e.event.value] : []));
    expect(started.some((b) => b.type === BlockType.REASONING)).toBe(false);
    const stored = await turn("resp_excluded");
    const [reasoning, text] = stored!.output[0].content.map((c) => c.part);
    expect(reasoning).toMatchObject({ case: "reasoning", value: { signature: expect.stringMatching(/^sim_/) } });
    expect(text).toMatchObject({ case: "text", value: { text: "You said: think quietly" } });
    const textBlock = stored!.outputBlocks.find((b) => b.type === BlockType.TEXT)!;
    expect(started.map((b) => b.id)).toContain(textBlock.id);
    expect(stored!.outputBlocks.map((b) => b.id)).toEqual(["resp_excluded_0", "resp_excluded_1"]);
  });

  it("refuses a conversation whose earlier turn was deleted, naming previous_response_id", async () => {
    await generate({ requestId: "resp_gap_1", messages: [user("one")] });
    await generate({ requestId: "resp_gap_2", conversation: { previousId: "resp_gap_1" }, messages: [user("two")] });
    await client.conversations.deleteTurn({ caller: { apiKey: TEST_KEY }, id: "resp_gap_1" });
    const refused = await failure(generate({ conversation: { previousId: "resp_gap_2" }, messages: [user("three")] }));
    expect(refused.code).toBe(3); // InvalidArgument: 400
    expect(refused.detail).toMatchObject({ reason: "previous_response_not_found", param: "previous_response_id" });
  });

  it.each([
    ["an unknown id", "unknown", TEST_KEY],
    ["another organisation's id", "stored", OTHER_KEY],
  ])("refuses to continue from %s with previous_response_not_found naming previous_response_id", async (_name, which, apiKey) => {
    const [start] = await generate({ messages: [user("what is up")] });
    const previousId = which === "stored" && start.event.case === "start" ? start.event.value.id : "resp_never";
    // The stored one is there for its own organisation.
    if (which === "stored") expect((await turn(previousId))?.id).toBe(previousId);
    const refused = await failure(generate({ conversation: { previousId }, messages: [user("again")] }, apiKey));
    expect(refused.code).toBe(3); // InvalidArgument: 400
    expect(refused.detail).toMatchObject({ reason: "previous_response_not_found", param: "previous_response_id" });
  });

  it("checks the key before anything about the conversation", async () => {
    const refused = await failure(generate({ conversation: { previousId: "resp_never" }, messages: [user("again")] }, "sk-wrong"));
    expect(refused.detail?.reason).toBe("invalid_api_key");
  });

  it("keeps nothing of an answer whose caller left before it finished", async () => {
    const request = create(GenerateRequestSchema, { caller: { apiKey: TEST_KEY }, ...FORMAT_FIELDS.responses, model: "simulator/echo", stream: true, requestId: "resp_left", messages: [user("a long story please")] });
    for await (const event of client.inference.generate(request)) if (event.event.case === "blockDelta") break;
    await Promise.all([core.conversations.idle(), core.accounts.idle()]);
    expect((await failure(turn("resp_left"))).detail?.reason).toBe("turn_not_found");
  });

  it.each([
    ["store: false", { store: false, requestId: "resp_unkept" }],
    ["chat completions by default", { ...FORMAT_FIELDS.chatCompletions, requestId: "chat_unkept" }],
  ])("keeps nothing with %s", async (_name, fields) => {
    await generate({ ...fields, messages: [user("hello")] });
    expect((await failure(turn(fields.requestId))).detail?.reason).toBe("turn_not_found");
  });
});
