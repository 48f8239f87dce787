// Webhook deliveries go through the caller-URL fetcher: with
// tasks.fetch_private_urls off, a webhook_url at a private address is not
// called (one log line, no retry); on, it is delivered. At creation a URL that
// names a private host outright is refused (namesPrivateHost).
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TaskKind, TaskSchema, TaskStatus } from "../../../gen/router/v1/tasks_pb.js";
import { namesPrivateHost } from "../../../core/providers/safe-fetch.ts";
import { createWebhooks } from "../../../core/tasks/webhooks.ts";
import { startRecordingServer, type FakeUpstream } from "../../support/recording-server.ts";

let receiver: FakeUpstream;
beforeAll(async () => {
  receiver = await startRecordingServer("/hooks", (_request, res) => void res.writeHead(200).end());
});
afterAll(() => receiver.close());

const finishedTask = (webhookUrl: string) => create(TaskSchema, { id: "task_1", kind: TaskKind.IMAGE, status: TaskStatus.SUCCEEDED, modelId: "bfl/flux-2-pro", webhookUrl });

function webhooks(allowPrivateAddresses: boolean) {
  const logger = { warn: vi.fn() };
  return { logger, hooks: createWebhooks({ key: Buffer.from("key"), retryMs: 1, attempts: 3, allowPrivateAddresses, now: () => new Date(0), logger }) };
}

describe("webhook deliveries and private addresses", () => {
  it("does not call a webhook_url at a private address when tasks.fetch_private_urls is off: one log line, no retry", async () => {
    const { hooks, logger } = webhooks(false);
    const before = receiver.requests.length;
    hooks.send(finishedTask(`${receiver.url}/private`));
    await hooks.idle();
    expect(receiver.requests.length).toBe(before);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(String(logger.warn.mock.calls[0][0].err.cause)).toMatch(/127\.0\.0\.1 is not a public address/);
  });

  it("delivers to a private address when tasks.fetch_private_urls is on", async () => {
    const { hooks, logger } = webhooks(true);
    hooks.send(finishedTask(`${receiver.url}/allowed`));
    await hooks.idle();
    expect(receiver.requests.filter((request) => request.path.endsWith("/allowed"))).toHaveLength(1);
    expect(logger.warn).not.toHaveBeenCalled();
  });
});

describe("namesPrivateHost (the check of a webhook_url at creation)", () => {
  it.each([
    ["http://127.0.0.1:9/hooks", true],
    ["http://10.1.2.3/hooks", true],
    ["http://169.254.169.254/latest/meta-data", true],
    ["http://[::1]/hooks", true],
    ["http://[::ffff:192.168.0.1]/hooks", true],
    // Written the ways the URL parser normalises to an address: decimal, hex, short, mapped, unspecified.
    ["http://2130706433/hooks", true],
    ["http://0x7f.1/hooks", true],
    ["http://[::ffff:7f00:1]/hooks", true],
    ["http://[fe80::1]/hooks", true],
    ["http://0.0.0.0/hooks", true],
    // NAT64 (64:ff9b::/96) of a private IPv4 address is that address; of a public one, public.
    ["http://[64:ff9b::7f00:1]/hooks", true],
    ["http://[64:ff9b::a9fe:a9fe]/latest/meta-data", true],
    ["http://[64:ff9b::10.1.2.3]/hooks", true],
    ["http://[64:ff9b::]/hooks", true],
    ["https://[64:ff9b::808:808]/hooks", false],
    ["http://[::]/hooks", true],
    ["https://localhost/hooks", true],
    ["http://api.localhost/h", true],
    ["https://8.8.8.8/hooks", false],
    ["https://[2001:4860:4860::8888]/hooks", false],
    // A name is judged when it is resolved, at delivery.
    ["https://hooks.example.com/done", false],
  ])("%s: %s", (url, isPrivate) => {
    expect(namesPrivateHost(new URL(url))).toBe(isPrivate);
  });
});
