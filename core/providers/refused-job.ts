// A submission the provider refused: no job exists at the provider, so the
// task's upstream id is the router's own (unique, so the provider-prefixed
// index key of one refusal never names another task).
import { randomUUID } from "node:crypto";
import type { JobState, SubmittedJob } from "./media-job.ts";

export function refusedJob(finished: JobState): SubmittedJob {
  return { jobId: `refused_${randomUUID().replaceAll("-", "")}`, pollingUrl: "", finished };
}
