// Hosted assets streamed from the store to the client (TaskService.StreamAsset),
// on both stores and both deployments (core in process, and across the core's
// network face): a 12 MiB asset is served byte for byte and by range (chunk
// boundaries crossed, a suffix, past the end), and a client that goes away
// mid-download stops the read in the store before its end (the store counts
// its open reads).
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDirectoryAssetStore, type AssetStore } from "../../../../core/tasks/asset-store.ts";
import { createS3AssetStore } from "../../../../core/tasks/s3-asset-store.ts";
import { countedAssetStore, type CountedAssetStore } from "../../../support/counted-asset-store.ts";
import { startFakeBfl } from "../../../support/fake-media-bfl.ts";
import type { FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { hostedAsset } from "../../../support/hosted-asset.ts";
import { IMAGE_TASK_ENV, imageTaskConfig } from "../../../support/image-task-config.ts";
import { S3_CREDENTIALS, startS3Server, type S3Server } from "../../../support/s3-server.ts";

const MiB = 1024 * 1024;
/** Twelve chunks of the core's stream, and a few bytes more so the last one is short. */
const LARGE = randomBytes(12 * MiB + 5);
/** Far more than the sockets and streams between store and client can hold, so a read stopped early is seen. */
const HUGE = randomBytes(64 * MiB);
const AUTH = { authorization: `Bearer ${TEST_KEY}` };

let s3: S3Server;
let bfl: FakeMediaUpstream;
beforeAll(async () => {
  [s3, bfl] = await Promise.all([startS3Server(), startFakeBfl()]);
});
afterAll(async () => {
  await Promise.all([s3?.close(), bfl?.close()]);
});

const stores: Record<string, (prefix: string) => AssetStore> = {
  directory: () => createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "assets-streaming-"))),
  s3: (prefix) =>
    createS3AssetStore({
      client: new S3Client({ region: "us-east-1", endpoint: s3.endpoint, forcePathStyle: true, credentials: S3_CREDENTIALS }),
      bucket: s3.bucket,
      keyPrefix: prefix,
    }),
};

describe.each([
  ["directory", "in process"],
  ["directory", "split"],
  ["s3", "in process"],
  ["s3", "split"],
])("assets in the %s store, core %s", { timeout: 60_000 }, (kind, mode) => {
  let gateway: Gateway;
  let store: CountedAssetStore;
  beforeAll(async () => {
    store = countedAssetStore(stores[kind](`streaming/${mode.replace(" ", "-")}`));
    gateway = await startGateway(imageTaskConfig(bfl.url), { env: IMAGE_TASK_ENV, split: mode === "split", core: { assetStore: store } });
  });
  afterAll(async () => {
    await gateway?.close();
    await store?.close();
  });

  const download = async (url: string, range?: string) => {
    const response = await fetch(url, { headers: range ? { ...AUTH, range } : AUTH });
    return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
  };

  it("serves a 12 MiB asset byte for byte, and by range", async () => {
    const { url } = await hostedAsset(gateway, store, LARGE);
    const whole = await download(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("content-length")).toBe(String(LARGE.length));
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(whole.bytes.equals(LARGE)).toBe(true);

    // Across chunk boundaries (1 MiB) in the middle.
    const start = MiB - 3;
    const end = 5 * MiB + 7;
    let part = await download(url, `bytes=${start}-${end}`);
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes ${start}-${end}/${LARGE.length}`);
    expect(part.headers.get("content-length")).toBe(String(end - start + 1));
    expect(part.bytes.equals(LARGE.subarray(start, end + 1))).toBe(true);
    // To the end, a suffix, an end past the asset's, and past the end.
    part = await download(url, `bytes=${7 * MiB}-`);
    expect(part.headers.get("content-range")).toBe(`bytes ${7 * MiB}-${LARGE.length - 1}/${LARGE.length}`);
    expect(part.bytes.equals(LARGE.subarray(7 * MiB))).toBe(true);
    part = await download(url, `bytes=-${2 * MiB}`);
    expect(part.headers.get("content-range")).toBe(`bytes ${LARGE.length - 2 * MiB}-${LARGE.length - 1}/${LARGE.length}`);
    expect(part.bytes.equals(LARGE.subarray(-2 * MiB))).toBe(true);
    part = await download(url, `bytes=${LARGE.length - 2}-${LARGE.length + 100}`);
    expect(part.bytes.equals(LARGE.subarray(-2))).toBe(true);
    part = await download(url, `bytes=${LARGE.length}-`);
    expect(part.status).toBe(416);
    expect(part.headers.get("content-range")).toBe(`bytes */${LARGE.length}`);
    expect(part.bytes.length).toBe(0);
    await vi.waitFor(() => expect(store.open).toBe(0));
  });

  it("takes Range positions of any length: a start past the end is 416, an end or a suffix past it reaches the end", async () => {
    const SMALL = LARGE.subarray(0, 1000);
    const { url } = await hostedAsset(gateway, store, SMALL);
    const nines = "9".repeat(400);
    // Past int64 (the core's positions) and past a double's range (Infinity).
    for (const huge of [nines, "99999999999999999999", String(2n ** 63n)]) {
      const past = await download(url, `bytes=${huge}-`);
      expect([past.status, past.headers.get("content-range"), past.bytes.length], huge).toEqual([416, `bytes */${SMALL.length}`, 0]);
      const to = await download(url, `bytes=5-${huge}`);
      expect([to.status, to.headers.get("content-range")], huge).toEqual([206, `bytes 5-${SMALL.length - 1}/${SMALL.length}`]);
      expect(to.bytes.equals(SMALL.subarray(5))).toBe(true);
      const suffix = await download(url, `bytes=-${huge}`);
      expect([suffix.status, suffix.headers.get("content-range")], huge).toEqual([206, `bytes 0-${SMALL.length - 1}/${SMALL.length}`]);
      expect(suffix.bytes.equals(SMALL)).toBe(true);
      const both = await download(url, `bytes=${huge}-${huge}`);
      expect(both.status, huge).toBe(416);
    }
    await vi.waitFor(() => expect(store.open).toBe(0));
  });

  it("stops the read in the store when the client goes away mid-download", async () => {
    const { url } = await hostedAsset(gateway, store, HUGE);
    const opened = store.reads.length;
    const client = new AbortController();
    const response = await fetch(url, { headers: AUTH, signal: client.signal });
    expect(response.headers.get("content-length")).toBe(String(HUGE.length));
    const first = await response.body!.getReader().read();
    expect(first.value!.length).toBeGreaterThan(0);
    client.abort();

    await vi.waitFor(() => expect(store.open).toBe(0), { timeout: 10_000 });
    const read = store.reads[opened];
    expect(read).toMatchObject({ length: HUGE.length, closed: true });
    // Stopped, not read to its end: nothing between the store and the client read ahead of it.
    expect(read.ended).toBe(false);
    // And the next client is served.
    expect((await download(url, "bytes=0-9")).bytes.equals(HUGE.subarray(0, 10))).toBe(true);
  });
});
