// A provider's result is hosted only when its bytes are the media asked for:
// an "image" or a "video" that is an HTML page (whatever its Content-Type
// says) fails the task, is not stored and not charged. Hosted assets are
// served from the gateway's origin as inert media only: nosniff, a sandboxing
// CSP, a media type from the allow-list (anything else as a download). And a
// result streams through to the asset store: the store has its first bytes
// while the provider is still sending the rest.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TaskStatus } from "../../../gen/router/v1/tasks_pb.js";
import { createDirectoryAssetStore, type AssetStore } from "../../../core/tasks/asset-store.ts";
import { startFakeBfl } from "../../support/fake-media-bfl.ts";
import { TINY_PNG, type FakeMediaUpstream, type ResultFile } from "../../support/fake-media-common.ts";
import { POLLO_KEY, startFakePollo } from "../../support/fake-media-pollo.ts";
import { startGateway, type Gateway } from "../../support/harness.ts";
import { hostedAsset } from "../../support/hosted-asset.ts";
import { FLUX_IMAGE_PRICE, FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig } from "../../support/image-task-config.ts";
import { mediaTaskConfig } from "../../support/media-task-config.ts";
import { nanosOf } from "../../support/exact-money.ts";
import { taskClient } from "../../support/video-task-harness.ts";

const HTML_PAGE = Buffer.from("<!doctype html><html><body><script>fetch('/api/v1/key').then((r) => r.text()).then(alert)</script></body></html>");
const POLLO_MODEL = "pollo/pollo-v1-6";

const started: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const each of started.reverse()) await each.close();
});

async function imageStack(resultFile?: ResultFile, assetStore?: AssetStore) {
  const bfl: FakeMediaUpstream = await startFakeBfl({ resultFile });
  started.push(bfl);
  const gateway: Gateway = await startGateway(imageTaskConfig(bfl.url), { env: IMAGE_TASK_ENV, ...(assetStore ? { core: { assetStore } } : {}) });
  started.push(gateway);
  return { gateway, images: taskClient(gateway, { kind: "images", model: FLUX_MODEL }) };
}

async function videoStack(resultFile: ResultFile) {
  const pollo = await startFakePollo({ resultFile });
  started.push(pollo);
  const config = mediaTaskConfig(
    [{ id: "pollo", label: "Pollo", protocol: "pollo", base_url: pollo.url, api_key_env: "POLLO_API_KEY", timeout_ms: 5000 }],
    [
      {
        id: POLLO_MODEL,
        name: "Pollo 1.6",
        output: "video",
        details: { length: [5, 10] },
        routes: [{ provider: "pollo", providerModelId: "pollo/pollo-v1-6", pricing: { video_output_per_second: "0.05" } }],
      },
    ],
  );
  const gateway = await startGateway(config, { env: { ...IMAGE_TASK_ENV, POLLO_API_KEY: POLLO_KEY } });
  started.push(gateway);
  return { gateway, videos: taskClient(gateway, { kind: "videos", model: POLLO_MODEL }) };
}

describe("a provider result that is not the media asked for", () => {
  it.each([
    ["text/html", HTML_PAGE],
    ["image/png", HTML_PAGE],
  ])("an image served as %s that is an HTML page fails the task, is not stored and not charged", async (contentType, bytes) => {
    const { gateway, images } = await imageStack({ contentType, bytes });
    const before = await images.balance();
    const id = await images.created({ prompt: "an image that is a page" });
    const done = await images.finished(id);
    expect(done).toMatchObject({ status: "failed", data: [], router_assets: null, usage: { images: 0, cost: 0 } });
    expect(done.error).toEqual({ code: "upstream_error", message: `The provider's result is not an image (${contentType}).` });
    const task = await images.stored(id);
    expect([task.status, task.outputs]).toEqual([TaskStatus.FAILED, []]);
    expect(await images.balance()).toBe(before);
    const record = await gateway.core.accounts.usage.get("org_test", id);
    expect(record).toMatchObject({ outcome: "upstream_error", cost: "0" });
  });

  it("a video that is an HTML page fails the task, is not stored and not charged", async () => {
    const { gateway, videos } = await videoStack({ contentType: "video/mp4", bytes: HTML_PAGE });
    const before = await videos.balance();
    const id = await videos.created({ prompt: "a video that is a page", length: 5 });
    const done = await videos.finished(id);
    expect(done).toMatchObject({ status: "failed", code: "upstream_error", message: "The provider's result is not a video (video/mp4).", router_assets: null });
    expect((await videos.stored(id)).outputs).toEqual([]);
    expect(await videos.balance()).toBe(before);
    expect(await gateway.core.accounts.usage.get("org_test", id)).toMatchObject({ outcome: "upstream_error", cost: "0" });
  });
});

describe("hosted assets are served as inert media", () => {
  it("an image: its sniffed type, nosniff, a sandboxing CSP, inline; whatever else the store holds: a download", async () => {
    const { gateway, images } = await imageStack();
    const id = await images.created({ prompt: "a plain image" });
    const done = await images.finished(id);
    const asset = await images.download(done.data[0].url);
    expect(asset.status).toBe(200);
    expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    expect(Object.fromEntries(["content-type", "x-content-type-options", "content-security-policy", "content-disposition"].map((name) => [name, asset.headers.get(name)]))).toEqual({
      "content-type": "image/png",
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "content-disposition": "inline",
    });

    // A task stored before types were checked, whose output says text/html: never served as a page.
    const task = await images.stored(id);
    await gateway.core.tasks.store.save({ ...task, outputs: [{ ...task.outputs[0], mediaType: "text/html" }] });
    const page = await images.download(done.data[0].url);
    expect(page.headers.get("content-type")).toBe("application/octet-stream");
    expect(page.headers.get("content-disposition")).toBe("attachment");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
  });
});

describe("a large result", () => {
  it("streams to the asset store: the store has its first bytes before the provider sent the rest", async () => {
    const MiB = 1024 * 1024;
    const first = Buffer.concat([TINY_PNG, Buffer.alloc(4 * MiB - TINY_PNG.length, 1)]);
    const rest = Buffer.alloc(12 * MiB, 2);
    // The provider sends the rest only once the store holds the first bytes: a download held whole before
    // it is stored never finishes, and the task then times out.
    let storeHasBytes!: () => void;
    const stored = new Promise<void>((resolve) => (storeHasBytes = resolve));
    const directory = createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "media-result-stream-")));
    const watched: AssetStore = {
      ...directory,
      async put(name, bytes) {
        async function* seen() {
          for await (const chunk of bytes instanceof Uint8Array ? [bytes] : bytes) {
            yield chunk;
            storeHasBytes();
          }
        }
        await directory.put(name, seen());
      },
    };
    const { images } = await imageStack(
      {
        contentType: "image/png",
        write(res) {
          res.write(first);
          void stored.then(() => res.end(rest));
        },
      },
      watched,
    );
    const before = await images.balance();
    const id = await images.created({ prompt: "a large image" });
    const done = await images.finished(id);
    expect(done.status).toBe("completed");
    const served = Buffer.from(await (await images.download(done.data[0].url)).arrayBuffer());
    expect(served.length).toBe(first.length + rest.length);
    expect(served.equals(Buffer.concat([first, rest]))).toBe(true);
    expect((await images.stored(id)).outputs[0]).toMatchObject({ mediaType: "image/png", sizeBytes: BigInt(served.length) });
    expect(await images.balance()).toBe(before - nanosOf(FLUX_IMAGE_PRICE));
  });
});
