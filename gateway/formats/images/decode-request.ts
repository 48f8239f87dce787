// POST /api/v1/images/generations: the spec's fields, each checked for its
// type and range here (400 naming the parameter); what a model accepts of
// them (sizes, formats, qualities) is the core's check, from the catalogue.
import { z } from "zod";
import { create } from "@bufbuild/protobuf";
import { CreateImageRequestSchema, ImageResponseType, type CreateImageRequest } from "../../../gen/router/v1/tasks_pb.js";
import { invalidParameter } from "../../../core/errors.ts";
import { MAX_SEED } from "../../../wire/limits.ts";
import { nullMeansAbsent, validateBody } from "../../validation.ts";

const imageBody = nullMeansAbsent(
  z
    .object({
      prompt: z.string().min(1),
      model: z.string().min(1),
      response_type: z.enum(["sync", "async"]).optional(),
      n: z.number().int().min(1).max(10).optional(),
      size: z.string().min(1).optional(),
      quality: z.string().min(1).optional(),
      output_format: z.enum(["png", "jpeg", "webp"]).optional(),
      background: z.enum(["auto", "transparent", "opaque"]).optional(),
      style: z.string().min(1).optional(),
      response_format: z.enum(["url", "b64_json"]).optional(),
      seed: z.number().int().min(0).max(MAX_SEED).optional(),
      /** Beyond the spec: a width-to-height ratio (`16:9`) for models that take one instead of a size (docs/tasks.md, "BFL"). */
      aspect_ratio: z.string().min(1).optional(),
      /** Beyond the spec: input images to edit or take as references, an http(s) URL or a list of them; how many a model takes is the core's check (docs/tasks.md, "Input images"). */
      image: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
      /** OpenAI's end-user tag: accepted so OpenAI clients are not refused, passed to no provider (docs/tasks.md). */
      user: z.string().optional(),
      /** Beyond the spec: where the finished task is POSTed (docs/tasks.md, "Webhooks"). */
      webhook_url: z.string().min(1).optional(),
    })
    .strict(),
);

export type ImageBody = z.output<typeof imageBody>;

const RESPONSE_TYPES: Record<string, ImageResponseType> = { sync: ImageResponseType.SYNC, async: ImageResponseType.ASYNC, "": ImageResponseType.UNSPECIFIED };

/** `origin`: the gateway's scheme and host as the caller reached it (asset URLs in the task's webhook). */
export function decodeImageRequest(body: unknown, apiKey: string, idempotencyKey: string, origin: string): { request: CreateImageRequest; body: ImageBody } {
  const image = validateBody(imageBody, body);
  // The spec's rule: a transparent background needs an image format with alpha.
  if (image.background === "transparent" && image.output_format === "jpeg") {
    throw invalidParameter("background", "background transparent requires output_format png or webp.");
  }
  const request = create(CreateImageRequestSchema, {
    caller: { apiKey },
    model: image.model,
    idempotencyKey,
    webhookUrl: image.webhook_url ?? "",
    publicOrigin: origin,
    // Which providers may serve it is the core's choice (b64_json, too, needs a synchronous one).
    responseType: RESPONSE_TYPES[image.response_type ?? ""],
    responseFormat: image.response_format ?? "",
    image: {
      prompt: image.prompt,
      n: image.n ?? 1,
      size: image.size ?? "",
      quality: image.quality ?? "",
      outputFormat: image.output_format ?? "",
      background: image.background ?? "",
      style: image.style ?? "",
      seed: image.seed === undefined ? undefined : BigInt(image.seed),
      aspectRatio: image.aspect_ratio ?? "",
      imageUrls: typeof image.image === "string" ? [image.image] : (image.image ?? []),
    },
  });
  return { request, body: image };
}
