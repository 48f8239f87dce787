// The directory asset store (core/tasks/asset-store.ts): bytes back whole or
// by range, nothing for an unknown name, task folders listed and removed, and
// no name reaching outside the directory.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createDirectoryAssetStore } from "../../../core/tasks/asset-store.ts";

describe("directory asset store", () => {
  const store = createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "asset-store-test-")));
  const bytes = Buffer.from("0123456789");

  it("reads back what was put, whole or a range, with the whole size", async () => {
    await store.put("org%20a/task1/0", bytes);
    expect(await store.read("org%20a/task1/0")).toEqual({ bytes, size: 10 });
    expect(await store.read("org%20a/task1/0", { offset: 2, length: 3 })).toEqual({ bytes: Buffer.from("234"), size: 10 });
    expect(await store.read("org%20a/task1/0", { offset: 8 })).toEqual({ bytes: Buffer.from("89"), size: 10 });
    expect(await store.read("org%20a/task1/0", { offset: 8, length: 100 })).toEqual({ bytes: Buffer.from("89"), size: 10 });
    expect(await store.read("org%20a/task1/0", { offset: 10 })).toEqual({ bytes: Buffer.alloc(0), size: 10 });
    expect(await store.read("org%20a/task1/1")).toBeUndefined();
  });

  it("lists task folders and removes one with its assets", async () => {
    await store.put("org%20a/task2/0", bytes);
    await store.put("org%20b/task3/0", bytes);
    expect((await store.folders()).sort()).toEqual(["org%20a/task1", "org%20a/task2", "org%20b/task3"]);
    await store.remove("org%20a/task2");
    expect((await store.folders()).sort()).toEqual(["org%20a/task1", "org%20b/task3"]);
    expect(await store.read("org%20a/task2/0")).toBeUndefined();
  });

  it("refuses a name outside its directory", async () => {
    await expect(store.put("../escape", bytes)).rejects.toThrow(/outside/);
    await expect(store.read("../../etc/passwd")).rejects.toThrow(/outside/);
  });
});
