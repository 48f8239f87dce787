// A fetch answer's body read under a ceiling: refused by its Content-Length
// before any byte is read, else as it arrives (leaving the loop cancels the
// rest), whole or as a stream of its chunks. Used for caller-given URLs
// (safe-fetch.ts) and for upstream answers (answer-limits.ts), each with its own error.

/**
 * The body's chunks as they arrive, refused past `maxBytes` (by the
 * Content-Length, checked now, before any byte is read, else by the count).
 * Leaving the loop that reads them cancels the rest of the body.
 */
export async function cappedChunks(response: Response, maxBytes: number, tooLarge: () => Error): Promise<AsyncGenerator<Uint8Array>> {
  if (Number(response.headers.get("content-length") ?? 0) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  return (async function* () {
    let size = 0;
    for await (const chunk of response.body ?? []) {
      size += chunk.length;
      if (size > maxBytes) throw tooLarge();
      yield chunk;
    }
  })();
}

/** The body whole, under the same ceiling; `enough` (asked as it grows) stops the read early with what was read. */
export async function readCapped(response: Response, maxBytes: number, tooLarge: () => Error, enough?: (prefix: Buffer) => boolean): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let nextLook = 0;
  // Leaving the loop (break or throw) cancels the rest of the body.
  for await (const chunk of await cappedChunks(response, maxBytes, tooLarge)) {
    size += chunk.length;
    chunks.push(chunk);
    if (enough && size >= nextLook) {
      // Looked at again only once the prefix has doubled: reading the whole cap costs twice its size at most.
      nextLook = size * 2;
      if (enough(Buffer.concat(chunks, size))) break;
    }
  }
  return Buffer.concat(chunks, size);
}

/** The first `maxBytes` of a body as text (an error page: enough to quote), the rest not read. */
export async function readTextPrefix(response: Response, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxBytes) break;
  }
  // TextDecoder drops a byte-order mark and replaces a character cut at the end.
  return new TextDecoder().decode(Buffer.concat(chunks, size).subarray(0, maxBytes));
}
