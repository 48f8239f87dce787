// A fake of the official Kling API's video generation, for tests
// (docs/media-protocols.md, "Kling"). Base URL {origin}, as https://api-singapore.klingai.com.
//   POST /v1/videos/text2video | /v1/videos/image2video: {code: 0, message, request_id,
//        data: {task_id, task_status: "submitted", task_info, created_at, updated_at}}.
//   GET  /v1/videos/{kind}/{task_id}: one poll, data.task_status submitted, processing,
//        then succeed (data.task_result.videos [{id, url, duration}], duration a decimal
//        string of the measured length, "5.042" for a 5-second task) or failed
//        (data.task_status_msg). Video URLs answer 404 after assetTtlMs (default 30 days,
//        Kling's retention). A create with a duration, mode, sound (on | off) or, for
//        text2video, aspect_ratio outside Kling's values is a 400 with code 1201.
// Every call needs `Authorization: Bearer <JWT>`: HS256, signed with the secret key,
// iss = the access key, exp and nbf present and valid at the fake's clock (checked with
// jose). Refusals are Kling's 401 codes: 1001 no header, 1002 invalid (bad signature,
// issuer, algorithm or claims), 1003 not yet valid (nbf), 1004 expired. Prompts pick
// failures (fake-media-common.ts): FAIL_PROMPT and MODERATE_PROMPT end failed with
// their task_status_msg, REFUSE_PROMPT is a 400 with code 1301 at creation,
// STALL_PROMPT stays processing.
import type http from "node:http";
import { errors, jwtVerify, SignJWT } from "jose";
import {
  AssetHost,
  CDN_NOT_FOUND,
  JobBook,
  type FakeJob,
  type FakeMediaUpstream,
  type JobPhase,
  type KnownFields,
  type MediaFakeOptions,
  safely,
  sendJson,
  splitPath,
  TINY_MP4,
  unknownField,
} from "./fake-media-common.ts";
import { startRecordingServer, type RecordedRequest } from "./recording-server.ts";

export const KLING_ACCESS_KEY = "kling-access-key";
export const KLING_SECRET_KEY = "kling-secret-key-for-tests-only";
export const KLING_KINDS = ["text2video", "image2video"] as const;
export const KLING_FAILURE_MESSAGE = "Video generation failed.";
export const KLING_MODERATION_MESSAGE = "Failure to pass the risk control system";
export const KLING_DURATIONS = ["5", "10"];
export const KLING_ASPECT_RATIOS = ["16:9", "9:16", "1:1"];

export interface KlingOptions extends MediaFakeOptions {
  accessKey?: string;
  secretKey?: string;
  /** The length Kling reports for a clip of the asked seconds (default: a little over them, "5.042" for "5"). */
  measuredSeconds?: (asked: number) => number;
}

/** A token as Kling's documentation builds it: HS256, iss the access key, exp now + 30 min, nbf now - 5 s. */
export function klingToken(accessKey = KLING_ACCESS_KEY, secretKey = KLING_SECRET_KEY, nowMs = Date.now()): Promise<string> {
  const now = Math.floor(nowMs / 1000);
  return new SignJWT({}).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setIssuer(accessKey).setExpirationTime(now + 1800).setNotBefore(now - 5).sign(new TextEncoder().encode(secretKey));
}

/** The body fields Kling's API reference lists for each kind of create. */
const KLING_FIELDS: Record<string, KnownFields> = {
  text2video: fields("model_name prompt negative_prompt cfg_scale mode camera_control aspect_ratio duration sound callback_url external_task_id"),
  image2video: fields("model_name image image_tail prompt negative_prompt cfg_scale mode static_mask dynamic_masks camera_control duration sound callback_url external_task_id"),
};

function fields(names: string): KnownFields {
  return Object.fromEntries(names.split(" ").map((name) => [name, true]));
}

interface KlingRefusal {
  status: number;
  code: number;
  message: string;
}

export async function startFakeKling(options: KlingOptions = {}): Promise<FakeMediaUpstream> {
  const accessKey = options.accessKey ?? KLING_ACCESS_KEY;
  const secret = new TextEncoder().encode(options.secretKey ?? KLING_SECRET_KEY);
  const now = options.now ?? Date.now;
  const jobs = new JobBook(options);
  const cdn = new AssetHost(options.assetTtlMs ?? 30 * 24 * 60 * 60_000, CDN_NOT_FOUND, options.now, options.resultFile);
  let requestCount = 0;

  const upstream = await startRecordingServer(
    "",
    safely(async (request, res) => {
      if (cdn.serve(request, res)) return;
      requestCount += 1;
      const requestId = `fake-request-${requestCount}`;
      const refuse = (refusal: KlingRefusal) => sendJson(res, refusal.status, { code: refusal.code, message: refusal.message, request_id: requestId });
      const authRefusal = await refusedToken(request);
      if (authRefusal) return refuse(authRefusal);
      const { pathname } = splitPath(request.path);
      const create = /^\/v1\/videos\/(text2video|image2video)$/.exec(pathname);
      if (request.method === "POST" && create) return createTask(create[1], request.body, res, requestId, refuse);
      const query = /^\/v1\/videos\/([^/]+)\/([^/]+)$/.exec(pathname);
      if (request.method === "GET" && query) return queryTask(query[1], decodeURIComponent(query[2]), res, requestId, refuse);
      refuse({ status: 404, code: 1203, message: "Requested resource does not exist" });
    }),
  );
  const origin = new URL(upstream.url).origin;
  cdn.setOrigin(origin);

  async function refusedToken(request: RecordedRequest): Promise<KlingRefusal | undefined> {
    const authorization = request.headers.authorization;
    if (!authorization) return { status: 401, code: 1001, message: "Authorization is empty" };
    const token = /^Bearer (\S+)$/.exec(authorization)?.[1];
    if (!token) return { status: 401, code: 1002, message: "Authorization is invalid" };
    try {
      await jwtVerify(token, secret, { algorithms: ["HS256"], issuer: accessKey, requiredClaims: ["exp", "nbf"], currentDate: new Date(now()) });
      return undefined;
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { status: 401, code: 1004, message: "Authorization has expired" };
      if (error instanceof errors.JWTClaimValidationFailed && error.claim === "nbf" && error.reason === "check_failed") return { status: 401, code: 1003, message: "Authorization is not yet valid" };
      return { status: 401, code: 1002, message: "Authorization is invalid" };
    }
  }

  function createTask(kind: string, body: Record<string, any>, res: http.ServerResponse, requestId: string, refuse: (refusal: KlingRefusal) => void) {
    const unknown = unknownField(body, KLING_FIELDS[kind]);
    if (unknown) return refuse({ status: 400, code: 1201, message: `Unknown parameter: ${unknown}` });
    const prompt = typeof body.prompt === "string" ? body.prompt : "";
    if (kind === "text2video" && prompt === "") return refuse({ status: 400, code: 1201, message: "prompt is required" });
    if (kind === "image2video" && typeof body.image !== "string" && typeof body.image_tail !== "string") return refuse({ status: 400, code: 1201, message: "image is required" });
    const duration = String(body.duration ?? "5");
    if (!KLING_DURATIONS.includes(duration)) return refuse({ status: 400, code: 1201, message: `duration must be one of ${KLING_DURATIONS.join(", ")}` });
    if (body.mode !== undefined && body.mode !== "std" && body.mode !== "pro") return refuse({ status: 400, code: 1201, message: "mode must be std or pro" });
    if (body.sound !== undefined && body.sound !== "on" && body.sound !== "off") return refuse({ status: 400, code: 1201, message: "sound must be on or off" });
    if (kind === "text2video" && body.aspect_ratio !== undefined && !KLING_ASPECT_RATIOS.includes(body.aspect_ratio)) return refuse({ status: 400, code: 1201, message: `aspect_ratio must be one of ${KLING_ASPECT_RATIOS.join(", ")}` });
    const job = jobs.create(`86000000000000${String(jobs.jobs.size + 1).padStart(4, "0")}`, body.model_name ?? "kling-v1", prompt, { kind, duration, externalTaskId: body.external_task_id });
    if (job.outcome === "refused") {
      jobs.jobs.delete(job.id);
      return refuse({ status: 400, code: 1301, message: "Trigger the content security policy of the platform" });
    }
    sendJson(res, 200, { code: 0, message: "SUCCEED", request_id: requestId, data: taskData(job, "queued") });
  }

  function queryTask(kind: string, taskId: string, res: http.ServerResponse, requestId: string, refuse: (refusal: KlingRefusal) => void) {
    const job = jobs.jobs.get(taskId);
    if (!job || job.details.kind !== kind) return refuse({ status: 404, code: 1203, message: "Requested resource does not exist" });
    sendJson(res, 200, { code: 0, message: "SUCCEED", request_id: requestId, data: taskData(job, jobs.poll(job)) });
  }

  function taskData(job: FakeJob, phase: JobPhase) {
    const status = phase === "queued" ? "submitted" : phase === "succeeded" ? "succeed" : phase === "failed" || phase === "moderated" ? "failed" : "processing";
    const data: Record<string, any> = {
      task_id: job.id,
      task_status: status,
      task_status_msg: phase === "failed" ? KLING_FAILURE_MESSAGE : phase === "moderated" ? KLING_MODERATION_MESSAGE : "",
      task_info: job.details.externalTaskId === undefined ? {} : { external_task_id: job.details.externalTaskId },
      created_at: job.createdAt,
      updated_at: job.finishedAt ?? now(),
    };
    if (status === "succeed") {
      const videoId = `${job.id}-video-0`;
      // Kling reports the clip's measured length, a little over the asked seconds ("5.042" for "5").
      const duration = (options.measuredSeconds?.(Number(job.details.duration)) ?? Number(job.details.duration) + 0.042).toFixed(3);
      data.task_result = { videos: [{ id: videoId, url: cdn.publish(`${videoId}.mp4`, TINY_MP4, "video/mp4"), duration }] };
    }
    return data;
  }

  return { ...upstream, origin, jobs, polls: (jobId) => jobs.jobs.get(jobId)?.polls ?? 0 };
}
