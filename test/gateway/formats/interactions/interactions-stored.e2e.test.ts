// End to end, through the official @google/genai SDK: what a stored
// interaction does after its create. Background interactions (created in
// progress, read back completed, cancelled while running), the stream of a
// stored interaction read again with `get(id, {stream: true})` and resumed from
// any event it handed out with `last_event_id` (in the middle of a step too),
// a background interaction followed as a stream while it runs, and a client
// that leaves a create before its answer ends, whose interaction is finished
// and kept all the same.
import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { expectEventIdsInStreamOrder, expectGenaiValid } from "../../../support/genai-interactions-schema.ts";
import { GATED_FIRST_WORDS, GATED_LAST_WORDS, startGatedUpstream, type GatedUpstream } from "../../../support/gated-upstream.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";
import { createMemoryConversationStore } from "../../../../core/conversations/memory-store.ts";
import type { ConversationStore } from "../../../../core/conversations/store.ts";
import type { Turn } from "../../../../gen/router/v1/conversations_pb.js";

type Json = Record<string, any>;

const OTHER_KEY = "sk-other-org";

/** The SDK at the gateway's /v1 (its interactions path is /{api_version}/interactions). */
const sdkAt = (gateway: Gateway, apiKey = TEST_KEY) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: gateway.url, apiVersion: "v1" } });

async function collect(stream: unknown): Promise<Json[]> {
  const events: Json[] = [];
  for await (const event of stream as AsyncIterable<Json>) events.push(event);
  for (const event of events) expectGenaiValid("InteractionSSEEvent", event, `${event.event_type} event`);
  return events;
}

/**
 * The steps a client rebuilds from step events (step.start opens one, step.delta
 * fills it), as the completed interaction lists them, with a thought's summary
 * and a call's arguments joined from their pieces.
 */
function rebuiltSteps(events: Json[]): Json[] {
  const steps: Json[] = [];
  const text = (step: Json) => (step.content ??= [{ type: "text", text: "" }])[0];
  for (const event of events) {
    if (event.event_type === "step.start") steps[event.index] = { ...event.step };
    if (event.event_type !== "step.delta") continue;
    const step = steps[event.index];
    const { delta } = event;
    if (delta.type === "text") text(step).text += delta.text;
    if (delta.type === "thought_summary") step.summary = [{ type: "text", text: (step.summary?.[0]?.text ?? "") + delta.content.text }];
    if (delta.type === "thought_signature") step.signature = (step.signature ?? "") + delta.signature;
    if (delta.type === "arguments_delta") step.argumentText = (step.argumentText ?? "") + delta.arguments;
  }
  return steps.map(({ argumentText, ...step }) => (argumentText === undefined ? step : { ...step, arguments: JSON.parse(argumentText) }));
}

describe("stored interactions after their create", () => {
  let upstream: GatedUpstream;
  let gateway: Gateway;
  let ai: GoogleGenAI;

  /** Every turn the store was given, as the gateway's clients never see the id of an answer they left. */
  const saved: Turn[] = [];

  beforeAll(async () => {
    upstream = await startGatedUpstream();
    const store = createMemoryConversationStore();
    const conversationStore: ConversationStore = { ...store, save: (turn) => (saved.push(turn), store.save(turn)) };
    const config = testConfig(upstream.url);
    const [test] = config.organizations;
    config.organizations.push({ ...test, id: "org_other", keys: [{ ...test.keys[0], id: "key_other", env: "OTHER_API_KEY" }] });
    gateway = await startGateway(config, { core: { conversationStore }, env: { OTHER_API_KEY: OTHER_KEY } });
    ai = sdkAt(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it("runs background: true in the core: answered in progress at once, then read back completed and continued", async () => {
    const started = (await ai.interactions.create({ model: "simulator/echo", input: "In the background", background: true } as never)) as Json;
    expectGenaiValid("Interaction", started, "background create");
    expect(started).toMatchObject({ object: "interaction", status: expect.stringMatching(/^(queued|in_progress)$/), steps: [], outputs: [] });
    await gateway.core.background.idle();
    const done = (await ai.interactions.get(started.id)) as Json;
    expect(done).toMatchObject({ id: started.id, status: "completed", outputs: [{ type: "text", text: "You said: In the background" }] });
    expect(done.usage.total_output_tokens).toBeGreaterThan(0);
    const next = (await ai.interactions.create({ model: "simulator/echo", input: "And then?", previous_interaction_id: started.id } as never)) as Json;
    expect(next.usage.total_input_tokens).toBeGreaterThan(done.usage.total_input_tokens);
  });

  it("cancels a background interaction while it runs: the upstream call stops and it stays cancelled; another organisation's id is a 404", async () => {
    const started = (await ai.interactions.create({ model: "test/ok", input: "Take your time", background: true } as never)) as Json;
    const answer = await upstream.nextAnswer();
    await vi.waitFor(async () => expect(((await ai.interactions.get(started.id)) as Json).status).toBe("in_progress"));
    const other = await sdkAt(gateway, OTHER_KEY).interactions.cancel(started.id).catch((error: unknown) => error);
    expect(other).toMatchObject({ status: 404 });
    const cancelled = (await ai.interactions.cancel(started.id)) as Json;
    expectGenaiValid("Interaction", cancelled, "cancelled interaction");
    expect(cancelled).toMatchObject({ id: started.id, status: "cancelled" });
    await gateway.core.background.idle();
    expect(((await ai.interactions.get(started.id)) as Json).status).toBe("cancelled");
    answer.finish();
    // A finished interaction cannot be cancelled.
    const finished = (await ai.interactions.create({ model: "simulator/echo", input: "Quick", background: true } as never)) as Json;
    await gateway.core.background.idle();
    expect(await ai.interactions.cancel(finished.id).catch((error: unknown) => error)).toMatchObject({ status: 400 });
  });

  it("refuses background without store, and background with stream, naming the field", async () => {
    for (const [body, param] of [[{ store: false }, "background"], [{ stream: true }, "stream"]] as const) {
      const response = await fetch(`${gateway.url}/v1/interactions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-goog-api-key": TEST_KEY },
        body: JSON.stringify({ model: "simulator/echo", input: "Hi", background: true, ...body }),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).error).toMatchObject({ param, type: "invalid_request_error" });
    }
  });

  it("streams a stored interaction again, and resumes it after every event it handed out, the live stream's ids included", async () => {
    const live = await collect(await ai.interactions.create({ model: "simulator/reasoning", input: "Think about the weather in Rome, then answer", stream: true } as never));
    await gateway.core.conversations.idle();
    expectEventIdsInStreamOrder(live);
    const completed = live.at(-1)!.interaction;
    expect(completed.steps.map((step: Json) => step.type)).toEqual(["thought", "model_output"]);
    expect(rebuiltSteps(live)).toEqual(completed.steps);

    const replayed = await collect(await ai.interactions.get(completed.id, { stream: true } as never));
    expectEventIdsInStreamOrder(replayed);
    expect(replayed.at(-1)).toMatchObject({ event_type: "interaction.completed", interaction: { ...completed, updated: expect.any(String) } });
    expect(rebuiltSteps(replayed)).toEqual(completed.steps);

    // A client cut after any event, the live stream's or the replay's, gets exactly the rest.
    for (const seen of [...live.slice(0, -1), ...replayed.slice(0, -1)]) {
      const cut = (seen === replayed[replayed.indexOf(seen)] ? replayed : live).slice(0, (replayed.includes(seen) ? replayed : live).indexOf(seen) + 1);
      const rest = await collect(await ai.interactions.get(completed.id, { stream: true, last_event_id: seen.event_id } as never));
      expect(rest.map((event) => event.event_id)).not.toContain(seen.event_id);
      expectEventIdsInStreamOrder([...cut, ...rest]);
      expect(rebuiltSteps([...cut, ...rest]), `resumed after ${seen.event_id}`).toEqual(completed.steps);
      expect(rest.at(-1)!.event_type).toBe("interaction.completed");
    }
    // Resumed after the last event: nothing more but the end.
    const after = await fetch(`${gateway.url}/v1/interactions/${completed.id}?stream=true&last_event_id=completed`, { headers: { "x-goog-api-key": TEST_KEY } });
    expect((await after.text()).trim()).toBe("data: [DONE]");
  });

  it("resumes a function call in the middle of its arguments", async () => {
    const live = await collect(
      await ai.interactions.create({
        model: "simulator/tool-call",
        input: "Weather in Rome?",
        tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
        stream: true,
      } as never),
    );
    await gateway.core.conversations.idle();
    const completed = live.at(-1)!.interaction;
    const call = live.find((event) => event.event_type === "step.delta" && event.delta.type === "arguments_delta")!;
    const [step, end] = call.event_id.split(":").map(Number);
    // A place inside the first arguments piece, which no event was named by.
    const middle = `${step}:${Math.max(1, end - 3)}`;
    const rest = await collect(await ai.interactions.get(completed.id, { stream: true, last_event_id: middle } as never));
    const sent = live.slice(0, live.indexOf(call));
    const firstPiece = { ...call, delta: { ...call.delta, arguments: call.delta.arguments.slice(0, Math.max(1, end - 3) - (end - call.delta.arguments.length)) } };
    expect(rebuiltSteps([...sent, firstPiece, ...rest])).toEqual(completed.steps);
  });

  it("refuses a last_event_id it did not hand out, or one without stream, naming it; another organisation's id is a 404", async () => {
    const interaction = (await ai.interactions.create({ model: "simulator/echo", input: "Hi" } as never)) as Json;
    await gateway.core.conversations.idle();
    const get = (query: string, key = TEST_KEY) => fetch(`${gateway.url}/api/v1/interactions/${interaction.id}?${query}`, { headers: { "x-goog-api-key": key } });
    for (const query of ["stream=true&last_event_id=7", "last_event_id=created", "stream=true&last_event_id=a&last_event_id=b"]) {
      const response = await get(query);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as Json).error.param).toBe("last_event_id");
    }
    expect((await get("stream=true", OTHER_KEY)).status).toBe(404);
  });

  it("follows a background interaction as a stream while it runs: its opening at once, its steps when it finishes", async () => {
    const started = (await ai.interactions.create({ model: "test/ok", input: "A long one", background: true } as never)) as Json;
    const answer = await upstream.nextAnswer();
    const stream = (await ai.interactions.get(started.id, { stream: true } as never)) as unknown as AsyncIterable<Json>;
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ event_type: "interaction.created", event_id: "created" });
    expect((await iterator.next()).value).toMatchObject({ event_type: "interaction.status_update", event_id: "status" });
    answer.finish();
    const events: Json[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) events.push(next.value);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ event_type: "interaction.completed", interaction: { id: started.id, status: "completed" } });
    expect(last.interaction.outputs).toEqual([{ type: "text", text: GATED_FIRST_WORDS + GATED_LAST_WORDS }]);
  });

  it("streams a background interaction that failed as its opening, then the error event, then the end", async () => {
    const started = (await ai.interactions.create({ model: "simulator/cut-mid-stream", input: "one two three four five six", background: true } as never)) as Json;
    await gateway.core.background.idle();
    expect((await ai.interactions.get(started.id)) as Json).toMatchObject({ status: "failed", errors: [{ code: expect.any(String), message: expect.any(String) }] });
    const events = await collect(await ai.interactions.get(started.id, { stream: true } as never));
    expect(events.map((event) => event.event_type)).toEqual(["interaction.created", "interaction.status_update", "error"]);
    expect(events[2]).toMatchObject({ event_id: "error", error: { message: expect.any(String), code: expect.any(String) } });
    // Resumed after the opening: the error alone.
    const rest = await collect(await ai.interactions.get(started.id, { stream: true, last_event_id: "status" } as never));
    expect(rest.map((event) => event.event_type)).toEqual(["error"]);
  });

  it("finishes and keeps an interaction whose client left before its answer ended, streamed or not", async () => {
    for (const stream of [true, false]) {
      const input = `Leave me (stream: ${stream})`;
      const leaving = new AbortController();
      const response = fetch(`${gateway.url}/v1/interactions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-goog-api-key": TEST_KEY },
        body: JSON.stringify({ model: "test/ok", input, stream }),
        signal: leaving.signal,
      });
      const answer = await upstream.nextAnswer();
      // A streamed client saw the opening (its id); a non-streamed one saw nothing.
      if (stream) expect(new TextDecoder().decode((await (await response).body!.getReader().read()).value)).toContain('"interaction.created"');
      leaving.abort();
      await response.catch(() => undefined);
      // One more round trip, so the gateway has seen the client leave before the answer goes on.
      await fetch(`${gateway.url}/healthz`);
      answer.finish();
      const id = await vi.waitFor(() => {
        const kept = saved.find((turn) => JSON.stringify(turn.input).includes(input));
        expect(kept).toBeDefined();
        return kept!.id;
      });
      const kept = (await ai.interactions.get(id, { include_input: true } as never)) as Json;
      expect(kept).toMatchObject({ status: "completed", outputs: [{ type: "text", text: GATED_FIRST_WORDS + GATED_LAST_WORDS }] });
      expect(kept.steps[0]).toEqual({ type: "user_input", content: [{ type: "text", text: input }] });
    }
  });
});
