// Assets in an S3-compatible bucket (tasks.asset_storage: s3), so that every
// instance of a deployment reads what any of them stored, with no shared disk.
// Each asset is one object, `<key prefix><organisation>/<task id>/<index>`.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import type { Environment } from "../catalogue/catalogue.ts";
import type { S3AssetsConfig } from "../config/schema.ts";
import { Readable, Transform, pipeline } from "node:stream";
import { chunksFrom, servedRange, type AssetStore } from "./asset-store.ts";
import { presignGetUrl, rfc3986Path } from "./s3-presign.ts";

/** S3's largest page of a listing, and the most keys one DeleteObjects takes. */
const S3_PAGE_MAX = 1000;
/**
 * The parts an asset larger than one is uploaded in (S3's multipart upload:
 * at least 5 MiB each but the last, at most 10,000 of them): a put holds two
 * parts at most, and 10,000 of them pass the download ceiling (1 GiB) many times.
 */
const UPLOAD_PART_BYTES = 8 * 1024 * 1024;

export interface S3AssetStoreOptions {
  client: S3Client;
  bucket: string;
  /** Prepended to every asset name (a folder of the bucket: a missing final `/` is added). */
  keyPrefix?: string;
  /** Keys per listing page and per DeleteObjects batch (tests make it small to cross pages). */
  pageSize?: number;
  /** Bytes per part of a multipart upload (default UPLOAD_PART_BYTES). */
  partBytes?: number;
}

export interface S3AssetStore extends AssetStore {
  close(): Promise<void>;
}

/** The store `tasks.s3` describes; its credentials from the variables the configuration names, else the SDK's default chain. */
export function openS3AssetStore(config: S3AssetsConfig, env: Environment): S3AssetStore {
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.force_path_style,
    credentials: credentialsFrom(config, env),
  });
  return createS3AssetStore({ client, bucket: config.bucket, keyPrefix: config.key_prefix });
}

function credentialsFrom(config: S3AssetsConfig, env: Environment) {
  if (!config.access_key_id_env) return undefined;
  const read = (field: string, name: string | undefined) => {
    const value = name ? env[name] : undefined;
    // Named but unset is a deployment mistake: failing the start says so, where the default chain would hide it.
    if (!value) throw new Error(`tasks.s3.${field} names ${name}, which is not set`);
    return value;
  };
  return {
    accessKeyId: read("access_key_id_env", config.access_key_id_env),
    secretAccessKey: read("secret_access_key_env", config.secret_access_key_env),
    sessionToken: config.session_token_env ? read("session_token_env", config.session_token_env) : undefined,
  };
}

export function createS3AssetStore(options: S3AssetStoreOptions): S3AssetStore {
  const { client, bucket } = options;
  const prefix = options.keyPrefix && !options.keyPrefix.endsWith("/") ? `${options.keyPrefix}/` : (options.keyPrefix ?? "");
  const pageSize = Math.min(options.pageSize ?? S3_PAGE_MAX, S3_PAGE_MAX);
  const keyOf = (name: string) => prefix + checkedName(name);

  /** Every key under a prefix, a page at a time. */
  async function* keysUnder(keyPrefix: string) {
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: keyPrefix, MaxKeys: pageSize, ContinuationToken: token }));
      yield (page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : []));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  const sizeOf = async (key: string) => {
    try {
      return (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };

  return {
    async put(name, bytes) {
      const Key = keyOf(name);
      const parts = partsOf(chunksFrom(bytes), options.partBytes ?? UPLOAD_PART_BYTES);
      try {
        // The next part is read before the current one is sent: an asset of one part is one PutObject.
        let part = (await parts.next()).value!;
        let next = await parts.next();
        if (next.done) {
          await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: part, ContentLength: part.length }));
          return;
        }
        const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key }));
        try {
          const sent = [];
          for (let PartNumber = 1; ; PartNumber += 1) {
            const { ETag } = await client.send(new UploadPartCommand({ Bucket: bucket, Key, UploadId, PartNumber, Body: part, ContentLength: part.length }));
            sent.push({ ETag, PartNumber });
            if (next.done) break;
            part = next.value;
            next = await parts.next();
          }
          await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key, UploadId, MultipartUpload: { Parts: sent } }));
        } catch (error) {
          // The parts sent are let go, not left to be billed as an unfinished upload.
          await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key, UploadId })).catch(() => undefined);
          throw error;
        }
      } finally {
        // A failed upload stops the source's read too.
        await parts.return(undefined);
      }
    },
    async stream(name, range) {
      const key = keyOf(name);
      let size: number | undefined;
      let asked: { offset: number; length?: number } | undefined;
      if (range && "suffix" in range) {
        // A suffix needs the size first: not every S3-compatible server answers `bytes=-n` (s3rver reads it as `bytes=0-n`).
        size = await sizeOf(key);
        if (size === undefined) return undefined;
        asked = servedRange(size, range);
      } else asked = range;
      /** Nothing to stream, only the size to tell; undefined when there is no such object. */
      const nothing = async (known?: number) => {
        const whole = known ?? (await sizeOf(key));
        return whole === undefined ? undefined : { size: whole, ...servedRange(whole, asked), body: Readable.from([]) };
      };
      if (asked?.length === 0) return nothing(size);
      const offset = asked?.offset ?? 0;
      const wantsRange = offset > 0 || asked?.length !== undefined;
      const last = asked?.length === undefined ? "" : String(offset + asked.length - 1);
      let answer;
      try {
        answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: wantsRange ? `bytes=${offset}-${last}` : undefined }));
      } catch (error) {
        if (isNotFound(error)) return undefined;
        // A range starting at or past the end (or any range of an empty object): nothing to read, only the size to tell.
        if (isInvalidRange(error)) return nothing();
        throw error;
      }
      const source = answer.Body as unknown as Readable;
      const answered = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(answer.ContentRange ?? "");
      const whole = answered ? Number(answered[3]) : (answer.ContentLength ?? 0);
      const served = servedRange(whole, asked);
      // Whatever the server sent (a whole object, or a wider range than asked), only the range asked is answered.
      const skip = served.offset - (answered ? Number(answered[1]) : 0);
      const sent = answered ? Number(answered[2]) - Number(answered[1]) + 1 : whole;
      const body = skip === 0 && sent === served.length ? source : sliceOf(source, skip, served.length);
      return { size: whole, ...served, body };
    },
    async folders() {
      // Without a delimiter: folders are two levels deep, and listing the keys
      // themselves works on every S3-compatible server (not all list nested common prefixes).
      const found = new Set<string>();
      for await (const keys of keysUnder(prefix)) {
        for (const key of keys) {
          const parts = key.slice(prefix.length).split("/");
          if (parts.length >= 3 && parts[0] && parts[1]) found.add(`${parts[0]}/${parts[1]}`);
        }
      }
      return [...found];
    },
    async remove(folder) {
      // The final `/` keeps task1's removal away from task10's objects.
      for await (const keys of keysUnder(`${keyOf(folder)}/`)) {
        if (keys.length === 0) continue;
        const answer = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
        const failed = answer.Errors ?? [];
        if (failed.length > 0) throw new Error(`could not remove ${failed.length} assets of ${folder}: ${failed[0].Code} ${failed[0].Message}`);
      }
    },
    async presign(name, expiresSeconds, response) {
      const { config } = client;
      const credentials = await config.credentials();
      const objectUrl = await objectUrlOf(client, bucket, keyOf(name));
      return presignGetUrl({
        objectUrl,
        region: await config.region(),
        credentials,
        expiresSeconds,
        now: new Date(),
        query: { "response-content-type": response.contentType, "response-content-disposition": response.disposition },
      });
    },
    async close() {
      client.destroy();
    },
  };
}

/**
 * Where the client reaches an object: under the configured endpoint (path
 * style: the bucket in the path; else in the host name), or AWS S3 of the
 * client's region.
 */
async function objectUrlOf(client: S3Client, bucket: string, key: string): Promise<URL> {
  const { config } = client;
  const path = rfc3986Path(key);
  const pathStyle = config.forcePathStyle === true;
  if (config.endpoint) {
    const endpoint = await config.endpoint();
    const base = `${endpoint.protocol}//${pathStyle ? "" : `${bucket}.`}${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ""}`;
    const folder = endpoint.path.replace(/\/$/, "");
    return new URL(`${base}${folder}/${pathStyle ? `${rfc3986Path(bucket)}/` : ""}${path}`);
  }
  const region = await config.region();
  return new URL(pathStyle ? `https://s3.${region}.amazonaws.com/${rfc3986Path(bucket)}/${path}` : `https://${bucket}.s3.${region}.amazonaws.com/${path}`);
}

/** `length` bytes of a stream after its first `skip`; destroying the slice destroys the source (pipeline). */
function sliceOf(source: Readable, skip: number, length: number): Readable {
  let position = 0;
  const end = skip + length;
  const slice = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const from = Math.max(skip - position, 0);
      const to = Math.min(end - position, chunk.length);
      position += chunk.length;
      // Bytes outside the range are dropped (a server that ignores Range sends them all).
      if (to > from) this.push(chunk.subarray(from, to));
      done();
    },
  });
  return pipeline(source, slice, () => {});
}

/** The bytes in parts of exactly `size` bytes, the last shorter; always one part at least (an empty asset is one empty part). */
async function* partsOf(source: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let given = 0;
  for await (const chunk of source) {
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (heldBytes + rest.length >= size) {
      const take = size - heldBytes;
      held.push(rest.subarray(0, take));
      rest = rest.subarray(take);
      yield Buffer.concat(held, size);
      given += 1;
      held = [];
      heldBytes = 0;
    }
    if (rest.length > 0) {
      held.push(rest);
      heldBytes += rest.length;
    }
  }
  if (heldBytes > 0 || given === 0) yield Buffer.concat(held, heldBytes);
}

/** Asset names are the service's own; one with an empty, `.` or `..` part would not name the same object everywhere (and reaches outside a directory). */
function checkedName(name: string) {
  if (name.split("/").some((part) => part === "" || part === "." || part === "..")) throw new Error(`asset name outside the store: ${name}`);
  return name;
}

const statusOf = (error: unknown) => (error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined);
const isNotFound = (error: unknown) => statusOf(error) === 404 && (error as Error).name !== "NoSuchBucket";
const isInvalidRange = (error: unknown) => statusOf(error) === 416;
