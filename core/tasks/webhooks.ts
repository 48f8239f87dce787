// Finished tasks POSTed to the creator's webhook_url (beyond the spec), signed
// the Standard Webhooks way: headers webhook-id, webhook-timestamp (Unix
// seconds) and webhook-signature `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
// keyed with the deployment's secret (`whsec_<base64>`). A delivery that is not
// answered 2xx is tried again, waiting retryMs, then four times as long each
// time, up to `attempts` tries, from the instance that finished the task (lost
// if that instance stops before).
import { createHmac } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Task } from "../../gen/router/v1/tasks_pb.js";
import { fetchCallerUrl, isPrivateAddressRefusal } from "../providers/safe-fetch.ts";
import { webhookPayload } from "../../wire/webhook-payload.ts";

export interface WebhookOptions {
  /** The signing key: the secret's bytes after `whsec_`, base64-decoded. */
  key: Buffer;
  retryMs: number;
  attempts: number;
  /** tasks.fetch_private_urls; absent: a webhook_url at a private address is not called. */
  allowPrivateAddresses?: boolean;
  now: () => Date;
  logger?: { warn(details: object, message: string): void };
  /** The task as the payload shows it: its asset links signed (asset-links.ts); absent: as stored. */
  present?: (task: Task) => Promise<Task>;
}

export interface Webhooks {
  /** Starts the deliveries of the finished task's webhook (when it has a webhook_url). */
  send(task: Task): void;
  /** Resolves when every delivery started here has ended (tests). */
  idle(): Promise<void>;
  /** Stops the retries still waiting. */
  close(): Promise<void>;
}

/** The key of a Standard Webhooks secret (`whsec_` then base64); undefined for an empty one. */
export function webhookKeyOf(secret: string | undefined): Buffer | undefined {
  if (!secret) return undefined;
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
}

function signWebhook(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

export function createWebhooks(options: WebhookOptions): Webhooks {
  const pending = new Set<Promise<void>>();
  const stop = new AbortController();

  async function deliver(task: Task) {
    const body = JSON.stringify(webhookPayload(options.present ? await options.present(task) : task, options.now()));
    const id = `msg_${task.id}`;
    for (let attempt = 1; attempt <= options.attempts; attempt += 1) {
      const timestamp = Math.floor(options.now().getTime() / 1000);
      try {
        const response = await fetchCallerUrl(task.webhookUrl, {
          method: "POST",
          headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signWebhook(options.key, id, timestamp, body) },
          body,
          signal: AbortSignal.any([stop.signal, AbortSignal.timeout(10_000)]),
        }, options);
        await response.body?.cancel();
        if (response.ok) return;
        options.logger?.warn({ taskId: task.id, status: response.status, attempt }, "task webhook refused");
      } catch (error) {
        if (stop.signal.aborted) return;
        options.logger?.warn({ err: error, taskId: task.id, attempt }, "task webhook failed");
        // The address will be refused again: no retry.
        if (isPrivateAddressRefusal(error)) return;
      }
      if (attempt < options.attempts) await sleep(options.retryMs * 4 ** (attempt - 1), undefined, { signal: stop.signal }).catch(() => undefined);
      if (stop.signal.aborted) return;
    }
  }

  return {
    send(task) {
      if (!task.webhookUrl) return;
      const delivery = deliver(task).finally(() => pending.delete(delivery));
      pending.add(delivery);
    },
    async idle() {
      while (pending.size > 0) await Promise.all(pending);
    },
    async close() {
      stop.abort();
      await this.idle();
    },
  };
}
