// Image tasks with their assets in an S3-compatible bucket (tasks.asset_storage:
// s3) on a local s3rver: the gateway serves the stored image byte for byte and
// by range, also after BFL's URL expired; the object is in the bucket under the
// key prefix and nothing is written to a directory; the sweep removes an
// expired task's objects. Two instances that share Redis and the bucket, and
// no directory, both serve every asset. A bucket without REDIS_URL (tasks in
// one instance's memory) is refused at start: its sweep would remove the other
// instances' assets.
import { readdirSync } from "node:fs";
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouterConfig } from "../../../../core/config/schema.ts";
import { startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { TINY_PNG, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig } from "../../../support/image-task-config.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";
import { taskClient } from "../../../support/video-task-harness.ts";
import { S3_CREDENTIALS, startS3Server, type S3Server } from "../../../support/s3-server.ts";

const DONE = { timeout: 15_000, interval: 20 };
const KEY_PREFIX = "router-assets/";
/** The credentials reach the core through the variables the configuration names. */
const ENV = { ...IMAGE_TASK_ENV, ASSETS_KEY_ID: S3_CREDENTIALS.accessKeyId, ASSETS_SECRET: S3_CREDENTIALS.secretAccessKey };

let s3: S3Server;
let fakeNow = Date.now();
let bfl: FakeMediaUpstream;
let redis: RedisServer;
beforeAll(async () => {
  [s3, bfl, redis] = await Promise.all([startS3Server(), startFakeBfl({ now: () => fakeNow }), startRedisServer()]);
});
afterAll(async () => {
  await Promise.all([s3?.close(), bfl?.close(), redis?.stop()]);
});

/** The tasks in Redis, as a bucket needs: each test under its own prefix. */
const redisEnv = (prefix: string) => ({ ...ENV, REDIS_URL: redis.url, REDIS_PREFIX: prefix });

/** The BFL test configuration with its assets in the bucket (its own assets_dir stays, unused). */
function s3Config(overrides: Partial<RouterConfig["tasks"]> = {}): RouterConfig {
  return imageTaskConfig(bfl.url, {
    asset_storage: "s3",
    s3: {
      bucket: s3.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
      force_path_style: true,
      key_prefix: KEY_PREFIX,
      access_key_id_env: "ASSETS_KEY_ID",
      secret_access_key_env: "ASSETS_SECRET",
    },
    ...overrides,
  });
}

const bucketClient = () => new S3Client({ region: "us-east-1", endpoint: s3.endpoint, forcePathStyle: true, credentials: S3_CREDENTIALS });

const images = (gateway: Gateway) => taskClient(gateway, { kind: "images", model: FLUX_MODEL });
const createImage = (gateway: Gateway, prompt: string) => images(gateway).created({ prompt, output_format: "png" });

async function completed(gateway: Gateway, id: string) {
  const done = await images(gateway).finished(id, DONE);
  expect(done.status).toBe("completed");
  return done;
}

/** The asset at a gateway's URL (another instance's URL rebased onto it), with an optional Range. */
async function download(gateway: Gateway, url: string, range?: string) {
  const path = new URL(url).pathname;
  const headers: Record<string, string> = { authorization: `Bearer ${TEST_KEY}` };
  if (range) headers.range = range;
  const response = await fetch(`${gateway.url}${path}`, { headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function expectServedWhole(gateway: Gateway, url: string) {
  const whole = await download(gateway, url);
  expect(whole.status).toBe(200);
  expect(whole.headers.get("content-type")).toBe("image/png");
  expect(whole.bytes.equals(TINY_PNG)).toBe(true);
}

async function expectServedByRange(gateway: Gateway, url: string) {
  let part = await download(gateway, url, "bytes=0-7");
  expect(part.status).toBe(206);
  expect(part.headers.get("content-range")).toBe(`bytes 0-7/${TINY_PNG.length}`);
  expect(part.bytes.equals(TINY_PNG.subarray(0, 8))).toBe(true);
  part = await download(gateway, url, "bytes=-4");
  expect(part.headers.get("content-range")).toBe(`bytes ${TINY_PNG.length - 4}-${TINY_PNG.length - 1}/${TINY_PNG.length}`);
  expect(part.bytes.equals(TINY_PNG.subarray(-4))).toBe(true);
  part = await download(gateway, url, `bytes=10-`);
  expect(part.bytes.equals(TINY_PNG.subarray(10))).toBe(true);
  part = await download(gateway, url, `bytes=${TINY_PNG.length}-`);
  expect(part.status).toBe(416);
  expect(part.headers.get("content-range")).toBe(`bytes */${TINY_PNG.length}`);
}

describe("image assets in an S3-compatible bucket", { timeout: 30_000 }, () => {
  it("are stored in the bucket under the key prefix and served byte for byte and by range, also after BFL's URL expired", async () => {
    const config = s3Config();
    const gateway = await startGateway(config, { env: redisEnv("s3-served:") });
    const client = bucketClient();
    try {
      const id = await createImage(gateway, "a pixel in a bucket");
      const done = await completed(gateway, id);
      expect(done.router_assets).toMatchObject({ status: "ready", urls: [done.data[0].url] });
      await expectServedWhole(gateway, done.data[0].url);
      await expectServedByRange(gateway, done.data[0].url);

      // The object is the bucket's, under the prefix: and no file was written to the directory.
      const object = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${KEY_PREFIX}org_test/${id}/0` }));
      expect(Buffer.from(await object.Body!.transformToByteArray()).equals(TINY_PNG)).toBe(true);
      expect(readdirSync(config.tasks.assets_dir)).toEqual([]);

      fakeNow += 11 * 60_000;
      const task = (await gateway.core.tasks.store.get("org_test", id))!;
      expect((await fetch(task.outputs[0].url)).status).toBe(403);
      await expectServedWhole(gateway, done.data[0].url);
    } finally {
      client.destroy();
      await gateway.close();
    }
  });

  it("are swept from the bucket once their task is gone, while a kept task's stay", async () => {
    const gateway = await startGateway(s3Config(), { env: redisEnv("s3-swept:") });
    const client = bucketClient();
    try {
      const id = await createImage(gateway, "kept");
      const done = await completed(gateway, id);
      const orphan = `${KEY_PREFIX}org_test/rtr_gone/0`;
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: orphan, Body: TINY_PNG }));
      expect(await gateway.core.tasks.sweepAssets()).toBeGreaterThanOrEqual(1);
      await expect(client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: orphan }))).rejects.toThrow(/does not exist/);
      await expectServedWhole(gateway, done.data[0].url);
    } finally {
      client.destroy();
      await gateway.close();
    }
  });
});

describe("two instances sharing Redis and the bucket, and no directory", { timeout: 30_000 }, () => {
  const gateways: Gateway[] = [];
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
  });

  it("both serve each asset, whichever instance stored it (the second across the core's network hop)", async () => {
    const env = redisEnv("s3-assets:");
    // Each instance has its own assets_dir: only the bucket is shared.
    const configs = [s3Config(), s3Config()];
    expect(configs[0].tasks.assets_dir).not.toBe(configs[1].tasks.assets_dir);
    gateways.push(await startGateway(configs[0], { env }), await startGateway(configs[1], { env, split: true }));
    const ids = await Promise.all([createImage(gateways[0], "stored by the first"), createImage(gateways[1], "stored by the second")]);
    for (const id of ids) {
      const done = await completed(gateways[0], id);
      for (const gateway of gateways) {
        await expectServedWhole(gateway, done.data[0].url);
        await expectServedByRange(gateway, done.data[0].url);
      }
    }
    for (const config of configs) expect(readdirSync(config.tasks.assets_dir)).toEqual([]);
  });
});

describe("a bucket without REDIS_URL", () => {
  it("is refused at start with one line naming REDIS_URL, as each instance's sweep would remove the others' assets", async () => {
    await expect(startGateway(s3Config(), { env: ENV })).rejects.toThrow(/^tasks\.asset_storage s3 needs REDIS_URL: [^\n]+$/);
  });
});
