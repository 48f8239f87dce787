// The pieces an asset is streamed in (TaskService.StreamAsset): small enough
// that no message nears gRPC's default 4 MiB limit and that memory stays flat
// however large the asset, large enough that the per-message cost is noise.

/** The most bytes one StreamAsset chunk carries. */
export const ASSET_CHUNK_BYTES = 1024 * 1024;

/** The bytes of a stream in order, in pieces of at most `max` bytes (larger ones are split, without copying). */
export async function* chunksOf(source: AsyncIterable<Uint8Array>, max: number): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    for (let start = 0; start < chunk.length; start += max) yield chunk.subarray(start, start + max);
  }
}
