// TaskService.StreamAsset on the core's network face, as an internal service
// would call it: a default @grpc/grpc-js client (which refuses any message
// over 4 MiB) takes a 12 MiB asset whole and equal, in chunks of at most
// 1 MiB after the head; ranges and suffixes; another organisation's key is
// not found; a cancelled call stops the read in the store; `buf curl` prints
// the head and the chunks.
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDirectoryAssetStore } from "../../../core/tasks/asset-store.ts";
import { ErrorDetailSchema } from "../../../gen/router/v1/errors_pb.js";
import { StreamAssetRequestSchema, StreamAssetResponseSchema, type AssetHead, type StreamAssetResponse } from "../../../gen/router/v1/tasks_pb.js";
import { countedAssetStore, type CountedAssetStore } from "../../support/counted-asset-store.ts";
import { startFakeBfl } from "../../support/fake-media-bfl.ts";
import type { FakeMediaUpstream } from "../../support/fake-media-common.ts";
import { bufCurl, grpcMethod, rejection } from "../../support/grpc-js.ts";
import { startGateway, TEST_KEY, type Gateway } from "../../support/harness.ts";
import { hostedAsset } from "../../support/hosted-asset.ts";
import { IMAGE_TASK_ENV, imageTaskConfig, OTHER_KEY } from "../../support/image-task-config.ts";

const MiB = 1024 * 1024;
const LARGE = randomBytes(12 * MiB + 5);
const HUGE = randomBytes(64 * MiB);
const METHOD = "/router.v1.TaskService/StreamAsset";

const TaskClient = grpc.makeGenericClientConstructor({ StreamAsset: grpcMethod(METHOD, StreamAssetRequestSchema, StreamAssetResponseSchema, true) }, "TaskService");

let bfl: FakeMediaUpstream;
let store: CountedAssetStore;
let gateway: Gateway;
let client: grpc.Client;
let large: { taskId: string };
beforeAll(async () => {
  bfl = await startFakeBfl();
  store = countedAssetStore(createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "stream-asset-grpc-"))));
  gateway = await startGateway(imageTaskConfig(bfl.url), { env: IMAGE_TASK_ENV, split: true, core: { assetStore: store } });
  // Default options: the 4 MiB limit on a received message stands.
  client = new TaskClient(new URL(gateway.coreServer!.url).host, grpc.credentials.createInsecure());
  large = await hostedAsset(gateway, store, LARGE);
}, 30_000);
afterAll(async () => {
  client?.close();
  await gateway?.close();
  await bfl?.close();
});

function start(request: MessageInitShape<typeof StreamAssetRequestSchema>): grpc.ClientReadableStream<StreamAssetResponse> {
  const call = (client as unknown as Record<string, (request: unknown) => grpc.ClientReadableStream<StreamAssetResponse>>).StreamAsset.bind(client);
  return call(create(StreamAssetRequestSchema, request));
}

/** The head and the chunks of one call, as they came. */
async function streamed(request: MessageInitShape<typeof StreamAssetRequestSchema>) {
  const messages: StreamAssetResponse[] = [];
  for await (const message of start(request)) messages.push(message as StreamAssetResponse);
  const [first, ...rest] = messages;
  expect(first.part.case).toBe("head");
  const chunks = rest.map((message) => {
    expect(message.part.case).toBe("chunk");
    return message.part.value as Uint8Array;
  });
  return { head: first.part.value as AssetHead, chunks, bytes: Buffer.concat(chunks) };
}

describe("StreamAsset over gRPC", { timeout: 60_000 }, () => {
  const caller = { apiKey: TEST_KEY };

  it("streams a 12 MiB asset to a default grpc-js client whole and equal, in chunks of at most 1 MiB", async () => {
    const { head, chunks, bytes } = await streamed({ caller, taskId: large.taskId, index: 0 });
    expect(head).toMatchObject({ mediaType: "image/png", totalSize: BigInt(LARGE.length), offset: 0n, length: BigInt(LARGE.length) });
    expect(chunks.length).toBeGreaterThanOrEqual(13);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBe(MiB);
    expect(bytes.equals(LARGE)).toBe(true);
  });

  it("streams a range and a suffix, and nothing past the end", async () => {
    let answer = await streamed({ caller, taskId: large.taskId, index: 0, offset: BigInt(MiB + 1), length: BigInt(3 * MiB) });
    expect(answer.head).toMatchObject({ totalSize: BigInt(LARGE.length), offset: BigInt(MiB + 1), length: BigInt(3 * MiB) });
    expect(answer.bytes.equals(LARGE.subarray(MiB + 1, 4 * MiB + 1))).toBe(true);
    answer = await streamed({ caller, taskId: large.taskId, index: 0, suffixLength: 10n });
    expect(answer.head).toMatchObject({ offset: BigInt(LARGE.length - 10), length: 10n });
    expect(answer.bytes.equals(LARGE.subarray(-10))).toBe(true);
    answer = await streamed({ caller, taskId: large.taskId, index: 0, offset: BigInt(LARGE.length + 1) });
    expect(answer.head).toMatchObject({ totalSize: BigInt(LARGE.length), offset: BigInt(LARGE.length), length: 0n });
    expect(answer.chunks).toEqual([]);
  });

  it("refuses another organisation's key (not found), an unknown asset and a negative range", async () => {
    let error = await rejection(streamed({ caller: { apiKey: OTHER_KEY }, taskId: large.taskId, index: 0 }));
    expect(error.code).toBe(grpc.status.NOT_FOUND);
    const failed = (await rejection(bufCurl("--data", JSON.stringify({ caller: { apiKey: OTHER_KEY }, taskId: large.taskId, index: 0 }), `${gateway.coreServer!.url}${METHOD}`))) as unknown as { stderr: string };
    // buf curl prints the status on stderr with its details packed: the router's ErrorDetail names the reason.
    const status = JSON.parse(failed.stderr) as { code: string; details: { type: string; value: string }[] };
    expect(status.code).toBe("not_found");
    expect(fromBinary(ErrorDetailSchema, Buffer.from(status.details[0].value, "base64")).reason).toBe("task_not_found");
    error = await rejection(streamed({ caller, taskId: large.taskId, index: 1 }));
    expect(error.code).toBe(grpc.status.NOT_FOUND);
    error = await rejection(streamed({ caller, taskId: large.taskId, index: 0, offset: -1n }));
    expect(error.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(store.open).toBe(0);
  });

  it("stops the read in the store when the call is cancelled", async () => {
    const huge = await hostedAsset(gateway, store, HUGE);
    const opened = store.reads.length;
    const call = start({ caller, taskId: huge.taskId, index: 0 });
    const messages = call[Symbol.asyncIterator]();
    expect(((await messages.next()).value as StreamAssetResponse).part.case).toBe("head");
    expect(((await messages.next()).value as StreamAssetResponse).part.case).toBe("chunk");
    call.cancel();
    await vi.waitFor(() => expect(store.open).toBe(0), { timeout: 10_000 });
    expect(store.reads[opened]).toMatchObject({ length: HUGE.length, ended: false, closed: true });
  });

  it("prints the head and the chunks with buf curl", async () => {
    const { stdout } = await bufCurl(
      "--data",
      JSON.stringify({ caller, taskId: large.taskId, index: 0, offset: 2, length: 4 }),
      `${gateway.coreServer!.url}${METHOD}`,
    );
    // One JSON object per message.
    const messages = stdout.trim().split(/\n(?=\{)/).map((text) => JSON.parse(text));
    expect(messages).toEqual([
      { head: { mediaType: "image/png", totalSize: String(LARGE.length), offset: "2", length: "4" } },
      { chunk: LARGE.subarray(2, 6).toString("base64") },
    ]);
  });
});
