// The contract between the task service (core/tasks/) and one asynchronous
// media protocol: submit a job, then poll it until it ends. A protocol says
// only how its requests and answers look; the task service does the rest
// (leases, backoff, timeouts, billing, hosted copies of the outputs).
import type { ImageParameters } from "../../gen/router/v1/tasks_pb.js";
import type { ModelProviderConfig, ProviderConfig } from "../config/schema.ts";

export interface MediaJobCall {
  provider: ProviderConfig;
  route: ModelProviderConfig;
  apiKey: string;
  signal: AbortSignal;
}

/** What the task keeps of a submitted job to poll it, from any instance. */
export interface SubmittedJob {
  jobId: string;
  /** Where the job's status is read (BFL answers it with the job; others build it from the id). */
  pollingUrl: string;
}

export interface JobOutput {
  /** The provider's URL of the result; the task service fetches it at once (it may expire). */
  url: string;
}

export type JobState =
  | { state: "queued" | "running"; progress?: number }
  | { state: "succeeded"; outputs: JobOutput[] }
  /** `code`: upstream_error, content_moderated or request_moderated; `message`: the provider's words. */
  | { state: "failed"; code: string; message: string };

export interface MediaJobAdapter {
  /** Most images one job makes (a request for more is refused before anything is held). */
  readonly maxImagesPerJob: number;
  /** The optional image parameters the protocol carries (`size`, `output_format`...); any other given is refused with a 400. */
  readonly imageParameters: readonly string[];
  submitImage(call: MediaJobCall, image: ImageParameters): Promise<SubmittedJob>;
  poll(call: MediaJobCall, job: SubmittedJob): Promise<JobState>;
}
