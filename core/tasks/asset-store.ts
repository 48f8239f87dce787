// Where hosted copies of task outputs are kept (router_assets): behind one
// interface, so that an object store (S3) can replace the local directory for
// deployments of several instances on several machines. Names are chosen by
// the task service (`<task id>/<index>`); the media type lives in the task.
import { mkdir, open, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";

export interface AssetStore {
  put(name: string, bytes: Buffer): Promise<void>;
  /** `length` bytes from `offset` (to the end when absent), and the whole size; undefined when there is no such asset. */
  read(name: string, range?: { offset: number; length?: number }): Promise<{ bytes: Buffer; size: number } | undefined>;
  /** The task folders held (`<organisation>/<task id>`, the first two parts of asset names), for the sweep of expired ones. */
  folders(): Promise<string[]>;
  /** Removes every asset under a task folder. */
  remove(folder: string): Promise<void>;
  /** Lets go of connections (an object store's client); the directory store holds none. */
  close?(): Promise<void>;
}

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
      await writeFile(path, bytes);
    },
    async read(name, range) {
      let handle;
      try {
        handle = await open(pathOf(name), "r");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
      try {
        const { size } = await handle.stat();
        const offset = Math.min(range?.offset ?? 0, size);
        const length = Math.min(range?.length ?? size - offset, size - offset);
        const bytes = Buffer.alloc(length);
        if (length > 0) await handle.read(bytes, 0, length, offset);
        return { bytes, size };
      } finally {
        await handle.close();
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

async function subdirectories(directory: string): Promise<string[]> {
  try {
    return (await readdir(directory, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}
