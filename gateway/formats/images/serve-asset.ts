// GET /api/v1/assets/{task_id}/{index}: a hosted task output, to a key of the
// task's organisation or to a signed link's holder (signed-link.ts), with HTTP range requests (RFC 9110: one range; several
// are answered whole, as the RFC allows) so that video players can seek. The
// bytes are streamed from the core as the client reads them: the gateway holds
// about one chunk of an asset at a time, however large.
import type { Context } from "koa";
import type { CoreClient } from "../../core-client.ts";
import { HOSTED_MEDIA_TYPES } from "../../../wire/hosted-media.ts";
import { openAsset } from "../../formats/shared/open-asset.ts";
import type { SignedLink } from "./signed-link.ts";

type ByteRange = { start: number; end?: number } | { suffix: number };

/** Who may read it: the caller's key, or a signed link (checked by the core). */
export type AssetAccess = { caller: { apiKey: string } } | { link: SignedLink };

export async function serveAsset(ctx: Context, core: CoreClient, access: AssetAccess, taskId: string, index: number) {
  // If-Range asks for the range only if the asset is unchanged, told by a validator (an ETag or a date) this route never
  // sends: it cannot match, so the whole asset is answered (RFC 9110, 13.1.5).
  const range = ctx.get("if-range") ? undefined : parseRange(ctx.get("range"));
  const { head, body } = await openAsset(core, { ...access, taskId, index, ...rangeRequest(range) });
  if (head.redirectUrl) {
    // tasks.s3.presigned_urls redirect: the bucket serves the bytes (and the range, which the client sends again there).
    body.destroy();
    ctx.status = 302;
    ctx.set("cache-control", "no-store");
    ctx.set("location", head.redirectUrl);
    ctx.body = "";
    return;
  }
  const total = Number(head.totalSize);
  const start = Number(head.offset);
  const length = Number(head.length);
  ctx.set("accept-ranges", "bytes");
  // Served from the gateway's own origin: never anything a browser would run or guess the type of.
  ctx.set("x-content-type-options", "nosniff");
  ctx.set("content-security-policy", "default-src 'none'; sandbox");
  if (range && (start >= total || ("suffix" in range && range.suffix === 0))) {
    body.destroy();
    ctx.status = 416;
    ctx.set("content-range", `bytes */${total}`);
    ctx.body = "";
    return;
  }
  if (range) {
    ctx.status = 206;
    ctx.set("content-range", `bytes ${start}-${start + length - 1}/${total}`);
  }
  // Only a media type from the allow-list; anything else (an asset stored before its type was checked) is a download.
  const media = HOSTED_MEDIA_TYPES.has(head.mediaType);
  ctx.type = media ? head.mediaType : "application/octet-stream";
  ctx.set("content-disposition", media ? "inline" : "attachment");
  ctx.body = body;
  // After the body: Koa drops a Content-Length set before a stream.
  ctx.length = length;
}

/** The core's form of a range: offset and length (0: to the end), or the suffix's length. */
function rangeRequest(range: ByteRange | undefined) {
  if (!range) return {};
  if ("suffix" in range) return { suffixLength: BigInt(range.suffix) };
  return { offset: BigInt(range.start), length: range.end === undefined ? 0n : BigInt(range.end - range.start + 1) };
}

/** One `bytes=` range; undefined for none, for several, or for a header that is not one (answered whole). */
function parseRange(header: string): ByteRange | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") return { suffix: bytePosition(match[2]) };
  const start = bytePosition(match[1]);
  if (match[2] === "") return { start };
  const end = bytePosition(match[2]);
  return end < start ? undefined : { start, end };
}

/**
 * A position of any number of digits, saturated at 2^53-1: no asset is that
 * large, so a start past it is past the end (416), and an end or a suffix past
 * it reaches the end (RFC 9110, 14.1.2), as the real number would; and it stays
 * an exact number and an int64 on the way to the core.
 */
function bytePosition(digits: string): number {
  const value = Number(digits);
  return value <= Number.MAX_SAFE_INTEGER ? value : Number.MAX_SAFE_INTEGER;
}
