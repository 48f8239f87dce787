// Signed asset links with the assets in an S3-compatible bucket (a local
// s3rver) and tasks.s3.presigned_urls on: `redirect`, where the gateway's
// signed link answers 302 to the bucket's own presigned URL (its checks
// first: forged 403, gone 404), and `direct`, where the answers carry the
// presigned URL itself. Either downloads with no key, byte for byte, typed as
// the gateway would type it, and by range. `off` (the default) is
// signed-links.test.ts's gateway-served link, which images-s3.test.ts serves
// from a bucket too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouterConfig } from "../../../../core/config/schema.ts";
import { startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { TINY_PNG, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig } from "../../../support/image-task-config.ts";
import { startRedisServer, type RedisServer } from "../../../support/redis-server.ts";
import { S3_CREDENTIALS, startS3Server, type S3Server } from "../../../support/s3-server.ts";
import { signedLink } from "../../../support/signed-link.ts";
import { taskClient } from "../../../support/video-task-harness.ts";

const DONE = { timeout: 15_000, interval: 20 };
const ENV = { ...IMAGE_TASK_ENV, ASSETS_KEY_ID: S3_CREDENTIALS.accessKeyId, ASSETS_SECRET: S3_CREDENTIALS.secretAccessKey, ROUTER_LINK_SECRET: "s3-links-test-secret-of-32-characters-at-least" };

let s3: S3Server;
let bfl: FakeMediaUpstream;
let redis: RedisServer;
beforeAll(async () => {
  [s3, bfl, redis] = await Promise.all([startS3Server(), startFakeBfl(), startRedisServer()]);
});
afterAll(async () => {
  await Promise.all([s3?.close(), bfl?.close(), redis?.stop()]);
});

function presignedConfig(presigned: "redirect" | "direct"): RouterConfig {
  return imageTaskConfig(bfl.url, {
    asset_storage: "s3",
    s3: {
      bucket: s3.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
      force_path_style: true,
      key_prefix: "links/",
      access_key_id_env: "ASSETS_KEY_ID",
      secret_access_key_env: "ASSETS_SECRET",
      presigned_urls: presigned,
    },
  });
}

async function withGateway(presigned: "redirect" | "direct", run: (gateway: Gateway) => Promise<void>) {
  const gateway = await startGateway(presignedConfig(presigned), { env: { ...ENV, REDIS_URL: redis.url, REDIS_PREFIX: `links-${presigned}:` } });
  try {
    await run(gateway);
  } finally {
    await gateway.close();
  }
}

async function completedImage(gateway: Gateway, prompt: string) {
  const images = taskClient(gateway, { kind: "images", model: FLUX_MODEL });
  const id = await images.created({ prompt, output_format: "png" });
  const done = await images.finished(id, DONE);
  expect(done.status).toBe("completed");
  return { id, done, images };
}

/** A plain GET with no key (redirects followed, as browsers and `curl -L` do). */
async function fetchNoKey(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/**
 * The presigned URL downloads the image whole (typed image/png, inline: the
 * response overrides it signs) and by range, with no key. s3rver does not
 * check V4 signatures: s3-presign.test.ts checks ours against AWS's own example.
 */
async function expectPresignedServes(url: string) {
  const whole = await fetchNoKey(url);
  expect([whole.status, whole.headers.get("content-type"), whole.headers.get("content-disposition")]).toEqual([200, "image/png", "inline"]);
  expect(whole.bytes.equals(TINY_PNG)).toBe(true);
  const part = await fetchNoKey(url, { range: "bytes=1-3" });
  expect([part.status, part.headers.get("content-range")]).toEqual([206, `bytes 1-3/${TINY_PNG.length}`]);
  expect(part.bytes.equals(TINY_PNG.subarray(1, 4))).toBe(true);
}

describe("signed links with the bucket's presigned URLs", { timeout: 60_000 }, () => {
  it("redirect: the gateway's signed link answers 302 to the bucket's presigned URL, which serves the bytes and ranges; a forged link is 403 before any redirect", async () => {
    await withGateway("redirect", async (gateway) => {
      const { id, done, images } = await completedImage(gateway, "a redirected pixel");
      const link = done.data[0].url as string;
      expect(link).toEqual(signedLink(`${gateway.url}/api/v1/assets/${id}/0`));

      const redirect = await fetch(link, { redirect: "manual" });
      expect([redirect.status, redirect.headers.get("cache-control")]).toEqual([302, "no-store"]);
      const location = redirect.headers.get("location")!;
      expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/links/org_test/${id}/0?`)).toBe(true);
      await expectPresignedServes(location);

      // Followed as a client follows it, the Range sent again to the bucket.
      const followed = await fetchNoKey(link, { range: "bytes=0-7" });
      expect([followed.status, followed.bytes.equals(TINY_PNG.subarray(0, 8))]).toEqual([206, true]);
      const forged = await fetch(link.replace(/signature=[\w-]+/, `signature=${"A".repeat(43)}`), { redirect: "manual" });
      expect([forged.status, forged.headers.get("location")]).toEqual([403, null]);

      // The authenticated route still streams the bytes through the gateway.
      const keyed = await images.download(link, undefined, "bytes=2-5");
      expect([keyed.status, keyed.headers.get("content-range")]).toEqual([206, `bytes 2-5/${TINY_PNG.length}`]);
    });
  });

  it("direct: the answers carry the bucket's presigned URL itself, which serves the bytes and ranges with no key", async () => {
    await withGateway("direct", async (gateway) => {
      const { id, done, images } = await completedImage(gateway, "a direct pixel");
      const url = done.data[0].url as string;
      expect(url.startsWith(`${s3.endpoint}/${s3.bucket}/links/org_test/${id}/0?`)).toBe(true);
      expect(done.router_assets.urls).toEqual([url]);
      expect(new URL(url).searchParams.get("X-Amz-Expires")).toBe("3600");
      await expectPresignedServes(url);
      // The authenticated route stays.
      const keyed = await images.download(`${gateway.url}/api/v1/assets/${id}/0`);
      expect(Buffer.from(await keyed.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    });
  });
});
