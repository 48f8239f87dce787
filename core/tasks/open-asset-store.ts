// The asset store a core runs with (tasks.asset_storage): files under
// tasks.assets_dir by default, or an S3-compatible bucket shared by every
// instance. The S3 SDK is loaded only by deployments that use it.
import type { Environment } from "../catalogue/catalogue.ts";
import type { TasksConfig } from "../config/schema.ts";
import { createDirectoryAssetStore, type AssetStore } from "./asset-store.ts";

export async function openAssetStore(config: TasksConfig, env: Environment): Promise<AssetStore> {
  if (config.asset_storage === "s3" && config.s3) {
    const { openS3AssetStore } = await import("./s3-asset-store.ts");
    return openS3AssetStore(config.s3, env);
  }
  return createDirectoryAssetStore(config.assets_dir || undefined);
}
