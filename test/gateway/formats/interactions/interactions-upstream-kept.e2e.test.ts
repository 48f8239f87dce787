// End to end, through the official @google/genai SDK (and the openai SDK's
// Responses): conversations a gemini-interactions upstream keeps on its side.
// A kept answer is stored upstream too (`store: true`); a continuation, named
// by the gateway's id or by the upstream's own, sends `previous_interaction_id`
// and only its new input; GET and DELETE take either id, and a delete reaches
// the upstream (a delete it fails is still the caller's success). An answer
// not kept is not stored there; a conversation whose
// upstream copy is gone, or that falls back to another protocol, is sent whole.
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../../../core/config/load.ts";
import { FAKE_STORED_ID_PREFIX, type FakeGeminiInteractionsUpstream } from "../../../support/fake-gemini-interactions-upstream.ts";
import type { FakeUpstream } from "../../../support/recording-server.ts";
import { expectGenaiValid } from "../../../support/genai-interactions-schema.ts";
import { startGateway, TEST_ENV, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { closeProtocolUpstreams, protocolConfigDocument, startProtocolUpstreams, urlsOf, type Protocol } from "../../../support/protocol-upstreams.ts";

type Json = Record<string, any>;

const UPSTREAM_MODEL: Record<Protocol, string> = {
  "openai-compatible": "gpt-kept",
  anthropic: "claude-kept",
  gemini: "gemini-kept",
  "gemini-interactions": "gemini-ix-kept",
};
/** Served by gemini-interactions alone. */
const MODEL = "kept/gemini-interactions";
/** Served by gemini-interactions first, then (a fallback) by the OpenAI-compatible fake. */
const FALLING_BACK = "kept/with-fallback";

const userStep = (text: string) => ({ type: "user_input", content: [{ type: "text", text }] });
const answerStep = { type: "model_output", content: [{ type: "text", text: `Hello from ${UPSTREAM_MODEL["gemini-interactions"]}` }] };

describe("conversations a gemini-interactions upstream keeps", () => {
  let upstreams: Record<Protocol, FakeUpstream>;
  let upstream: FakeGeminiInteractionsUpstream;
  let gateway: Gateway;
  let ai: GoogleGenAI;

  beforeAll(async () => {
    upstreams = await startProtocolUpstreams();
    upstream = upstreams["gemini-interactions"] as FakeGeminiInteractionsUpstream;
    const document = protocolConfigDocument(urlsOf(upstreams), "kept", UPSTREAM_MODEL);
    const ixModel = document.models.find((model) => model.id === MODEL)!;
    const openaiRoute = document.models.find((model) => model.id === "kept/openai-compatible")!.providers[0];
    document.models.push({ ...ixModel, id: FALLING_BACK, providers: [...ixModel.providers, openaiRoute] });
    gateway = await startGateway(parseConfig(JSON.stringify(document)));
    ai = new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: gateway.url, apiVersion: "v1" } });
  });
  afterAll(async () => {
    await gateway?.close();
    if (upstreams) await closeProtocolUpstreams(upstreams);
  });
  beforeEach(() => {
    for (const fake of Object.values(upstreams)) fake.requests.length = 0;
  });

  const create = async (body: Json) => {
    const interaction = (await ai.interactions.create(body as never)) as Json;
    expectGenaiValid("Interaction", interaction, "created interaction");
    await gateway.core.conversations.idle();
    return interaction;
  };
  const creates = () => upstream.requests.filter((request) => request.method === "POST");
  const lastCreate = () => creates().at(-1)!.body;
  /** What the fake keeps under the gateway's upstream key. */
  const keptUpstream = () => upstream.stored.get(TEST_ENV.CHEAP_KEY) ?? new Map<string, Json[]>();
  /** The id the fake gave the interaction it stored last. */
  const newestUpstreamId = () => [...keptUpstream().keys()].at(-1)!;

  it("stores upstream, continues by the gateway's id and by the upstream's with only the new input, reads by either id and deletes here and upstream", async () => {
    const first = await create({ model: MODEL, input: "Hi", system_instruction: "Be brief." });
    expect(lastCreate()).toMatchObject({ store: true, input: [userStep("Hi")] });
    expect(lastCreate().previous_interaction_id).toBeUndefined();
    const firstUpstreamId = newestUpstreamId();
    expect(firstUpstreamId).toMatch(new RegExp(`^${FAKE_STORED_ID_PREFIX}`));
    expect(first.id).not.toBe(firstUpstreamId);

    // By the gateway's id: the upstream is told its own id, and sent the instruction and the new input only.
    const second = await create({ model: MODEL, previous_interaction_id: first.id, input: "And then?", system_instruction: "Be brief." });
    expect(lastCreate()).toMatchObject({ previous_interaction_id: firstUpstreamId, system_instruction: "Be brief.", input: [userStep("And then?")], store: true });
    expect(second).toMatchObject({ previous_interaction_id: first.id, outputs: [{ type: "text", text: answerStep.content[0].text }] });
    const secondUpstreamId = newestUpstreamId();
    // The upstream's model had the whole conversation.
    expect(keptUpstream().get(secondUpstreamId)).toEqual([userStep("Hi"), answerStep, userStep("And then?"), answerStep]);

    // By the upstream's own id: the same.
    const third = await create({ model: MODEL, previous_interaction_id: secondUpstreamId, input: "Last one" });
    expect(lastCreate()).toMatchObject({ previous_interaction_id: secondUpstreamId, input: [userStep("Last one")] });
    // Stored as continuing the gateway's turn.
    expect(((await ai.interactions.get(third.id)) as Json).previous_interaction_id).toBe(second.id);
    const thirdUpstreamId = newestUpstreamId();

    // GET by the upstream's id answers the stored interaction.
    const got = (await ai.interactions.get(secondUpstreamId)) as Json;
    expectGenaiValid("Interaction", got, "interaction got by its upstream id");
    expect(got).toMatchObject({ id: second.id, status: "completed", previous_interaction_id: first.id, outputs: second.outputs });

    // DELETE by the gateway's id, then by the upstream's: gone here, and deleted upstream (in the background).
    await ai.interactions.delete(third.id);
    await ai.interactions.delete(secondUpstreamId);
    await vi.waitFor(() => {
      const deletes = upstream.requests.filter((request) => request.method === "DELETE").map((request) => request.path);
      expect(deletes).toEqual([`/v1beta/interactions/${thirdUpstreamId}`, `/v1beta/interactions/${secondUpstreamId}`]);
    });
    expect(upstream.requests.find((request) => request.method === "DELETE")!.headers["x-goog-api-key"]).toBe(TEST_ENV.CHEAP_KEY);
    expect(keptUpstream().has(thirdUpstreamId) || keptUpstream().has(secondUpstreamId)).toBe(false);
    for (const id of [third.id, second.id, secondUpstreamId]) {
      expect(await ai.interactions.get(id).catch((error: unknown) => (error as { status?: number }).status)).toBe(404);
    }
    // The first turn is still kept on both sides.
    expect(((await ai.interactions.get(first.id)) as Json).status).toBe("completed");
    expect(keptUpstream().has(firstUpstreamId)).toBe(true);
  });

  it("a delete the upstream fails is the caller's success all the same (logged), the copy left upstream", async () => {
    const answer = await create({ model: MODEL, input: "Hi" });
    const upstreamId = newestUpstreamId();
    upstream.failNext(500);
    await ai.interactions.delete(answer.id);
    await vi.waitFor(() => expect(upstream.requests.filter((request) => request.method === "DELETE").map((request) => request.path)).toEqual([`/v1beta/interactions/${upstreamId}`]));
    expect(await ai.interactions.get(answer.id).catch((error: unknown) => (error as { status?: number }).status)).toBe(404);
    expect(keptUpstream().has(upstreamId)).toBe(true);
  });

  it("store: false is sent as store: false, and nothing is kept upstream", async () => {
    const kept = keptUpstream().size;
    const answer = await create({ model: MODEL, input: "Not kept", store: false });
    expect(lastCreate()).toMatchObject({ store: false, input: [userStep("Not kept")] });
    expect(answer.outputs).toEqual([{ type: "text", text: answerStep.content[0].text }]);
    expect(keptUpstream().size).toBe(kept);
  });

  it("a conversation whose upstream copy is gone is continued with the whole history, the caller none the wiser", async () => {
    const first = await create({ model: MODEL, input: "Hi" });
    const upstreamId = newestUpstreamId();
    // Past its retention upstream (or deleted there by someone else).
    keptUpstream().delete(upstreamId);
    const second = await create({ model: MODEL, previous_interaction_id: first.id, input: "Still there?" });
    expect(second).toMatchObject({ status: "completed", previous_interaction_id: first.id });
    const [refused, whole] = creates().slice(-2).map((request) => request.body);
    expect(refused).toMatchObject({ previous_interaction_id: upstreamId, input: [userStep("Still there?")] });
    expect(whole.previous_interaction_id).toBeUndefined();
    expect(whole.input).toEqual([userStep("Hi"), answerStep, userStep("Still there?")]);
  });

  it("a fallback to another protocol mid-conversation gets the whole history", async () => {
    const first = await create({ model: FALLING_BACK, input: "Hi", system_instruction: "Be brief." });
    expect(lastCreate().store).toBe(true);
    const upstreamId = newestUpstreamId();
    upstream.failNext(503);
    const second = await create({ model: FALLING_BACK, previous_interaction_id: first.id, input: "And then?", system_instruction: "Be brief." });
    expect(second).toMatchObject({ status: "completed", outputs: [{ type: "text", text: `Hello from ${UPSTREAM_MODEL["openai-compatible"]}` }] });
    // Sticky: the provider that keeps the conversation was tried first.
    expect(lastCreate()).toMatchObject({ previous_interaction_id: upstreamId, input: [userStep("And then?")] });
    expect(upstreams["openai-compatible"].requests.at(-1)!.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: answerStep.content[0].text },
      { role: "user", content: "And then?" },
    ]);
  });

  it("a Responses continuation on a gemini-interactions model is kept upstream alike (by either id)", async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
    const first = await client.responses.create({ model: MODEL, input: "Hi" });
    await gateway.core.conversations.idle();
    expect(lastCreate()).toMatchObject({ store: true, input: [userStep("Hi")] });
    const firstUpstreamId = newestUpstreamId();

    const second = await client.responses.create({ model: MODEL, previous_response_id: first.id, input: "And then?" });
    await gateway.core.conversations.idle();
    expect(second.output_text).toBe(answerStep.content[0].text);
    expect(lastCreate()).toMatchObject({ previous_interaction_id: firstUpstreamId, input: [userStep("And then?")] });

    const secondUpstreamId = newestUpstreamId();
    const third = await client.responses.create({ model: MODEL, previous_response_id: secondUpstreamId, input: "Last one" });
    expect(third.status).toBe("completed");
    expect(lastCreate()).toMatchObject({ previous_interaction_id: secondUpstreamId, input: [userStep("Last one")] });
  });
});
