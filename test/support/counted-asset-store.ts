// An asset store that counts its open reads: a read is open from stream() until
// its body closes (ended, failed or destroyed). Tests use it to see that a
// client that goes away mid-download stops the read in the store.
import type { AssetStore, AssetStream } from "../../core/tasks/asset-store.ts";

export interface CountedAssetStore extends AssetStore {
  /** Reads whose body has not closed yet. */
  readonly open: number;
  /** Each read opened: the asset, the bytes it serves, whether its body reached its end, and whether it closed. */
  readonly reads: { name: string; length: number; ended: boolean; closed: boolean }[];
  close(): Promise<void>;
}

export function countedAssetStore(inner: AssetStore): CountedAssetStore {
  const reads: CountedAssetStore["reads"] = [];
  return {
    reads,
    get open() {
      return reads.filter((read) => !read.closed).length;
    },
    put: (name, bytes) => inner.put(name, bytes),
    folders: () => inner.folders(),
    remove: (folder) => inner.remove(folder),
    close: async () => inner.close?.(),
    async stream(name, range) {
      const opened: AssetStream | undefined = await inner.stream(name, range);
      if (!opened) return undefined;
      const read = { name, length: opened.length, ended: false, closed: false };
      reads.push(read);
      // Watched without a 'data' listener, which would make the body flow regardless of its reader.
      opened.body.once("end", () => (read.ended = true));
      opened.body.once("close", () => (read.closed = true));
      return opened;
    },
  };
}
