// The task service's core: create an image or a video task (admitted and held through
// the meter as chat is, idempotent by key), read and list an organisation's
// tasks, read a hosted asset; the poller (poller.ts) runs each task on one
// instance (run-job.ts). docs/tasks.md describes the whole.
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  ImageParametersSchema,
  RouterAssetsSchema,
  TaskKind,
  TaskPollingSchema,
  TaskSchema,
  TaskStatus,
  VideoParametersSchema,
  type CreateImageRequest,
  type CreateVideoRequest,
  type Task,
} from "../../gen/router/v1/tasks_pb.js";
import type { Caller } from "../../gen/router/v1/inference_pb.js";
import type { Accounts } from "../accounts/accounts.ts";
import { authenticate, callerKeyDigest, checkKey } from "../accounts/check-key.ts";
import { nanosFromMoney } from "../accounts/ledger-units.ts";
import { fromStore } from "../accounts/refusals.ts";
import { UnreadableRecordError } from "../accounts/store-errors.ts";
import { Code, invalidParameter, routerError, taskNotFound } from "../errors.ts";
import { newServiceId } from "../ids.ts";
import { admit } from "../metering/meter.ts";
import { namesPrivateHost } from "../providers/safe-fetch.ts";
import type { AssetRange, AssetStore, AssetStream } from "./asset-store.ts";
import { editDigestForm, storeEditUploads } from "./edit-inputs.ts";
import { hostedAsset } from "./hosted-asset.ts";
import { planImage } from "./image-request.ts";
import { INPUT_IMAGE_LIMITS, type InputImageLimits } from "./input-image.ts";
import { createTaskPoller, type TaskPoller } from "./poller.ts";
import { runJob, type JobDeps } from "./run-job.ts";
import { awaitAnswer } from "./await-answer.ts";
import { planVideo } from "./video-request.ts";
import { CACHE_KEY_MAX_LENGTH, hitCharge, imageCacheDigest, reusableTask, videoCacheDigest } from "./task-cache.ts";

/** A create's caller, its key checked: the digest the meter admits and the organisation it belongs to. */
interface CheckedCaller {
  keyDigest: string;
  organizationId: string;
}

/** The fields every create request shares (CreateImageRequest, and the other kinds'). */
type TaskCreateRequest = Pick<CreateImageRequest, "model" | "idempotencyKey" | "webhookUrl" | "publicOrigin" | "cacheKey">;

/** A create's answer (CreateImageResponse, CreateVideoResponse): the task, and whether its cache_key found it. */
export interface CreatedTask {
  task: Task;
  /** An earlier task of the organisation, found by the request's cache_key: nothing new was run. */
  cached: boolean;
  /** On a hit, the id of the hit's own usage record (charged a tenth of the task's cost); else empty. */
  usageId: string;
}

/** What a kind's planning decided: the route's provider, the hold, the digest of what was asked, and the kind's own fields. */
interface PlannedTask {
  /** The task's id when planning needed it first (an edit's uploads are stored under it); else a new one. */
  id?: string;
  provider: string;
  holdNanos: bigint;
  /** What the request may lower to cost less, said in a 402 (the kind's own parameters, not chat's max_tokens). */
  lowerHint: string;
  digest: string;
  fields: Pick<MessageInitShape<typeof TaskSchema>, "kind" | "image" | "video" | "resultStyle" | "synchronous" | "storedEcho" | "fallbackProviders" | "cacheDigest">;
}

export interface TasksDeps extends Omit<JobDeps, "accounts"> {
  accounts: Pick<Accounts, "stores" | "settlements" | "usage">;
  idPrefix: string;
  /** How a video's input image is fetched (timeout, size cap); default INPUT_IMAGE_LIMITS. */
  inputImageLimits?: InputImageLimits;
}

export interface Tasks {
  readonly store: JobDeps["store"];
  readonly assets: AssetStore;
  readonly poller: TaskPoller;
  /** The deliveries of finished tasks; undefined where webhooks are not configured. */
  readonly webhooks: JobDeps["webhooks"];
  createImage(request: CreateImageRequest): Promise<CreatedTask>;
  createVideo(request: CreateVideoRequest): Promise<CreatedTask>;
  get(caller: Caller | undefined, id: string): Promise<Task>;
  list(caller: Caller | undefined, limit: number): Promise<Task[]>;
  /** A read of one hosted asset (or a range of it), to a key of the task's organisation; destroy its body to stop early. */
  streamAsset(caller: Caller | undefined, taskId: string, index: number, range?: AssetRange): Promise<AssetStream & { mediaType: string }>;
  /** Removes the hosted assets of tasks the store no longer keeps (retention passed); answers how many tasks' assets went. */
  sweepAssets(): Promise<number>;
  close(): Promise<void>;
}

/** The longest Idempotency-Key kept: it is stored with the task and indexed, and clients send a UUID or the like (IETF's draft suggests one). */
const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** What an image or video create may lower to cost less, said in a 402. */
const IMAGE_LOWER_HINT = "lower n or the size";
const VIDEO_LOWER_HINT = "ask for fewer seconds (seconds or length)";

/** How often each instance removes the assets of tasks past their retention. */
const ASSET_SWEEP_MS = 10 * 60_000;


export function createTasks(deps: TasksDeps): Tasks {
  const imageLimits = { ...(deps.inputImageLimits ?? INPUT_IMAGE_LIMITS), allowPrivateAddresses: deps.config.fetch_private_urls, logger: deps.logger };
  const { store, assets } = deps;
  const poller = createTaskPoller({ store, leaseMs: deps.config.lease_seconds * 1000, watchMs: deps.config.poll_interval_ms, run: (task, signal) => runJob(task, deps, signal), logger: deps.logger });

  const organizationOf = (caller: Caller | undefined) => authenticate(deps.accounts, caller);

  /** Whether the task is still stored; one that cannot be decoded is, until it expires (its assets stay with it). */
  const taskKept = (organizationId: string, id: string) =>
    store.get(organizationId, id).then(Boolean, (error: unknown) => {
      if (error instanceof UnreadableRecordError) return true;
      throw error;
    });

  const sweepAssets = async () => {
    let removed = 0;
    for (const folder of await assets.folders()) {
      const [organization, id] = folder.split("/");
      if (await taskKept(decodeURIComponent(organization), id)) continue;
      await assets.remove(folder);
      removed += 1;
    }
    return removed;
  };
  const assetSweep = setInterval(() => {
    sweepAssets().catch((error: unknown) => deps.logger?.warn({ err: error }, "could not remove expired task assets"));
  }, ASSET_SWEEP_MS);
  assetSweep.unref();

  /** A service id, or a provider-prefixed one (`<provider>:<upstream job id>`, docs/contract.md, "Asynchronous media"). */
  const taskIn = async (organizationId: string, given: string) => {
    const colon = given.indexOf(":");
    const id = colon > 0 ? await fromStore(store.findByUpstream(organizationId, given.slice(0, colon), given.slice(colon + 1))) : given;
    const task = id ? await fromStore(store.get(organizationId, id)) : undefined;
    if (!task) throw taskNotFound(given);
    return task;
  };

  /**
   * The caller's key digest and organisation (its key checked once); a bad
   * key is told before anything about the request (401 first), then the
   * fields every kind shares, before anything is fetched.
   */
  const checkCaller = async (request: TaskCreateRequest & { caller?: Caller }): Promise<CheckedCaller> => {
    const keyDigest = callerKeyDigest(request.caller);
    const { organizationId } = await checkKey(deps.accounts, keyDigest);
    if (request.idempotencyKey.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
      throw invalidParameter("Idempotency-Key", `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters (a UUID is 36).`);
    }
    if (request.cacheKey.length > CACHE_KEY_MAX_LENGTH) throw invalidParameter("cache_key", `The cache_key header must be at most ${CACHE_KEY_MAX_LENGTH} characters.`);
    checkWebhookUrl(request.webhookUrl, deps);
    return { keyDigest, organizationId };
  };

  /** Whether the caller's organisation still keeps a task made with this Idempotency-Key (a replay). */
  const isReplay = async (caller: CheckedCaller, idempotencyKey: string) =>
    idempotencyKey !== "" && (await fromStore(store.findByIdempotencyKey(caller.organizationId, idempotencyKey))) !== undefined;

  /**
   * Admits a planned task (its hold through the meter), stores it queued and
   * starts running it here; with an Idempotency-Key already used by the
   * organisation, answers that task instead and holds nothing. A replay
   * (`replayed`: planned without its inputs checked) only ever answers the
   * kept task: when that task expired since it was looked up, the hold goes
   * and the answer is undefined, for the caller to plan again with the checks on.
   */
  const start = async (request: TaskCreateRequest, caller: CheckedCaller, planned: PlannedTask, replayed: boolean): Promise<Task | undefined> => {
    const { keyDigest } = caller;
    const nowMs = deps.now().getTime();
    const id = planned.id ?? newServiceId(deps.idPrefix);
    const admission = await admit(deps.accounts, { requestId: id, keyDigest, modelIds: [request.model], charge: { kind: "credits", holdNanos: planned.holdNanos, lowerHint: planned.lowerHint }, now: nowMs });
    const task = create(TaskSchema, {
      ...planned.fields,
      id,
      organizationId: admission.key.organizationId,
      keyId: admission.key.keyId,
      modelId: request.model,
      provider: planned.provider,
      status: TaskStatus.QUEUED,
      idempotencyKey: request.idempotencyKey,
      createdAt: timestampFromMs(nowMs),
      updatedAt: timestampFromMs(nowMs),
      expiresAt: timestampFromMs(nowMs + deps.config.retention_seconds * 1000),
      routerAssets: create(RouterAssetsSchema, { status: "pending" }),
      polling: create(TaskPollingSchema, { nextPollAt: timestampFromMs(nowMs), deadline: timestampFromMs(nowMs + deps.config.timeout_seconds * 1000) }),
      holdNanos: admission.holdNanos,
      requestDigest: planned.digest,
      webhookUrl: request.webhookUrl,
      publicOrigin: request.publicOrigin,
    });
    const details = { model: request.model, provider: planned.provider, requestTags: [], latencyMs: 0, streamed: false, now: nowMs };
    let stored;
    try {
      stored = replayed ? await keptTask(caller.organizationId, request.idempotencyKey) : await fromStore(store.create(task));
    } catch (error) {
      admission.release({ ...details, outcome: "store_unavailable" });
      throw error;
    }
    if (!stored) {
      admission.release({ ...details, outcome: "idempotent_replay_expired" });
      return undefined;
    }
    if (!stored.created) {
      // The same Idempotency-Key again: the first task, and nothing held twice.
      admission.release({ ...details, outcome: "idempotent_replay" });
      if (stored.task.requestDigest !== task.requestDigest) {
        throw routerError(Code.FailedPrecondition, "idempotency_key_reused", "This Idempotency-Key was used with other parameters; send a new key for a new request.", { param: "Idempotency-Key" });
      }
      return stored.task;
    }
    void poller.adopt(task);
    return task;
  };

  /**
   * A cache hit (docs/tasks.md, "Cache"): the organisation's task that succeeded for the
   * same exact key, answered as it stands. The request is admitted as any create (the
   * key's limits and allow-list, credits for the charge) and settled at once for a tenth
   * of the task's cost, under a usage record of its own marked as a hit. Undefined: a miss.
   */
  const answerHit = async (request: TaskCreateRequest, caller: CheckedCaller, digest: string, lowerHint: string): Promise<CreatedTask | undefined> => {
    const nowMs = deps.now().getTime();
    const task = await fromStore(reusableTask(store, assets, caller.organizationId, digest, nowMs));
    if (!task) return undefined;
    const usageId = newServiceId(deps.idPrefix);
    const cost = hitCharge(task);
    const admission = await admit(deps.accounts, { requestId: usageId, keyDigest: caller.keyDigest, modelIds: [request.model], charge: { kind: "credits", holdNanos: nanosFromMoney(cost), lowerHint }, now: nowMs });
    const tokens = { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0 };
    admission.settle({ tokens, cost }, { model: request.model, provider: task.provider, outcome: "ok", requestTags: [], latencyMs: 0, streamed: false, now: nowMs, cacheSimilarity: 1 });
    return { task, cached: true, usageId };
  };

  /** A replay's kept task, as store.create answers one (`created: false`); undefined once it expired. */
  const keptTask = async (organizationId: string, idempotencyKey: string) => {
    const kept = await fromStore(store.findByIdempotencyKey(organizationId, idempotencyKey));
    return kept && { task: kept, created: false };
  };

  return {
    store,
    assets,
    poller,
    webhooks: deps.webhooks,
    async createImage(request) {
      const caller = await checkCaller(request);
      const replay = await isReplay(caller, request.idempotencyKey);
      let cacheDigest = "";
      // An Idempotency-Key's replay answers its own task; else a cache_key may answer an earlier one.
      if (request.cacheKey && !replay) {
        // Checked as a new create is (its 400s first), without fetching input images: a hit fetches nothing.
        await planImage(deps.catalogue, deps.adapters, request.model, request.image, request, { imageLimits, imagesChecked: true, editUploads: request.editUploads });
        cacheDigest = imageCacheDigest({ organizationId: caller.organizationId, cacheKey: request.cacheKey, model: request.model, image: request.image!, editUploads: request.editUploads });
        const hit = await answerHit(request, caller, cacheDigest, IMAGE_LOWER_HINT);
        if (hit) return hit;
      }
      // As for videos: a replay's input images were checked when its task was made.
      const make = async (replayed: boolean) => {
        const plan = await planImage(deps.catalogue, deps.adapters, request.model, request.image, request, { imageLimits, imagesChecked: replayed, editUploads: request.editUploads });
        // An edit's uploads are stored under the task's folder before it starts (left there by a refusal or a replay, the asset sweep takes them).
        const id = newServiceId(deps.idPrefix);
        const editInputs = await storeEditUploads(assets, caller.organizationId, id, request.editUploads);
        const image = { ...plan.image, editInputs };
        const task = await start(request, caller, {
          id,
          provider: plan.route.provider.id,
          holdNanos: nanosFromMoney(plan.pricePerImage * BigInt(plan.image.n)),
          lowerHint: IMAGE_LOWER_HINT,
          // The input images' pixels are measured, not asked: not part of what a key's replay must repeat; nor where the uploads are stored.
          digest: requestDigest(request.model, ImageParametersSchema, { ...image, inputPixels: 0n, editInputs: editDigestForm(editInputs) }),
          fields: { kind: TaskKind.IMAGE, image, synchronous: plan.adapter.synchronousImages === true, fallbackProviders: plan.fallbacks.map((route) => route.provider.id), cacheDigest },
        }, replayed);
        // A synchronous answer may take each synchronous route's whole request time (a fallback's included).
        const syncWaitMs = [plan.route, ...plan.fallbacks].filter((route) => deps.adapters[route.provider.protocol]?.synchronousImages).reduce((sum, route) => sum + route.provider.request_timeout_ms, 0);
        return task && { task, waitMs: plan.waitsForAsync ? deps.config.sync_wait_ms : syncWaitMs, waits: plan.waitsForAsync };
      };
      // The key's task expired since it was looked up: a new task, its input images checked.
      const made = (await make(replay)) ?? (await make(false));
      const task = made!.task;
      if (!task.synchronous && !made!.waits) return { task, cached: false, usageId: "" };
      // A synchronous provider's answer is the create's: wait for its run (here or on another instance), as long as the provider may take.
      return { task: await awaitAnswer(task, made!.waitMs, { poller, store, watchMs: deps.config.poll_interval_ms }, !made!.waits), cached: false, usageId: "" };
    },
    async createVideo(request) {
      const caller = await checkCaller(request);
      const replay = await isReplay(caller, request.idempotencyKey);
      let cacheDigest = "";
      if (request.cacheKey && !replay) {
        await planVideo(deps.catalogue, deps.adapters, request.model, request.video, { imageLimits, imageChecked: true });
        cacheDigest = videoCacheDigest({ organizationId: caller.organizationId, cacheKey: request.cacheKey, model: request.model, video: request.video!, storedEcho: request.storedEcho });
        const hit = await answerHit(request, caller, cacheDigest, VIDEO_LOWER_HINT);
        if (hit) return hit;
      }
      // A replay of an Idempotency-Key answers the task the key made (start() below), whose image was
      // checked then: it is not fetched again, as its URL may have died since.
      const make = async (replayed: boolean) => {
        const plan = await planVideo(deps.catalogue, deps.adapters, request.model, request.video, { imageLimits, imageChecked: replayed });
        return start(request, caller, {
          provider: plan.route.provider.id,
          holdNanos: nanosFromMoney(plan.pricePerSecond * BigInt(plan.heldSeconds)),
          // Without seconds or length the hold is for the model's longest video: asking a shorter one costs less.
          lowerHint: VIDEO_LOWER_HINT,
          digest: requestDigest(request.model, VideoParametersSchema, request.video!),
          // The creating format's echo rides with the task (opaque here), outside the digest.
          fields: { kind: TaskKind.VIDEO, video: request.video, resultStyle: plan.resultStyle, storedEcho: request.storedEcho, cacheDigest },
        }, replayed);
      };
      // The key's task expired since it was looked up: a new task, its image checked.
      return { task: ((await make(replay)) ?? (await make(false)))!, cached: false, usageId: "" };
    },
    async get(caller, id) {
      const key = await organizationOf(caller);
      return taskIn(key.organizationId, id);
    },
    async list(caller, limit) {
      const key = await organizationOf(caller);
      return listPage(await fromStore(store.list(key.organizationId, limit)));
    },
    async streamAsset(caller, taskId, index, range) {
      const key = await organizationOf(caller);
      return hostedAsset(assets, await taskIn(key.organizationId, taskId), index, range, taskId);
    },
    sweepAssets,
    async close() {
      clearInterval(assetSweep);
      await poller.close();
      await deps.webhooks?.close();
      await store.close();
    },
  };
}

/** The longest webhook_url taken: it is stored with the task; browsers and CDNs commonly stop near 2 KB too. */
const WEBHOOK_URL_MAX_LENGTH = 2048;

function checkWebhookUrl(url: string, deps: TasksDeps) {
  if (!url) return;
  if (url.length > WEBHOOK_URL_MAX_LENGTH) throw invalidParameter("webhook_url", `webhook_url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters.`);
  if (!deps.webhooks) throw invalidParameter("webhook_url", `Webhooks are not configured on this deployment (set ${deps.config.webhook_secret_env}).`);
  const parsed = URL.parse(url);
  if (parsed?.protocol !== "https:" && parsed?.protocol !== "http:") throw invalidParameter("webhook_url", "webhook_url must be an http or https URL.");
  // Told now rather than found at delivery, when nobody would hear of it (the same rule holds then for names that resolve to one).
  if (!deps.config.fetch_private_urls && namesPrivateHost(parsed)) {
    throw invalidParameter("webhook_url", "webhook_url must be at a public address: this deployment does not call private or loopback addresses.");
  }
}

/** The most a ListTasks page's tasks add up to, encoded: under gRPC's default 4 MiB message limit, with room for the envelope. */
export const LIST_PAGE_MAX_BYTES = 3 * 1024 * 1024;

/**
 * A ListTasks page: each task as a summary, without its prompt and its
 * polling state, its jobs' included (a prompt may be 32000 characters, and a provider's polling
 * URL may repeat it; GetTask answers the whole task), and no more tasks than
 * fit in LIST_PAGE_MAX_BYTES, newest first, so a default gRPC client always
 * takes the answer: a page may hold fewer than the limit asked. A task whose
 * summary alone passes the bound (its provider's error message, say) is left
 * out, and the tasks after it still listed; GetTask answers it.
 */
export function listPage(tasks: readonly Task[]): Task[] {
  const page: Task[] = [];
  let bytes = 0;
  for (const task of tasks) {
    const summary = create(TaskSchema, {
      ...task,
      image: task.image ? { ...task.image, prompt: "" } : undefined,
      video: task.video ? { ...task.video, prompt: "" } : undefined,
      polling: undefined,
      jobs: task.jobs.map((job) => ({ ...job, polling: undefined })),
    });
    const size = toBinary(TaskSchema, summary).length;
    if (size > LIST_PAGE_MAX_BYTES) continue;
    if (bytes + size > LIST_PAGE_MAX_BYTES) break;
    bytes += size;
    page.push(summary);
  }
  return page;
}

/** What a create asked, as one digest: the model and the parameters (their binary form is deterministic). */
function requestDigest<Desc extends DescMessage>(model: string, schema: Desc, parameters: MessageInitShape<Desc>): string {
  return createHash("sha256").update(model).update("\u0000").update(toBinary(schema, create(schema, parameters))).digest("hex");
}
