// router.v1.TaskService: media tasks (core/tasks/), with the caller's API key;
// another organisation's task is as unknown as a missing one. Every task
// answered carries freshly signed asset links (asset-links.ts), and an asset
// is also streamed to a signed link's holder, without a key.
import type { ServiceImpl } from "@connectrpc/connect";
import type { TaskService } from "../../gen/router/v1/tasks_pb.js";
import { invalidParameter } from "../errors.ts";
import { ASSET_CHUNK_BYTES, chunksOf } from "../tasks/asset-chunks.ts";
import type { AssetLinks } from "../tasks/asset-links.ts";
import type { Tasks } from "../tasks/tasks.ts";

export const TASKS_LIMIT_DEFAULT = 20;
export const TASKS_LIMIT_MAX = 100;

export function createTaskService(tasks: Tasks, links: AssetLinks): ServiceImpl<typeof TaskService> {
  return {
    async createImage(request) {
      const created = await tasks.createImage(request);
      return { ...created, task: await links.present(created.task) };
    },
    async createVideo(request) {
      const created = await tasks.createVideo(request);
      return { ...created, task: await links.present(created.task) };
    },
    async getTask(request) {
      return { task: await links.present(await tasks.get(request.caller, request.id)) };
    },
    async listTasks(request) {
      const limit = request.limit === 0 ? TASKS_LIMIT_DEFAULT : request.limit;
      if (limit < 1 || limit > TASKS_LIMIT_MAX) throw invalidParameter("limit", `limit must be between 1 and ${TASKS_LIMIT_MAX}.`);
      return { tasks: await Promise.all((await tasks.list(request.caller, limit)).map(links.present)) };
    },
    async *streamAsset(request, context) {
      if (request.offset < 0n || request.length < 0n || (request.suffixLength ?? 0n) < 0n) {
        throw invalidParameter("range", "offset, length and suffix_length must not be negative.");
      }
      const range =
        request.suffixLength !== undefined
          ? { suffix: Number(request.suffixLength) }
          : { offset: Number(request.offset), length: request.length === 0n ? undefined : Number(request.length) };
      const asset = request.link ? await links.stream(request.link, request.taskId, request.index, range) : await tasks.streamAsset(request.caller, request.taskId, request.index, range);
      if ("redirectUrl" in asset) {
        // The bucket serves the bytes: a head that says where, and no chunk.
        yield { part: { case: "head", value: { mediaType: asset.mediaType, redirectUrl: asset.redirectUrl } } };
        return;
      }
      // A caller gone (the gateway's client disconnected) stops the read at once, even between chunks.
      const stop = () => asset.body.destroy();
      context.signal.addEventListener("abort", stop, { once: true });
      try {
        yield { part: { case: "head", value: { mediaType: asset.mediaType, totalSize: BigInt(asset.size), offset: BigInt(asset.offset), length: BigInt(asset.length) } } };
        for await (const chunk of chunksOf(asset.body, ASSET_CHUNK_BYTES)) yield { part: { case: "chunk", value: chunk } };
      } finally {
        context.signal.removeEventListener("abort", stop);
        asset.body.destroy();
      }
    },
  };
}
