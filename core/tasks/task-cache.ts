// The media side of the cache (issue 23; docs/tasks.md, "Cache"): a create
// with a `cache_key` answers the organisation's earlier task that succeeded for
// exactly the same request, instead of running the job again. The exact key is
// a SHA-256 over a canonical form of what decides the result; the store maps
// it to the task once the task has succeeded (only then), until the task and
// its assets expire.
import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createHash } from "node:crypto";
import { ImageParametersSchema, TaskStatus, VideoParametersSchema, type ImageParameters, type ImageUpload, type Task, type VideoParameters } from "../../gen/router/v1/tasks_pb.js";
import { parseMoney, type Money } from "../billing/money.ts";
import { imageTypeBySignature } from "../providers/image-signature.ts";
import type { AssetStore } from "./asset-store.ts";
import type { TaskStore } from "./store.ts";

/** The longest cache_key taken: it is part of a digest, not stored, but bounded as the Idempotency-Key is. */
export const CACHE_KEY_MAX_LENGTH = 255;

/** A hit is charged this fraction of the original's cost: a tenth (the cache's decision for every kind). */
const HIT_PRICE_DIVISOR = 10n;

/** Which create made the task: the answers differ in shape, so one never answers another. */
export type CacheEndpoint = "images/generations" | "images/edits" | "videos";

/** What decides an image task's result, with the scope of its cache. */
export interface ImageCacheRequest {
  organizationId: string;
  cacheKey: string;
  model: string;
  /** The parameters as asked. */
  image: ImageParameters;
  editUploads: readonly ImageUpload[];
}

export interface VideoCacheRequest {
  organizationId: string;
  cacheKey: string;
  model: string;
  video: VideoParameters;
  /** The creating format's echo: a hit answers the task with the echo it was made with, so it is part of the key. */
  storedEcho: string;
}

/**
 * The exact key of an image create: its organisation and cache_key, the
 * endpoint, the model and every parameter as asked (the message's JSON form:
 * a field added later is in the key by default). Not in it: who asked, the
 * Idempotency-Key, the webhook, response_type and response_format (how the
 * answer is delivered, not what is made), the measured input pixels and where
 * an edit's uploads are stored (their bytes' digests are in it instead).
 */
export function imageCacheDigest(request: ImageCacheRequest): string {
  // n left out means one image, as asked (0) or said (1).
  const parameters = toJson(ImageParametersSchema, { ...request.image, n: request.image.n || 1, inputPixels: 0n, editInputs: [] });
  const edits = request.editUploads.map((upload) => ({
    sha256: createHash("sha256").update(upload.data).digest("hex"),
    media_type: imageTypeBySignature(upload.data) ?? "",
    mask: upload.mask,
  }));
  const endpoint: CacheEndpoint = edits.length > 0 ? "images/edits" : "images/generations";
  return cacheDigest({ organization: request.organizationId, cache_key: request.cacheKey, kind: "image", endpoint, model: request.model, parameters, edits });
}

/** The exact key of a video create, as imageCacheDigest's. */
export function videoCacheDigest(request: VideoCacheRequest): string {
  const parameters = toJson(VideoParametersSchema, request.video);
  const endpoint: CacheEndpoint = "videos";
  return cacheDigest({ organization: request.organizationId, cache_key: request.cacheKey, kind: "video", endpoint, model: request.model, parameters, stored_echo: request.storedEcho });
}

/** SHA-256 hex of the canonical form (versioned, so a change of form never matches an old key). */
function cacheDigest(form: Record<string, JsonValue>): string {
  return createHash("sha256").update(canonicalJson({ version: 1, ...form })).digest("hex");
}

/**
 * JSON with every object's keys sorted, at every depth: the same value gives
 * the same text on every run and instance, whatever order its keys were
 * built in. Arrays keep their order (input images are ordered).
 */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as JsonValue)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The organisation's task the key names, when it can still be answered: it
 * succeeded, was created for this very key, and its hosted assets are ready,
 * not expired and still in the asset store. Undefined otherwise (a miss).
 */
export async function reusableTask(store: TaskStore, assets: AssetStore, organizationId: string, digest: string, nowMs: number): Promise<Task | undefined> {
  const id = await store.findCached(organizationId, digest);
  const task = id ? await store.get(organizationId, id) : undefined;
  if (!task || task.cacheDigest !== digest || task.status !== TaskStatus.SUCCEEDED) return undefined;
  if (task.routerAssets?.status !== "ready" || task.outputs.length === 0 || cacheExpiresAt(task) <= nowMs) return undefined;
  return (await assetsPresent(assets, task)) ? task : undefined;
}

/** Whether every output's hosted copy is still there (one byte of each read, then let go). */
async function assetsPresent(assets: AssetStore, task: Task): Promise<boolean> {
  for (const output of task.outputs) {
    const read = await assets.stream(output.assetName, { offset: 0, length: 1 });
    if (!read) return false;
    read.body.destroy();
  }
  return true;
}

/** Until when a succeeded task may answer its key: its own expiry or its assets', whichever is first (Unix ms). */
export function cacheExpiresAt(task: Task): number {
  const own = task.expiresAt ? timestampMs(task.expiresAt) : Infinity;
  const assets = task.routerAssets?.expiresAt ? timestampMs(task.routerAssets.expiresAt) : Infinity;
  return Math.min(own, assets);
}

/** What a hit is charged: a tenth of what the original was charged (its settled cost; it succeeded, so it has one). */
export function hitCharge(task: Task): Money {
  return parseMoney(task.usage?.cost || "0") / HIT_PRICE_DIVISOR;
}

/**
 * Maps a task that just succeeded to its cache key, for as long as it can be
 * answered; a task made without a cache_key is left alone. A store that fails
 * only costs a later hit, so it is told and not thrown.
 */
export async function rememberSucceeded(store: TaskStore, task: Task, logger?: { warn(details: object, message: string): void }): Promise<void> {
  if (!task.cacheDigest || task.status !== TaskStatus.SUCCEEDED) return;
  const expiresAt = cacheExpiresAt(task);
  if (!Number.isFinite(expiresAt)) return;
  try {
    await store.rememberCached(task.organizationId, task.cacheDigest, task.id, expiresAt);
  } catch (error) {
    logger?.warn({ err: error, taskId: task.id }, "could not remember a task for its cache key; a later request with it runs again");
  }
}
