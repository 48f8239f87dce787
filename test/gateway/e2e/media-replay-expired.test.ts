// An Idempotency-Key's replay whose task passes its retention while the replay
// is under way (found when the create looked, gone when it would answer): the
// replay planned its input image as checked, so it must not make a task of
// it. The hold goes and the create is planned again with the checks on: the
// image URL, dead since the first create, is a 400 naming image, nothing held.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../../core/config/load.ts";
import { createMemoryTaskStore } from "../../../core/tasks/memory-store.ts";
import type { TaskStore } from "../../../core/tasks/store.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { DAY_MS, startInputImages, taskClient, type TaskClient } from "../../support/video-task-harness.ts";

const DEV_KEY = "sk-dev-replay";
let gateway: Gateway;
let client: TaskClient;
let images: Awaited<ReturnType<typeof startInputImages>>;
/** The store's clock: moved past the retention right after a replay found its task. */
let storeNow = Date.now();
let expireAfterLookUp = false;

beforeAll(async () => {
  images = await startInputImages();
  const memory = createMemoryTaskStore({ now: () => storeNow });
  const store: TaskStore = {
    ...memory,
    async findByIdempotencyKey(organizationId, idempotencyKey) {
      const found = await memory.findByIdempotencyKey(organizationId, idempotencyKey);
      if (found && expireAfterLookUp) {
        expireAfterLookUp = false;
        storeNow += 2 * DAY_MS;
      }
      return found;
    },
  };
  const config = loadConfigFile();
  // The input images are served on loopback (a key the schema may not know yet is harmless).
  Object.assign(config.tasks, { fetch_private_urls: true });
  gateway = await startGateway(config, { env: { ROUTER_DEV_KEY: DEV_KEY }, core: { taskStore: store } });
  client = taskClient(gateway, { kind: "videos", model: "simulator/video", key: DEV_KEY, organizationId: "org_dev" });
});
afterAll(async () => {
  await gateway?.close();
  await images?.close();
});

describe("a replay whose task expires under it", () => {
  it("makes no task of its unchecked image: planned again with the checks on, the dead URL is a 400 naming image, nothing held", async () => {
    const body = { prompt: "from a picture, then expired", image: images.url("/once/64x16.png") };
    const first = await client.created(body, { idempotencyKey: "replay-expiring" });
    const before = await client.balance();
    expireAfterLookUp = true;
    const again = await client.create(body, { idempotencyKey: "replay-expiring" });
    expect(expireAfterLookUp).toBe(false);
    expect([again.status, again.json.error?.param], JSON.stringify(again.json)).toEqual([400, "image"]);
    expect(again.json.taskId).not.toBe(first);
    expect(await client.balance()).toBe(before);
    expect(await gateway.core.tasks.store.list("org_dev", 10)).toEqual([]);
  });
});
