// Webhooks of image tasks (beyond the spec): the finished task is POSTed to
// the webhook_url given at creation, signed the Standard Webhooks way (checked
// here with the scheme's own steps: HMAC-SHA256 over "id.timestamp.body" with
// the base64 key after whsec_), and tried again when the receiver fails; a
// failed task is sent too. Without a configured secret, webhook_url is refused.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeBfl } from "../../../support/fake-media-bfl.ts";
import { FAIL_PROMPT, TINY_PNG, type FakeMediaUpstream } from "../../../support/fake-media-common.ts";
import { startGateway, type Gateway } from "../../../support/harness.ts";
import { FLUX_MODEL, IMAGE_TASK_ENV, imageTaskConfig } from "../../../support/image-task-config.ts";
import type { FakeUpstream } from "../../../support/fake-openai-upstream.ts";
import type { RecordedRequest } from "../../../support/recording-server.ts";
import { startRecordingServer } from "../../../support/recording-server.ts";
import { taskClient } from "../../../support/video-task-harness.ts";
import { signedLink } from "../../../support/signed-link.ts";

const KEY = Buffer.from("a webhook signing key of 32 byte");
const SECRET = `whsec_${KEY.toString("base64")}`;
const DELIVERED = { timeout: 10_000, interval: 10 };

let bfl: FakeMediaUpstream;
let receiver: FakeUpstream;
let gateway: Gateway;
/** Answers 500 to the first delivery of each webhook id, 200 after. */
const seen = new Set<string>();

beforeAll(async () => {
  bfl = await startFakeBfl();
  receiver = await startRecordingServer("/hooks", (request, res) => {
    const id = String(request.headers["webhook-id"]);
    res.writeHead(seen.has(id) ? 200 : 500).end();
    seen.add(id);
  });
  gateway = await startGateway(imageTaskConfig(bfl.url, { webhook_retry_ms: 10 }), { env: { ...IMAGE_TASK_ENV, ROUTER_WEBHOOK_SECRET: SECRET } });
});
afterAll(async () => {
  await gateway?.close();
  await receiver?.close();
  await bfl?.close();
});

/** Creates an image task on that gateway's FLUX model. */
const create = (on: Gateway, body: Record<string, unknown>) => taskClient(on, { kind: "images", model: FLUX_MODEL }).create(body);

function deliveriesOf(taskId: string): RecordedRequest[] {
  return receiver.requests.filter((request) => request.headers["webhook-id"] === `msg_${taskId}`);
}

function verify(request: RecordedRequest) {
  const id = String(request.headers["webhook-id"]);
  const timestamp = String(request.headers["webhook-timestamp"]);
  const expected = `v1,${createHmac("sha256", KEY).update(`${id}.${timestamp}.${request.raw.toString("utf8")}`).digest("base64")}`;
  expect(request.headers["webhook-signature"]).toBe(expected);
  expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(300);
}

describe("image task webhooks", () => {
  it("POST the completed task, signed, again after the receiver failed once", async () => {
    const { json } = await create(gateway, { prompt: "hooked", webhook_url: `${receiver.url}/done` });
    await vi.waitFor(() => expect(deliveriesOf(json.taskId)).toHaveLength(2), DELIVERED);
    const [first, second] = deliveriesOf(json.taskId);
    expect(second.raw.equals(first.raw)).toBe(true);
    for (const delivery of [first, second]) {
      expect(delivery.method).toBe("POST");
      expect(delivery.path).toBe("/hooks/done");
      verify(delivery);
    }
    expect(second.body).toMatchObject({ type: "image.completed", data: { taskId: json.taskId, chat_id: json.taskId, status: "completed", router_assets: { status: "ready" }, error: null } });
    // A signed link: the webhook's consumer downloads it with no key.
    expect(second.body.data.data[0].url).toEqual(signedLink(`${gateway.url}/api/v1/assets/${json.taskId}/0`));
    const asset = await fetch(second.body.data.data[0].url);
    expect(Buffer.from(await asset.arrayBuffer()).equals(TINY_PNG)).toBe(true);
  });

  it("POST a failed task with the provider's message", async () => {
    const { json } = await create(gateway, { prompt: `broken ${FAIL_PROMPT}`, webhook_url: `${receiver.url}/failed` });
    await vi.waitFor(() => expect(deliveriesOf(json.taskId)).toHaveLength(2), DELIVERED);
    const delivery = deliveriesOf(json.taskId)[1];
    verify(delivery);
    expect(delivery.body).toMatchObject({ type: "image.failed", data: { status: "failed", data: [], error: { code: "upstream_error", message: "Generation failed." } } });
  });

  it("refuses a webhook_url that is not http(s)", async () => {
    const { status, json } = await create(gateway, { prompt: "x", webhook_url: "ftp://example.com/hook" });
    expect(status).toBe(400);
    expect(json.error.param).toBe("webhook_url");
  });

  it("refuses at creation a webhook_url at a private or loopback address when tasks.fetch_private_urls is off", async () => {
    const strict = await startGateway(imageTaskConfig(bfl.url, { fetch_private_urls: false }), { env: { ...IMAGE_TASK_ENV, ROUTER_WEBHOOK_SECRET: SECRET } });
    try {
      for (const url of ["http://127.0.0.1:9/hooks", "http://10.1.2.3/hooks", "http://[::1]/hooks", "http://[::ffff:192.168.0.1]/hooks", "https://localhost/hooks", "http://api.localhost/h"]) {
        const { status, json } = await create(strict, { prompt: "x", webhook_url: url });
        expect(status, url).toBe(400);
        expect(json.error).toMatchObject({ param: "webhook_url", message: expect.stringContaining("public address") });
      }
    } finally {
      await strict.close();
    }
  });

  it("refuses webhook_url where no signing secret is configured", async () => {
    const plain = await startGateway(imageTaskConfig(bfl.url), { env: IMAGE_TASK_ENV });
    try {
      const { status, json } = await create(plain, { prompt: "x", webhook_url: `${receiver.url}/x` });
      expect(status).toBe(400);
      expect(json.error).toMatchObject({ param: "webhook_url", message: expect.stringContaining("ROUTER_WEBHOOK_SECRET") });
    } finally {
      await plain.close();
    }
  });
});
