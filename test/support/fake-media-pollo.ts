// A fake of Pollo.ai's generation API, for tests (docs/media-protocols.md, "Pollo").
// Base URL {origin}/api/platform, as https://pollo.ai/api/platform.
//   POST /generation/{brand}/{model}  with `x-api-key`, body {input: {prompt, ...},
//        webhookUrl?}: {taskId, status: "waiting"}. Successful answers come inside
//        {code: "SUCCESS", message: "success", data: ...} unless `envelope: false` (the
//        documented flat shape; the live API was seen to wrap).
//   GET  /generation/{taskId}/status  with `x-api-key`: one poll, answered {taskId,
//        credit, generations: [{id, status, failMsg, url, mediaType, createdDate,
//        updatedDate}]}, status waiting, processing, then succeed (url set) or failed
//        (failMsg set). The url answers 404 after assetTtlMs (default 14 days: Pollo
//        keeps files "up to 14 days").
// A body field Pollo does not take (outside {input: {prompt, image, imageTail, length,
// resolution, aspectRatio, mode, seed, generateAudio, negativePrompt}, webhookUrl}) is
// its zod 400 `unrecognized_keys`. A missing or wrong key is a 401 {message, code: "UNAUTHORIZED"}; an unknown task a
// 404 {message, code: "NOT_FOUND"}. Prompts pick failures (fake-media-common.ts):
// FAIL_PROMPT and MODERATE_PROMPT end failed with their failMsg, STALL_PROMPT stays
// processing.
import type http from "node:http";
import {
  AssetHost,
  CDN_NOT_FOUND,
  JobBook,
  type FakeMediaUpstream,
  type KnownFields,
  type MediaFakeOptions,
  safely,
  sendJson,
  splitPath,
  TINY_MP4,
  unknownField,
} from "./fake-media-common.ts";
import { startRecordingServer } from "./recording-server.ts";

export const POLLO_KEY = "pollo-test-key";

/** The create body's fields, as Pollo's video models take them. */
const POLLO_FIELDS: KnownFields = {
  input: Object.fromEntries("prompt image imageTail length resolution aspectRatio mode seed generateAudio negativePrompt".split(" ").map((name) => [name, true])),
  webhookUrl: true,
};
export const POLLO_FAILURE_MESSAGE = "Generation failed, credits have been refunded.";
export const POLLO_MODERATION_MESSAGE = "The content may violate our community guidelines, please modify and try again.";
/** Credits the fake says it charged at submission. */
export const POLLO_CREDIT = 10;

export interface PolloOptions extends MediaFakeOptions {
  key?: string;
  /**
   * Wrap successful answers in {code: "SUCCESS", message: "success", data: ...}, as the live
   * API was seen to answer (default true); false answers the flat shape of Pollo's OpenAPI
   * document. An adapter has to read both.
   */
  envelope?: boolean;
}

export async function startFakePollo(options: PolloOptions = {}): Promise<FakeMediaUpstream> {
  const key = options.key ?? POLLO_KEY;
  const envelope = options.envelope ?? true;
  const answer = (res: http.ServerResponse, data: unknown) => sendJson(res, 200, envelope ? { code: "SUCCESS", message: "success", data } : data);
  const now = options.now ?? Date.now;
  const jobs = new JobBook(options);
  const cdn = new AssetHost(options.assetTtlMs ?? 14 * 24 * 60 * 60_000, CDN_NOT_FOUND, options.now, options.resultFile);

  const upstream = await startRecordingServer(
    "/api/platform",
    safely((request, res) => {
      if (cdn.serve(request, res)) return;
      const given = request.headers["x-api-key"];
      if (given === undefined || given !== key) return sendJson(res, 401, { message: "Invalid API key", code: "UNAUTHORIZED" });
      const { pathname } = splitPath(request.path);
      const status = /^\/api\/platform\/generation\/([^/]+)\/status$/.exec(pathname);
      if (request.method === "GET" && status) return taskStatus(decodeURIComponent(status[1]), res);
      const create = /^\/api\/platform\/generation\/([^/]+)\/([^/]+)$/.exec(pathname);
      if (request.method === "POST" && create) return createTask(`${create[1]}/${create[2]}`, request.body, res);
      sendJson(res, 404, { message: "No procedure found on path", code: "NOT_FOUND" });
    }),
  );
  const origin = new URL(upstream.url).origin;
  cdn.setOrigin(origin);

  function createTask(model: string, body: Record<string, any>, res: http.ServerResponse) {
    const prompt = body.input?.prompt;
    if (typeof prompt !== "string") {
      return sendJson(res, 400, { message: "Input validation failed", code: "BAD_REQUEST", issues: [{ code: "invalid_type", expected: "string", received: typeof prompt, path: ["input", "prompt"], message: "Required" }] });
    }
    const unknown = unknownField(body, POLLO_FIELDS);
    if (unknown) {
      const path = unknown.split(".");
      const issue = { code: "unrecognized_keys", keys: [path.at(-1)], path: path.slice(0, -1), message: `Unrecognized key(s) in object: '${path.at(-1)}'` };
      return sendJson(res, 400, { message: "Input validation failed", code: "BAD_REQUEST", issues: [issue] });
    }
    const taskId = `pollo-task-${String(jobs.jobs.size + 1).padStart(4, "0")}`;
    jobs.create(taskId, model, prompt, { generationId: `pollo-gen-${jobs.jobs.size + 1}` });
    answer(res, { taskId, status: "waiting" });
  }

  function taskStatus(taskId: string, res: http.ServerResponse) {
    const job = jobs.jobs.get(taskId);
    if (!job) return sendJson(res, 404, { message: "Task not found", code: "NOT_FOUND" });
    const phase = jobs.poll(job);
    const status = phase === "queued" ? "waiting" : phase === "succeeded" ? "succeed" : phase === "failed" || phase === "moderated" || phase === "refused" ? "failed" : "processing";
    const failMsg = phase === "failed" ? POLLO_FAILURE_MESSAGE : phase === "moderated" || phase === "refused" ? POLLO_MODERATION_MESSAGE : "";
    const url = status === "succeed" ? cdn.publish(`${job.details.generationId}.mp4`, TINY_MP4, "video/mp4") : "";
    const generation = {
      id: job.details.generationId,
      status,
      failMsg,
      url,
      mediaType: "video",
      createdDate: new Date(job.createdAt).toISOString(),
      updatedDate: new Date(job.finishedAt ?? now()).toISOString(),
    };
    answer(res, { taskId, credit: POLLO_CREDIT, generations: [generation] });
  }

  return { ...upstream, origin, jobs, polls: (jobId) => jobs.jobs.get(jobId)?.polls ?? 0 };
}
