// Video tasks on the openai-compatible protocol (OpenAI's videos wire, the
// spec's progress style), through the core's task service against the OpenAI
// media fake: the SDK's multipart create, polls with progress, the MP4 fetched
// from /content with the key and served from the hosted copy byte for byte,
// also after the fake's content expired; failures and moderation with the
// provider's words and the hold returned.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../../core/config/load.ts";
import { CreateVideoRequestSchema, TaskStatus, VideoParametersSchema, VideoResultStyle } from "../../../gen/router/v1/tasks_pb.js";
import { FAIL_PROMPT, MODERATE_PROMPT, REFUSE_PROMPT, TINY_MP4, TINY_PNG, type FakeMediaUpstream } from "../../support/fake-media-common.ts";
import { OPENAI_MEDIA_KEY, OPENAI_MODERATION_MESSAGE, OPENAI_VIDEO_FAILURE_MESSAGE, startFakeOpenAiMedia } from "../../support/fake-media-openai.ts";
import { nanosOf } from "../../support/exact-money.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../support/harness.ts";

const MODEL = "openai/sora-2";
const PER_SECOND = "0.1";
const DONE = { timeout: 10_000, interval: 10 };

let fakeNow = Date.now();
let openai: FakeMediaUpstream;
let gateway: Gateway;
let images: http.Server;
let imageUrl: string;

beforeAll(async () => {
  openai = await startFakeOpenAiMedia({ now: () => fakeNow });
  const config = parseConfig(
    JSON.stringify({
      providers: [{ id: "openai", label: "OpenAI", protocol: "openai-compatible", base_url: openai.url, api_key_env: "OPENAI_API_KEY", timeout_ms: 5000 }],
      models: [
        {
          id: MODEL,
          name: "Sora 2",
          created: 1700000000,
          creator: "openai",
          context_length: 4096,
          max_completion_tokens: 1,
          input_modalities: ["text", "image"],
          output_modalities: ["video"],
          supported_parameters: [],
          supported_params_details: { seconds: ["4", "8", "12"], size: ["720x1280", "1280x720"] },
          providers: [{ provider: "openai", provider_model_id: "sora-2", pricing: { prompt: "0", completion: "0", video_output_per_second: PER_SECOND } }],
        },
      ],
      organizations: [{ id: "org_test", name: "Test", credits: "10", keys: [{ id: "key_test", env: "TEST_API_KEY" }] }],
      tasks: { fetch_private_urls: true, poll_interval_ms: 5, poll_max_interval_ms: 20, lease_seconds: 1, timeout_seconds: 30, assets_dir: mkdtempSync(join(tmpdir(), "router-assets-videos-")) },
    }),
  );
  gateway = await startGateway(config, { env: { OPENAI_API_KEY: OPENAI_MEDIA_KEY, TEST_API_KEY: TEST_KEY } });
  // An input image for image-to-video, at a URL the core can fetch.
  images = http.createServer((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(TINY_PNG));
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
  imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/input.png`;
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await new Promise((resolve) => images?.close(resolve));
});

const caller = { apiKey: TEST_KEY };
const createVideo = (video: MessageInitShape<typeof VideoParametersSchema>) => gateway.core.tasks.createVideo(create(CreateVideoRequestSchema, { caller, model: MODEL, video })).then(({ task }) => task);
const ended = (id: string) =>
  vi.waitFor(async () => {
    const task = await gateway.core.tasks.get(caller as never, id);
    expect([TaskStatus.SUCCEEDED, TaskStatus.FAILED]).toContain(task.status);
    return task;
  }, DONE);

async function balance() {
  await gateway.core.accounts.idle();
  return gateway.core.accounts.stores.credits.balance("org_test");
}

/** The multipart fields the fake received on a create. */
async function formOf(index: number) {
  const request = openai.requests.filter((entry) => entry.method === "POST" && entry.path === "/v1/videos")[index];
  const form = await new Response(request.raw, { headers: { "content-type": String(request.headers["content-type"]) } }).formData();
  return { headers: request.headers, fields: Object.fromEntries(form.entries()) };
}

describe("a video task on OpenAI's videos API", () => {
  it("is sent as the SDK sends it, polled with progress until completed, and its MP4 is served from the hosted copy byte for byte after the provider's content expired", async () => {
    const before = await balance();
    const created = await createVideo({ prompt: "a red square", seconds: 8, size: "1280x720", imageUrl });
    expect(created.resultStyle).toBe(VideoResultStyle.PROGRESS);

    const done = await ended(created.id);
    expect(done.status).toBe(TaskStatus.SUCCEEDED);
    expect(done.progress).toBe(1);
    expect(done.outputs).toHaveLength(1);
    expect(done.outputs[0]).toMatchObject({ mediaType: "video/mp4", upstreamId: done.upstreamJobId, durationSeconds: 8 });
    expect(openai.polls(done.upstreamJobId)).toBe(3);

    // The create: multipart/form-data, seconds as a string, the image as input_reference[image_url].
    const { headers, fields } = await formOf(0);
    expect(String(headers["content-type"])).toMatch(/^multipart\/form-data; boundary=/);
    expect(headers.authorization).toBe(`Bearer ${OPENAI_MEDIA_KEY}`);
    expect(fields).toEqual({ prompt: "a red square", model: "sora-2", seconds: "8", size: "1280x720", "input_reference[image_url]": imageUrl });
    // The content was fetched with the key.
    const content = openai.requests.find((entry) => entry.path === `/v1/videos/${done.upstreamJobId}/content`)!;
    expect(content.headers.authorization).toBe(`Bearer ${OPENAI_MEDIA_KEY}`);

    fakeNow += 61 * 60_000;
    const expired = await fetch(`${openai.url}/videos/${done.upstreamJobId}/content`, { headers: { authorization: `Bearer ${OPENAI_MEDIA_KEY}` } });
    expect(expired.status).toBe(404);
    const asset = await gateway.core.tasks.streamAsset(caller as never, created.id, 0);
    expect(asset.mediaType).toBe("video/mp4");
    expect(Buffer.concat(await asset.body.toArray()).equals(TINY_MP4)).toBe(true);

    // Charged the 8 seconds made, at the per-second price.
    expect(done.usage).toMatchObject({ videos: 1, videoSeconds: 8 });
    expect(await balance()).toBe(before - 8n * nanosOf(PER_SECOND));
  });

  it("shows progress while the provider works (0 to 1 from its 0 to 100)", async () => {
    const created = await createVideo({ prompt: "slowly [stall]", seconds: 4 });
    await vi.waitFor(async () => {
      const task = await gateway.core.tasks.get(caller as never, created.id);
      expect(task.status).toBe(TaskStatus.RUNNING);
      expect(task.progress).toBe(0.5);
    }, DONE);
  });

  it.each([
    { prompt: `a cat ${FAIL_PROMPT}`, code: "upstream_error", message: OPENAI_VIDEO_FAILURE_MESSAGE },
    { prompt: `a cat ${MODERATE_PROMPT}`, code: "content_moderated", message: OPENAI_MODERATION_MESSAGE },
    { prompt: `a cat ${REFUSE_PROMPT}`, code: "request_moderated", message: OPENAI_MODERATION_MESSAGE },
  ])("ends failed ($code) with the provider's words and returns the hold", async ({ prompt, code, message }) => {
    const before = await balance();
    const created = await createVideo({ prompt, seconds: 4 });
    const done = await ended(created.id);
    expect(done.status).toBe(TaskStatus.FAILED);
    expect(done.error).toMatchObject({ code, message });
    expect(await balance()).toBe(before);
  });
});
