// GET /api/v1/assets/{task_id}/{index}: a hosted task output, to a key of the
// task's organisation, with HTTP range requests (RFC 9110: one range; several
// are answered whole, as the RFC allows) so that video players can seek.
import type { Context } from "koa";
import type { CoreClient } from "../../core-client.ts";

type ByteRange = { start: number; end?: number } | { suffix: number };

export async function serveAsset(ctx: Context, core: CoreClient, apiKey: string, taskId: string, index: number) {
  const range = parseRange(ctx.get("range"));
  const caller = { apiKey };
  ctx.set("accept-ranges", "bytes");
  if (!range) {
    const asset = await core.tasks.readAsset({ caller, taskId, index });
    ctx.type = asset.mediaType;
    ctx.body = Buffer.from(asset.data);
    return;
  }
  // A suffix range needs the size first: one byte tells it.
  let start: number;
  let end: number | undefined;
  if ("suffix" in range) {
    const probe = await core.tasks.readAsset({ caller, taskId, index, offset: 0n, length: 1n });
    const total = Number(probe.totalSize);
    start = Math.max(0, total - range.suffix);
  } else {
    start = range.start;
    end = range.end;
  }
  const length = end === undefined ? 0n : BigInt(end - start + 1);
  const asset = await core.tasks.readAsset({ caller, taskId, index, offset: BigInt(start), length });
  const total = Number(asset.totalSize);
  if (start >= total || ("suffix" in range && range.suffix === 0)) {
    ctx.status = 416;
    ctx.set("content-range", `bytes */${total}`);
    ctx.body = "";
    return;
  }
  ctx.status = 206;
  ctx.type = asset.mediaType;
  ctx.set("content-range", `bytes ${start}-${start + asset.data.length - 1}/${total}`);
  ctx.body = Buffer.from(asset.data);
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
