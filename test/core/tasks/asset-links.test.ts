// Signed asset links (core/tasks/asset-links.ts) on the memory task store and
// a directory of assets, by an injected clock: a link made now serves its
// asset; it lasts link_ttl_seconds but never past its task's retention; each
// presentation is fresh; a forged or altered one is link_invalid (before any
// look-up), an expired one link_expired, and a task no longer kept 404.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { ConnectError } from "@connectrpc/connect";
import { RouterAssetsSchema, TaskOutputSchema, TaskSchema, TaskStatus, type Task } from "../../../gen/router/v1/tasks_pb.js";
import { createDirectoryAssetStore, type AssetStore } from "../../../core/tasks/asset-store.ts";
import { createAssetLinks, linkKeyOf, signLink, type AssetLinks } from "../../../core/tasks/asset-links.ts";
import { createMemoryTaskStore } from "../../../core/tasks/memory-store.ts";
import type { TaskStore } from "../../../core/tasks/store.ts";

const KEY = Buffer.from("a link secret of at least thirty-two characters");
const START_MS = Date.UTC(2026, 0, 1);
const TTL_SECONDS = 3600;
const BYTES = Buffer.from("the hosted bytes");

let nowMs: number;
let store: TaskStore;
let assets: AssetStore;
let links: AssetLinks;

/** A succeeded task with one hosted output, kept `retentionSeconds` from now. */
async function storedTask(id: string, retentionSeconds: number): Promise<Task> {
  const assetName = `org_a/${id}/0`;
  await assets.put(assetName, BYTES);
  const task = create(TaskSchema, {
    id,
    organizationId: "org_a",
    status: TaskStatus.SUCCEEDED,
    outputs: [create(TaskOutputSchema, { assetName, mediaType: "image/png", sizeBytes: BigInt(BYTES.length) })],
    routerAssets: create(RouterAssetsSchema, { status: "ready", urls: [`/api/v1/assets/${id}/0`] }),
    expiresAt: timestampFromMs(nowMs + retentionSeconds * 1000),
  });
  await store.create(task);
  return task;
}

/** The link's query of a presented task's first URL. */
function linkOf(task: Task) {
  const url = new URL(task.routerAssets!.urls[0], "http://gateway.test");
  return { expires: BigInt(url.searchParams.get("expires")!), signature: url.searchParams.get("signature")!, path: url.pathname };
}

async function read(link: { expires: bigint; signature: string }, taskId: string, index = 0) {
  const asset = await links.stream({ $typeName: "router.v1.AssetLink", ...link }, taskId, index);
  if ("redirectUrl" in asset) throw new Error("no redirect expected");
  const chunks: Buffer[] = [];
  for await (const chunk of asset.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ConnectError);
  return { code: (error as ConnectError).code, message: (error as ConnectError).rawMessage };
}

beforeEach(() => {
  nowMs = START_MS;
  store = createMemoryTaskStore({ now: () => nowMs });
  assets = createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "asset-links-test-")));
  links = createAssetLinks({ key: KEY, ttlSeconds: TTL_SECONDS, now: () => new Date(nowMs), store, assets });
});

describe("signed asset links", () => {
  it("sign each asset path for ttl seconds and serve it without a key; the stored task keeps its plain path", async () => {
    const task = await storedTask("rtr_a", 24 * 3600);
    const presented = await links.present(task);
    const link = linkOf(presented);
    expect(link.path).toBe("/api/v1/assets/rtr_a/0");
    expect(link.expires).toBe(BigInt(START_MS / 1000 + TTL_SECONDS));
    expect(link.signature).toBe(signLink(KEY, "rtr_a", 0, START_MS / 1000 + TTL_SECONDS));
    expect((await read(link, "rtr_a")).equals(BYTES)).toBe(true);
    expect((await store.get("org_a", "rtr_a"))!.routerAssets!.urls).toEqual(["/api/v1/assets/rtr_a/0"]);
  });

  it("never outlive the task's retention, and are fresh at each presentation", async () => {
    const shortLived = await storedTask("rtr_short", 600);
    expect(linkOf(await links.present(shortLived)).expires).toBe(BigInt(START_MS / 1000 + 600));
    const task = await storedTask("rtr_b", 24 * 3600);
    const first = linkOf(await links.present(task));
    nowMs += 60_000;
    const second = linkOf(await links.present(task));
    expect(second.expires - first.expires).toBe(60n);
    expect(second.signature).not.toBe(first.signature);
  });

  it("refuse a forged or altered link as link_invalid, before looking anything up, with nothing of the task in the message", async () => {
    const task = await storedTask("rtr_c", 24 * 3600);
    const link = linkOf(await links.present(task));
    const flipped = link.signature.slice(0, -2) + (link.signature.endsWith("AA") ? "BB" : "AA");
    const attempts = [
      links.stream({ $typeName: "router.v1.AssetLink", expires: link.expires, signature: flipped }, "rtr_c", 0),
      links.stream({ $typeName: "router.v1.AssetLink", expires: link.expires + 3600n, signature: link.signature }, "rtr_c", 0),
      links.stream({ $typeName: "router.v1.AssetLink", expires: link.expires, signature: link.signature }, "rtr_c", 1),
      links.stream({ $typeName: "router.v1.AssetLink", expires: link.expires, signature: link.signature }, "rtr_unknown", 0),
      links.stream({ $typeName: "router.v1.AssetLink", expires: link.expires, signature: signLink(Buffer.from("another deployment's secret, 32+ chars"), "rtr_c", 0, Number(link.expires)) }, "rtr_c", 0),
      links.stream({ $typeName: "router.v1.AssetLink", expires: link.expires, signature: "" }, "rtr_c", 0),
    ];
    for (const attempt of attempts) {
      const refused = await refusal(attempt);
      expect(refused.code).toBe(7); // PermissionDenied
      expect(refused.message).toMatch(/^This link is not valid/);
      expect(refused.message).not.toContain("rtr_");
    }
  });

  it("refuse an expired link as link_expired; the task's next presentation works again", async () => {
    const task = await storedTask("rtr_d", 24 * 3600);
    const link = linkOf(await links.present(task));
    nowMs += TTL_SECONDS * 1000;
    const refused = await refusal(links.stream({ $typeName: "router.v1.AssetLink", ...link }, "rtr_d", 0));
    expect([refused.code, refused.message]).toEqual([7, "This link has expired: read the task again for a fresh link."]);
    expect((await read(linkOf(await links.present(task)), "rtr_d")).equals(BYTES)).toBe(true);
  });

  it("answer 404 task_not_found once the task is no longer kept (past its retention), though the link was signed", async () => {
    const task = await storedTask("rtr_e", 600);
    const link = linkOf(await links.present(task));
    nowMs += 600_000;
    const refused = await refusal(links.stream({ $typeName: "router.v1.AssetLink", ...link }, "rtr_e", 0));
    expect(refused.code).toBe(5); // NotFound
  });

  it("take a key of at least 32 characters from the variable, and make one when it is unset", () => {
    expect(linkKeyOf("x".repeat(32), "ROUTER_LINK_SECRET")).toEqual({ key: Buffer.from("x".repeat(32)), generated: false });
    expect(() => linkKeyOf("too short", "ROUTER_LINK_SECRET")).toThrow("ROUTER_LINK_SECRET must be at least 32 characters");
    const made = linkKeyOf(undefined, "ROUTER_LINK_SECRET");
    expect([made.generated, made.key.length]).toEqual([true, 32]);
    expect(linkKeyOf(undefined, "ROUTER_LINK_SECRET").key.equals(made.key)).toBe(false);
  });
});
