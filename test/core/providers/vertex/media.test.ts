// The Vertex AI Veo media adapter (core/providers/vertex/media.ts) against the
// Vertex fake (test/support/fake-media-vertex.ts): the fake checks the OAuth2
// bearer token, answers an operation name, and reports it unfinished (no `done`)
// until its third fetchPredictOperation, then done with base64 videos, a
// google.rpc.Status error, or Responsible AI filtering. The token comes from the
// key, or from application default credentials through google-auth-library's own
// flow against a fake token endpoint (test/support/fake-google-sts.ts).
import { create } from "@bufbuild/protobuf";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { providerSchema, type ModelProviderConfig } from "../../../../core/config/schema.ts";
import type { JobState, MediaJobCall } from "../../../../core/providers/media-job.ts";
import { UpstreamError } from "../../../../core/providers/types.ts";
import { CallerUrlError } from "../../../../core/providers/safe-fetch.ts";
import { INPUT_IMAGE_NOT_FETCHED, MAX_IMAGE_BYTES } from "../../../../core/providers/vertex/image-input.ts";
import { createVertexMediaAdapter } from "../../../../core/providers/vertex/media.ts";
import { VideoParametersSchema, VideoResultStyle } from "../../../../gen/router/v1/tasks_pb.js";
import { FAIL_PROMPT, MODERATE_PROMPT, TINY_MP4, TINY_PNG, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startFakeVertex, VERTEX_FAILURE_MESSAGE, VERTEX_RAI_REASON, VERTEX_TOKEN } from "../../../support/fake-media-vertex.ts";
import { startFakeSts, type FakeSts } from "../../../support/fake-google-sts.ts";

const MODEL = "veo-3.0-generate-001";
const video = (fields: Parameters<typeof create<typeof VideoParametersSchema>>[1] = {}) => create(VideoParametersSchema, { prompt: "a wave at dusk", ...fields });

/** A call to the fake; the image host is on 127.0.0.1, so private addresses are allowed unless the test says. */
function callTo(baseUrl: string, options: { key?: string; allowPrivateAddresses?: boolean } = {}): MediaJobCall {
  return {
    provider: providerSchema.parse({ id: "vertex", label: "Vertex AI", protocol: "vertex", base_url: baseUrl, api_key_env: "VERTEX_ACCESS_TOKEN", timeout_ms: 5000 }),
    route: { provider: "vertex", provider_model_id: MODEL, pricing: { prompt: "0", completion: "0" } } as ModelProviderConfig,
    apiKey: options.key ?? VERTEX_TOKEN,
    signal: new AbortController().signal,
    allowPrivateAddresses: options.allowPrivateAddresses ?? true,
  };
}

async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

/** Polls until the job ends, keeping every state seen. */
async function pollToEnd(adapter: ReturnType<typeof createVertexMediaAdapter>, call: MediaJobCall, job: Awaited<ReturnType<NonNullable<ReturnType<typeof createVertexMediaAdapter>["submitVideo"]>>>) {
  const states: JobState[] = [];
  for (let count = 0; count < 10; count++) {
    const state = await adapter.poll(call, job);
    states.push(state);
    if (state.state === "succeeded" || state.state === "failed") return states;
  }
  throw new Error(`no end after 10 polls: ${JSON.stringify(states)}`);
}

/** A file host for input images: /png, /jpeg, /text, /missing, /huge (chunked, no length), /huge-declared. */
async function startImageHost() {
  const server = http.createServer((req, res) => {
    if (req.url === "/png") return res.writeHead(200, { "content-type": "application/octet-stream" }).end(TINY_PNG);
    if (req.url === "/jpeg") return res.writeHead(200, { "content-type": "image/jpeg" }).end(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46]));
    if (req.url === "/text") return res.writeHead(200, { "content-type": "image/png" }).end("<html>not an image</html>");
    if (req.url === "/huge") {
      res.writeHead(200, { "content-type": "image/png" });
      const chunk = Buffer.alloc(1024 * 1024, 1);
      let sent = 0;
      const more = () => {
        while (sent <= MAX_IMAGE_BYTES + chunk.length) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
        res.end();
      };
      return more();
    }
    if (req.url === "/huge-declared") return res.writeHead(200, { "content-type": "image/png", "content-length": String(MAX_IMAGE_BYTES + 1) }).end();
    res.writeHead(404).end("gone");
  });
  // A refused response may be cut by the client mid-body.
  server.on("clientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("the Vertex AI Veo media adapter against the fake", () => {
  let vertex: FakeMediaUpstream;
  let images: Awaited<ReturnType<typeof startImageHost>>;
  const adapter = createVertexMediaAdapter();
  beforeAll(async () => {
    vertex = await startFakeVertex();
    images = await startImageHost();
  });
  afterAll(async () => {
    await vertex.close();
    await images.close();
  });

  it("declares the video parameters Veo carries and the base64 result style, and makes no images", () => {
    expect(adapter.videoParameters).toEqual(["image", "length", "resolution", "aspectRatio", "seed", "generateAudio"]);
    expect(adapter.videoResultStyle).toBe(VideoResultStyle.BASE64);
    expect(adapter.maxImagesPerJob).toBe(0);
    expect(adapter.submitImage).toBeUndefined();
  });

  it("submits to :predictLongRunning with the bearer token, and polls :fetchPredictOperation until done: the video's bytes inline", async () => {
    const call = callTo(vertex.url);
    const job = await adapter.submitVideo!(call, video());
    const submitted = vertex.requests.at(-1)!;
    expect([submitted.method, submitted.path, submitted.headers.authorization]).toEqual(["POST", `/v1/projects/test-project/locations/us-central1/publishers/google/models/${MODEL}:predictLongRunning`, `Bearer ${VERTEX_TOKEN}`]);
    // One sample, and nothing else the caller did not ask for (no storageUri: the videos come inline).
    expect(submitted.body).toEqual({ instances: [{ prompt: "a wave at dusk" }], parameters: { sampleCount: 1 } });
    expect(job.jobId).toMatch(new RegExp(`^projects/test-project/locations/us-central1/publishers/google/models/${MODEL}/operations/`));
    expect(job.pollingUrl).toBe(`${vertex.url}/publishers/google/models/${MODEL}:fetchPredictOperation`);

    const states = await pollToEnd(adapter, call, job);
    // Unfinished operations carry no `done` and no progress figure.
    expect(states.slice(0, -1)).toEqual([{ state: "running" }, { state: "running" }]);
    expect(states.at(-1)).toEqual({ state: "succeeded", outputs: [{ bytes: TINY_MP4, mediaType: "video/mp4" }] });
    expect(vertex.polls(job.jobId)).toBe(3);
    const poll = vertex.requests.at(-1)!;
    expect([poll.method, poll.headers.authorization, poll.body]).toEqual(["POST", `Bearer ${VERTEX_TOKEN}`, { operationName: job.jobId }]);
  });

  it("maps each public parameter onto Veo's own field, and sends the image URL's bytes inline with their type", async () => {
    const call = callTo(vertex.url);
    await adapter.submitVideo!(call, video({ imageUrl: `${images.url}/png`, length: 8, resolution: "1080p", aspectRatio: "9:16", seed: 42n, generateAudio: false }));
    expect(vertex.requests.at(-1)!.body).toEqual({
      instances: [{ prompt: "a wave at dusk", image: { bytesBase64Encoded: TINY_PNG.toString("base64"), mimeType: "image/png" } }],
      parameters: { sampleCount: 1, durationSeconds: 8, resolution: "1080p", aspectRatio: "9:16", seed: 42, generateAudio: false },
    });
    await adapter.submitVideo!(call, video({ imageUrl: `${images.url}/jpeg`, generateAudio: true, seed: 0n }));
    const body = vertex.requests.at(-1)!.body;
    expect(body.instances[0].image.mimeType).toBe("image/jpeg");
    // A seed of 0 is a seed (the field is optional, so given is given).
    expect(body.parameters).toEqual({ sampleCount: 1, seed: 0, generateAudio: true });
  });

  it("refuses an input image that is missing, not a JPEG or PNG, or over 20 MB (with or without a length), sending nothing to Vertex", async () => {
    const call = callTo(vertex.url);
    const before = vertex.requests.length;
    // The task's error says only that the fetch failed; the detail stays in the cause, for the log.
    const missing = await rejection(adapter.submitVideo!(call, video({ imageUrl: `${images.url}/missing` })));
    expect([missing.status, missing.retryable, missing.message]).toEqual([400, false, INPUT_IMAGE_NOT_FETCHED]);
    expect((missing.cause as CallerUrlError).message).toBe(`${images.url}/missing answered 404`);
    const text = await rejection(adapter.submitVideo!(call, video({ imageUrl: `${images.url}/text` })));
    expect([text.status, text.retryable, text.message]).toEqual([400, false, "the input image is not a JPEG or PNG"]);
    for (const path of ["/huge", "/huge-declared"]) {
      const huge = await rejection(adapter.submitVideo!(call, video({ imageUrl: `${images.url}${path}` })));
      expect([huge.status, huge.message, (huge.cause as CallerUrlError).failure]).toEqual([400, INPUT_IMAGE_NOT_FETCHED, "too_large"]);
      expect((huge.cause as CallerUrlError).message).toMatch(`larger than ${MAX_IMAGE_BYTES} bytes`);
    }
    expect(vertex.requests.length).toBe(before);
  });

  it("refuses an input image at a private address unless tasks.fetch_private_urls allows it: the same words as any failed fetch, not retried, nothing sent", async () => {
    const before = vertex.requests.length;
    const privateImage = await rejection(adapter.submitVideo!(callTo(vertex.url, { allowPrivateAddresses: false }), video({ imageUrl: `${images.url}/png` })));
    expect([privateImage.status, privateImage.retryable, privateImage.message, (privateImage.cause as CallerUrlError).failure]).toEqual([400, false, INPUT_IMAGE_NOT_FETCHED, "private_address"]);
    expect(vertex.requests.length).toBe(before);
    await adapter.submitVideo!(callTo(vertex.url, { allowPrivateAddresses: true }), video({ imageUrl: `${images.url}/png` }));
    expect(vertex.requests.length).toBe(before + 1);
  });

  it("ends a failed operation with Google's message, and a filtered one as content_moderated with Veo's reasons", async () => {
    const call = callTo(vertex.url);
    const failed = await pollToEnd(adapter, call, await adapter.submitVideo!(call, video({ prompt: `a wave ${FAIL_PROMPT}` })));
    expect(failed.at(-1)).toEqual({ state: "failed", code: "upstream_error", message: VERTEX_FAILURE_MESSAGE });
    const filtered = await pollToEnd(adapter, call, await adapter.submitVideo!(call, video({ prompt: `a wave ${MODERATE_PROMPT}` })));
    expect(filtered.at(-1)).toEqual({ state: "failed", code: "content_moderated", message: VERTEX_RAI_REASON });
  });

  it("a wrong token is Google's 401 UNAUTHENTICATED, a refusal (not retried); an unknown operation is a 404", async () => {
    const refused = await rejection(adapter.submitVideo!(callTo(vertex.url, { key: "ya29.expired" }), video()));
    expect(refused.status).toBe(401);
    expect(refused.message).toMatch(/^Vertex AI 401 UNAUTHENTICATED: Request had invalid authentication credentials/);
    const call = callTo(vertex.url);
    const unknown = await rejection(adapter.poll(call, { jobId: "projects/test-project/locations/us-central1/publishers/google/models/x/operations/none", pollingUrl: `${vertex.url}/publishers/google/models/${MODEL}:fetchPredictOperation` }));
    expect(unknown.status).toBe(404);
  });
});

describe("the Vertex adapter's token from application default credentials (google-auth-library, no key)", () => {
  let vertex: FakeMediaUpstream;
  let sts: FakeSts;
  beforeAll(async () => {
    vertex = await startFakeVertex();
    sts = await startFakeSts();
  });
  afterAll(async () => {
    await vertex.close();
    await sts.close();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("exchanges the credentials file's subject token at its token endpoint once, and sends the access token it got to Vertex on every call", async () => {
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", sts.credentialsFile);
    const adapter = createVertexMediaAdapter();
    const call = callTo(vertex.url, { key: "" });
    const job = await adapter.submitVideo!(call, video());
    const states = await pollToEnd(adapter, call, job);
    expect(states.at(-1)).toMatchObject({ state: "succeeded" });
    const calls = vertex.requests.filter((request) => request.body.operationName === job.jobId || request.path.endsWith(":predictLongRunning"));
    expect(calls.length).toBeGreaterThanOrEqual(4);
    for (const request of calls) expect(request.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    // The library keeps the token until it nears expiry: one exchange for the four calls.
    expect(sts.exchanges()).toBe(1);
    expect(sts.requests[0].headers["content-type"]).toMatch(/^application\/x-www-form-urlencoded/);
  });

  it("a configured key wins over the credentials file", async () => {
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", sts.credentialsFile);
    const before = sts.exchanges();
    await createVertexMediaAdapter().submitVideo!(callTo(vertex.url, { key: VERTEX_TOKEN }), video());
    expect(sts.exchanges()).toBe(before);
  });

  it("credentials that give no token are a retryable failure naming them, and nothing reaches Vertex", async () => {
    const refusing = await startFakeSts({});
    // The file names an audience the token endpoint refuses.
    const { readFileSync, writeFileSync } = await import("node:fs");
    const file = `${refusing.credentialsFile}.bad.json`;
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(refusing.credentialsFile, "utf8")), audience: "//iam.googleapis.com/other" }));
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", file);
    const before = vertex.requests.length;
    const error = await rejection(createVertexMediaAdapter().submitVideo!(callTo(vertex.url, { key: "" }), video()));
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^Google application default credentials gave no access token: .*invalid_target/);
    expect(vertex.requests.length).toBe(before);
    await refusing.close();
  });
});
