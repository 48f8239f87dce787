// A task's charge never exceeds what was held for it, whatever the provider
// delivers: an image larger than the size asked (priced per megapixel) is
// charged the hold, and a video longer than the seconds asked is charged the
// seconds held. The balance, the task's usage and the usage record agree.
import { afterAll, describe, expect, it } from "vitest";
import { solidPng } from "../../../core/providers/simulator/media.ts";
import { BFL_KEY, startFakeBfl } from "../../support/fake-media-bfl.ts";
import { KLING_ACCESS_KEY, KLING_SECRET_KEY, startFakeKling } from "../../support/fake-media-kling.ts";
import { nanosOf } from "../../support/exact-money.ts";
import { startGateway } from "../../support/harness.ts";
import { mediaTaskConfig, TASK_ACCOUNTS_ENV } from "../../support/media-task-config.ts";
import { taskClient } from "../../support/video-task-harness.ts";

const started: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const each of started.reverse()) await each.close();
});

describe("an image larger than asked", () => {
  it("is charged its hold (the size asked), not its real megapixels", async () => {
    // BFL makes 2048x2048 (4 MP) whatever is asked.
    const bfl = await startFakeBfl({ resultFile: { contentType: "image/png", bytes: solidPng(2048, 2048, Buffer.from([255, 0, 0])) } });
    started.push(bfl);
    const model = "bfl/flux-2-pro";
    const config = mediaTaskConfig(
      [{ id: "bfl", label: "Black Forest Labs", protocol: "bfl", base_url: bfl.url, api_key_env: "BFL_API_KEY", timeout_ms: 5000 }],
      [
        {
          id: model,
          name: "FLUX.2 [pro]",
          output: "image",
          details: { size: { max_megapixels: 4, multiple_of: 16, min: 64 }, n: { min: 1, max: 1 } },
          routes: [{ provider: "bfl", providerModelId: "flux-2-pro", pricing: { image_output_first_megapixel: "0.03", image_output_per_megapixel: "0.015" } }],
        },
      ],
    );
    const gateway = await startGateway(config, { env: { ...TASK_ACCOUNTS_ENV, BFL_API_KEY: BFL_KEY } });
    started.push(gateway);
    const images = taskClient(gateway, { kind: "images", model });
    const before = await images.balance();
    const id = await images.created({ prompt: "a square", size: "1024x1024" });
    const done = await images.finished(id);
    expect(done.status).toBe("completed");
    // 1 MP held (0.03); 4 MP made would be 0.03 + 3 x 0.015 = 0.075.
    expect((await images.stored(id)).holdNanos).toBe(nanosOf("0.03"));
    expect(done.usage).toEqual({ images: 1, cost: 0.03 });
    expect(await images.balance()).toBe(before - nanosOf("0.03"));
    expect(await gateway.core.accounts.usage.get("org_test", id)).toMatchObject({ outcome: "ok", cost: "0.03" });
  });
});

describe("a video longer than asked", () => {
  it("is charged the seconds held, not the seconds delivered", async () => {
    // Kling reports twice the seconds asked.
    const kling = await startFakeKling({ measuredSeconds: (asked) => asked * 2 });
    started.push(kling);
    const model = "kling/kling-v2-5-turbo";
    const config = mediaTaskConfig(
      [{ id: "kling", label: "Kling AI", protocol: "kling", base_url: kling.url, api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY", timeout_ms: 5000 }],
      [
        {
          id: model,
          name: "Kling 2.5 Turbo",
          output: "video",
          details: { length: [5, 10] },
          routes: [{ provider: "kling", providerModelId: "kling-v2-5-turbo", pricing: { video_output_per_second: "0.042" } }],
        },
      ],
    );
    const gateway = await startGateway(config, { env: { ...TASK_ACCOUNTS_ENV, KLING_ACCESS_KEY, KLING_SECRET_KEY } });
    started.push(gateway);
    const videos = taskClient(gateway, { kind: "videos", model });
    const before = await videos.balance();
    const id = await videos.created({ prompt: "five seconds", length: 5 });
    const done = await videos.finished(id);
    expect(done.data.status).toBe("completed");
    const task = await videos.stored(id);
    expect(task.outputs[0].durationSeconds).toBe(10);
    // 5 s held at 0.042 (0.21); the 10 s delivered would be 0.42.
    expect(task.holdNanos).toBe(nanosOf("0.21"));
    expect(done.usage).toEqual({ videos: 1, video_seconds: 5, cost: 0.21 });
    expect(await videos.balance()).toBe(before - nanosOf("0.21"));
    expect(await gateway.core.accounts.usage.get("org_test", id)).toMatchObject({ outcome: "ok", cost: "0.21" });
  });
});
