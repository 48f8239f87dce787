// A lone UTF-16 surrogate (JSON's `\ud800` escape) in caller text, with the
// tasks and responses in a real redis-server: the gateway replaces it by U+FFFD
// at the edge, so the record is written and read back like any other. Before,
// the call was accepted and held, and protobuf-es then refused the stored JSON
// ("invalid UTF8") on every read: a 503 state_unavailable for good, the task
// never run. A record that cannot be decoded at all is its own error (500,
// logged), never a Redis outage, and the poller drops it once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromJsonString } from "@bufbuild/protobuf";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfigFile } from "../../../core/config/load.ts";
import { conversationRedisKeys } from "../../../core/conversations/redis-keys.ts";
import { taskRedisKeys, unfinishedMember } from "../../../core/tasks/redis-keys.ts";
import { createRedisTaskStore } from "../../../core/tasks/redis-store.ts";
import { createTaskPoller } from "../../../core/tasks/poller.ts";
import { TurnSchema } from "../../../gen/router/v1/conversations_pb.js";
import { TaskSchema } from "../../../gen/router/v1/tasks_pb.js";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";
import { taskClient, type TaskClient } from "../../support/video-task-harness.ts";

const DEV_KEY = "sk-dev-surrogates";
const PREFIX = "surrogates:";
const ORG = "org_dev";

let redis: RedisServer;
let gateway: Gateway;
let images: TaskClient;
let raw: ReturnType<typeof createClient>;
let assetsDir: string;

beforeAll(async () => {
  redis = await startRedisServer();
  // A private assets directory: the test sweeps it.
  assetsDir = mkdtempSync(join(tmpdir(), "router-surrogates-"));
  const config = loadConfigFile();
  gateway = await startGateway({ ...config, tasks: { ...config.tasks, assets_dir: assetsDir } }, { env: { ROUTER_DEV_KEY: DEV_KEY, REDIS_URL: redis.url, REDIS_PREFIX: PREFIX } });
  images = taskClient(gateway, { kind: "images", model: "simulator/image", key: DEV_KEY, organizationId: ORG });
  raw = createClient({ url: redis.url });
  await raw.connect();
});
afterAll(async () => {
  await raw?.close();
  await gateway?.close();
  await redis?.stop();
  if (assetsDir) rmSync(assetsDir, { recursive: true, force: true });
});

async function postResponse(body: object) {
  // JSON.stringify writes a lone surrogate as its `\ud800` escape, as a client's JSON encoder does.
  const response = await fetch(`${gateway.apiUrl}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${DEV_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

async function getResponse(id: string) {
  const response = await fetch(`${gateway.apiUrl}/responses/${id}`, { headers: { authorization: `Bearer ${DEV_KEY}` } });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

/** The text of a Responses answer's message item. */
const textOf = (response: Record<string, any>): string => response.output.find((item: { type: string }) => item.type === "message").content[0].text;

describe("a lone surrogate in caller text, with Redis", () => {
  it("an image prompt: the task runs, is read back and charged once", async () => {
    const before = await images.balance();
    const task = await images.finished(await images.created({ prompt: "p\ud800", size: "256x256" }));
    expect(task).toMatchObject({ status: "completed", usage: { images: 1 } });
    expect((await images.stored(task.chat_id)).image?.prompt).toBe("p\ufffd");
    expect(await images.balance()).toBeLessThan(before);
  });

  it("a response's input, stored and background: read back with U+FFFD in its place", async () => {
    const stored = await postResponse({ model: "simulator/echo", input: "x\ud800y", store: true });
    expect(stored.status, JSON.stringify(stored.json)).toBe(200);
    expect(textOf(stored.json)).toBe("You said: x\ufffdy");
    await vi.waitFor(async () => expect((await getResponse(stored.json.id)).status).toBe(200));

    const queued = await postResponse({ model: "simulator/echo", input: [{ role: "user", content: "a\udc00b" }], background: true, metadata: { "k\ud800": "v\udfff" } });
    expect(queued.status, JSON.stringify(queued.json)).toBe(200);
    const done = await vi.waitFor(async () => {
      const answer = await getResponse(queued.json.id);
      expect(answer.json.status).toBe("completed");
      return answer.json;
    });
    expect(done.metadata).toEqual({ "k\ufffd": "v\ufffd" });
    expect(textOf(done)).toBe("You said: a\ufffdb");
  });

  it("in a field's name: the 400 names it with U+FFFD", async () => {
    const answer = await postResponse({ model: "simulator/echo", input: "hi", "odd\ud800": 1 });
    expect([answer.status, answer.json.error.param]).toEqual([400, "odd\ufffd"]);
  });

  it("in a body nested far deeper than the limit: the usual 400, the walk has its own stack", async () => {
    const deep = `{"model":"simulator/echo","input":"\\ud800","metadata":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const response = await fetch(`${gateway.apiUrl}/responses`, { method: "POST", headers: { authorization: `Bearer ${DEV_KEY}` }, body: deep });
    expect([response.status, ((await response.json()) as Record<string, any>).error.param]).toEqual([400, "metadata"]);
  });

  it("written by the store from any source (a provider's text): stored with U+FFFD, so any reader decodes it", async () => {
    const id = await images.created({ prompt: "plain", size: "256x256" });
    const task = await images.finished(id).then(() => images.stored(id));
    task.image!.prompt = "from\udbffupstream";
    await gateway.core.tasks.store.save(task);
    expect((await images.stored(id)).image?.prompt).toBe("from\ufffdupstream");
    // Decoded as protobuf-es does without the store's lenient read (an instance of an earlier version).
    expect(fromJsonString(TaskSchema, (await raw.get(taskRedisKeys(PREFIX).task(ORG, id)))!).image?.prompt).toBe("from\ufffdupstream");

    const stored = await postResponse({ model: "simulator/echo", input: "plain", store: true });
    const { store } = gateway.core.conversations;
    const turn = (await store.get(ORG, stored.json.id))!;
    turn.metadata = { "from\ud800upstream": "v\udfff" };
    await store.save(turn);
    const json = (await raw.hGet(conversationRedisKeys(PREFIX).turn(ORG, turn.id), "turn"))!;
    expect(fromJsonString(TurnSchema, json).metadata).toEqual({ "from\ufffdupstream": "v\ufffd" });
  });

  it("a task stored with a lone surrogate before this rule is still read, with U+FFFD", async () => {
    const id = await images.created({ prompt: "old record", size: "256x256" });
    await images.finished(id);
    const key = taskRedisKeys(PREFIX).task(ORG, id);
    const json = (await raw.get(key))!;
    await raw.set(key, json.replace('"old record"', '"old\\ud800record"'));
    const read = await images.read(id);
    expect(read.status, JSON.stringify(read.json)).toBe(200);
    expect((await images.stored(id)).image?.prompt).toBe("old\ufffdrecord");
  });

  it("a task record that cannot be decoded: 500 internal_error, not 503 state_unavailable", async () => {
    const id = await images.created({ prompt: "to break", size: "256x256" });
    await images.finished(id);
    await raw.set(taskRedisKeys(PREFIX).task(ORG, id), '{"id": 12, "status": "no such status"}');
    const read = await images.read(id);
    expect([read.status, read.json.error?.code]).toEqual([500, "internal_error"]);
    // The asset sweep keeps the folder of a task it cannot read, and goes on with the others.
    await expect(gateway.core.tasks.sweepAssets()).resolves.toBe(0);
  });

  it("the poller logs an unreadable unfinished task once and drops it from the unfinished set", async () => {
    // A prefix of its own: the gateway's poller must not take the task first.
    const prefix = "surrogates-poller:";
    const keys = taskRedisKeys(prefix);
    const store = await createRedisTaskStore({ url: redis.url, prefix });
    const logged: string[] = [];
    const logger = { warn: (_: object, message: string) => logged.push(message), error: (_: object, message: string) => logged.push(message) };
    const run = vi.fn(async () => {});
    const poller = createTaskPoller({ store, leaseMs: 60_000, watchMs: 10, run, logger });
    try {
      await raw.set(keys.task(ORG, "tsk_unreadable"), "{not json");
      await raw.sAdd(keys.unfinished(), unfinishedMember(ORG, "tsk_unreadable"));
      await poller.sweep();
      await poller.idle();
      await poller.sweep();
      await poller.idle();
      expect(logged).toEqual(["media task record unreadable: dropped from the unfinished tasks"]);
      expect(await raw.sMembers(keys.unfinished())).toEqual([]);
      expect(run).not.toHaveBeenCalled();
    } finally {
      await poller.close();
      await store.close();
    }
  });
});
