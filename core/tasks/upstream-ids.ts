// The provider's ids of a submitted job, indexed so that a provider-prefixed id
// (`<provider>:<id>`, docs/tasks.md "getAsyncResponse") finds its task: the job
// id, and any other id the protocol says names the same job (Vertex's short
// operation id). A caller may hold either, as the provider shows both.
import type { Task } from "../../gen/router/v1/tasks_pb.js";
import type { MediaJobAdapter } from "../providers/media-job.ts";
import type { TaskStore } from "./store.ts";

export async function indexUpstreamIds(store: Pick<TaskStore, "indexUpstream">, adapter: Pick<MediaJobAdapter, "jobIdAliases">, task: Task): Promise<void> {
  await store.indexUpstream(task);
  for (const alias of new Set(adapter.jobIdAliases?.(task.upstreamJobId) ?? [])) {
    if (alias && alias !== task.upstreamJobId) await store.indexUpstream(task, alias);
  }
}
