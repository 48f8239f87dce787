// Where hosted copies of task outputs are kept (router_assets): behind one
// interface, so that an object store (S3) can replace the local directory for
// deployments of several instances on several machines. Names are chosen by
// the task service (`<task id>/<index>`); the media type lives in the task.
// Writes and reads are streams: a video of hundreds of megabytes is never held whole.
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

/** Bytes from `offset` (`length` of them, or to the end), or the last `suffix` bytes. */
export type AssetRange = { offset: number; length?: number } | { suffix: number };

/** An open read of an asset: the range it serves (clamped to the asset) and its bytes. */
export interface AssetStream {
  /** The asset's whole size. */
  size: number;
  offset: number;
  /** How many bytes `body` yields: 0 when the range starts at or past the end. */
  length: number;
  /** Destroy it to stop the read early (the file or the HTTP response is let go). */
  body: Readable;
}

export interface AssetStore {
  /** Stores the bytes as they come (a Buffer is one chunk); a failed source stores nothing under the name. */
  put(name: string, bytes: AsyncIterable<Uint8Array> | Uint8Array): Promise<void>;
  /** A read of the range (the whole asset when absent); undefined when there is no such asset. */
  stream(name: string, range?: AssetRange): Promise<AssetStream | undefined>;
  /** The task folders held (`<organisation>/<task id>`, the first two parts of asset names), for the sweep of expired ones. */
  folders(): Promise<string[]>;
  /** Removes every asset under a task folder. */
  remove(folder: string): Promise<void>;
  /**
   * A URL that downloads the asset without credentials for `expiresSeconds`, answered with the
   * given media type and disposition: an object store's own presigned URL (signed links with
   * tasks.s3.presigned_urls); absent where the store has none (the directory).
   */
  presign?(name: string, expiresSeconds: number, response: { contentType: string; disposition: string }): Promise<string>;
  /** Lets go of connections (an object store's client); the directory store holds none. */
  close?(): Promise<void>;
}

/** The range a request names within an asset of `size` bytes: its first byte and length, clamped to the asset. */
export function servedRange(size: number, range: AssetRange | undefined): { offset: number; length: number } {
  if (range && "suffix" in range) {
    const length = Math.min(Math.max(range.suffix, 0), size);
    return { offset: size - length, length };
  }
  const offset = Math.min(range?.offset ?? 0, size);
  return { offset, length: Math.min(range?.length ?? size - offset, size - offset) };
}

/** The bytes of a range, collected (for small reads and tests); undefined when there is no such asset. */
export async function readAsset(store: AssetStore, name: string, range?: AssetRange): Promise<{ bytes: Buffer; size: number } | undefined> {
  const opened = await store.stream(name, range);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body) chunks.push(chunk as Buffer);
  return { bytes: Buffer.concat(chunks), size: opened.size };
}

/** How much a file read takes at a time: one TaskService chunk. */
const FILE_READ_BYTES = 1024 * 1024;

/** Assets as files under one directory (tasks.assets_dir; by default one under the system's temporary directory). */
export function createDirectoryAssetStore(directory: string = join(tmpdir(), "router-assets")): AssetStore {
  const root = resolve(directory);
  const pathOf = (name: string) => {
    const path = resolve(root, name);
    // Names are the service's own, but a path outside the root is never touched.
    if (!path.startsWith(root + sep)) throw new Error(`asset name outside the store: ${name}`);
    return path;
  };
  return {
    async put(name, bytes) {
      const path = pathOf(name);
      await mkdir(dirname(path), { recursive: true });
      // Written aside, then renamed: a reader never sees half an asset, and a failed source leaves none.
      const partial = `${path}.${randomUUID()}.partial`;
      try {
        await pipeline(chunksFrom(bytes), createWriteStream(partial));
        await rename(partial, path);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
    },
    async stream(name, range) {
      let handle;
      try {
        handle = await open(pathOf(name), "r");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
      try {
        const { size } = await handle.stat();
        const { offset, length } = servedRange(size, range);
        if (length === 0) {
          await handle.close();
          return { size, offset, length, body: Readable.from([]) };
        }
        // The stream owns the handle from here: it closes it at the end, on an error, or when destroyed.
        const body = handle.createReadStream({ start: offset, end: offset + length - 1, highWaterMark: FILE_READ_BYTES });
        return { size, offset, length, body };
      } catch (error) {
        await handle.close();
        throw error;
      }
    },
    async folders() {
      const found: string[] = [];
      for (const organization of await subdirectories(root)) {
        for (const task of await subdirectories(join(root, organization))) found.push(`${organization}/${task}`);
      }
      return found;
    },
    async remove(folder) {
      await rm(pathOf(folder), { recursive: true, force: true });
    },
  };
}

/** A put's bytes as a stream of chunks. */
export const chunksFrom = (bytes: AsyncIterable<Uint8Array> | Uint8Array): AsyncIterable<Uint8Array> => (bytes instanceof Uint8Array ? Readable.from([bytes]) : bytes);

async function subdirectories(directory: string): Promise<string[]> {
  try {
    return (await readdir(directory, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}
