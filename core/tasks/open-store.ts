// The task store a core runs with: Redis when REDIS_URL is set (shared by
// every instance, so any answers for a task and one polls it), else memory.
import type { Environment } from "../catalogue/catalogue.ts";
import { createMemoryTaskStore } from "./memory-store.ts";
import type { TaskStore } from "./store.ts";

export async function openTaskStore(env: Environment, options: { now: () => number; logger?: { warn(details: object, message: string): void } }): Promise<TaskStore> {
  if (!env.REDIS_URL) return createMemoryTaskStore({ now: options.now });
  const { createRedisTaskStore } = await import("./redis-store.ts");
  return createRedisTaskStore({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX, now: options.now, logger: options.logger });
}
