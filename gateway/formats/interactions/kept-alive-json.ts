// A JSON answer that may take minutes (a video made upstream in the
// background, or by a task): a plain answer when it is ready within one
// keep-alive (a failure then is a real HTTP error), else the 200 at once and a
// newline every keep-alive before the resource (JSON allows whitespace before
// a value: `JSON.parse` and the SDK read it), so that no proxy or client gives
// up on a silent connection. A failure after the 200 is answered as
// `failedBody` says.
import { PassThrough } from "node:stream";
import type { Context } from "koa";
import { TASK_WAIT } from "./await-task.ts";

export async function answerJsonKeptAlive(ctx: Context, answer: Promise<object>, failedBody: (error: unknown) => object): Promise<void> {
  // Awaited below, possibly after it failed: not an unhandled rejection meanwhile.
  answer.catch(() => {});
  const soon = await within(answer, TASK_WAIT.keepAliveMs);
  if (soon) {
    ctx.body = soon;
    return;
  }
  ctx.state.eventStream = keptAlive(ctx, () => answer.catch(failedBody));
}

/**
 * Sends the 200 now and a newline every keep-alive until `resource` gives the
 * body's end (nothing when it gives undefined or the client left).
 */
export async function keptAlive(ctx: Context, resource: () => Promise<object | undefined>): Promise<void> {
  const body = new PassThrough();
  // Koa destroys the body when the client leaves; nothing is left to tell then.
  body.on("error", () => {});
  ctx.status = 200;
  ctx.type = "application/json";
  ctx.body = body;
  body.write("\n");
  const alive = setInterval(() => void (body.destroyed || body.write("\n")), TASK_WAIT.keepAliveMs);
  try {
    const last = await resource();
    if (!body.destroyed && last) body.end(JSON.stringify(last));
  } finally {
    clearInterval(alive);
  }
}

/** The promise's value if it settles within `ms` (its rejection thrown), else undefined. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
