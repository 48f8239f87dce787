// The Kling media adapter against the Kling fake (which verifies each request's
// HS256 JWT with jose): a text or image job over several polls, Kling's
// failure and moderation words, a refused prompt (1301), every public
// parameter in Kling's names and forms, and the refusals that end a task.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCatalogue } from "../../../../core/catalogue/catalogue.ts";
import { parseConfig } from "../../../../core/config/load.ts";
import { providerSchema, modelProviderSchema } from "../../../../core/config/schema.ts";
import { createKlingMediaAdapter } from "../../../../core/providers/kling/media.ts";
import type { JobState, MediaJobCall, SubmittedJob } from "../../../../core/providers/media-job.ts";
import { UpstreamError } from "../../../../core/providers/types.ts";
import { VideoParametersSchema, VideoResultStyle } from "../../../../gen/router/v1/tasks_pb.js";
import { FAIL_PROMPT, MODERATE_PROMPT, REFUSE_PROMPT, STALL_PROMPT, TINY_MP4, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { KLING_ACCESS_KEY, KLING_FAILURE_MESSAGE, KLING_MODERATION_MESSAGE, KLING_SECRET_KEY, startFakeKling } from "../../../support/fake-media-kling.ts";

const clock = { ms: Date.UTC(2026, 10, 1) };
const adapter = createKlingMediaAdapter({ now: () => clock.ms });
let kling: FakeMediaUpstream;

beforeAll(async () => {
  kling = await startFakeKling({ now: () => clock.ms });
});
afterAll(() => kling?.close());

function callFor(keys: { apiKey?: string; secretKey?: string } = {}): MediaJobCall {
  return {
    provider: providerSchema.parse({ id: "kling", label: "Kling", protocol: "kling", base_url: `${kling.url}/`, api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY" }),
    route: modelProviderSchema.parse({ provider: "kling", provider_model_id: "kling-v2-5-turbo", pricing: { prompt: "0", completion: "0", video_output_per_second: "0.042" } }),
    apiKey: keys.apiKey ?? KLING_ACCESS_KEY,
    secretKey: keys.secretKey ?? KLING_SECRET_KEY,
    signal: new AbortController().signal,
  };
}

const video = (fields: MessageInitShape<typeof VideoParametersSchema> & { prompt: string }) => create(VideoParametersSchema, fields);
const submit = (fields: Parameters<typeof video>[0], call = callFor()) => adapter.submitVideo!(call, video(fields));
const lastRequest = () => kling.requests.at(-1)!;

/** Polls until the job leaves queued and running, keeping every state seen. */
async function pollToEnd(job: SubmittedJob): Promise<JobState[]> {
  const states: JobState[] = [];
  for (let poll = 0; poll < 10; poll++) {
    const state = await adapter.poll(callFor(), job);
    states.push(state);
    if (state.state !== "queued" && state.state !== "running") return states;
  }
  return states;
}

describe("the Kling media adapter", () => {
  it("declares the parameters Kling carries and the data result style", () => {
    expect(adapter.videoParameters).toEqual(["image", "length", "aspectRatio", "mode", "generateAudio"]);
    expect(adapter.videoResultStyle).toBe(VideoResultStyle.DATA);
    expect(adapter.maxImagesPerJob).toBe(0);
    expect(adapter.submitImage).toBeUndefined();
  });

  it("creates a text2video job with a JWT the fake accepts, and polls it through submitted and processing to its video", async () => {
    const job = await submit({ prompt: "a wave at dusk" });
    expect(job.finished).toBeUndefined();
    expect(job.pollingUrl).toBe(`${kling.url}/v1/videos/text2video/${job.jobId}`);
    const created = kling.requests.find((request) => request.method === "POST" && request.path === "/v1/videos/text2video")!;
    expect(created.headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(created.body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "a wave at dusk" });

    const states = await pollToEnd(job);
    expect(states.map((state) => state.state)).toEqual(["queued", "running", "succeeded"]);
    expect(kling.polls(job.jobId)).toBe(3);
    const done = states.at(-1) as Extract<JobState, { state: "succeeded" }>;
    expect(done.outputs).toEqual([{ url: expect.stringContaining("/cdn/"), mediaType: "video/mp4", upstreamId: `${job.jobId}-video-0`, durationSeconds: 5.042 }]);
    const url = (done.outputs[0] as { url: string }).url;
    expect(Buffer.from(await (await fetch(url)).arrayBuffer())).toEqual(TINY_MP4);
  });

  it("sends an image as image2video and polls it under that kind", async () => {
    const job = await submit({ prompt: "the cat turns", imageUrl: "https://example.com/cat.png", length: 10, mode: "pro" });
    expect(lastRequest()).toMatchObject({ path: "/v1/videos/image2video", body: { model_name: "kling-v2-5-turbo", prompt: "the cat turns", image: "https://example.com/cat.png", duration: "10", mode: "pro" } });
    expect(job.pollingUrl).toBe(`${kling.url}/v1/videos/image2video/${job.jobId}`);
    const done = (await pollToEnd(job)).at(-1) as Extract<JobState, { state: "succeeded" }>;
    expect(done.outputs[0].durationSeconds).toBe(10.042);
  });

  it("maps each public parameter onto Kling's field and value form", async () => {
    await submit({ prompt: "p", length: 5, aspectRatio: "9:16", mode: "std", generateAudio: true });
    expect(lastRequest().body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "p", duration: "5", aspect_ratio: "9:16", mode: "std", sound: "on" });
    await submit({ prompt: "p", generateAudio: false });
    expect(lastRequest().body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "p", sound: "off" });
    // Parameters Kling has no field for are never sent, whatever the task holds.
    await submit({ prompt: "p", seconds: 8, size: "1280x720", resolution: "1080p", seed: 7n });
    expect(lastRequest().body).toEqual({ model_name: "kling-v2-5-turbo", prompt: "p" });
  });

  it("refuses aspectRatio with an image before calling Kling (image2video takes the image's frame)", async () => {
    const before = kling.requests.length;
    const refusal = await submit({ prompt: "p", imageUrl: "https://example.com/cat.png", aspectRatio: "16:9" }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UpstreamError);
    expect(refusal).toMatchObject({ status: 400, retryable: false, message: expect.stringContaining("aspectRatio") });
    expect(kling.requests.length).toBe(before);
  });

  it("carries a value Kling refuses as Kling's 400 with its words (the task service ends the task)", async () => {
    const refusal = await submit({ prompt: "p", length: 7 }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 400, message: "Kling 400 (code 1201): duration must be one of 5, 10" });
  });

  it("fails with Kling's task_status_msg: upstream_error, or content_moderated when its risk control stopped the output", async () => {
    const failed = (await pollToEnd(await submit({ prompt: `x ${FAIL_PROMPT}` }))).at(-1);
    expect(failed).toEqual({ state: "failed", code: "upstream_error", message: KLING_FAILURE_MESSAGE });
    const moderated = (await pollToEnd(await submit({ prompt: `x ${MODERATE_PROMPT}` }))).at(-1);
    expect(moderated).toEqual({ state: "failed", code: "content_moderated", message: KLING_MODERATION_MESSAGE });
    const stalled = await pollToEnd(await submit({ prompt: `x ${STALL_PROMPT}` }));
    expect(stalled.at(-1)).toEqual({ state: "running" });
  });

  it("answers a prompt refused by Kling's content security (1301) as a finished request_moderated job", async () => {
    const job = await submit({ prompt: `x ${REFUSE_PROMPT}` });
    expect(job.finished).toEqual({ state: "failed", code: "request_moderated", message: "Kling 400 (code 1301): Trigger the content security policy of the platform" });
    // Kling made no task: the id is the router's own, a new one per refusal (the provider-prefixed index key of one refusal never names another).
    expect(job.jobId).toMatch(/^refused_[0-9a-f]{32}$/);
    expect((await submit({ prompt: `y ${REFUSE_PROMPT}` })).jobId).not.toBe(job.jobId);
  });

  it("signs with the secret key and names the access key as issuer: either wrong is Kling's 401", async () => {
    const refusal = await submit({ prompt: "p" }, callFor({ secretKey: "not-the-secret" })).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 401, message: "Kling 401 (code 1002): Authorization is invalid" });
    const wrongIssuer = await submit({ prompt: "p" }, callFor({ apiKey: "another-access-key" })).catch((error: unknown) => error);
    expect(wrongIssuer).toMatchObject({ status: 401 });
  });

  it("dates each token by its clock: a token from a clock 31 minutes behind is expired (1004)", async () => {
    const late = createKlingMediaAdapter({ now: () => clock.ms - 31 * 60_000 });
    const refusal = await late.submitVideo!(callFor(), video({ prompt: "p" })).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 401, message: "Kling 401 (code 1004): Authorization has expired" });
  });

  it("ends a job Kling no longer knows (1203) failed, and throws other poll errors to be retried", async () => {
    const gone = await adapter.poll(callFor(), { jobId: "nope", pollingUrl: `${kling.url}/v1/videos/text2video/nope` });
    expect(gone).toEqual({ state: "failed", code: "upstream_error", message: "Kling no longer knows the task (Kling 404 (code 1203): Requested resource does not exist)." });
    const unreachable = await adapter.poll(callFor(), { jobId: "x", pollingUrl: "http://127.0.0.1:1/v1/videos/text2video/x" }).catch((error: unknown) => error);
    expect(unreachable).toMatchObject({ retryable: true, reason: "connection_failed" });
  });
});

describe("a kling provider's two keys", () => {
  const provider = { id: "kling", label: "Kling", protocol: "kling", base_url: "https://api-singapore.klingai.com" };

  it("are both required by the configuration", () => {
    expect(providerSchema.safeParse({ ...provider, api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY" }).success).toBe(true);
    const noSecret = providerSchema.safeParse({ ...provider, api_key_env: "KLING_ACCESS_KEY" });
    expect(noSecret.error?.issues).toEqual([expect.objectContaining({ path: ["secret_key_env"], message: expect.stringContaining("required for protocol kling") })]);
    expect(providerSchema.safeParse({ ...provider, secret_key_env: "KLING_SECRET_KEY" }).error?.issues[0].path).toEqual(["api_key_env"]);
  });

  it("are read from the environment into the route, which is enabled only with both", () => {
    const config = parseConfig(
      JSON.stringify({
        providers: [{ ...provider, api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY" }],
        models: [
          {
            id: "kling/kling-v2-5-turbo", name: "Kling 2.5 Turbo", created: 0, creator: "kling", context_length: 2500, max_completion_tokens: 1,
            input_modalities: ["text"], output_modalities: ["video"], supported_parameters: [],
            providers: [{ provider: "kling", provider_model_id: "kling-v2-5-turbo", pricing: { prompt: "0", completion: "0" } }],
          },
        ],
      }),
    );
    const routeWith = (env: Record<string, string>) => createCatalogue(config, env).get("kling/kling-v2-5-turbo")!.routes[0];
    expect(routeWith({ KLING_ACCESS_KEY: "ak", KLING_SECRET_KEY: "sk" })).toMatchObject({ enabled: true, apiKey: "ak", secretKey: "sk" });
    expect(routeWith({ KLING_ACCESS_KEY: "ak" }).enabled).toBe(false);
    expect(routeWith({ KLING_ACCESS_KEY: "ak", KLING_SECRET_KEY: "" }).enabled).toBe(false);
    expect(routeWith({ KLING_SECRET_KEY: "sk" }).enabled).toBe(false);
  });
});
