// A hosted asset as the core streams it (TaskService.StreamAsset): the head,
// read before anything is answered (a missing or foreign asset is an error
// the route can still answer), then the bytes as a stream that reads the next
// chunk only when the client took the last one, or collected whole where a
// JSON answer carries the bytes (base64 videos, b64_json images).
import { Readable } from "node:stream";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AssetHead, StreamAssetRequestSchema, StreamAssetResponse } from "../../../gen/router/v1/tasks_pb.js";
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
  return { head: first.value.part.value, body: chunkStream(messages, call) };
}

/**
 * The chunks after the head as a byte stream that asks the core for the next
 * chunk only when its reader took the last (it holds at most one ahead).
 * Destroying it (Koa does when the client goes) aborts the call first, even
 * while a chunk is awaited: the core stops its read then, not at its next chunk.
 */
function chunkStream(messages: AsyncIterator<StreamAssetResponse>, call: AbortController): Readable {
  return new Readable({
    read() {
      const pull = (): unknown =>
        messages.next().then((next) => {
          if (this.destroyed) return;
          if (next.done) return this.push(null);
          if (next.value.part.case !== "chunk") return pull();
          this.push(next.value.part.value);
        }, (error: unknown) => this.destroy(error as Error));
      pull();
    },
    destroy(error, callback) {
      // After the last chunk there is no read left to stop (and an abort is not free).
      if (!this.readableEnded) call.abort();
      // The iterator's own end, not awaited: a next() still pending settles on the abort.
      messages.return?.().catch(() => {});
      callback(error);
    },
  });
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
