// POST /api/v1/videos: the spec's fields, each checked for its type here (400
// naming the parameter); which a model takes and their allowed values
// (lengths, sizes, resolutions) are the core's checks, from the catalogue.
import { z } from "zod";
import { create } from "@bufbuild/protobuf";
import { CreateVideoRequestSchema, type CreateVideoRequest } from "../../../gen/router/v1/tasks_pb.js";
import { MAX_SEED } from "../../../wire/limits.ts";
import { nullMeansAbsent, validateBody } from "../../validation.ts";

/** The fields of a video request (chat completions' video body is checked by decodeVideoRequest too). */
const videoFields = {
  model: z.string().min(1),
  prompt: z.string().min(1),
  image: z.string().min(1).optional(),
  length: z.number().int().min(1).optional(),
  // The progress-style family sends its seconds as a string ("8"), others as a number.
  seconds: z.union([z.number().int().min(1), z.string().regex(/^[1-9]\d*$/, "must be a whole number of seconds").transform(Number)]).optional(),
  resolution: z.string().min(1).optional(),
  aspectRatio: z.string().min(1).optional(),
  size: z.string().min(1).optional(),
  mode: z.string().min(1).optional(),
  // Veo takes a uint32, the largest any provider documents; a larger number would also lose precision as a JS number.
  seed: z.number().int().min(0).max(MAX_SEED).optional(),
  generateAudio: z.boolean().optional(),
  /** Beyond the spec: where the finished task is POSTed (docs/tasks.md, "Webhooks"). */
  webhook_url: z.string().min(1).optional(),
};

const videoBody = nullMeansAbsent(z.object(videoFields).strict());

type VideoBody = z.output<typeof videoBody>;

/** The core's request for a validated video body. */
function videoRequestOf(video: VideoBody, apiKey: string, idempotencyKey: string, origin: string): CreateVideoRequest {
  return create(CreateVideoRequestSchema, {
    caller: { apiKey },
    model: video.model,
    idempotencyKey,
    webhookUrl: video.webhook_url ?? "",
    publicOrigin: origin,
    video: {
      prompt: video.prompt,
      imageUrl: video.image ?? "",
      length: video.length ?? 0,
      seconds: video.seconds ?? 0,
      resolution: video.resolution ?? "",
      aspectRatio: video.aspectRatio ?? "",
      size: video.size ?? "",
      mode: video.mode ?? "",
      seed: video.seed === undefined ? undefined : BigInt(video.seed),
      generateAudio: video.generateAudio,
    },
  });
}

/** `origin`: the gateway's scheme and host as the caller reached it (asset URLs in the task's webhook). */
export function decodeVideoRequest(body: unknown, apiKey: string, idempotencyKey: string, origin: string): CreateVideoRequest {
  return videoRequestOf(validateBody(videoBody, body), apiKey, idempotencyKey, origin);
}
