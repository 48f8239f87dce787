// What a media create answer adds for a request with a `cache_key` header
// (docs/tasks.md, "Cache"): `cached`, true when the task is an earlier one the
// key found, and then `usage_id`, the hit's own usage record (its charge, a
// tenth of the task's). A request without the header gets neither field.
import type { CreateImageResponse, CreateVideoResponse } from "../../../gen/router/v1/tasks_pb.js";

export function cacheFields(cacheKey: string, created: Pick<CreateImageResponse | CreateVideoResponse, "cached" | "usageId">): { cached?: boolean; usage_id?: string } {
  if (!cacheKey) return {};
  return created.cached ? { cached: true, usage_id: created.usageId } : { cached: false };
}
