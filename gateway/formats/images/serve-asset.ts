// GET /api/v1/assets/{task_id}/{index}: a hosted task output, to a key of the
// task's organisation, with HTTP range requests (RFC 9110: one range; several
// are answered whole, as the RFC allows) so that video players can seek. The
// bytes are streamed from the core as the client reads them: the gateway holds
// about one chunk of an asset at a time, however large.
import type { Context } from "koa";
import type { CoreClient } from "../../core-client.ts";
import { openAsset } from "./open-asset.ts";

type ByteRange = { start: number; end?: number } | { suffix: number };

export async function serveAsset(ctx: Context, core: CoreClient, apiKey: string, taskId: string, index: number) {
  // If-Range asks for the range only if the asset is unchanged, told by a validator (an ETag or a date) this route never
  // sends: it cannot match, so the whole asset is answered (RFC 9110, 13.1.5).
  const range = ctx.get("if-range") ? undefined : parseRange(ctx.get("range"));
  const { head, body } = await openAsset(core, { caller: { apiKey }, taskId, index, ...rangeRequest(range) });
  const total = Number(head.totalSize);
  const start = Number(head.offset);
  const length = Number(head.length);
  ctx.set("accept-ranges", "bytes");
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
  ctx.type = head.mediaType;
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
  if (match[1] === "") return { suffix: Number(match[2]) };
  const start = Number(match[1]);
  if (match[2] === "") return { start };
  const end = Number(match[2]);
  return end < start ? undefined : { start, end };
}
