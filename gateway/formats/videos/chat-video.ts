// POST /api/v1/chat/completions with the video request body (spec: "A video
// model may be used here with the video request body"): a body without
// `messages` whose model makes videos is a video task, created as POST
// /api/v1/videos creates it and answered with the same queued object
// (`taskId`), not a chat completion: a video takes minutes, longer than a
// chat request should wait. Any other body is left to the chat decoder.
import type { Context } from "koa";
import { parseModelReference } from "../../../wire/model-name.ts";
import type { CoreClient } from "../../core-client.ts";
import { answerVideoCreate } from "./create-video.ts";
import { unlessNotFound } from "../../formats/shared/unless-not-found.ts";

/** True when the body was a video request, now answered. */
export async function answerVideoBody(ctx: Context, core: CoreClient, apiKey: string): Promise<boolean> {
  const body: unknown = ctx.request.body;
  if (typeof body !== "object" || body === null || Array.isArray(body) || "messages" in body) return false;
  const model = (body as { model?: unknown }).model;
  if (typeof model !== "string" || model === "") return false;
  const found = await modelOf(core, model);
  if (!found?.model?.architecture?.outputModalities.includes("video")) return false;
  await answerVideoCreate(ctx, core, apiKey, body);
  return true;
}

/** The catalogue's model, as written or without a shortcut suffix (`:free`), which the video create then answers for as chat would. */
async function modelOf(core: CoreClient, id: string) {
  const lookup = (candidate: string) => unlessNotFound(core.catalogue.getModel({ id: candidate }), undefined);
  const reference = parseModelReference(id, () => false);
  return (await lookup(id)) ?? (reference.suffix ? await lookup(reference.baseId) : undefined);
}
