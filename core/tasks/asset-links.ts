// Signed links to hosted assets (docs/tasks.md, "Signed links"): capability
// URLs that download without the API key, so a browser's <img>, curl or a
// webhook consumer can use them. A link names the task, the output's index and
// an expiry, and carries an HMAC-SHA256 of the three keyed with the
// deployment's link secret; the core signs every answer's asset paths afresh
// (a GET of the task hands out new links) and checks a link before serving it.
// Forged or altered: 403 link_invalid, told before anything is looked up, so
// a guess learns nothing; a task no longer kept: 404; past its expiry: 403
// link_expired. A link never outlives its task (its retention).
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { type AssetLink, type Task } from "../../gen/router/v1/tasks_pb.js";
import { HOSTED_MEDIA_TYPES } from "../../wire/hosted-media.ts";
import { fromStore } from "../accounts/refusals.ts";
import { Code, routerError, taskNotFound } from "../errors.ts";
import type { AssetRange, AssetStore, AssetStream } from "./asset-store.ts";
import { hostedAsset } from "./hosted-asset.ts";
import type { TaskStore } from "./store.ts";

/** The shortest link secret taken: 32 characters (a `openssl rand -base64 32` is 44). */
export const LINK_SECRET_MIN_LENGTH = 32;

/** How the S3 store's own presigned URL takes part (tasks.s3.presigned_urls): not, behind a redirect, or in the answers. */
export type PresignedUrls = "off" | "redirect" | "direct";

export interface AssetLinksOptions {
  key: Buffer;
  ttlSeconds: number;
  now: () => Date;
  store: Pick<TaskStore, "ownerOf" | "get">;
  assets: AssetStore;
  /** Default `off`; the others need a store that presigns (S3). */
  presignedUrls?: PresignedUrls;
}

/** A signed link's answer: the bytes, or (presigned_urls: redirect) where to fetch them. */
export type LinkedAsset = (AssetStream & { mediaType: string }) | { redirectUrl: string; mediaType: string };

export interface AssetLinks {
  /** The task as answers show it: each hosted asset's path signed, good for ttlSeconds (never past the task's retention). */
  present(task: Task): Promise<Task>;
  /** The asset a link names, once its signature, its task and its expiry are checked (in that order). */
  stream(link: AssetLink, taskId: string, index: number, range?: AssetRange): Promise<LinkedAsset>;
}

/**
 * The link key: the variable's value, or (unset) random bytes made now, which
 * only this instance knows and which die with it; `generated` says which.
 */
export function linkKeyOf(secret: string | undefined, variable: string): { key: Buffer; generated: boolean } {
  if (!secret) return { key: randomBytes(32), generated: true };
  if (secret.length < LINK_SECRET_MIN_LENGTH) throw new Error(`${variable} must be at least ${LINK_SECRET_MIN_LENGTH} characters (it signs hosted asset links)`);
  return { key: Buffer.from(secret, "utf8"), generated: false };
}

/** The path of an output's signed link (the gateway makes it absolute). */
export const signedAssetPath = (taskId: string, index: number, expires: number, signature: string) =>
  `/api/v1/assets/${taskId}/${index}?expires=${expires}&signature=${signature}`;

export function signLink(key: Buffer, taskId: string, index: number, expires: number): string {
  return createHmac("sha256", key).update(`asset-link\n${taskId}\n${index}\n${expires}`).digest("base64url");
}

const linkInvalid = () => routerError(Code.PermissionDenied, "link_invalid", "This link is not valid: its signature does not match (it was altered, or not made by this service).");
const linkExpired = () => routerError(Code.PermissionDenied, "link_expired", "This link has expired: read the task again for a fresh link.");

export function createAssetLinks(options: AssetLinksOptions): AssetLinks {
  const { key, store, assets } = options;
  const presigned = options.presignedUrls ?? "off";
  if (presigned !== "off" && !assets.presign) throw new Error(`presigned_urls ${presigned} needs an asset store that presigns (tasks.asset_storage: s3)`);
  const nowSeconds = () => Math.floor(options.now().getTime() / 1000);

  /** The seconds a link made now for this task may last: ttlSeconds, cut at the task's retention. */
  const expiryOf = (task: Task, now: number) => {
    const wanted = now + options.ttlSeconds;
    return task.expiresAt ? Math.min(wanted, Math.floor(timestampMs(task.expiresAt) / 1000)) : wanted;
  };

  /** The bucket's own URL of an output, good for `lifeSeconds`, answered with the types the gateway would send. */
  const presignedUrl = (task: Task, index: number, lifeSeconds: number) => {
    const output = task.outputs[index];
    const media = HOSTED_MEDIA_TYPES.has(output.mediaType);
    const response = { contentType: media ? output.mediaType : "application/octet-stream", disposition: media ? "inline" : "attachment" };
    return assets.presign!(output.assetName, Math.max(1, lifeSeconds), response);
  };

  return {
    async present(task) {
      const hosted = task.routerAssets;
      const paths = hosted?.urls ?? [];
      if (!hosted || paths.length === 0) return task;
      const now = nowSeconds();
      const expires = expiryOf(task, now);
      const direct = presigned === "direct" && hosted.status === "ready";
      const urls = await Promise.all(
        paths.map((_, index) => (direct && task.outputs[index] ? presignedUrl(task, index, expires - now) : signedAssetPath(task.id, index, expires, signLink(key, task.id, index, expires)))),
      );
      // A copy: the stored task keeps its unsigned paths.
      return { ...task, routerAssets: { ...hosted, urls } };
    },
    async stream(link, taskId, index, range) {
      const expires = Number(link.expires);
      // Compared as text: decoding would let two spellings of one signature pass (base64url's unused last bits).
      const given = Buffer.from(link.signature);
      const expected = Buffer.from(signLink(key, taskId, index, expires));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw linkInvalid();
      // Signed by us: the task's fate may be told now. Gone (deleted, or past its retention) is a 404.
      const organizationId = await fromStore(store.ownerOf(taskId));
      const task = organizationId === undefined ? undefined : await fromStore(store.get(organizationId, taskId));
      if (!task) throw taskNotFound(taskId);
      const now = nowSeconds();
      if (expires <= now) throw linkExpired();
      if (presigned === "redirect" && task.outputs[index] && task.routerAssets?.status === "ready") {
        // Good as long as the link: a player seeking later asks the link again anyway.
        return { redirectUrl: await presignedUrl(task, index, expires - now), mediaType: task.outputs[index].mediaType };
      }
      return hostedAsset(assets, task, index, range);
    },
  };
}
