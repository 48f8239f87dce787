// An instance that lost a task's lease (another instance took it) stops the
// task's run at once: no more polls, a download under way is cut and nothing
// of it stored (a result already in the store is not saved to the task),
// nothing settled or released, and no webhook sent; the new holder goes on.
// The lease is taken from the instance through its task store, as another
// instance's poller would take it. A shutdown (the lease still held) saves
// and charges a result being stored.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDirectoryAssetStore, type AssetStore } from "../../../core/tasks/asset-store.ts";
import { createMemoryTaskStore } from "../../../core/tasks/memory-store.ts";
import type { TaskStore } from "../../../core/tasks/store.ts";
import { TaskStatus } from "../../../gen/router/v1/tasks_pb.js";
import { startFakeBfl } from "../../support/fake-media-bfl.ts";
import { STALL_PROMPT, TINY_PNG, type FakeMediaUpstream } from "../../support/fake-media-common.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { FLUX_IMAGE_PRICE, FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig } from "../../support/image-task-config.ts";
import { nanosOf } from "../../support/exact-money.ts";
import { startRecordingServer, type FakeUpstream } from "../../support/recording-server.ts";
import { TASK_DONE, taskClient, type TaskClient } from "../../support/video-task-harness.ts";

const SECRET = `whsec_${Buffer.from("a webhook signing key of 32 byte").toString("base64")}`;
const OTHER_INSTANCE = "another-instance";

let bfl: FakeMediaUpstream;
let receiver: FakeUpstream;
let gateway: Gateway;
let images: TaskClient;
/** Resolves once the result download has begun (its first bytes sent); the rest is never sent. */
let downloadBegun!: () => void;
const begun = new Promise<void>((resolve) => (downloadBegun = resolve));
/** Resolves when the gateway let go of the download's connection. */
let downloadClosed!: () => void;
const closed = new Promise<void>((resolve) => (downloadClosed = resolve));

beforeAll(async () => {
  bfl = await startFakeBfl({
    resultFile: {
      contentType: "image/png",
      write(res) {
        res.on("close", () => downloadClosed());
        res.write(TINY_PNG.subarray(0, 24));
        downloadBegun();
      },
    },
  });
  receiver = await startRecordingServer("/hooks", (_request, res) => void res.writeHead(200).end());
  // Leases of 0.3 s: renewed every 0.1 s, so a lease taken away is noticed within that.
  gateway = await startGateway(imageTaskConfig(bfl.url, { lease_seconds: 0.3 }), { env: { ...IMAGE_TASK_ENV, ROUTER_WEBHOOK_SECRET: SECRET } });
  images = taskClient(gateway, { kind: "images", model: FLUX_MODEL });
});
afterAll(async () => {
  await gateway?.close();
  await receiver?.close();
  await bfl?.close();
});

/** Another instance takes the task's lease, as its poller does once this one's passes. */
async function takeLease(taskId: string) {
  const { store, poller } = gateway.core.tasks;
  await store.unlease(taskId, poller.owner);
  expect(await store.lease(taskId, OTHER_INSTANCE, 60_000)).toBe(true);
}

describe("an instance that lost a task's lease", () => {
  it("stops polling the job, and its sweep does not take the task back", async () => {
    const id = await images.created({ prompt: `a long one ${STALL_PROMPT}`, webhook_url: `${receiver.url}/stalled` });
    const afterCreate = await images.balance();
    const task = await vi.waitFor(async () => {
      const stored = await images.stored(id);
      expect(bfl.polls(stored.upstreamJobId)).toBeGreaterThanOrEqual(2);
      return stored;
    }, TASK_DONE);
    await takeLease(id);
    // The run ends once its renewal finds the lease taken.
    await gateway.core.tasks.poller.idle();
    const polls = bfl.polls(task.upstreamJobId);
    await gateway.core.tasks.poller.sweep();
    await gateway.core.tasks.poller.idle();
    expect(bfl.polls(task.upstreamJobId)).toBe(polls);
    expect((await images.stored(id)).status).not.toBe(TaskStatus.FAILED);
    await gateway.core.tasks.webhooks!.idle();
    expect(receiver.requests).toHaveLength(0);
    expect(await images.balance()).toBe(afterCreate);
  });

  it("cuts a result download under way: nothing stored, settled or sent to the webhook", async () => {
    const id = await images.created({ prompt: "downloaded when the lease goes", webhook_url: `${receiver.url}/downloading` });
    const afterCreate = await images.balance();
    await begun;
    await takeLease(id);
    await gateway.core.tasks.poller.idle();
    await closed;
    const task = await images.stored(id);
    expect([task.status, task.outputs, task.routerAssets?.status]).toEqual([TaskStatus.RUNNING, [], "pending"]);
    expect(await gateway.core.tasks.assets.stream(`org_test/${id}/0`)).toBeUndefined();
    await gateway.core.tasks.webhooks!.idle();
    expect(receiver.requests).toHaveLength(0);
    expect(await images.balance()).toBe(afterCreate);
    expect(await gateway.core.accounts.usage.get("org_test", id)).toBeUndefined();
  });
});

/** A gateway whose asset store holds each put, once the result is written, until the test lets it go. */
async function storeHeldStack() {
  const bfl = await startFakeBfl();
  let resultStored!: () => void;
  const stored = new Promise<void>((resolve) => (resultStored = resolve));
  let releasePut!: () => void;
  const putReleased = new Promise<void>((resolve) => (releasePut = resolve));
  let leaseLost!: () => void;
  const lost = new Promise<void>((resolve) => (leaseLost = resolve));
  const directory = createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "lease-lost-assets-")));
  const assetStore: AssetStore = {
    ...directory,
    async put(name, bytes) {
      await directory.put(name, bytes);
      resultStored();
      await putReleased;
    },
  };
  const tasks = createMemoryTaskStore();
  const taskStore: TaskStore = {
    ...tasks,
    async lease(id, owner, leaseMs) {
      const held = await tasks.lease(id, owner, leaseMs);
      if (!held && owner !== OTHER_INSTANCE) leaseLost();
      return held;
    },
  };
  const stack = await startGateway(imageTaskConfig(bfl.url, { lease_seconds: 0.3 }), {
    env: { ...IMAGE_TASK_ENV, ROUTER_WEBHOOK_SECRET: SECRET },
    core: { assetStore, taskStore },
  });
  return {
    stack,
    client: taskClient(stack, { kind: "images", model: FLUX_MODEL }),
    /** Resolves once the store has the whole result; the put then waits for releasePut. */
    stored,
    releasePut,
    /** Resolves once this instance's renewal found the lease taken (its run is stopped then). */
    lost,
    async close() {
      releasePut();
      await stack.close();
      await bfl.close();
    },
  };
}

describe("an instance whose run is stopped while its store writes the result", () => {
  it("lost its lease: neither saves the task succeeded, nor settles, nor sends the webhook; the new holder does", async () => {
    const { stack, client, stored, releasePut, lost, close } = await storeHeldStack();
    try {
      const id = await client.created({ prompt: "stored when the lease goes", webhook_url: `${receiver.url}/storing` });
      const afterCreate = await client.balance();
      await stored;
      const { store, poller } = stack.core.tasks;
      await store.unlease(id, poller.owner);
      expect(await store.lease(id, OTHER_INSTANCE, 60_000)).toBe(true);
      await lost;
      releasePut();
      await poller.idle();
      const task = await client.stored(id);
      expect([task.status, task.outputs, task.routerAssets?.status]).toEqual([TaskStatus.RUNNING, [], "pending"]);
      await stack.core.tasks.webhooks!.idle();
      expect(receiver.requests.filter((request) => request.path === "/hooks/storing")).toHaveLength(0);
      expect(await client.balance()).toBe(afterCreate);
      expect(await stack.core.accounts.usage.get("org_test", id)).toBeUndefined();
    } finally {
      await close();
    }
  });

  it("shuts down: still holds the lease, so it saves the task succeeded and charges it (a synchronous answer is not lost)", async () => {
    const { stack, client, stored, releasePut, close } = await storeHeldStack();
    try {
      const before = await client.balance();
      const id = await client.created({ prompt: "stored while the instance stops" });
      await stored;
      const closing = stack.core.tasks.poller.close();
      releasePut();
      await closing;
      expect((await client.stored(id)).status).toBe(TaskStatus.SUCCEEDED);
      expect(before - (await client.balance())).toBe(nanosOf(FLUX_IMAGE_PRICE));
      expect(await stack.core.accounts.usage.get("org_test", id)).toMatchObject({ outcome: "ok", cost: FLUX_IMAGE_PRICE });
    } finally {
      await close();
    }
  });
});
