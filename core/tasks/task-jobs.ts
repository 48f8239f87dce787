// A task's provider jobs (docs/tasks.md, "Fan-out"): an image task asking
// for more images than one job of its provider makes is split into several
// jobs, run side by side; their outputs, in job order, are the task's. This
// file holds the bookkeeping: the split, a job's parameters, and what the
// task shows of its jobs (status, progress, outputs, a partial failure).
import { create } from "@bufbuild/protobuf";
import { TaskErrorSchema, TaskJobSchema, TaskKind, TaskStatus, type ImageParameters, type Task, type TaskError, type TaskJob, type TaskOutput } from "../../gen/router/v1/tasks_pb.js";

/**
 * The jobs of a task about to be submitted to a provider making `perJob`
 * images a job: n split into full jobs and the rest (n 5 at 2 a job: 2, 2, 1);
 * one job for a video. A task saved before jobs existed, already submitted,
 * is its one job as it stands.
 */
export function plannedJobs(task: Task, perJob: number): TaskJob[] {
  const polling = { pollingUrl: task.polling?.pollingUrl ?? "", polls: task.polling?.polls ?? 0, nextPollAt: task.polling?.nextPollAt };
  if (task.kind === TaskKind.VIDEO || task.upstreamJobId) {
    return [create(TaskJobSchema, { upstreamJobId: task.upstreamJobId, polling, images: task.image?.n ?? 0, status: TaskStatus.QUEUED })];
  }
  const n = Math.max(1, task.image?.n ?? 1);
  const each = Math.max(1, perJob);
  const jobs: TaskJob[] = [];
  for (let left = n; left > 0; left -= each) jobs.push(create(TaskJobSchema, { images: Math.min(each, left), polling, status: TaskStatus.QUEUED }));
  return jobs;
}

/**
 * What job `index` asks the provider: its share of n, and, when a seed was
 * given, the seed plus the job's place, so the jobs do not all make the same
 * image (a provider makes one image of a seed and prompt).
 */
export function jobImage(image: ImageParameters, jobs: readonly TaskJob[], index: number): ImageParameters {
  const seed = image.seed === undefined ? undefined : image.seed + BigInt(index);
  return { ...image, n: jobs[index].images, seed };
}

/** Where job `index`'s outputs start among the task's asset slots: the images the jobs before it ask for. */
export function firstSlotOf(jobs: readonly TaskJob[], index: number): number {
  return jobs.slice(0, index).reduce((sum, job) => sum + Math.max(1, job.images), 0);
}

export const jobEnded = (job: TaskJob) => job.status === TaskStatus.SUCCEEDED || job.status === TaskStatus.FAILED;

/** The task's status and progress as its jobs stand: running once one runs, progress their mean. */
export function progressOf(task: Task, jobs: readonly TaskJob[]): Pick<Task, "status" | "progress"> {
  const running = jobs.some((job) => job.status === TaskStatus.RUNNING || jobEnded(job));
  const progress = jobs.reduce((sum, job) => sum + (job.status === TaskStatus.SUCCEEDED ? 1 : job.progress), 0) / Math.max(1, jobs.length);
  return { status: running ? TaskStatus.RUNNING : task.status, progress: jobs.length > 0 ? progress : task.progress };
}

/** The outputs of the jobs that succeeded, in job order. */
export const deliveredOutputs = (jobs: readonly TaskJob[]): TaskOutput[] => jobs.flatMap((job) => job.outputs);

/**
 * Why jobs failed, told on a task that delivered anyway (some jobs made their
 * images): the first failed job's code, with how many images were not made.
 * Undefined when none failed.
 */
export function partialFailure(jobs: readonly TaskJob[]): TaskError | undefined {
  const failed = jobs.filter((job) => job.status === TaskStatus.FAILED);
  if (failed.length === 0) return undefined;
  const missing = failed.reduce((sum, job) => sum + Math.max(1, job.images), 0);
  const asked = jobs.reduce((sum, job) => sum + Math.max(1, job.images), 0);
  const first = failed[0].error;
  return create(TaskErrorSchema, { code: first?.code || "upstream_error", message: `${missing} of ${asked} images could not be made: ${first?.message ?? "the provider failed"}` });
}
