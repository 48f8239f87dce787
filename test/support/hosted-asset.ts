// A finished image task (on the BFL fake, through the gateway) whose stored
// output is then replaced by the bytes a test needs, for example an asset of
// many megabytes: the fakes make tiny images, and the serving path is the
// subject, not the provider.
import { expect, vi } from "vitest";
import type { AssetStore } from "../../core/tasks/asset-store.ts";
import { TEST_KEY, type Gateway } from "./harness.ts";
import { FLUX_MODEL } from "./image-task-config.ts";

const AUTH = { authorization: `Bearer ${TEST_KEY}` };

/** The task's id and its output's hosted URL, the output being `bytes` (written to `store`, the gateway's asset store). */
export async function hostedAsset(gateway: Gateway, store: AssetStore, bytes: Buffer): Promise<{ taskId: string; url: string }> {
  const created = await fetch(`${gateway.apiUrl}/images/generations`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
    body: JSON.stringify({ model: FLUX_MODEL, prompt: "a large asset", output_format: "png" }),
  });
  expect(created.status).toBe(200);
  const { taskId } = (await created.json()) as { taskId: string };
  const done = await vi.waitFor(
    async () => {
      const json = (await (await fetch(`${gateway.apiUrl}/images/${taskId}`, { headers: AUTH })).json()) as { status: string; data: { url: string }[] };
      expect(json.status).toBe("completed");
      return json;
    },
    { timeout: 15_000, interval: 20 },
  );
  const task = (await gateway.core.tasks.store.get("org_test", taskId))!;
  await store.put(task.outputs[0].assetName, bytes);
  return { taskId, url: done.data[0].url };
}
