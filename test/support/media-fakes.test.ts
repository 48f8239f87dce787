// The fake media upstreams behave as docs/media-protocols.md says the real
// providers do: each refuses a request without its real credential, walks a job
// through its states one poll at a time (counting the polls), ends a job failed or
// moderated in the provider's own shape when the prompt asks, and serves tiny valid
// PNG and MP4 files from URLs that stop working when their time is up.
import { inflateSync } from "node:zlib";
import { SignJWT } from "jose";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BFL_COST, BFL_KEY, startFakeBfl } from "./fake-media-bfl.ts";
import { FAIL_PROMPT, type FakeMediaUpstream, MODERATE_PROMPT, REFUSE_PROMPT, STALL_PROMPT, TINY_MP4, TINY_PNG } from "./fake-media-common.ts";
import { KLING_ACCESS_KEY, KLING_FAILURE_MESSAGE, KLING_MODERATION_MESSAGE, KLING_SECRET_KEY, klingToken, startFakeKling } from "./fake-media-kling.ts";
import { DALLE_MODERATION_MESSAGE, OPENAI_MEDIA_KEY, OPENAI_MODERATION_MESSAGE, startFakeOpenAiMedia } from "./fake-media-openai.ts";
import { POLLO_FAILURE_MESSAGE, POLLO_KEY, POLLO_MODERATION_MESSAGE, startFakePollo } from "./fake-media-pollo.ts";
import { startFakeVertex, VERTEX_FAILURE_MESSAGE, VERTEX_TOKEN } from "./fake-media-vertex.ts";

type Json = Record<string, any>;

interface Answer {
  status: number;
  contentType: string;
  bytes: Buffer;
  json: Json;
}

async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  const headers = body === undefined ? init.headers : { "content-type": "application/json", ...init.headers };
  const response = await fetch(url, { method: init.method ?? (body === undefined ? "GET" : "POST"), headers, body });
  const bytes = Buffer.from(await response.arrayBuffer());
  const contentType = response.headers.get("content-type") ?? "";
  return { status: response.status, contentType, bytes, json: contentType.startsWith("application/json") ? (JSON.parse(bytes.toString("utf8")) as Json) : {} };
}

/** A clock the test moves by hand, so URLs expire without waiting. */
function handClock() {
  const clock = { ms: Date.UTC(2026, 10, 1), now: () => clock.ms };
  return clock;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

describe("the tiny media files", () => {
  it("TINY_PNG is a 1x1 PNG whose chunks carry right CRCs and whose pixel inflates", () => {
    expect(TINY_PNG.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const types: string[] = [];
    let offset = 8;
    let pixels = Buffer.alloc(0);
    while (offset < TINY_PNG.length) {
      const length = TINY_PNG.readUInt32BE(offset);
      const type = TINY_PNG.toString("ascii", offset + 4, offset + 8);
      const data = TINY_PNG.subarray(offset + 8, offset + 8 + length);
      const crc = TINY_PNG.readUInt32BE(offset + 8 + length);
      expect(crc).toBe(crcOf(TINY_PNG.subarray(offset + 4, offset + 8 + length)));
      if (type === "IHDR") expect([data.readUInt32BE(0), data.readUInt32BE(4)]).toEqual([1, 1]);
      if (type === "IDAT") pixels = inflateSync(data);
      types.push(type);
      offset += 12 + length;
    }
    expect(types).toEqual(["IHDR", "IDAT", "IEND"]);
    expect(pixels).toEqual(Buffer.from([0, 255, 0, 0]));
  });

  it("TINY_MP4 is a sequence of well-sized boxes: ftyp (isom), moov with mvhd, mdat", () => {
    const boxes: string[] = [];
    for (let offset = 0; offset < TINY_MP4.length; offset += TINY_MP4.readUInt32BE(offset)) {
      boxes.push(TINY_MP4.toString("ascii", offset + 4, offset + 8));
      expect(TINY_MP4.readUInt32BE(offset)).toBeGreaterThanOrEqual(8);
    }
    expect(boxes).toEqual(["ftyp", "moov", "mdat"]);
    expect(TINY_MP4.toString("ascii", 8, 12)).toBe("isom");
    const moov = TINY_MP4.indexOf("moov");
    expect(TINY_MP4.toString("ascii", moov + 8, moov + 12)).toBe("mvhd");
  });
});

function crcOf(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

describe("the fake OpenAI media upstream", () => {
  const clock = handClock();
  let upstream: FakeMediaUpstream;
  let sdk: OpenAI;
  beforeAll(async () => {
    upstream = await startFakeOpenAiMedia({ now: clock.now });
    sdk = new OpenAI({ apiKey: OPENAI_MEDIA_KEY, baseURL: upstream.url, maxRetries: 0 });
  });
  afterAll(() => upstream.close());

  const KEY = { authorization: `Bearer ${OPENAI_MEDIA_KEY}` };
  const image = (body: Json, headers: Record<string, string> = KEY) => call(`${upstream.url}/images/generations`, { headers, body });

  it("refuses a request without the key, or with another, as OpenAI does (401)", async () => {
    const none = await image({ model: "dall-e-3", prompt: "a cat" }, {});
    expect(none.status).toBe(401);
    expect(none.json.error).toMatchObject({ type: "invalid_request_error", code: null });
    const wrong = await image({ model: "dall-e-3", prompt: "a cat" }, { authorization: "Bearer sk-other" });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.code).toBe("invalid_api_key");
    expect((await call(`${upstream.url}/videos/video_fake0001`)).status).toBe(401);
  });

  it("answers a dall-e image as a URL by default, dead (Azure's 403) an hour later", async () => {
    const answer = await image({ model: "dall-e-3", prompt: "a cat" });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ created: Math.floor(clock.ms / 1000), data: [{ url: expect.stringContaining("/cdn/"), revised_prompt: "a cat" }] });
    const file = await call(answer.json.data[0].url);
    expect([file.status, file.contentType]).toEqual([200, "image/png"]);
    expect(file.bytes).toEqual(TINY_PNG);
    clock.ms += 60 * MINUTE;
    const expired = await call(answer.json.data[0].url);
    expect(expired.status).toBe(403);
    expect(expired.bytes.toString()).toContain("AuthenticationFailed");
  });

  it("answers a gpt-image model with b64_json and usage, through the official SDK", async () => {
    const answer = await sdk.images.generate({ model: "gpt-image-1", prompt: "a red dot", n: 2 });
    expect(answer.data?.map((item) => item.b64_json)).toEqual([TINY_PNG.toString("base64"), TINY_PNG.toString("base64")]);
    expect(answer.usage).toMatchObject({ input_tokens: 3, output_tokens: 544, total_tokens: 547 });
    const asked = await image({ model: "gpt-image-1", prompt: "a red dot", response_format: "url" });
    expect([asked.status, asked.json.error.code, asked.json.error.param]).toEqual([400, "unknown_parameter", "response_format"]);
  });

  it("checks n at its edges (1 and 10 taken, 0 and 11 refused)", async () => {
    expect((await image({ model: "dall-e-2", prompt: "x", n: 1, response_format: "b64_json" })).status).toBe(200);
    expect((await image({ model: "dall-e-2", prompt: "x", n: 10, response_format: "b64_json" })).json.data).toHaveLength(10);
    expect((await image({ model: "dall-e-2", prompt: "x", n: 0 })).json.error).toMatchObject({ param: "n", code: "integer_below_min_value" });
    expect((await image({ model: "dall-e-2", prompt: "x", n: 11 })).json.error).toMatchObject({ param: "n", code: "integer_above_max_value" });
  });

  it("refuses a moderated image prompt (400: moderation_blocked for GPT image models, content_policy_violation for DALL-E) and fails on request (500)", async () => {
    const moderated = await image({ model: "gpt-image-1", prompt: `a cat ${MODERATE_PROMPT}` });
    expect(moderated.status).toBe(400);
    expect(moderated.json.error).toEqual({
      message: `${OPENAI_MODERATION_MESSAGE} safety_violations=[sexual].`,
      type: "image_generation_user_error",
      param: null,
      code: "moderation_blocked",
      moderation_details: { moderation_stage: "output", categories: ["sexual"] },
    });
    expect((await image({ model: "gpt-image-1", prompt: `x ${REFUSE_PROMPT}` })).json.error.moderation_details.moderation_stage).toBe("input");
    expect((await image({ model: "dall-e-3", prompt: `x ${MODERATE_PROMPT}` })).json.error).toMatchObject({ message: DALLE_MODERATION_MESSAGE, code: "content_policy_violation" });
    const failed = await image({ model: "gpt-image-1", prompt: `a cat ${FAIL_PROMPT}` });
    expect([failed.status, failed.json.error.type]).toEqual([500, "server_error"]);
  });

  it("runs a video created with the SDK's multipart body: queued, in_progress, completed, then the MP4 with the key", async () => {
    const created = await sdk.videos.create({ model: "sora-2", prompt: "a wave", seconds: "8", size: "1280x720" });
    expect(String(upstream.requests.at(-1)!.headers["content-type"])).toMatch(/^multipart\/form-data/);
    expect(created).toMatchObject({ object: "video", status: "queued", progress: 0, seconds: "8", size: "1280x720", completed_at: null, error: null });
    const early = await call(`${upstream.url}/videos/${created.id}/content`, { headers: KEY });
    expect(early.status).toBe(404);
    const seen = [];
    for (let poll = 0; poll < 3; poll++) {
      const video = await sdk.videos.retrieve(created.id);
      seen.push([video.status, video.progress]);
    }
    expect(seen).toEqual([["queued", 0], ["in_progress", 50], ["completed", 100]]);
    expect(upstream.polls(created.id)).toBe(3);
    const content = await sdk.videos.downloadContent(created.id);
    expect(content.headers.get("content-type")).toBe("video/mp4");
    expect(Buffer.from(await content.arrayBuffer())).toEqual(TINY_MP4);
    expect((await call(`${upstream.url}/videos/${created.id}/content`)).status).toBe(401);
    expect(upstream.polls(created.id)).toBe(3);
  });

  it("ends a video failed or moderated in the Video object's error, refuses at creation, and expires the content", async () => {
    const create = (prompt: string) => call(`${upstream.url}/videos`, { headers: KEY, body: { model: "sora-2", prompt } });
    const lastPoll = async (id: string) => {
      for (let poll = 0; poll < 2; poll++) await call(`${upstream.url}/videos/${id}`, { headers: KEY });
      return (await call(`${upstream.url}/videos/${id}`, { headers: KEY })).json;
    };
    expect(await lastPoll((await create(`x ${FAIL_PROMPT}`)).json.id)).toMatchObject({ status: "failed", error: { code: "video_generation_failed" } });
    expect(await lastPoll((await create(`x ${MODERATE_PROMPT}`)).json.id)).toMatchObject({ status: "failed", error: { code: "moderation_blocked" } });
    expect(await lastPoll((await create(`x ${STALL_PROMPT}`)).json.id)).toMatchObject({ status: "in_progress" });
    const refused = await create(`x ${REFUSE_PROMPT}`);
    expect([refused.status, refused.json.error.code]).toEqual([400, "moderation_blocked"]);
    expect((await create("x")).json.seconds).toBe("4");
    expect((await call(`${upstream.url}/videos`, { headers: KEY, body: { prompt: "x", seconds: "5" } })).json.error).toMatchObject({ param: "seconds", code: "invalid_value" });

    const done = await lastPoll((await create("a wave")).json.id);
    expect(done.expires_at - done.completed_at).toBe(3600);
    clock.ms += 60 * MINUTE;
    expect((await call(`${upstream.url}/videos/${done.id}/content`, { headers: KEY })).status).toBe(404);
  });
});

describe("the fake BFL upstream", () => {
  const clock = handClock();
  let upstream: FakeMediaUpstream;
  beforeAll(async () => {
    upstream = await startFakeBfl({ now: clock.now });
  });
  afterAll(() => upstream.close());

  const KEY = { "x-key": BFL_KEY };
  const create = (prompt: string, headers: Record<string, string> = KEY) => call(`${upstream.url}/v1/flux-pro-1.1`, { headers, body: { prompt, width: 1024, height: 768 } });
  const poll = (pollingUrl: string) => call(pollingUrl, { headers: KEY });

  it("refuses a request without x-key or with another key (403)", async () => {
    expect((await create("a cat", {})).status).toBe(403);
    expect((await create("a cat", { "x-key": "other" })).json).toEqual({ detail: "Invalid API key" });
    const { json } = await create("a cat");
    expect((await call(json.polling_url)).status).toBe(403);
  });

  it("answers {id, polling_url}, then Pending, Pending, Ready with result.sample, a PNG dead (403) after 10 minutes", async () => {
    const created = await create("a cat");
    expect(created.json).toEqual({ id: expect.any(String), polling_url: `${upstream.origin}/v1/get_result?id=${created.json.id}`, cost: BFL_COST, input_mp: 0, output_mp: 0.786432 });
    const statuses = [];
    let last: Json = {};
    for (let count = 0; count < 3; count++) {
      last = (await poll(created.json.polling_url)).json;
      statuses.push(last.status);
    }
    expect(statuses).toEqual(["Pending", "Pending", "Ready"]);
    expect(upstream.polls(created.json.id)).toBe(3);
    expect(last).toMatchObject({ id: created.json.id, result: { sample: expect.stringContaining("/cdn/"), prompt: "a cat" } });
    const file = await call(last.result.sample);
    expect(file.bytes).toEqual(TINY_PNG);
    clock.ms += 10 * MINUTE - 1;
    expect((await call(last.result.sample)).status).toBe(200);
    clock.ms += 1;
    expect((await call(last.result.sample)).status).toBe(403);
  });

  it("ends Error, Content Moderated at the finishing poll, Request Moderated at the first, and says Task not found", async () => {
    const finalStatus = async (prompt: string, polls: number) => {
      const { json } = await create(prompt);
      let last: Json = {};
      for (let count = 0; count < polls; count++) last = (await poll(json.polling_url)).json;
      return last;
    };
    expect(await finalStatus(`x ${FAIL_PROMPT}`, 3)).toMatchObject({ status: "Error", result: null });
    expect(await finalStatus(`x ${MODERATE_PROMPT}`, 2)).toMatchObject({ status: "Pending" });
    expect(await finalStatus(`x ${MODERATE_PROMPT}`, 3)).toMatchObject({ status: "Content Moderated", result: null });
    expect(await finalStatus(`x ${REFUSE_PROMPT}`, 1)).toMatchObject({ status: "Request Moderated", result: null });
    expect(await finalStatus(`x ${STALL_PROMPT}`, 6)).toMatchObject({ status: "Pending" });
    expect((await poll(`${upstream.origin}/v1/get_result?id=nope`)).json).toMatchObject({ id: "nope", status: "Task not found" });
    expect((await call(`${upstream.url}/v1/flux-dev`, { headers: KEY, body: {} })).status).toBe(422);
  });

  it("can name another host in polling_url, as BFL's global endpoint does", async () => {
    const elsewhere = await startFakeBfl({ pollingHost: "localhost" });
    try {
      const { json } = await call(`${elsewhere.url}/v1/flux-dev`, { headers: KEY, body: { prompt: "p" } });
      expect(new URL(json.polling_url).hostname).toBe("localhost");
      expect((await call(json.polling_url, { headers: KEY })).json.status).toBe("Pending");
      expect(elsewhere.polls(json.id)).toBe(1);
    } finally {
      await elsewhere.close();
    }
  });

  it("takes its pace from the options", async () => {
    const slow = await startFakeBfl({ runningAtPoll: 3, doneAtPoll: 5 });
    try {
      const { json } = await call(`${slow.url}/v1/flux-dev`, { headers: KEY, body: { prompt: "p" } });
      const statuses = [];
      for (let count = 0; count < 5; count++) statuses.push((await call(json.polling_url, { headers: KEY })).json.progress);
      expect(statuses).toEqual([0, 0, 0.5, 0.5, 1]);
    } finally {
      await slow.close();
    }
  });
});

describe("the fake Pollo upstream", () => {
  const clock = handClock();
  let upstream: FakeMediaUpstream;
  beforeAll(async () => {
    upstream = await startFakePollo({ now: clock.now });
  });
  afterAll(() => upstream.close());

  const KEY = { "x-api-key": POLLO_KEY };
  /** The answer's task fields, out of the {code, message, data} envelope. */
  const unwrapped = (answer: Answer) => ({ ...answer, json: answer.status === 200 ? answer.json.data : answer.json });
  const create = async (prompt: string, headers: Record<string, string> = KEY) => unwrapped(await call(`${upstream.url}/generation/kling-ai/kling-v2-1`, { headers, body: { input: { prompt, length: 5 } } }));
  const status = async (taskId: string) => unwrapped(await call(`${upstream.url}/generation/${taskId}/status`, { headers: KEY }));

  it("refuses a request without x-api-key or with another key (401 UNAUTHORIZED)", async () => {
    expect((await create("a cat", {})).json).toEqual({ message: "Invalid API key", code: "UNAUTHORIZED" });
    expect((await create("a cat", { "x-api-key": "other" })).status).toBe(401);
  });

  it("answers a taskId, then waiting, processing, succeed with each generation's fields; the MP4 404s after 14 days", async () => {
    const created = await create("a wave");
    expect(created.json).toEqual({ taskId: expect.any(String), status: "waiting" });
    const seen = [];
    let last: Json = {};
    for (let count = 0; count < 3; count++) {
      last = (await status(created.json.taskId)).json;
      seen.push(last.generations[0].status);
    }
    expect(seen).toEqual(["waiting", "processing", "succeed"]);
    expect(upstream.polls(created.json.taskId)).toBe(3);
    expect(last).toEqual({
      taskId: created.json.taskId,
      credit: expect.any(Number),
      generations: [{ id: expect.any(String), status: "succeed", failMsg: "", url: expect.stringContaining("/cdn/"), mediaType: "video", createdDate: new Date(clock.ms).toISOString(), updatedDate: new Date(clock.ms).toISOString() }],
    });
    expect((await call(last.generations[0].url)).bytes).toEqual(TINY_MP4);
    clock.ms += 14 * DAY;
    expect((await call(last.generations[0].url)).status).toBe(404);
  });

  it("wraps successful answers in {code: SUCCESS, message, data}, or answers them flat when asked", async () => {
    const wrapped = await call(`${upstream.url}/generation/pollo/pollo-v1-6`, { headers: KEY, body: { input: { prompt: "p" } } });
    expect(wrapped.json).toEqual({ code: "SUCCESS", message: "success", data: { taskId: expect.any(String), status: "waiting" } });
    const flat = await startFakePollo({ envelope: false });
    try {
      const created = await call(`${flat.url}/generation/pollo/pollo-v1-6`, { headers: KEY, body: { input: { prompt: "p" } } });
      expect(created.json).toEqual({ taskId: expect.any(String), status: "waiting" });
      expect((await call(`${flat.url}/generation/${created.json.taskId}/status`, { headers: KEY })).json.generations[0].status).toBe("waiting");
    } finally {
      await flat.close();
    }
  });

  it("ends failed with failMsg for a failure and for moderation; 404 NOT_FOUND for an unknown task; 400 without input.prompt", async () => {
    const last = async (prompt: string) => {
      const { json } = await create(prompt);
      for (let count = 0; count < 2; count++) await status(json.taskId);
      return (await status(json.taskId)).json.generations[0];
    };
    expect(await last(`x ${FAIL_PROMPT}`)).toMatchObject({ status: "failed", failMsg: POLLO_FAILURE_MESSAGE, url: "" });
    expect(await last(`x ${MODERATE_PROMPT}`)).toMatchObject({ status: "failed", failMsg: POLLO_MODERATION_MESSAGE });
    expect(await last(`x ${STALL_PROMPT}`)).toMatchObject({ status: "processing" });
    expect((await status("nope")).json).toMatchObject({ code: "NOT_FOUND" });
    const invalid = await call(`${upstream.url}/generation/kling-ai/kling-v2-1`, { headers: KEY, body: { prompt: "not inside input" } });
    expect([invalid.status, invalid.json.code, invalid.json.issues[0].path]).toEqual([400, "BAD_REQUEST", ["input", "prompt"]]);
  });

  it("refuses a body field Pollo does not take, as its validation does (a renamed field is not ignored)", async () => {
    const renamed = await call(`${upstream.url}/generation/kling-ai/kling-v2-1`, { headers: KEY, body: { input: { prompt: "a cat", lenght: 5 } } });
    expect([renamed.status, renamed.json.code, renamed.json.issues[0]]).toEqual([400, "BAD_REQUEST", expect.objectContaining({ code: "unrecognized_keys", keys: ["lenght"], path: ["input"] })]);
    const outside = await call(`${upstream.url}/generation/kling-ai/kling-v2-1`, { headers: KEY, body: { input: { prompt: "a cat" }, webhook_url: "https://example.com" } });
    expect([outside.status, outside.json.issues[0].keys]).toEqual([400, ["webhook_url"]]);
  });
});

describe("the fake Kling upstream", () => {
  const clock = handClock();
  let upstream: FakeMediaUpstream;
  beforeAll(async () => {
    upstream = await startFakeKling({ now: clock.now });
  });
  afterAll(() => upstream.close());

  const bearer = async (token?: Promise<string>) => ({ authorization: `Bearer ${await (token ?? klingToken(KLING_ACCESS_KEY, KLING_SECRET_KEY, clock.ms))}` });
  const create = async (prompt: string, kind = "text2video", extra: Json = {}) => call(`${upstream.url}/v1/videos/${kind}`, { headers: await bearer(), body: { model_name: "kling-v2-1", prompt, duration: "5", mode: "std", ...extra } });
  const query = async (kind: string, taskId: string) => call(`${upstream.url}/v1/videos/${kind}/${taskId}`, { headers: await bearer() });

  it("verifies the HS256 JWT: 1001 without it, 1002 when it is not Kling's (secret, issuer, algorithm, no nbf), 1003 before nbf, 1004 after exp", async () => {
    const body = { prompt: "a cat" };
    const url = `${upstream.url}/v1/videos/text2video`;
    const codeOf = async (headers: Record<string, string>) => {
      const answer = await call(url, { headers, body });
      expect(answer.status).toBe(401);
      return answer.json.code;
    };
    expect(await codeOf({})).toBe(1001);
    expect(await codeOf({ authorization: "Bearer not-a-jwt" })).toBe(1002);
    expect(await codeOf(await bearer(klingToken(KLING_ACCESS_KEY, "another-secret", clock.ms)))).toBe(1002);
    expect(await codeOf(await bearer(klingToken("another-access-key", KLING_SECRET_KEY, clock.ms)))).toBe(1002);
    expect(await codeOf(await bearer(klingToken(KLING_ACCESS_KEY, KLING_SECRET_KEY, clock.ms + 60_000)))).toBe(1003);
    expect(await codeOf(await bearer(klingToken(KLING_ACCESS_KEY, KLING_SECRET_KEY, clock.ms - 31 * MINUTE)))).toBe(1004);
    const secret = new TextEncoder().encode(KLING_SECRET_KEY);
    const seconds = Math.floor(clock.ms / 1000);
    const withoutNbf = new SignJWT({}).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setIssuer(KLING_ACCESS_KEY).setExpirationTime(seconds + 1800).sign(secret);
    expect(await codeOf(await bearer(withoutNbf))).toBe(1002);
    const hs512 = new SignJWT({}).setProtectedHeader({ alg: "HS512", typ: "JWT" }).setIssuer(KLING_ACCESS_KEY).setExpirationTime(seconds + 1800).setNotBefore(seconds - 5).sign(secret);
    expect(await codeOf(await bearer(hs512))).toBe(1002);
    expect((await call(url, { headers: await bearer(), body })).json).toMatchObject({ code: 0, message: "SUCCEED" });
  });

  it("answers data.task_id, then submitted, processing, succeed with task_result.videos; the MP4 404s after 30 days", async () => {
    const created = await create("a wave");
    expect(created.json).toMatchObject({ code: 0, request_id: expect.any(String), data: { task_id: expect.any(String), task_status: "submitted", created_at: clock.ms } });
    const taskId = created.json.data.task_id;
    expect((await query("image2video", taskId)).json).toMatchObject({ code: 1203 });
    const seen = [];
    let last: Json = {};
    for (let count = 0; count < 3; count++) {
      last = (await query("text2video", taskId)).json.data;
      seen.push(last.task_status);
    }
    expect(seen).toEqual(["submitted", "processing", "succeed"]);
    expect(upstream.polls(taskId)).toBe(3);
    expect(last.task_result.videos).toEqual([{ id: expect.any(String), url: expect.stringContaining("/cdn/"), duration: "5.042" }]);
    expect((await call(last.task_result.videos[0].url)).bytes).toEqual(TINY_MP4);
    clock.ms += 30 * DAY;
    expect((await call(last.task_result.videos[0].url)).status).toBe(404);
  });

  it("ends failed with task_status_msg, refuses a policy-breaking prompt with 1301, and checks the body", async () => {
    const last = async (prompt: string) => {
      const taskId = (await create(prompt)).json.data.task_id;
      for (let count = 0; count < 2; count++) await query("text2video", taskId);
      return (await query("text2video", taskId)).json.data;
    };
    expect(await last(`x ${FAIL_PROMPT}`)).toMatchObject({ task_status: "failed", task_status_msg: KLING_FAILURE_MESSAGE });
    expect(await last(`x ${MODERATE_PROMPT}`)).toMatchObject({ task_status: "failed", task_status_msg: KLING_MODERATION_MESSAGE });
    expect(await last(`x ${STALL_PROMPT}`)).toMatchObject({ task_status: "processing" });
    const refused = await create(`x ${REFUSE_PROMPT}`);
    expect([refused.status, refused.json.code]).toEqual([400, 1301]);
    expect((await create("x", "text2video", { duration: "7" })).json.code).toBe(1201);
    expect((await create("x", "text2video", { sound: "loud" })).json.code).toBe(1201);
    expect((await create("x", "text2video", { aspect_ratio: "4:3" })).json.code).toBe(1201);
    expect((await create("x", "image2video")).json.code).toBe(1201);
    expect((await create("x", "image2video", { image: "https://example.com/a.png" })).json.data.task_status).toBe("submitted");
  });

  it("refuses a body field Kling does not take for the kind (a renamed field is not ignored)", async () => {
    expect((await create("x", "text2video", { durations: "5" })).json).toMatchObject({ code: 1201, message: "Unknown parameter: durations" });
    // image2video has no aspect_ratio, text2video no image.
    expect((await create("x", "image2video", { image: "https://example.com/a.png", aspect_ratio: "16:9" })).json.code).toBe(1201);
    expect((await create("x", "text2video", { image: "https://example.com/a.png" })).json.code).toBe(1201);
  });
});

describe("the fake Vertex (Veo) upstream", () => {
  let upstream: FakeMediaUpstream;
  beforeAll(async () => {
    upstream = await startFakeVertex();
  });
  afterAll(() => upstream.close());

  const KEY = { authorization: `Bearer ${VERTEX_TOKEN}` };
  const MODEL = "veo-3.0-generate-001";
  const predict = (prompt: string, parameters: Json = {}, headers: Record<string, string> = KEY) =>
    call(`${upstream.url}/publishers/google/models/${MODEL}:predictLongRunning`, { headers, body: { instances: [{ prompt }], parameters: { durationSeconds: 8, sampleCount: 1, ...parameters } } });
  const fetchOperation = (operationName: string, model = MODEL) => call(`${upstream.url}/publishers/google/models/${model}:fetchPredictOperation`, { headers: KEY, body: { operationName } });

  it("refuses a field Veo's messages do not have, as Google's JSON mapping does (a renamed field is not ignored)", async () => {
    const parameter = await predict("a cat", { durationSecond: 8 });
    expect([parameter.status, parameter.json.error.status, parameter.json.error.message]).toEqual([400, "INVALID_ARGUMENT", `Invalid JSON payload received. Unknown name "durationSecond" at 'parameters': Cannot find field.`]);
    const url = `${upstream.url}/publishers/google/models/${MODEL}:predictLongRunning`;
    const image = await call(url, { headers: KEY, body: { instances: [{ prompt: "a cat", image: { bytesBase64: "AAAA", mimeType: "image/png" } }] } });
    expect(image.json.error.message).toBe(`Invalid JSON payload received. Unknown name "bytesBase64" at 'instances[0].image': Cannot find field.`);
    const operation = await call(`${upstream.url}/publishers/google/models/${MODEL}:fetchPredictOperation`, { headers: KEY, body: { operation: "x" } });
    expect([operation.status, operation.json.error.status]).toEqual([400, "INVALID_ARGUMENT"]);
  });

  it("refuses a request without the bearer token or with another (401 UNAUTHENTICATED)", async () => {
    const none = await predict("a cat", {}, {});
    expect([none.status, none.json.error.status]).toEqual([401, "UNAUTHENTICATED"]);
    expect((await predict("a cat", {}, { authorization: "Bearer ya29.other" })).json.error.message).toMatch(/^Request had invalid authentication credentials/);
  });

  it("answers the operation's name, then {name} twice, then done with the video as base64", async () => {
    const { json } = await predict("a wave");
    expect(json.name).toMatch(new RegExp(`^projects/test-project/locations/us-central1/publishers/google/models/${MODEL}/operations/[0-9a-f-]+$`));
    const answers = [];
    for (let count = 0; count < 3; count++) answers.push((await fetchOperation(json.name)).json);
    expect(answers.slice(0, 2)).toEqual([{ name: json.name }, { name: json.name }]);
    expect(answers[2]).toEqual({ name: json.name, done: true, response: { "@type": expect.stringContaining("GenerateVideoResponse"), raiMediaFilteredCount: 0, videos: [{ bytesBase64Encoded: TINY_MP4.toString("base64"), mimeType: "video/mp4" }] } });
    expect(upstream.polls(json.name)).toBe(3);
    expect((await fetchOperation(json.name, "veo-2.0-generate-001")).status).toBe(404);
  });

  it("ends with error {code, message} on failure, with filtered videos on moderation, and gives gcsUri when storageUri is set", async () => {
    const last = async (prompt: string, parameters: Json = {}) => {
      const { json } = await predict(prompt, parameters);
      for (let count = 0; count < 2; count++) await fetchOperation(json.name);
      return (await fetchOperation(json.name)).json;
    };
    expect(await last(`x ${FAIL_PROMPT}`)).toMatchObject({ done: true, error: { code: 13, message: VERTEX_FAILURE_MESSAGE } });
    const moderated = await last(`x ${MODERATE_PROMPT}`);
    expect(moderated.response).toMatchObject({ raiMediaFilteredCount: 1, raiMediaFilteredReasons: [expect.any(String)] });
    expect(moderated.response.videos).toBeUndefined();
    expect((await last(`x ${STALL_PROMPT}`)).done).toBeUndefined();
    const stored = await last("x", { storageUri: "gs://bucket/out/", sampleCount: 2 });
    expect(stored.response.videos).toEqual([
      { gcsUri: expect.stringMatching(/^gs:\/\/bucket\/out\/.+\/sample_0\.mp4$/), mimeType: "video/mp4" },
      { gcsUri: expect.stringMatching(/sample_1\.mp4$/), mimeType: "video/mp4" },
    ]);
    expect((await fetchOperation("projects/x/operations/nope")).json.error.status).toBe("NOT_FOUND");
  });
});
