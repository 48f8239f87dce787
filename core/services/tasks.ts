// router.v1.TaskService: media tasks (core/tasks/), with the caller's API key;
// another organisation's task is as unknown as a missing one.
import type { ServiceImpl } from "@connectrpc/connect";
import type { TaskService } from "../../gen/router/v1/tasks_pb.js";
import { invalidParameter } from "../errors.ts";
import type { Tasks } from "../tasks/tasks.ts";

export const TASKS_LIMIT_DEFAULT = 20;
export const TASKS_LIMIT_MAX = 100;

export function createTaskService(tasks: Tasks): ServiceImpl<typeof TaskService> {
  return {
    async createImage(request) {
      return { task: await tasks.createImage(request) };
    },
    async createVideo(request) {
      return { task: await tasks.createVideo(request) };
    },
    async getTask(request) {
      return { task: await tasks.get(request.caller, request.id) };
    },
    async listTasks(request) {
      const limit = request.limit === 0 ? TASKS_LIMIT_DEFAULT : request.limit;
      if (limit < 1 || limit > TASKS_LIMIT_MAX) throw invalidParameter("limit", `limit must be between 1 and ${TASKS_LIMIT_MAX}.`);
      return { tasks: await tasks.list(request.caller, limit) };
    },
    async readAsset(request) {
      if (request.offset < 0n || request.length < 0n) throw invalidParameter("range", "offset and length must not be negative.");
      const asset = await tasks.readAsset(request.caller, request.taskId, request.index, {
        offset: Number(request.offset),
        length: request.length === 0n ? undefined : Number(request.length),
      });
      return { data: asset.bytes, mediaType: asset.mediaType, totalSize: BigInt(asset.size) };
    },
  };
}
