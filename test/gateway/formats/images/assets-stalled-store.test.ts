// A client that leaves a download while the core waits on a store that has
// stopped sending (a slow disk, a stalled S3 response) stops the core's read
// at once: the gateway's body aborts the core's call when it is destroyed, not
// only once the chunk it waits for arrives (which here would be never).
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDirectoryAssetStore, type AssetStore } from "../../../../core/tasks/asset-store.ts";
import { countedAssetStore, type CountedAssetStore } from "../../../support/counted-asset-store.ts";
import { startFakeBfl } from "../../../support/fake-media-bfl.ts";
import type { FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../../support/harness.ts";
import { hostedAsset } from "../../../support/hosted-asset.ts";
import { IMAGE_TASK_ENV, imageTaskConfig } from "../../../support/image-task-config.ts";

const MiB = 1024 * 1024;
const ASSET = randomBytes(8 * MiB);
/** More than the core's first chunk (1 MiB), so the client gets bytes before the store stalls. */
const SENT_BEFORE_STALL = 1.5 * MiB;

/** A store whose reads send their first bytes, then nothing more, until destroyed. */
function stallingStore(inner: AssetStore): AssetStore {
  return {
    ...inner,
    async stream(name, range) {
      const opened = await inner.stream(name, range);
      if (!opened) return undefined;
      opened.body.destroy();
      let sent = false;
      const body = new Readable({
        read() {
          if (sent) return;
          sent = true;
          this.push(ASSET.subarray(opened.offset, opened.offset + SENT_BEFORE_STALL));
        },
      });
      return { ...opened, body };
    },
  };
}

let bfl: FakeMediaUpstream;
beforeAll(async () => {
  bfl = await startFakeBfl();
});
afterAll(() => bfl?.close());

describe.each(["in process", "split"])("a download from a store that stalls, core %s", { timeout: 30_000 }, (mode) => {
  let gateway: Gateway;
  let store: CountedAssetStore;
  let real: AssetStore;
  beforeAll(async () => {
    real = createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "assets-stalled-")));
    store = countedAssetStore(stallingStore(real));
    gateway = await startGateway(imageTaskConfig(bfl.url), { env: IMAGE_TASK_ENV, split: mode === "split", core: { assetStore: store } });
  });
  afterAll(async () => {
    await gateway?.close();
    await real?.close?.();
  });

  it("stops the store's read as soon as the client goes, while the core waits for the next chunk", async () => {
    const { url } = await hostedAsset(gateway, store, ASSET);
    const opened = store.reads.length;
    const client = new AbortController();
    const response = await fetch(url, { headers: { authorization: `Bearer ${TEST_KEY}` }, signal: client.signal });
    expect(response.headers.get("content-length")).toBe(String(ASSET.length));
    const reader = response.body!.getReader();
    let received = 0;
    // The whole first chunk: the core has sent all it will, and now waits on the store.
    while (received < MiB) received += (await reader.read()).value!.length;
    client.abort();

    await vi.waitFor(() => expect(store.open).toBe(0), { timeout: 10_000 });
    expect(store.reads[opened]).toMatchObject({ length: ASSET.length, ended: false, closed: true });
  });
});
