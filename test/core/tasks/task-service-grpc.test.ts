// router.v1.TaskService on the core's network face: reflection lists it, and
// `buf curl` (no schema given) creates an image task on the BFL fake, reads it
// until it succeeded and lists it; another organisation's key gets not found.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeBfl } from "../../support/fake-media-bfl.ts";
import type { FakeMediaUpstream } from "../../support/fake-media-common.ts";
import { bufCurl } from "../../support/grpc-js.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../support/harness.ts";
import { FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig, OTHER_KEY } from "../../support/image-task-config.ts";
import { signedLink } from "../../support/signed-link.ts";

const SERVICE = "router.v1.TaskService";
let bfl: FakeMediaUpstream;
let gateway: Gateway;

beforeAll(async () => {
  bfl = await startFakeBfl();
  gateway = await startGateway(imageTaskConfig(bfl.url), { env: IMAGE_TASK_ENV, split: true });
});
afterAll(async () => {
  await gateway?.close();
  await bfl?.close();
});

const call = async (method: string, body: unknown) => JSON.parse((await bufCurl("--data", JSON.stringify(body), `${gateway.coreServer!.url}/${SERVICE}/${method}`)).stdout);

describe("TaskService over gRPC", { timeout: 60_000 }, () => {
  it("is listed by reflection", async () => {
    const { stdout } = await bufCurl("--list-services", gateway.coreServer!.url);
    expect(stdout.trim().split("\n")).toContain(SERVICE);
  });

  it("creates, gets and lists an image task with buf curl", async () => {
    const created = await call("CreateImage", { caller: { apiKey: TEST_KEY }, model: FLUX_MODEL, image: { prompt: "over grpc" } });
    expect(created.task).toMatchObject({ organizationId: "org_test", modelId: FLUX_MODEL, provider: "bfl", kind: "TASK_KIND_IMAGE", status: "TASK_STATUS_QUEUED" });
    const id = created.task.id as string;
    const done = await vi.waitFor(async () => {
      const { task } = await call("GetTask", { caller: { apiKey: TEST_KEY }, id });
      expect(task.status).toBe("TASK_STATUS_SUCCEEDED");
      return task;
    }, { timeout: 20_000, interval: 50 });
    expect(done).toMatchObject({ upstreamJobId: expect.any(String), routerAssets: { status: "ready", urls: [signedLink(`/api/v1/assets/${id}/0`)] }, usage: { images: 1, cost: "0.03" } });
    const listed = await call("ListTasks", { caller: { apiKey: TEST_KEY } });
    expect(listed.tasks.map((task: { id: string }) => task.id)).toContain(id);
    await expect(call("GetTask", { caller: { apiKey: OTHER_KEY }, id })).rejects.toThrow(/not_found/);
  });
});
