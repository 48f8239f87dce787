// Fallback of a synchronous image task (docs/tasks.md, "Fallback"): when the
// synchronous provider's submission fails in a way another provider may not
// (a 5xx, a 429, a timeout, no connection), the task moves to the next
// provider planned for it (Task.fallback_providers: the model's other routes
// of the kind asked) at once, rather than trying the same one again, and the
// provider left is written in the task's routing trace (Task.attempts).
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { RoutingAttemptSchema } from "../../gen/router/v1/inference_pb.js";
import type { Task } from "../../gen/router/v1/tasks_pb.js";
import { UpstreamError } from "../providers/types.ts";
import type { JobDeps } from "./run-job.ts";
import { plannedJobs } from "./task-jobs.ts";

/**
 * Whether the failed submission moves the task on: it is synchronous (its
 * caller is waiting), a provider is left to try, nothing was submitted
 * anywhere yet, and the failure is not the provider's final word on the
 * request (a refusal, which the next would give too).
 */
export function fallsBack(task: Task, error: unknown): boolean {
  const retryable = error instanceof UpstreamError && error.retryable;
  return retryable && task.synchronous && task.fallbackProviders.length > 0 && task.jobs.every((job) => !job.upstreamJobId);
}

/** The task's fields once moved to its next provider: that provider, its jobs planned anew, the one left in the trace. */
export function nextProvider(task: Task, error: UpstreamError, deps: Pick<JobDeps, "catalogue" | "adapters" | "now">): Partial<Task> {
  const [provider, ...rest] = task.fallbackProviders;
  const route = deps.catalogue.get(task.modelId)?.routes.find((candidate) => candidate.provider.id === provider);
  const adapter = route && deps.adapters[route.provider.protocol];
  const left = create(RoutingAttemptSchema, { modelId: task.modelId, provider: task.provider, outcome: "error", reason: error.reason || "upstream_error" });
  const polling = { ...task.polling!, pollingUrl: "", polls: 0, nextPollAt: timestampFromMs(deps.now().getTime()) };
  const moved = { ...task, provider, upstreamJobId: "", polling };
  return {
    provider,
    fallbackProviders: rest,
    attempts: [...task.attempts, left],
    synchronous: adapter?.synchronousImages === true,
    jobs: plannedJobs(moved, adapter?.maxImagesPerJob ?? 1),
    polling,
  };
}
