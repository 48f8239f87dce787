// One hosted output of a task read from the asset store, for a key of its
// organisation (tasks.ts) and for a signed link (asset-links.ts) alike: only a
// task whose assets are ready has them.
import type { Task } from "../../gen/router/v1/tasks_pb.js";
import { Code, echoed, routerError } from "../errors.ts";
import type { AssetRange, AssetStore, AssetStream } from "./asset-store.ts";

/** `shownId`: the id the caller named the task by (a provider-prefixed one), for the 404. */
export async function hostedAsset(assets: AssetStore, task: Task, index: number, range: AssetRange | undefined, shownId = task.id): Promise<AssetStream & { mediaType: string }> {
  const output = task.outputs[index];
  const asset = output && task.routerAssets?.status === "ready" ? await assets.stream(output.assetName, range) : undefined;
  if (!asset) throw routerError(Code.NotFound, "asset_not_found", `Task ${echoed(shownId)} has no asset ${index}.`, { param: "index" });
  return { ...asset, mediaType: output.mediaType };
}
