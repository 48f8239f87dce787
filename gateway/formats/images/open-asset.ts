// A hosted asset as the core streams it (TaskService.StreamAsset): the head,
// read before anything is answered (a missing or foreign asset is an error
// the route can still answer), then the bytes as a stream that reads the next
// chunk only when the client took the last one, or collected whole where a
// JSON answer carries the bytes (base64 videos, b64_json images).
import { Readable } from "node:stream";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AssetHead, StreamAssetRequestSchema } from "../../../gen/router/v1/tasks_pb.js";
import { Code, routerError } from "../../../core/errors.ts";
import type { CoreClient } from "../../core-client.ts";

export interface OpenAsset {
  head: AssetHead;
  /** The bytes after the head; destroying it (Koa does when the client goes) ends the core's read. */
  body: Readable;
}

export async function openAsset(core: CoreClient, request: MessageInitShape<typeof StreamAssetRequestSchema>): Promise<OpenAsset> {
  // Aborting the call is what stops the core's read, in one process as across the network.
  const call = new AbortController();
  const messages = core.tasks.streamAsset(request, { signal: call.signal })[Symbol.asyncIterator]();
  let first;
  try {
    first = await messages.next();
  } catch (error) {
    call.abort();
    throw error;
  }
  if (first.done || first.value.part.case !== "head") {
    call.abort();
    throw routerError(Code.Internal, "internal_error", "The core streamed an asset without its head.");
  }
  async function* chunks() {
    try {
      for (let next = await messages.next(); !next.done; next = await messages.next()) {
        if (next.value.part.case === "chunk") yield next.value.part.value;
      }
    } finally {
      await messages.return?.();
    }
  }
  // Byte mode: the stream holds at most one chunk ahead of the client (object mode would hold 16).
  const body = Readable.from(chunks(), { objectMode: false });
  body.once("close", () => call.abort());
  return { head: first.value.part.value, body };
}

/** The whole bytes of one asset, for an answer that carries them inline. */
export async function readAssetBytes(core: CoreClient, apiKey: string, taskId: string, index: number): Promise<Buffer> {
  return (await readAssetBytesUpTo(core, apiKey, taskId, index, Number.POSITIVE_INFINITY))!;
}

/**
 * The whole bytes of one asset if it has at most `maxBytes`; undefined for a
 * larger one, told by the head before any byte is read (the core's read is
 * stopped there).
 */
export async function readAssetBytesUpTo(core: CoreClient, apiKey: string, taskId: string, index: number, maxBytes: number): Promise<Buffer | undefined> {
  const { head, body } = await openAsset(core, { caller: { apiKey }, taskId, index });
  if (Number(head.totalSize) > maxBytes) {
    body.destroy();
    return undefined;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
