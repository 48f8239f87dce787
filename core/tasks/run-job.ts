// One task's life after creation, run by whichever instance holds its lease:
// submit the job, poll it with backoff and jitter until it ends or its
// deadline passes, then store the outputs' bytes as hosted assets and settle
// the hold (success), or release it (failure, moderation, timeout). Every
// step is saved, so another instance that takes the lease over goes on from
// where this one stopped.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { setTimeout as sleep } from "node:timers/promises";
import {
  RouterAssetsSchema,
  TaskErrorSchema,
  TaskOutputSchema,
  TaskKind,
  TaskStatus,
  TaskUsageSchema,
  type Task,
  type TaskJob,
  type TaskOutput,
} from "../../gen/router/v1/tasks_pb.js";
import type { Catalogue, ProviderRoute } from "../catalogue/catalogue.ts";
import type { ProviderProtocol, TasksConfig } from "../config/schema.ts";
import { formatMoney, parseMoney, type Money } from "../billing/money.ts";
import { moneyFromNanos } from "../accounts/ledger-units.ts";
import { resumeAdmission, type MeterDeps } from "../metering/meter.ts";
import type { ImageTokens, JobOutput, JobState, MediaJobAdapter, MediaJobCall, SubmittedJob } from "../providers/media-job.ts";
import { UpstreamError } from "../providers/types.ts";
import type { AssetStore } from "./asset-store.ts";
import { imageCost, imagePricesOf, largestPixels } from "./image-price.ts";
import { imageTokenPricesOf, isPricedPerToken, measuredImageCost, taskTokenUsage } from "./image-token-price.ts";
import type { TaskStore } from "./store.ts";
import { loadEditFiles } from "./edit-inputs.ts";
import { storeOutput } from "./store-output.ts";
import { rememberSucceeded } from "./task-cache.ts";
import { fallsBack, nextProvider } from "./fallback.ts";
import { deliveredOutputs, firstSlotOf, jobEnded, jobImage, partialFailure, plannedJobs, progressOf } from "./task-jobs.ts";
import { indexUpstreamIds } from "./upstream-ids.ts";
import { videoSecondsHeld } from "./video-request.ts";
import type { Webhooks } from "./webhooks.ts";

export interface JobDeps {
  catalogue: Catalogue;
  accounts: MeterDeps;
  store: TaskStore;
  assets: AssetStore;
  adapters: Partial<Record<ProviderProtocol, MediaJobAdapter>>;
  config: TasksConfig;
  /** Deliveries of finished tasks to their webhook_url; absent: webhooks are not configured. */
  webhooks?: Webhooks;
  now: () => Date;
  random: () => number;
  logger?: { warn(details: object, message: string): void; error(details: object, message: string): void };
}

export const isFinished = (status: TaskStatus) => status === TaskStatus.SUCCEEDED || status === TaskStatus.FAILED || status === TaskStatus.EXPIRED;

/** The path the gateway serves a task's output at (made absolute by the gateway). */
const assetPath = (taskId: string, index: number) => `/api/v1/assets/${taskId}/${index}`;
/** The output's name in the asset store: under its organisation and task, so a task's assets go together. */
export const assetName = (task: Pick<Task, "organizationId" | "id">, index: number) => `${encodeURIComponent(task.organizationId)}/${task.id}/${index}`;

/** The abort reason of a run whose lease another instance took (poller.ts): it writes nothing more. */
export const LEASE_LOST = new Error("Another instance took this task's lease.");

/**
 * Runs the task until it ends, or until `signal` aborts (lease lost, shutdown): then the next holder goes on.
 * A shutdown still saves a result already being stored; a lost lease saves nothing more.
 */
export async function runJob(initial: Task, deps: JobDeps, signal: AbortSignal): Promise<void> {
  try {
    await runSteps(initial, deps, signal);
  } catch (error) {
    // Stopped at a save refused for the lost lease: the task is left as it was for the new holder.
    if (!signal.aborted) throw error;
  }
}

async function runSteps(initial: Task, deps: JobDeps, signal: AbortSignal): Promise<void> {
  let task = initial;
  const save = async (fields: Partial<Task>) => {
    // Once another instance took the lease, nothing is written: not a late poll's progress over the new
    // holder's, nor an end (and so no settlement, release or webhook, which follow a save).
    if (signal.reason === LEASE_LOST) throw LEASE_LOST;
    task = { ...task, ...fields, updatedAt: timestampFromMs(deps.now().getTime()) };
    await deps.store.save(task);
    return task;
  };
  /**
   * One job's fields changed, and the task's status and progress with them. The first job's id and
   * polling state are the task's own too, so a task of one job reads as before jobs (docs/tasks.md, "Fan-out").
   */
  const saveJob = (index: number, fields: Partial<TaskJob>) => {
    const jobs = task.jobs.map((job, at) => (at === index ? { ...job, ...fields } : job));
    const polling = { ...task.polling!, ...jobs[0].polling, deadline: task.polling?.deadline };
    return save({ jobs, upstreamJobId: jobs[0].upstreamJobId, polling, ...progressOf(task, jobs) });
  };

  while (!signal.aborted) {
    const route = routeOf(deps.catalogue, task);
    const adapter = route && deps.adapters[route.provider.protocol];
    const submit = adapter && submitterFor(adapter, task, deps.assets);
    if (!route || !submit) return end(task, deps, save, { code: "no_provider_available", message: `The provider ${task.provider} of this task is no longer configured.` });
    if (task.jobs.length === 0) await save({ jobs: plannedJobs(task, adapter!.maxImagesPerJob) });

    const nowMs = deps.now().getTime();
    const deadline = task.polling?.deadline ? timestampMs(task.polling.deadline) : Infinity;
    if (nowMs >= deadline) {
      const seconds = deps.config.timeout_seconds;
      return endJobs(task, deps, save, { code: "timeout", message: `The provider did not finish the task within ${seconds} seconds.` });
    }
    const pollAt = (job: TaskJob) => (job.polling?.nextPollAt ? timestampMs(job.polling.nextPollAt) : nowMs);
    const open = task.jobs.map((job, index) => ({ job, index })).filter(({ job }) => !jobEnded(job));
    if (open.length === 0) return endJobs(task, deps, save);
    const due = open.filter(({ job }) => pollAt(job) <= nowMs);
    if (due.length === 0) {
      const next = Math.min(...open.map(({ job }) => pollAt(job)));
      await sleep(Math.min(next - nowMs, deadline - nowMs), undefined, { signal }).catch(() => undefined);
      continue;
    }
    // In job order, one at a time: the provider's job ids come in the order of the outputs.
    for (const { index } of due) {
      const moved = await stepJob(index);
      // The last job ended: the task ends now, also on an instance shutting down (a lease lost refuses the save).
      if (!moved && task.jobs.every(jobEnded)) return endJobs(task, deps, save);
      if (moved || signal.aborted) break;
    }
  }

  /** Submits or polls job `index` once and saves what came of it; true when the task moved to another provider. */
  async function stepJob(index: number): Promise<boolean> {
    const route = routeOf(deps.catalogue, task)!;
    const adapter = deps.adapters[route.provider.protocol]!;
    const submit = submitterFor(adapter, task, deps.assets)!;
    const call: MediaJobCall = { provider: route.provider, route: route.route, apiKey: route.apiKey, secretKey: route.secretKey, signal, allowPrivateAddresses: deps.config.fetch_private_urls, ...attemptBounds(task, deps) };
    let job = task.jobs[index];
    const polls = (job.polling?.polls ?? 0) + 1;
    const later = (count = job.polling?.polls ?? 0) => ({ ...job.polling!, polls: count, nextPollAt: nextPollAt(count, deps) });
    let state: JobState;
    let tokens: ImageTokens | undefined;
    try {
      if (!job.upstreamJobId) {
        const submitted = await submit(call, index);
        await saveJob(index, { upstreamJobId: submitted.jobId, polling: { ...later(), pollingUrl: submitted.pollingUrl } });
        await indexUpstreamIds(deps.store, adapter, { ...task, upstreamJobId: submitted.jobId });
        job = task.jobs[index];
        if (!submitted.finished) return false;
        // A synchronous protocol answered with its submission: that answer is the first poll's.
        state = submitted.finished;
      } else {
        state = await adapter.poll(call, { jobId: job.upstreamJobId, pollingUrl: job.polling?.pollingUrl ?? "" });
      }
      if (state.state === "succeeded") tokens = state.tokens;
    } catch (error) {
      if (signal.aborted) return false;
      // A refused submission (a 4xx other than 408 and 429: the request, the key, the credits) will be
      // refused again: the job fails at once with the provider's words.
      if (!job.upstreamJobId && isRefusal(error)) return failJob(index, { code: "upstream_error", message: (error as Error).message });
      // An answer past the ceiling (answer-limits.ts) would be as large at the next poll.
      if (isTooLarge(error)) return failJob(index, { code: "upstream_error", message: `The provider's answer could not be read: ${error.message}.` });
      // A synchronous provider that failed for now: its caller waits, so the next provider is tried at once.
      if (fallsBack(task, error)) {
        deps.logger?.warn({ err: error, taskId: task.id, provider: task.provider }, "synchronous image provider failed; trying the next provider");
        await save(nextProvider(task, error as UpstreamError, deps));
        return true;
      }
      deps.logger?.warn({ err: error, taskId: task.id }, "media job call failed; trying again");
      await saveJob(index, { polling: later() });
      return false;
    }
    if (state.state === "failed") return failJob(index, { code: state.code, message: state.message });
    if (state.state !== "succeeded") {
      await saveJob(index, { status: state.state === "running" ? TaskStatus.RUNNING : job.status, progress: state.progress ?? job.progress, polling: later(polls) });
      return false;
    }
    try {
      const stored = await storeJobOutputs(task, index, state.outputs, deps, signal);
      if (stored.outputs.length === 0) return failJob(index, { code: "upstream_error", message: stored.refusals[0] ?? "The provider delivered no result." });
      // What the provider made and counted, kept with the job: a task priced per token is charged from them at its end.
      await saveJob(index, { status: TaskStatus.SUCCEEDED, progress: 1, outputs: stored.outputs, tokens: tokens && create(TaskUsageSchema, taskTokenUsage(tokens)), made: stored.made });
    } catch (error) {
      if (signal.aborted) return false;
      // A result past the download ceiling will not fit at the next try either.
      if (isTooLarge(error)) return failJob(index, { code: "upstream_error", message: `The provider's result could not be stored: ${error.message}.` });
      // The result URL did not answer: poll again (it answers the URL again) until the deadline.
      deps.logger?.warn({ err: error, taskId: task.id }, "could not fetch a media result; trying again");
      await saveJob(index, { polling: later(polls) });
    }
    return false;
  }

  async function failJob(index: number, error: { code: string; message: string }) {
    await saveJob(index, { status: TaskStatus.FAILED, error: create(TaskErrorSchema, error) });
    return false;
  }
}

/**
 * How long one attempt at a synchronous provider may take to connect and to
 * answer its first byte (its whole answer is bounded by the provider's
 * request_timeout_ms): past them, the next provider is tried (docs/tasks.md, "Fallback").
 */
function attemptBounds(task: Task, deps: JobDeps): Pick<MediaJobCall, "connectTimeoutMs" | "firstByteTimeoutMs"> {
  if (!task.synchronous) return {};
  return { connectTimeoutMs: deps.config.attempt_connect_timeout_ms, firstByteTimeoutMs: deps.config.attempt_first_byte_timeout_ms };
}

/** The adapter's submission for the task's kind; undefined when the protocol does not make that kind (no longer, after a configuration change). */
function submitterFor(adapter: MediaJobAdapter, task: Task, assets: AssetStore): ((call: MediaJobCall, job: number) => Promise<SubmittedJob>) | undefined {
  const { submitVideo, submitImage } = adapter;
  if (task.kind === TaskKind.VIDEO) return submitVideo && task.video ? (call) => submitVideo.call(adapter, call, task.video!) : undefined;
  const edits = task.image?.editInputs ?? [];
  // An edit's uploads are read back from the asset store at each submission (the first, or another instance's after a takeover).
  return submitImage && task.image
    ? async (call, job) => submitImage.call(adapter, call, jobImage(task.image!, task.jobs, job), edits.length > 0 ? await loadEditFiles(assets, edits) : undefined)
    : undefined;
}

const isTooLarge = (error: unknown): error is UpstreamError => error instanceof UpstreamError && error.reason === "answer_too_large";

const isRefusal = (error: unknown) =>
  error instanceof UpstreamError && error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;

/**
 * Fetches every output of job `index` at once (provider URLs expire) and
 * streams it to the store, in the job's asset slots. An output that is not
 * the media asked for is left out (and so not charged); so is one past the
 * images the job asked for.
 */
async function storeJobOutputs(task: Task, index: number, outputs: JobOutput[], deps: JobDeps, signal: AbortSignal) {
  const timeoutMs = deps.catalogue.provider(task.provider)?.request_timeout_ms ?? 600_000;
  const job = task.jobs[index];
  const first = firstSlotOf(task.jobs, index);
  const stored: TaskOutput[] = [];
  const refusals: string[] = [];
  for (const output of job.images > 0 ? outputs.slice(0, job.images) : outputs) {
    const name = assetName(task, first + stored.length);
    const result = await storeOutput(output, name, { kind: task.kind, assets: deps.assets, signal, timeoutMs });
    if ("refused" in result) {
      deps.logger?.warn({ taskId: task.id, reason: result.refused }, "a media result is not the media asked for; not stored");
      refusals.push(result.refused);
      continue;
    }
    stored.push(
      create(TaskOutputSchema, {
        url: "url" in output ? output.url : "",
        mediaType: result.mediaType,
        assetName: name,
        sizeBytes: BigInt(result.sizeBytes),
        upstreamId: output.upstreamId ?? "",
        durationSeconds: output.durationSeconds ?? 0,
        width: result.width ?? 0,
        height: result.height ?? 0,
      }),
    );
  }
  // What the provider made for this job (before any was refused), which a per-token charge shares out.
  return { outputs: stored, refusals, made: stored.length + refusals.length };
}

/** The token counts of the jobs that delivered, summed; undefined when none reported any. */
function jobsTokens(jobs: readonly TaskJob[]): ImageTokens | undefined {
  const counted = jobs.filter((job) => job.status === TaskStatus.SUCCEEDED && job.tokens);
  if (counted.length === 0) return undefined;
  const sum = (field: "inputTextTokens" | "inputImageTokens" | "outputImageTokens" | "outputTextTokens") => counted.reduce((total, job) => total + job.tokens![field], 0);
  return { inputText: sum("inputTextTokens"), inputImage: sum("inputImageTokens"), outputImage: sum("outputImageTokens"), outputText: sum("outputTextTokens") };
}

/**
 * Ends the task once its jobs have (or, with `stop`, ends the jobs still
 * open with it: a timeout): succeeded with the outputs of the jobs that
 * delivered, in job order, settled for those alone, with the failed jobs'
 * reason in `error`; failed, its hold returned, when none delivered.
 */
async function endJobs(task: Task, deps: JobDeps, save: (fields: Partial<Task>) => Promise<Task>, stop?: { code: string; message: string }) {
  const jobs = stop ? task.jobs.map((job) => (jobEnded(job) ? job : { ...job, status: TaskStatus.FAILED, error: create(TaskErrorSchema, stop) })) : task.jobs;
  const stored = deliveredOutputs(jobs);
  const failure = partialFailure(jobs);
  if (stored.length === 0) return end({ ...task, jobs }, deps, save, failure ? jobs.find((job) => job.status === TaskStatus.FAILED)!.error! : { code: "upstream_error", message: "The provider delivered no result." });
  const nowMs = deps.now().getTime();
  const pixels = stored.map((output) => (output.width && output.height ? output.width * output.height : undefined));
  const { usage, cost } = task.kind === TaskKind.VIDEO ? videoCharge(deps.catalogue, task, stored) : imageCharge(deps.catalogue, task, pixels, jobsTokens(jobs), jobs.reduce((sum, job) => sum + job.made, 0));
  const succeeded: Partial<Task> = {
    jobs,
    status: TaskStatus.SUCCEEDED,
    progress: 1,
    outputs: stored,
    error: failure,
    usage: create(TaskUsageSchema, { ...usage, cost: formatMoney(cost) }),
    completedAt: timestampFromMs(nowMs),
    routerAssets: create(RouterAssetsSchema, {
      status: "ready",
      urls: stored.map((_, index) => assetPath(task.id, index)),
      cachedAt: timestampFromMs(nowMs),
      expiresAt: task.expiresAt,
    }),
  };
  // Its cache key (if any) is remembered before the task reads as succeeded, so whoever saw it succeed finds it by
  // the key; until the save, the entry names a task not yet succeeded, which no create reuses (task-cache.ts).
  await rememberSucceeded(deps.store, { ...task, ...succeeded }, deps.logger);
  const finished = await save(succeeded);
  await deps.store.finish(task);
  admissionOf(task, deps).settle(
    { tokens: { inputTokens: finished.usage?.inputTokens ?? 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: finished.usage?.outputTokens ?? 0, reasoningTokens: 0 }, cost },
    usageDetails(task, deps, "ok"),
  );
  deps.webhooks?.send(finished);
}

/** Ends the task failed: nothing delivered, so its hold goes back. */
async function end(task: Task, deps: JobDeps, save: (fields: Partial<Task>) => Promise<Task>, error: { code: string; message: string }) {
  const failed = await save({
    jobs: task.jobs,
    status: TaskStatus.FAILED,
    error: create(TaskErrorSchema, error),
    usage: create(TaskUsageSchema, { images: 0, cost: "0" }),
    completedAt: timestampFromMs(deps.now().getTime()),
    routerAssets: undefined,
  });
  await deps.store.finish(task);
  admissionOf(task, deps).release(usageDetails(task, deps, error.code));
  deps.webhooks?.send(failed);
}

/** The task's admission, whichever instance admitted it: its hold is kept under the task id. */
const admissionOf = (task: Task, deps: JobDeps) =>
  resumeAdmission(deps.accounts, { requestId: task.id, key: { organizationId: task.organizationId, keyId: task.keyId }, holdNanos: task.holdNanos });

function usageDetails(task: Task, deps: JobDeps, outcome: string) {
  const nowMs = deps.now().getTime();
  return { model: task.modelId, provider: task.provider, outcome, requestTags: [], latencyMs: nowMs - (task.createdAt ? timestampMs(task.createdAt) : nowMs), streamed: false, now: nowMs };
}

function routeOf(catalogue: Catalogue, task: Task): ProviderRoute | undefined {
  return catalogue.get(task.modelId)?.routes.find((route) => route.provider.id === task.provider);
}

/**
 * Images delivered, each at the route's price for its real size (its bytes'
 * dimensions; the input images' as measured at creation); an image whose size
 * cannot be read is priced at the largest size held for. Never more than the hold.
 */
function imageCharge(catalogue: Catalogue, task: Task, pixels: readonly (number | undefined)[], tokens: ImageTokens | undefined, made: number) {
  const model = catalogue.get(task.modelId);
  const pricing = routeOf(catalogue, task)?.route.pricing;
  const most = moneyFromNanos(task.holdNanos);
  const usage = { images: pixels.length, ...taskTokenUsage(tokens) };
  if (isPricedPerToken(pricing)) {
    // Measured: the provider's token counts at the route's token prices (image-token-price.ts).
    const measured = measuredImageCost(imageTokenPricesOf(pricing), tokens, pixels.length, made, most / BigInt(Math.max(1, task.image?.n ?? 1)));
    return { usage, cost: measured < most ? measured : most };
  }
  const prices = imagePricesOf(pricing ?? { prompt: "0", completion: "0", request: "0" });
  const held = largestPixels(model?.config.supported_params_details ?? {}, task.image?.size ?? "");
  const inputPixels = Number(task.image?.inputPixels ?? 0n);
  const cost = pixels.reduce<Money>((sum, each) => sum + imageCost(prices, each ?? held, inputPixels), 0n);
  return { usage, cost: cost < most ? cost : most };
}

/**
 * Seconds delivered at the route's `video_output_per_second`: each video's
 * length as the provider measured it, rounded up to whole seconds, else the
 * seconds held for it; never more seconds than were held, nor more than the hold.
 */
function videoCharge(catalogue: Catalogue, task: Task, outputs: readonly TaskOutput[]) {
  const held = videoSecondsHeld(catalogue.get(task.modelId)?.config.supported_params_details ?? {}, task.video ?? { length: 0, seconds: 0 });
  const delivered = outputs.reduce((sum, output) => sum + (output.durationSeconds > 0 ? Math.ceil(output.durationSeconds) : held), 0);
  const seconds = Math.min(delivered, held);
  const price = routeOf(catalogue, task)?.route.pricing.video_output_per_second;
  const cost = (price ? parseMoney(price) : 0n) * BigInt(seconds);
  const most = moneyFromNanos(task.holdNanos);
  return { usage: { videos: outputs.length, videoSeconds: seconds }, cost: cost < most ? cost : most };
}

/** Half again as long after each poll (`polls` so far), up to the maximum, then drawn between half and all of that (jitter). */
function nextPollAt(polls: number, deps: JobDeps) {
  const { poll_interval_ms: first, poll_max_interval_ms: most } = deps.config;
  const backoff = Math.min(most, first * 1.5 ** polls);
  const wait = backoff * (0.5 + deps.random() / 2);
  return timestampFromMs(deps.now().getTime() + Math.round(wait));
}
