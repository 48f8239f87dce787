// The asset store's contract (core/tasks/asset-store.ts), run against both
// stores: the directory store and the S3 store on a local S3-compatible
// server (s3rver). Bytes come back whole or by range (a suffix too) with the
// whole size and the range served, streamed in order, and a read stopped early
// lets go of its file or response; nothing for an unknown name, task folders are listed (across listing pages)
// and removed (in batches, and only their own objects), and no name reaches
// outside the store. A put that fails midway leaves nothing: no partial file,
// no multipart upload left open on S3.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDirectoryAssetStore, readAsset, type AssetStore } from "../../../core/tasks/asset-store.ts";
import { createS3AssetStore, openS3AssetStore } from "../../../core/tasks/s3-asset-store.ts";
import { s3AssetsSchema } from "../../../core/config/schema.ts";
import { S3_CREDENTIALS, startS3Server, type S3Server } from "../../support/s3-server.ts";

const MiB = 1024 * 1024;

let s3: S3Server;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(async () => {
  await s3?.close();
});

const s3Client = (credentials = S3_CREDENTIALS) => new S3Client({ region: "us-east-1", endpoint: s3.endpoint, forcePathStyle: true, credentials });

interface Subject {
  store: AssetStore;
  close(): Promise<void>;
}

const subjects: [string, (name: string) => Subject][] = [
  ["directory", () => ({ store: createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "asset-store-test-"))), close: async () => {} })],
  [
    "s3",
    (name) => {
      // Pages of two keys: the listing and the removal cross several pages.
      // Upload parts of 5 MiB, S3's smallest: a stream of 11 MiB is three parts.
      const store = createS3AssetStore({ client: s3Client(), bucket: s3.bucket, keyPrefix: `contract/${name}`, pageSize: 2, partBytes: 5 * MiB });
      return { store, close: () => store.close() };
    },
  ],
];

describe.each(subjects)("%s asset store", (kind, open) => {
  const bytes = Buffer.from("0123456789");
  let subject: Subject;
  let store: AssetStore;
  beforeAll(() => {
    subject = open(kind);
    store = subject.store;
  });
  afterAll(async () => {
    await subject?.close();
  });

  it("reads back what was put, whole or a range, with the whole size", async () => {
    await store.put("org%20a/task1/0", bytes);
    expect(await readAsset(store, "org%20a/task1/0")).toEqual({ bytes, size: 10 });
    expect(await readAsset(store, "org%20a/task1/0", { offset: 0 })).toEqual({ bytes, size: 10 });
    expect(await readAsset(store, "org%20a/task1/0", { offset: 2, length: 3 })).toEqual({ bytes: Buffer.from("234"), size: 10 });
    expect(await readAsset(store, "org%20a/task1/0", { offset: 0, length: 1 })).toEqual({ bytes: Buffer.from("0"), size: 10 });
    expect(await readAsset(store, "org%20a/task1/0", { offset: 8 })).toEqual({ bytes: Buffer.from("89"), size: 10 });
    expect(await readAsset(store, "org%20a/task1/0", { offset: 8, length: 100 })).toEqual({ bytes: Buffer.from("89"), size: 10 });
    expect(await readAsset(store, "org%20a/task1/0", { offset: 10 })).toEqual({ bytes: Buffer.alloc(0), size: 10 });
    expect(await readAsset(store, "org%20a/task1/0", { offset: 12, length: 3 })).toEqual({ bytes: Buffer.alloc(0), size: 10 });
    expect(await readAsset(store, "org%20a/task1/0", { offset: 3, length: 0 })).toEqual({ bytes: Buffer.alloc(0), size: 10 });
    expect(await readAsset(store, "org%20a/task1/1")).toBeUndefined();
    expect(await readAsset(store, "org%20a/task1/1", { offset: 2, length: 3 })).toBeUndefined();
    expect(await readAsset(store, "org%20a/task1/1", { offset: 2, length: 0 })).toBeUndefined();
  });

  it("keeps binary bytes exactly, and an empty asset", async () => {
    const binary = Buffer.from(Array.from({ length: 256 * 4 }, (_, index) => index % 256));
    await store.put("org%20a/task1/2", binary);
    expect((await readAsset(store, "org%20a/task1/2"))!.bytes.equals(binary)).toBe(true);
    expect(await readAsset(store, "org%20a/task1/2", { offset: 255, length: 3 })).toEqual({ bytes: Buffer.from([255, 0, 1]), size: binary.length });
    await store.put("org%20a/task1/3", Buffer.alloc(0));
    // Read whole only: s3rver never answers a range of an empty object (real S3 answers 416, which the store handles).
    expect(await readAsset(store, "org%20a/task1/3")).toEqual({ bytes: Buffer.alloc(0), size: 0 });
  });

  it("streams a large asset whole and by range (a suffix too), in order, with the range served", async () => {
    const large = randomBytes(3 * MiB + 1);
    await store.put("org%20a/task1/4", large);
    const opened = (await store.stream("org%20a/task1/4"))!;
    expect(opened).toMatchObject({ size: large.length, offset: 0, length: large.length });
    expect(Buffer.concat(await opened.body.toArray()).equals(large)).toBe(true);
    const ranged = (await store.stream("org%20a/task1/4", { offset: MiB - 1, length: MiB + 2 }))!;
    expect(ranged).toMatchObject({ size: large.length, offset: MiB - 1, length: MiB + 2 });
    expect(Buffer.concat(await ranged.body.toArray()).equals(large.subarray(MiB - 1, 2 * MiB + 1))).toBe(true);
    const suffix = (await store.stream("org%20a/task1/4", { suffix: 5 }))!;
    expect(suffix).toMatchObject({ size: large.length, offset: large.length - 5, length: 5 });
    expect(Buffer.concat(await suffix.body.toArray()).equals(large.subarray(-5))).toBe(true);
    // A suffix longer than the asset is all of it; an empty one, and a range past the end, serve nothing.
    expect(await readAsset(store, "org%20a/task1/0", { suffix: 100 })).toEqual({ bytes, size: 10 });
    expect(await store.stream("org%20a/task1/0", { suffix: 0 })).toMatchObject({ size: 10, offset: 10, length: 0 });
    expect(await store.stream("org%20a/task1/0", { offset: 12 })).toMatchObject({ size: 10, offset: 10, length: 0 });
    expect(await store.stream("org%20a/task1/5", { suffix: 3 })).toBeUndefined();
  });

  it("stores a stream of chunks as they come (several upload parts), and nothing when the stream fails midway", async () => {
    const large = randomBytes(11 * MiB + 3);
    const CHUNK = 256 * 1024;
    async function* chunks(failAt = Infinity) {
      for (let at = 0; at < large.length; at += CHUNK) {
        if (at >= failAt) throw new Error("download cut");
        yield large.subarray(at, at + CHUNK);
      }
    }
    await store.put("org%20a/task4/0", chunks());
    expect((await readAsset(store, "org%20a/task4/0"))!.bytes.equals(large)).toBe(true);
    await expect(store.put("org%20a/task4/1", chunks(7 * MiB))).rejects.toThrow("download cut");
    expect(await store.stream("org%20a/task4/1")).toBeUndefined();
    await store.remove("org%20a/task4");
  });

  it("lets go of a read destroyed before its end", async () => {
    await store.put("org%20a/task1/6", randomBytes(4 * MiB));
    const opened = (await store.stream("org%20a/task1/6"))!;
    const closed = once(opened.body, "close");
    const first = await opened.body[Symbol.asyncIterator]().next();
    expect(first.value.length).toBeGreaterThan(0);
    opened.body.destroy();
    await closed;
    expect(opened.body.readableEnded).toBe(false);
  });

  it("lists task folders and removes one with its assets, and only its own", async () => {
    for (const index of [0, 1, 2, 3, 4]) await store.put(`org%20a/task2/${index}`, bytes);
    await store.put("org%20a/task20/0", bytes);
    await store.put("org%20b/task3/0", bytes);
    expect((await store.folders()).sort()).toEqual(["org%20a/task1", "org%20a/task2", "org%20a/task20", "org%20b/task3"]);
    await store.remove("org%20a/task2");
    expect((await store.folders()).sort()).toEqual(["org%20a/task1", "org%20a/task20", "org%20b/task3"]);
    for (const index of [0, 1, 2, 3, 4]) expect(await readAsset(store, `org%20a/task2/${index}`)).toBeUndefined();
    expect(await readAsset(store, "org%20a/task20/0")).toEqual({ bytes, size: 10 });
    // Removing what is not there is no error.
    await store.remove("org%20a/task2");
  });

  it("refuses a name outside the store", async () => {
    await expect(store.put("../escape", bytes)).rejects.toThrow(/outside/);
    await expect(readAsset(store, "../../etc/passwd")).rejects.toThrow(/outside/);
    await expect(store.remove("..")).rejects.toThrow(/outside/);
  });
});

describe("directory asset store", () => {
  const openFiles = () => readdirSync("/proc/self/fd").length;

  it("holds a file open only while a read is under way, ended or stopped", async () => {
    const store = createDirectoryAssetStore(mkdtempSync(join(tmpdir(), "asset-store-test-")));
    await store.put("org/task/0", randomBytes(4 * MiB));
    const before = openFiles();
    const whole = (await store.stream("org/task/0"))!;
    expect(openFiles()).toBe(before + 1);
    await whole.body.toArray();
    await vi.waitFor(() => expect(openFiles()).toBe(before));

    const stopped = (await store.stream("org/task/0", { offset: MiB }))!;
    await stopped.body[Symbol.asyncIterator]().next();
    stopped.body.destroy();
    await vi.waitFor(() => expect(openFiles()).toBe(before));
    // An empty range opens nothing that stays open.
    await store.stream("org/task/0", { offset: 4 * MiB });
    expect(openFiles()).toBe(before);
  });

  it("leaves no file behind, whole or partial, when a stream fails midway", async () => {
    const directory = mkdtempSync(join(tmpdir(), "asset-store-test-"));
    const store = createDirectoryAssetStore(directory);
    await expect(store.put("org/task/0", failingAfter(MiB))).rejects.toThrow("download cut");
    expect(readdirSync(join(directory, "org", "task"))).toEqual([]);
  });
});

/** A download that sends `bytes` bytes, then fails. */
async function* failingAfter(bytes: number) {
  yield randomBytes(bytes);
  throw new Error("download cut");
}

describe("S3 asset store", () => {
  it("aborts the multipart upload of a stream that fails midway, so that no part is left stored (and billed)", async () => {
    const client = s3Client();
    const send = vi.spyOn(client, "send");
    const store = createS3AssetStore({ client, bucket: s3.bucket, keyPrefix: "aborted/", partBytes: 5 * MiB });
    try {
      // Two parts' worth, then the failure: the first part is sent before the second is complete.
      await expect(store.put("org/task/0", failingAfter(11 * MiB))).rejects.toThrow("download cut");
      const commands = send.mock.calls.map(([command]) => command as unknown as { constructor: { name: string }; input: { UploadId?: string } });
      expect(commands.map((command) => command.constructor.name)).toEqual(["CreateMultipartUploadCommand", "UploadPartCommand", "AbortMultipartUploadCommand"]);
      const [, part, abort] = commands;
      expect(abort.input.UploadId).toBeTruthy();
      expect(abort.input.UploadId).toBe(part.input.UploadId);
      expect(await store.stream("org/task/0")).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("answers only the range asked from a server that ignores Range and sends the whole object", async () => {
    const whole = randomBytes(3 * MiB);
    const server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream", "content-length": whole.length });
      response.end(whole);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const client = new S3Client({ region: "us-east-1", endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentials: S3_CREDENTIALS });
    const store = createS3AssetStore({ client, bucket: "plain" });
    try {
      const opened = (await store.stream("org/task/0", { offset: MiB + 1, length: MiB }))!;
      expect(opened).toMatchObject({ size: whole.length, offset: MiB + 1, length: MiB });
      expect(Buffer.concat(await opened.body.toArray()).equals(whole.subarray(MiB + 1, 2 * MiB + 1))).toBe(true);
    } finally {
      await store.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it("keeps its objects under the key prefix, so that two prefixes in one bucket do not see each other", async () => {
    const first = createS3AssetStore({ client: s3Client(), bucket: s3.bucket, keyPrefix: "prefixes/one/" });
    const second = createS3AssetStore({ client: s3Client(), bucket: s3.bucket, keyPrefix: "prefixes/two" });
    try {
      await first.put("org/task/0", Buffer.from("one"));
      expect(await readAsset(second, "org/task/0")).toBeUndefined();
      expect(await second.folders()).toEqual([]);
      expect(await first.folders()).toEqual(["org/task"]);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("takes its credentials from the variables the configuration names, and fails the start when one is unset", async () => {
    const config = s3AssetsSchema.parse({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      force_path_style: true,
      key_prefix: "configured",
      access_key_id_env: "ASSETS_KEY_ID",
      secret_access_key_env: "ASSETS_SECRET",
    });
    const store = openS3AssetStore(config, { ASSETS_KEY_ID: S3_CREDENTIALS.accessKeyId, ASSETS_SECRET: S3_CREDENTIALS.secretAccessKey });
    const wrong = openS3AssetStore(config, { ASSETS_KEY_ID: "SOMEONE_ELSE", ASSETS_SECRET: S3_CREDENTIALS.secretAccessKey });
    try {
      await store.put("org/task/0", Buffer.from("signed"));
      expect((await readAsset(store, "org/task/0"))!.bytes.toString()).toBe("signed");
      // The server knows one access key id: another is refused, so the named variables are what signed.
      await expect(readAsset(wrong, "org/task/0")).rejects.toThrow(/Access Key Id/);
    } finally {
      await store.close();
      await wrong.close();
    }
    expect(() => openS3AssetStore(config, { ASSETS_KEY_ID: "x" })).toThrow(/ASSETS_SECRET, which is not set/);
  });

  it("is configured under tasks: s3 needs its block, and the credential variables go in pairs", () => {
    expect(s3AssetsSchema.safeParse({ bucket: "b", access_key_id_env: "KEY_ID" }).success).toBe(false);
    expect(s3AssetsSchema.safeParse({ bucket: "b", session_token_env: "TOKEN" }).success).toBe(false);
    expect(s3AssetsSchema.safeParse({ bucket: "b", endpoint: "ftp://host" }).success).toBe(false);
    expect(s3AssetsSchema.parse({ bucket: "b" })).toEqual({ bucket: "b", region: "us-east-1", force_path_style: false, key_prefix: "" });
  });
});
