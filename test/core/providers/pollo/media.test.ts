// The Pollo media adapter (core/providers/pollo/media.ts) against the Pollo
// fake (test/support/fake-media-pollo.ts): the fake checks x-api-key, runs each
// task waiting -> processing -> succeed (or failed) over three polls, and answers
// enveloped (as the live API) or flat (as the OpenAPI document).
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerSchema, type ModelProviderConfig } from "../../../../core/config/schema.ts";
import type { JobState, MediaJobCall } from "../../../../core/providers/media-job.ts";
import { createPolloMediaAdapter } from "../../../../core/providers/pollo/media.ts";
import { UpstreamError } from "../../../../core/providers/types.ts";
import { VideoParametersSchema, VideoResultStyle } from "../../../../gen/router/v1/tasks_pb.js";
import { FAIL_PROMPT, MODERATE_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { POLLO_FAILURE_MESSAGE, POLLO_KEY, POLLO_MODERATION_MESSAGE, startFakePollo } from "../../../support/fake-media-pollo.ts";
import { startRecordingServer, type FakeUpstream } from "../../../support/recording-server.ts";

const adapter = createPolloMediaAdapter();
const video = (fields: Parameters<typeof create<typeof VideoParametersSchema>>[1] = {}) => create(VideoParametersSchema, { prompt: "a wave at dusk", ...fields });

function callTo(baseUrl: string, options: { key?: string; model?: string } = {}): MediaJobCall {
  return {
    provider: providerSchema.parse({ id: "pollo", label: "Pollo", protocol: "pollo", base_url: baseUrl, api_key_env: "POLLO_API_KEY", timeout_ms: 5000 }),
    route: { provider: "pollo", provider_model_id: options.model ?? "pollo/pollo-v1-6", pricing: { prompt: "0", completion: "0" } } as ModelProviderConfig,
    apiKey: options.key ?? POLLO_KEY,
    signal: new AbortController().signal,
  };
}

async function refusal(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

describe.each([
  { envelope: true, shape: "{code, message, data} envelope" },
  { envelope: false, shape: "flat answers" },
])("the Pollo media adapter against the fake, $shape", ({ envelope }) => {
  let pollo: FakeMediaUpstream;
  beforeAll(async () => {
    pollo = await startFakePollo({ envelope });
  });
  afterAll(() => pollo.close());

  it("submits to /generation/{brand}/{model} with x-api-key and polls /generation/{taskId}/status: waiting, processing, then the generation's url and id", async () => {
    const call = callTo(pollo.url);
    const job = await adapter.submitVideo!(call, video());
    const submitted = pollo.requests.at(-1)!;
    expect([submitted.method, submitted.path, submitted.headers["x-api-key"]]).toEqual(["POST", "/api/platform/generation/pollo/pollo-v1-6", POLLO_KEY]);
    expect(submitted.body).toEqual({ input: { prompt: "a wave at dusk" } });
    expect(job.pollingUrl).toBe(`${pollo.url}/generation/${job.jobId}/status`);
    expect(job.finished).toBeUndefined();

    const states: JobState[] = [];
    for (let count = 0; count < 3; count++) states.push(await adapter.poll(call, job));
    expect(states.slice(0, 2)).toEqual([{ state: "queued" }, { state: "running" }]);
    const done = states[2];
    if (done.state !== "succeeded") throw new Error(`expected success, got ${JSON.stringify(done)}`);
    const generation = pollo.jobs.jobs.get(job.jobId)!.details.generationId;
    expect(done.outputs).toEqual([{ url: expect.stringContaining("/cdn/"), upstreamId: generation, mediaType: "video/mp4" }]);
    expect(pollo.polls(job.jobId)).toBe(3);
    const output = done.outputs[0];
    expect("url" in output && Buffer.from(await (await fetch(output.url)).arrayBuffer())).toEqual(TINY_MP4);
  });

  it("ends failed with Pollo's failMsg: upstream_error for a failure, content_moderated for a moderation refusal", async () => {
    const finalState = async (prompt: string) => {
      const call = callTo(pollo.url);
      const job = await adapter.submitVideo!(call, video({ prompt }));
      await adapter.poll(call, job);
      await adapter.poll(call, job);
      return adapter.poll(call, job);
    };
    expect(await finalState(`a cat ${FAIL_PROMPT}`)).toEqual({ state: "failed", code: "upstream_error", message: POLLO_FAILURE_MESSAGE });
    expect(await finalState(`a cat ${MODERATE_PROMPT}`)).toEqual({ state: "failed", code: "content_moderated", message: POLLO_MODERATION_MESSAGE });
  });
});

describe("the Pollo media adapter's requests and refusals", () => {
  let pollo: FakeMediaUpstream;
  beforeAll(async () => {
    pollo = await startFakePollo();
  });
  afterAll(() => pollo.close());

  it("carries each public video parameter under Pollo's input name and value form", async () => {
    await adapter.submitVideo!(
      callTo(pollo.url, { model: "kling-ai/kling-v2-1" }),
      video({ imageUrl: "https://example.com/first-frame.png", length: 10, resolution: "1080p", aspectRatio: "9:16", mode: "pro", seed: 0n, generateAudio: false }),
    );
    const submitted = pollo.requests.at(-1)!;
    expect(submitted.path).toBe("/api/platform/generation/kling-ai/kling-v2-1");
    expect(submitted.body).toEqual({
      input: { prompt: "a wave at dusk", image: "https://example.com/first-frame.png", length: 10, resolution: "1080p", aspectRatio: "9:16", mode: "pro", seed: 0, generateAudio: false },
    });
    await adapter.submitVideo!(callTo(pollo.url), video({ seed: 1234567n, generateAudio: true }));
    expect(pollo.requests.at(-1)!.body.input).toEqual({ prompt: "a wave at dusk", seed: 1234567, generateAudio: true });
  });

  it("declares the parameters it carries (Pollo's own names; not the progress family's seconds and size) and the per-generation style", () => {
    expect([...adapter.videoParameters!].sort()).toEqual(["aspectRatio", "generateAudio", "image", "length", "mode", "resolution", "seed"]);
    expect(adapter.videoResultStyle).toBe(VideoResultStyle.PER_GENERATION);
    expect(adapter.maxImagesPerJob).toBe(0);
  });

  it("a wrong key is a 401 with Pollo's code and words (the task service ends a task whose submission is refused so)", async () => {
    const error = await refusal(adapter.submitVideo!(callTo(pollo.url, { key: "pollo-wrong-key" }), video()));
    expect([error.status, error.retryable, error.message]).toEqual([401, true, "Pollo 401 UNAUTHORIZED: Invalid API key"]);
    expect(pollo.requests.at(-1)!.headers["x-api-key"]).toBe("pollo-wrong-key");
  });

  it("a provider_model_id that is not {brand}/{model} is refused before anything is sent", async () => {
    const before = pollo.requests.length;
    const error = await refusal(adapter.submitVideo!(callTo(pollo.url, { model: "pollo-v1-6" }), video()));
    expect([error.status, error.message]).toEqual([400, 'Pollo\'s provider_model_id must be "{brand}/{model}", not "pollo-v1-6"']);
    expect(pollo.requests.length).toBe(before);
  });

  it("an unknown task's 404 NOT_FOUND is an error with Pollo's words", async () => {
    const error = await refusal(adapter.poll(callTo(pollo.url), { jobId: "nope", pollingUrl: `${pollo.url}/generation/nope/status` }));
    expect([error.status, error.message]).toEqual([404, "Pollo 404 NOT_FOUND: Task not found"]);
  });
});

describe("the Pollo media adapter on answers the fake does not give", () => {
  let answers: { status: number; body: unknown }[] = [];
  let server: FakeUpstream;
  beforeAll(async () => {
    server = await startRecordingServer("/api/platform", (_request, res) => {
      const next = answers.shift() ?? { status: 500, body: { message: "no answer scripted" } };
      res.writeHead(next.status, { "content-type": "application/json" });
      res.end(JSON.stringify(next.body));
    });
  });
  afterAll(() => server.close());
  const poll = () => adapter.poll(callTo(server.url), { jobId: "t1", pollingUrl: `${server.url}/generation/t1/status` });

  it("names the fields of a BAD_REQUEST's zod issues", async () => {
    answers = [{ status: 400, body: { message: "Input validation failed", code: "BAD_REQUEST", issues: [{ path: ["input", "length"], message: "Invalid enum value" }] } }];
    const error = await refusal(adapter.submitVideo!(callTo(server.url), video({ length: 7 })));
    expect([error.status, error.retryable, error.message]).toEqual([400, false, "Pollo 400 BAD_REQUEST: Input validation failed (input.length: Invalid enum value)"]);
  });

  it("an envelope carrying another code than SUCCESS is that error (FORBIDDEN: no credits is 403)", async () => {
    answers = [{ status: 200, body: { code: "FORBIDDEN", message: "Not enough credits. Please add more." } }];
    const error = await refusal(adapter.submitVideo!(callTo(server.url), video()));
    expect([error.status, error.message]).toEqual([403, "Pollo FORBIDDEN: Not enough credits. Please add more."]);
  });

  it("a 503 and a 429 are retryable provider failures", async () => {
    answers = [
      { status: 503, body: { message: "Service Unavailable" } },
      { status: 429, body: { message: "Too many requests", code: "TOO_MANY_REQUESTS" } },
    ];
    for (const status of [503, 429]) {
      const error = await refusal(poll());
      expect([error.status, error.retryable]).toEqual([status, true]);
    }
  });

  it("several generations: running while one is unfinished, succeeded with every one once all succeed, failed when any failed", async () => {
    const gen = (id: string, status: string, url = "") => ({ id, status, failMsg: status === "failed" ? "Generation failed" : "", url, mediaType: "video", createdDate: "2026-11-01T00:00:00.000Z", updatedDate: "2026-11-01T00:00:00.000Z" });
    answers = [
      { status: 200, body: { code: "SUCCESS", message: "success", data: { taskId: "t1", credit: 20, generations: [gen("g1", "waiting"), gen("g2", "waiting")] } } },
      { status: 200, body: { code: "SUCCESS", message: "success", data: { taskId: "t1", credit: 20, generations: [gen("g1", "succeed", "https://cdn.example/g1.mp4"), gen("g2", "processing")] } } },
      { status: 200, body: { code: "SUCCESS", message: "success", data: { taskId: "t1", credit: 20, generations: [gen("g1", "succeed", "https://cdn.example/g1.mp4"), gen("g2", "succeed", "https://cdn.example/g2.mp4")] } } },
      { status: 200, body: { taskId: "t1", credit: 20, generations: [gen("g1", "succeed", "https://cdn.example/g1.mp4"), gen("g2", "failed")] } },
      { status: 200, body: { taskId: "t1", credit: 20, generations: [] } },
    ];
    expect(await poll()).toEqual({ state: "queued" });
    expect(await poll()).toEqual({ state: "running" });
    expect(await poll()).toEqual({
      state: "succeeded",
      outputs: [
        { url: "https://cdn.example/g1.mp4", upstreamId: "g1", mediaType: "video/mp4" },
        { url: "https://cdn.example/g2.mp4", upstreamId: "g2", mediaType: "video/mp4" },
      ],
    });
    expect(await poll()).toEqual({ state: "failed", code: "upstream_error", message: "Generation failed" });
    expect(await poll()).toEqual({ state: "queued" });
  });

  it("succeed without a url is a retryable shape error, not a success with nothing to store", async () => {
    answers = [{ status: 200, body: { taskId: "t1", generations: [{ id: "g1", status: "succeed", failMsg: "", url: "", mediaType: "video" }] } }];
    const error = await refusal(poll());
    expect([error.retryable, error.reason]).toEqual([true, "invalid_shape"]);
  });
});
