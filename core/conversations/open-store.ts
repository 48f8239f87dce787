// The conversation store a core runs with: Redis when REDIS_URL is set (shared
// by every instance, so a conversation continues on any of them), else memory.
import type { Environment } from "../catalogue/catalogue.ts";
import { createMemoryConversationStore } from "./memory-store.ts";
import type { ConversationStore } from "./store.ts";

export async function openConversationStore(
  env: Environment,
  options: { now: () => number; logger?: { warn(details: object, message: string): void } },
): Promise<ConversationStore> {
  if (!env.REDIS_URL) return createMemoryConversationStore({ now: options.now });
  const { createRedisConversationStore } = await import("./redis-store.ts");
  return createRedisConversationStore({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX, now: options.now, logger: options.logger });
}
