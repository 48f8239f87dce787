// One task output brought to the asset store as it arrives: its first bytes
// say what it is, and an output that is not the kind of media the task asked
// for (a provider's "image" that is an HTML page) is refused, not stored; the
// rest streams through to the store, so a result of hundreds of megabytes is
// never held whole (the download's ceiling is MOST_DOWNLOAD_BYTES).
import { Readable } from "node:stream";
import { imageSize } from "image-size";
import { TaskKind } from "../../gen/router/v1/tasks_pb.js";
import { outputImageTypeBySignature, SIGNATURE_BYTES, videoTypeBySignature } from "../providers/image-signature.ts";
import { downloadMedia } from "../providers/media-http.ts";
import type { JobOutput } from "../providers/media-job.ts";
import type { AssetStore } from "./asset-store.ts";

/** An image's first bytes, kept to read its width and height from (formats put them near the start). */
const DIMENSION_BYTES = 1024 * 1024;

export type StoredOutput =
  | { mediaType: string; sizeBytes: number; width?: number; height?: number }
  /** Not the media asked for: nothing stored; `reason` says what it was. */
  | { refused: string };

export interface StoreOutputOptions {
  kind: TaskKind;
  assets: AssetStore;
  signal: AbortSignal;
  timeoutMs: number;
}

export async function storeOutput(output: JobOutput, name: string, options: StoreOutputOptions): Promise<StoredOutput> {
  const { chunks, claimedType } = await sourceOf(output, options);
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    const head = await readHead(iterator, SIGNATURE_BYTES);
    const prefix = Buffer.concat(head);
    const video = options.kind === TaskKind.VIDEO;
    const mediaType = video ? videoTypeBySignature(prefix) : outputImageTypeBySignature(prefix);
    if (!mediaType) return { refused: `The provider's result is not ${video ? "a video" : "an image"} (${claimedType || "unrecognised bytes"}).` };
    let sizeBytes = 0;
    const kept: Uint8Array[] = [];
    let keptBytes = 0;
    const track = (chunk: Uint8Array) => {
      sizeBytes += chunk.length;
      if (!video && keptBytes < DIMENSION_BYTES) {
        kept.push(chunk);
        keptBytes += chunk.length;
      }
      return chunk;
    };
    async function* counted() {
      for (const chunk of head) yield track(chunk);
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield track(next.value);
    }
    await options.assets.put(name, counted());
    return { mediaType, sizeBytes, ...(video ? {} : dimensionsOf(Buffer.concat(kept, keptBytes))) };
  } finally {
    // Stopped early (refused, or the store failed): the rest of the download is cancelled.
    await iterator.return?.();
  }
}

/** The output's bytes as a stream: given inline, or fetched from its URL (with the provider's credentials where it needs them). */
async function sourceOf(output: JobOutput, options: StoreOutputOptions): Promise<{ chunks: AsyncIterable<Uint8Array>; claimedType: string }> {
  if ("bytes" in output) return { chunks: Readable.from([output.bytes]), claimedType: output.mediaType };
  const fetched = await downloadMedia(output.url, { headers: output.headers, signal: options.signal, timeoutMs: options.timeoutMs });
  return { chunks: fetched.chunks, claimedType: fetched.mediaType || output.mediaType || "" };
}

/** The first chunks, until they hold `bytes` bytes or the stream ends. */
async function readHead(iterator: AsyncIterator<Uint8Array>, bytes: number): Promise<Uint8Array[]> {
  const head: Uint8Array[] = [];
  for (let size = 0; size < bytes; ) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    size += next.value.length;
  }
  return head;
}

/** An image's width and height, read from its first bytes (charged by, and reported as its size); none when image-size cannot tell. */
function dimensionsOf(bytes: Buffer): { width?: number; height?: number } {
  try {
    const { width, height } = imageSize(bytes);
    return width && height ? { width, height } : {};
  } catch {
    return {};
  }
}
