// End to end: interactions that ask for a video (`response_format: {type:
// "video"}`), through the official @google/genai SDK's interactions calls,
// served by the media task system on the Kling fake: the create waits for the
// task and answers the completed interaction with the video (the hosted
// asset's URL, or its bytes inline), keeps a long wait alive (the 200 at once,
// newlines before the JSON; status updates on a stream), goes on when the
// client leaves (a later GET shows the task as the interaction), charges the
// task's cost, sends an image input as image-to-video, and refuses what a
// video task cannot take with a 400 naming it, before anything is sent.
import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TASK_WAIT } from "../../../../gateway/formats/interactions/await-task.ts";
import { nanosOf } from "../../../support/exact-money.ts";
import { FAIL_PROMPT, MODERATE_PROMPT, STALL_PROMPT, TINY_MP4, type FakeJob, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { KLING_ACCESS_KEY, KLING_FAILURE_MESSAGE, KLING_MODERATION_MESSAGE, KLING_SECRET_KEY, startFakeKling } from "../../../support/fake-media-kling.ts";
import { expectEventIdsInStreamOrder, expectGenaiValid } from "../../../support/genai-interactions-schema.ts";
import { TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { mediaTaskConfig, OTHER_KEY } from "../../../support/media-task-config.ts";
import { TASK_DONE, useVideoTaskGateway, type TaskClient } from "../../../support/video-task-harness.ts";
import { signedLink } from "../../../support/signed-link.ts";

type Json = Record<string, any>;

const MODEL = "kling/kling-v2-5-turbo";
const TINY_MP4_BASE64 = TINY_MP4.toString("base64");

const stack = useVideoTaskGateway({
  model: MODEL,
  startUpstream: () => startFakeKling(),
  config: (klingUrl) =>
    mediaTaskConfig(
      [{ id: "kling", label: "Kling AI", protocol: "kling", base_url: klingUrl, api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY", timeout_ms: 5000 }],
      [
        {
          id: MODEL,
          name: "Kling 2.5 Turbo",
          output: "video",
          details: { length: [5, 10], aspectRatio: ["16:9", "9:16", "1:1"] },
          routes: [{ provider: "kling", providerModelId: "kling-v2-5-turbo", pricing: { video_output_per_second: "0.042" } }],
        },
        { id: "simulator/echo", output: "text", routes: [{ provider: "simulator", providerModelId: "echo", pricing: {} }] },
      ],
    ),
  env: { KLING_ACCESS_KEY, KLING_SECRET_KEY },
});
let kling: FakeMediaUpstream;
let gateway: Gateway;
let client: TaskClient;
let imageUrl: string;
let ai: GoogleGenAI;

beforeAll(() => {
  ({ upstream: kling, gateway, client, imageUrl } = stack);
  ai = sdk().ai;
  // The gateway reads the task soon and often (the fake's job ends at its third poll); keep-alives stay rare unless a test asks.
  Object.assign(TASK_WAIT, { firstPollMs: 5, maxPollMs: 20, keepAliveMs: 10_000 });
});
const DEFAULT_WAIT = { ...TASK_WAIT };
afterAll(() => void Object.assign(TASK_WAIT, DEFAULT_WAIT));

/**
 * The SDK at the gateway (as the text interactions' e2e). `watched`: with a
 * fetch that keeps each answer as its headers arrive, a copy of its body
 * unread (for JSON answers only: the SDK waits for every copy of a stream's
 * body to be cancelled once it read `[DONE]`).
 */
function sdk(watched = false) {
  const answers: Response[] = [];
  const watching = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    answers.push(response.clone());
    return response;
  };
  return { ai: new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: gateway.url, apiVersion: "v1", ...(watched && { fetch: watching }) } }), answers };
}

/** Keep-alives every `ms` for the body of one test (a create that outlasts one is answered 200 at once). */
async function withKeepAlive<T>(ms: number, run: () => Promise<T>): Promise<T> {
  const before = TASK_WAIT.keepAliveMs;
  TASK_WAIT.keepAliveMs = ms;
  try {
    return await run();
  } finally {
    TASK_WAIT.keepAliveMs = before;
  }
}

/** The fake's job of a prompt once the core has submitted it and polled it: its video is being made. */
const polledJob = (prompt: string) =>
  vi.waitFor(() => {
    const job = [...kling.jobs.jobs.values()].find((candidate) => candidate.prompt === prompt);
    expect(job?.polls).toBeGreaterThan(0);
    return job as FakeJob;
  }, TASK_DONE);

/** Kling's create request of a prompt. */
const submitted = (prompt: string) => kling.requests.find((request) => request.method === "POST" && request.body.prompt === prompt);

const create = (body: Json, sdkClient = ai) => sdkClient.interactions.create(body as never) as Promise<Json>;

/** Reads the stream's events as they come (an SDK stream), until it ends. */
function collect(stream: unknown): { events: Json[]; ended: Promise<void> } {
  const events: Json[] = [];
  const ended = (async () => {
    for await (const event of stream as AsyncIterable<Json>) events.push(event);
  })();
  return { events, ended };
}

describe("a video interaction, made by the task system", () => {
  it("answers the completed interaction with the hosted asset's URL, which serves the fake's bytes; its id is the task's and usage.cost its charge", async () => {
    const before = await client.balance();
    const interaction = await create({ model: MODEL, input: "a wave at dusk", response_format: { type: "video", aspect_ratio: "16:9" } });
    expectGenaiValid("Interaction", interaction, "the video interaction");
    const assetUrl = `${gateway.url}/api/v1/assets/${interaction.id}/0`;
    expect(interaction).toMatchObject({ id: expect.stringMatching(/^rtr_/), object: "interaction", status: "completed", model: "kling-v2-5-turbo" });
    expect(interaction.outputs).toEqual([{ type: "video", uri: signedLink(assetUrl), mime_type: "video/mp4" }]);
    expect(interaction.steps).toEqual([{ type: "model_output", content: interaction.outputs }]);
    // The SDK's own convenience field finds the video.
    expect(interaction.output_video).toEqual(interaction.outputs[0]);
    await client.expectAsset(assetUrl, TINY_MP4, "video/mp4");

    // The interaction is the video task: its id reads at /videos, and usage.cost is what the task charged, off the balance.
    const task = (await client.read(interaction.id)).json;
    expect(task).toMatchObject({ chat_id: interaction.id, data: { status: "completed" } });
    expect(task.usage.cost).toBeGreaterThan(0);
    expect(interaction.usage).toMatchObject({ cost: task.usage.cost, chat_id: interaction.id, total_input_tokens: 0, total_output_tokens: 0, total_tokens: 0 });
    expect(await client.balance()).toBe(before - nanosOf(String(task.usage.cost)));

    // Kling got the prompt and the aspect ratio as its text-to-video takes them.
    const sent = submitted("a wave at dusk")!;
    expect([sent.path, sent.body]).toEqual(["/v1/videos/text2video", { model_name: "kling-v2-5-turbo", prompt: "a wave at dusk", aspect_ratio: "16:9" }]);
  });

  it("with delivery inline answers the fake's exact bytes as base64, by a bare model name; GET answers the same, with include_input the prompt first", async () => {
    const interaction = await create({ model: "kling-v2-5-turbo", input: [{ type: "text", text: "an inline clip" }], response_format: [{ type: "video", delivery: "inline" }] });
    expect(interaction.outputs).toEqual([{ type: "video", data: TINY_MP4_BASE64, mime_type: "video/mp4" }]);
    expect(Buffer.from(interaction.outputs[0].data, "base64").equals(TINY_MP4)).toBe(true);

    for (const got of [(await ai.interactions.get(interaction.id)) as Json, (await (await fetch(`${gateway.apiUrl}/interactions/${interaction.id}`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).json()) as Json]) {
      expect(got).toMatchObject({ id: interaction.id, status: "completed", model: "kling-v2-5-turbo", outputs: interaction.outputs, steps: interaction.steps });
      expect(got.usage).toMatchObject({ cost: interaction.usage.cost, chat_id: interaction.id });
    }
    const withInput = (await ai.interactions.get(interaction.id, { include_input: true })) as Json;
    expect(withInput.steps).toEqual([{ type: "user_input", content: [{ type: "text", text: "an inline clip" }] }, ...interaction.steps]);
  });

  it("is made for a video model asked without response_format too (the spec: a string prompt generates video), while a text model still answers text", async () => {
    const interaction = await create({ model: MODEL, input: "no format asked" });
    expect(interaction).toMatchObject({ status: "completed", outputs: [{ type: "video", uri: signedLink(`${gateway.url}/api/v1/assets/${interaction.id}/0`), mime_type: "video/mp4" }] });
    expect(submitted("no format asked")?.path).toBe("/v1/videos/text2video");
    const text = await create({ model: "simulator/echo", input: "Hello there" });
    expect(text.outputs).toEqual([{ type: "text", text: expect.any(String) }]);
  });

  it("sends an image given by uri to the upstream as the image-to-video input", async () => {
    const input = [{ type: "user_input", content: [{ type: "text", text: "the frame moves" }, { type: "image", uri: imageUrl, mime_type: "image/png" }] }];
    const interaction = await create({ model: MODEL, input, response_format: { type: "video" } });
    expect(interaction.status).toBe("completed");
    const sent = submitted("the frame moves")!;
    expect([sent.path, sent.body]).toEqual(["/v1/videos/image2video", { model_name: "kling-v2-5-turbo", prompt: "the frame moves", image: imageUrl }]);
    const withInput = (await ai.interactions.get(interaction.id, { include_input: true })) as Json;
    expect(withInput.steps[0]).toEqual({ type: "user_input", content: [{ type: "text", text: "the frame moves" }, { type: "image", uri: imageUrl }] });
  });

  it("streams: created and status updates while the video is made, then its model output step, completed and [DONE]", async () => {
    await withKeepAlive(20, async () => {
      const prompt = `a streamed river ${STALL_PROMPT}`;
      const { events, ended } = collect(await create({ model: MODEL, input: prompt, response_format: { type: "video", delivery: "inline" }, stream: true }));
      const job = await polledJob(prompt);
      // Alive while it waits: status updates beyond the opening one.
      await vi.waitFor(() => expect(events.filter((event) => event.event_type === "interaction.status_update").length).toBeGreaterThanOrEqual(3));
      job.outcome = "succeeded";
      await ended;

      for (const event of events) expectGenaiValid("InteractionSSEEvent", event, event.event_type);
      expectEventIdsInStreamOrder(events);
      const types = events.map((event) => event.event_type).filter((type, index, all) => type !== "interaction.status_update" || all[index - 1] !== type);
      expect(types).toEqual(["interaction.created", "interaction.status_update", "step.start", "step.delta", "step.stop", "interaction.completed"]);
      const [created, , start, delta, stop, completed] = events.filter((event, index) => event.event_type !== "interaction.status_update" || index === 1);
      expect(created.interaction).toMatchObject({ status: "in_progress", model: "kling-v2-5-turbo" });
      expect([start.index, start.step, stop.index]).toEqual([0, { type: "model_output" }, 0]);
      expect(delta).toMatchObject({ index: 0, delta: { type: "video", data: TINY_MP4_BASE64, mime_type: "video/mp4" } });
      expect(completed.interaction).toMatchObject({ id: created.interaction.id, status: "completed", outputs: [delta.delta] });
    });
  });

  it("keeps a waiting create alive: the 200 before the video is made, newlines until the JSON, which the SDK reads", async () => {
    await withKeepAlive(20, async () => {
      const { ai: watched, answers } = sdk(true);
      const prompt = `a slow sunrise ${STALL_PROMPT}`;
      const pending = create({ model: MODEL, input: prompt, response_format: { type: "video" } }, watched);
      const job = await polledJob(prompt);
      const answer = await vi.waitFor(() => {
        expect(answers).toHaveLength(1);
        return answers[0];
      });
      expect([answer.status, answer.headers.get("content-type")]).toEqual([200, "application/json; charset=utf-8"]);
      // Newlines keep coming while the job is still being made.
      const reader = answer.body!.getReader();
      let raw = "";
      while ((raw.match(/\n/g) ?? []).length < 3) raw += Buffer.from((await reader.read()).value!).toString();
      expect(raw.trim()).toBe("");
      job.outcome = "succeeded";
      const interaction = await pending;
      expect(interaction).toMatchObject({ status: "completed", outputs: [{ type: "video", uri: expect.stringContaining(`/api/v1/assets/`) }] });
      for (let read = await reader.read(); !read.done; read = await reader.read()) raw += Buffer.from(read.value).toString();
      expect(JSON.parse(raw)).toMatchObject({ id: interaction.id, status: "completed" });
    });
  });

  it("goes on when the client aborts the create mid-wait: GET shows it in progress, then completed with its video", async () => {
    await withKeepAlive(20, async () => {
      const { ai: watched, answers } = sdk(true);
      const prompt = `an abandoned lake ${STALL_PROMPT}`;
      const abort = new AbortController();
      const pending = watched.interactions.create({ model: MODEL, input: prompt, response_format: { type: "video", delivery: "inline" } } as never, { fetchOptions: { signal: abort.signal } } as never).catch((error: unknown) => error);
      const job = await polledJob(prompt);
      await vi.waitFor(() => expect(answers).toHaveLength(1));
      abort.abort();
      expect(await pending).toBeInstanceOf(Error);

      const task = (await gateway.core.tasks.store.list("org_test", 100)).find((candidate) => candidate.upstreamJobId === job.id)!;
      const waiting = (await ai.interactions.get(task.id)) as Json;
      expect(waiting).toMatchObject({ id: task.id, status: "in_progress", steps: [], outputs: [] });
      expectGenaiValid("Interaction", waiting, "the interaction in progress");
      job.outcome = "succeeded";
      const done = await vi.waitFor(async () => {
        const got = (await ai.interactions.get(task.id)) as Json;
        expect(got.status).toBe("completed");
        return got;
      }, TASK_DONE);
      expect(done.outputs).toEqual([{ type: "video", data: TINY_MP4_BASE64, mime_type: "video/mp4" }]);
    });
  });
});

describe("a video interaction that fails", () => {
  it("before anything was answered: the error in the spec's body (moderation a 400), nothing charged", async () => {
    const before = await client.balance();
    const refused = await create({ model: MODEL, input: `a cat ${MODERATE_PROMPT}`, response_format: { type: "video" } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400 });
    expect((refused as Error).message).toContain(KLING_MODERATION_MESSAGE);
    const raw = await fetch(`${gateway.url}/v1/interactions`, {
      method: "POST",
      headers: { "x-goog-api-key": TEST_KEY, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: `a dog ${FAIL_PROMPT}`, response_format: { type: "video" } }),
    });
    expect(raw.status).toBe(502);
    expect(((await raw.json()) as Json).error).toMatchObject({ code: "upstream_error", message: KLING_FAILURE_MESSAGE, type: "api_error" });
    expect(await client.balance()).toBe(before);
  });

  it("after the 200: the interaction failed with the task's error, as GET shows it too", async () => {
    await withKeepAlive(20, async () => {
      const { ai: watched, answers } = sdk(true);
      const prompt = `a storm that breaks ${STALL_PROMPT}`;
      const pending = create({ model: MODEL, input: prompt, response_format: { type: "video" } }, watched);
      const job = await polledJob(prompt);
      await vi.waitFor(() => expect(answers).toHaveLength(1));
      job.outcome = "failed";
      const failed = await pending;
      expectGenaiValid("Interaction", failed, "the failed interaction");
      expect(failed).toMatchObject({ status: "failed", outputs: [], steps: [], errors: [{ code: "upstream_error", message: KLING_FAILURE_MESSAGE }], usage: { cost: 0 } });
      expect(await ai.interactions.get(failed.id)).toMatchObject({ id: failed.id, status: "failed", errors: failed.errors });
    });
  });

  it("streamed: the error event after the opening ones", async () => {
    const { events, ended } = collect(await create({ model: MODEL, input: `a bird ${FAIL_PROMPT}`, response_format: { type: "video" }, stream: true }));
    await ended;
    expect(events.map((event) => event.event_type)).toEqual(["interaction.created", "interaction.status_update", "error"]);
    expect(events[2].error).toMatchObject({ code: "upstream_error", message: KLING_FAILURE_MESSAGE });
  });
});

describe("what a video interaction refuses: a 400 naming it, before anything is held or sent", () => {
  const post = (body: Json) =>
    fetch(`${gateway.url}/v1/interactions`, { method: "POST", headers: { "x-goog-api-key": TEST_KEY, "content-type": "application/json" }, body: JSON.stringify(body) });
  const video = { type: "video" };

  it.each([
    { what: "an unknown model", body: { model: "no-such-video-model", input: "hi", response_format: video }, param: "model", code: "model_not_found" },
    { what: "a text model", body: { model: "simulator/echo", input: "hi", response_format: video }, param: "model", message: "does not generate videos" },
    { what: "a system instruction", body: { model: MODEL, input: "hi", system_instruction: "Be epic.", response_format: video }, param: "system_instruction" },
    { what: "tools", body: { model: MODEL, input: "hi", tools: [{ type: "function", name: "f" }], response_format: video }, param: "tools" },
    { what: "a conversation", body: { model: MODEL, input: "hi", previous_interaction_id: "rtr_x", response_format: video }, param: "previous_interaction_id" },
    { what: "video input", body: { model: MODEL, input: [{ type: "text", text: "hi" }, { type: "video", uri: "https://example.com/a.mp4" }], response_format: video }, param: "input[1]", message: "video-to-video" },
    { what: "a base64 image", body: { model: MODEL, input: [{ type: "text", text: "hi" }, { type: "image", data: "iVBORw0KGgo=", mime_type: "image/png" }], response_format: video }, param: "input[1]", message: "by uri" },
    { what: "two images", body: { model: MODEL, input: [{ type: "text", text: "hi" }, { type: "image", uri: "https://a.example/1.png" }, { type: "image", uri: "https://a.example/2.png" }], response_format: video }, param: "input[2]" },
    { what: "an earlier answer's step", body: { model: MODEL, input: [{ type: "model_output", content: [] }, { type: "text", text: "hi" }], response_format: video }, param: "input[0]" },
    { what: "no prompt", body: { model: MODEL, input: [{ type: "image", uri: "https://a.example/1.png" }], response_format: video }, param: "input" },
    { what: "text output beside the video", body: { model: MODEL, input: "hi", response_format: [video, { type: "text" }] }, param: "response_format[1]" },
    { what: "an unknown delivery", body: { model: MODEL, input: "hi", response_format: { type: "video", delivery: "gcs" } }, param: "response_format.delivery" },
    { what: "a duration (not served yet)", body: { model: MODEL, input: "hi", response_format: { type: "video", duration: "8s" } }, param: "response_format.duration" },
    { what: "an aspect ratio the catalogue does not list", body: { model: MODEL, input: "hi", response_format: { type: "video", aspect_ratio: "4:3" } }, param: "response_format.aspect_ratio" },
  ])("$what", async ({ body, param, code, message }) => {
    const before = await client.balance();
    const sent = kling.requests.length;
    const answer = await post(body);
    const { error } = (await answer.json()) as Json;
    expect([answer.status, error.param], JSON.stringify(error)).toEqual([400, param]);
    if (code) expect(error.code).toBe(code);
    if (message) expect(error.message).toContain(message);
    expect(kling.requests.length).toBe(sent);
    expect(await client.balance()).toBe(before);
  });

  it("an aspect ratio with an image where the protocol takes none (Kling's image-to-video), in the interaction's terms, through the SDK", async () => {
    const refused = await create({ model: MODEL, input: [{ type: "text", text: "framed" }, { type: "image", uri: imageUrl }], response_format: { type: "video", aspect_ratio: "9:16" } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400 });
    expect((refused as Error).message).toContain("aspectRatio cannot be given with image");
    const raw = await post({ model: MODEL, input: [{ type: "text", text: "framed" }, { type: "image", uri: imageUrl }], response_format: { type: "video", aspect_ratio: "9:16" } });
    expect(((await raw.json()) as Json).error.param).toBe("response_format.aspect_ratio");
  });
});

describe("a video interaction's id", () => {
  it("is another organisation's 404, a 400 to DELETE (kept with its task), and unknown to GET when made with store: false or at /videos", async () => {
    const interaction = await create({ model: MODEL, input: "a kept clip", response_format: { type: "video" } });
    const as = (key: string, method = "GET", id = interaction.id) => fetch(`${gateway.url}/v1/interactions/${id}`, { method, headers: { "x-goog-api-key": key } });
    for (const method of ["GET", "DELETE"]) expect((await as(OTHER_KEY, method)).status).toBe(404);
    const deleted = await as(TEST_KEY, "DELETE");
    expect([deleted.status, ((await deleted.json()) as Json).error?.code]).toEqual([400, "video_interaction_not_deletable"]);
    expect((await as(TEST_KEY)).status).toBe(200);

    const unstored = await create({ model: MODEL, input: "a clip not kept", response_format: { type: "video" }, store: false });
    expect(unstored.status).toBe("completed");
    const plainTask = await client.created({ prompt: "a plain video task" });
    await client.finished(plainTask);
    for (const id of [unstored.id, plainTask]) expect((await as(TEST_KEY, "GET", id)).status).toBe(404);
  });
});
