// An interaction that asks for a video (`response_format` {type: video}) as
// the core's CreateVideoRequest: the video task system serves it, not the
// hub. The input's text is the prompt and one image given by `uri` the
// image-to-video input; `aspect_ratio` and `resolution` are the task's own.
// What a video task cannot take is a 400 naming it, never dropped: a system
// instruction, tools, a conversation, video or base64 input, other output.
import { create } from "@bufbuild/protobuf";
import { z } from "zod";
import { invalidParameter } from "../../../core/errors.ts";
import { CreateVideoRequestSchema, type CreateVideoRequest } from "../../../gen/router/v1/tasks_pb.js";
import { MAX_SEED } from "../../../wire/limits.ts";
import { MAX_ITEMS } from "../../limits.ts";
import { list, nonEmptyString } from "../../schema-parts.ts";
import { formatPath, validateBody } from "../../validation.ts";
import { videoEcho, type VideoDelivery } from "./video-echo.ts";

/** Whether the body asks for video output: `response_format` is, or holds, a `{type: "video"}` entry. */
export function asksForVideo(body: unknown): boolean {
  const format = typeof body === "object" && body !== null ? (body as { response_format?: unknown }).response_format : undefined;
  return (Array.isArray(format) ? format : [format]).some((entry) => typeof entry === "object" && entry !== null && (entry as { type?: unknown }).type === "video");
}

/** Fields of the text format a video task has no place for, each with why (checked before the schema, for a clearer 400 than "not supported"). */
const REFUSED_FIELDS: Record<string, string> = {
  system_instruction: "is not taken with video output: a video task has a prompt only; put the instruction in input.",
  tools: "are not taken with video output: a video model calls no tools.",
  previous_interaction_id: "is not taken with video output: a video task starts from its own input, not from a conversation.",
  request_tags: "are not taken with video output yet: a video task carries no request tags.",
  provider: "is not taken with video output yet: a video task runs on its model's first enabled video provider.",
};

// ---- the body ----

const textContentSchema = z.strictObject({ type: z.literal("text"), text: z.string(), annotations: z.array(z.unknown()).optional() });
const imageContentSchema = z
  .strictObject({ type: z.literal("image"), data: nonEmptyString.optional(), mime_type: nonEmptyString.optional(), uri: nonEmptyString.optional(), resolution: z.string().optional() })
  .refine((image) => (image.data === undefined) !== (image.uri === undefined), "must have either data (with mime_type) or uri");
/** Parsed to be refused by name (the task system takes no input video). */
const videoContentSchema = z.looseObject({ type: z.literal("video") });
const contentSchema = z.discriminatedUnion("type", [textContentSchema, imageContentSchema, videoContentSchema]);
const contentsSchema = list(contentSchema, MAX_ITEMS.contentBlocks);

const userInputStepSchema = z.strictObject({ type: z.literal("user_input"), content: contentsSchema.optional() });
/** An earlier answer's steps: parsed to be refused by name. */
const modelStepSchema = z.looseObject({ type: z.enum(["model_output", "thought", "function_call", "function_result"]) });
const turnSchema = z.strictObject({ role: z.enum(["user", "model"]), content: z.union([z.string(), contentsSchema]) });
const entrySchema = z.union([z.discriminatedUnion("type", [textContentSchema, imageContentSchema, videoContentSchema, userInputStepSchema, modelStepSchema]), turnSchema]);

const videoFormatSchema = z.strictObject({
  type: z.literal("video"),
  aspect_ratio: nonEmptyString.optional(),
  delivery: z.enum(["inline", "uri"]).optional(),
  resolution: nonEmptyString.optional(),
});
/** Another output asked beside the video (the SDK's other response formats): parsed to be refused by name. */
const otherFormatSchema = z.looseObject({ type: z.enum(["text", "image", "audio"]) });
const formatEntrySchema = z.discriminatedUnion("type", [videoFormatSchema, otherFormatSchema]);

const videoInteractionSchema = z.strictObject({
  model: nonEmptyString,
  input: z.union([z.string(), textContentSchema, imageContentSchema, videoContentSchema, list(entrySchema, MAX_ITEMS.messages).min(1)]),
  /** Absent: a video model asked without it (video-interaction.ts, videoModelInstead). */
  response_format: z.union([formatEntrySchema, list(formatEntrySchema, MAX_ITEMS.contentBlocks)]).optional(),
  generation_config: z.strictObject({ seed: z.number().int().min(0).max(MAX_SEED).optional() }).optional(),
  stream: z.boolean().optional(),
  store: z.boolean().optional(),
});

type VideoInteractionBody = z.output<typeof videoInteractionSchema>;
type Content = z.output<typeof contentSchema>;
type Path = (string | number)[];

export interface DecodedVideoInteraction {
  /** The core's request; its `model` as sent (a bare name is resolved by the caller). */
  request: CreateVideoRequest;
  stream: boolean;
  delivery: VideoDelivery;
}

export interface VideoDecodeContext {
  apiKey: string;
  idempotencyKey: string;
  origin: string;
}

export function decodeVideoInteraction(body: unknown, context: VideoDecodeContext): DecodedVideoInteraction {
  if (typeof body === "object" && body !== null) {
    for (const [field, why] of Object.entries(REFUSED_FIELDS)) if (Object.hasOwn(body, field)) throw invalidParameter(field, `${field} ${why}`);
  }
  const parsed = validateBody(videoInteractionSchema, body);
  const format = parsed.response_format === undefined ? { type: "video" as const } : videoFormatOf(parsed.response_format);
  const { prompt, imageUrl } = promptOf(parsed.input);
  const delivery = format.delivery ?? "uri";
  const store = parsed.store ?? true;
  return {
    request: create(CreateVideoRequestSchema, {
      caller: { apiKey: context.apiKey },
      model: parsed.model,
      idempotencyKey: context.idempotencyKey,
      publicOrigin: context.origin,
      video: {
        prompt,
        imageUrl,
        aspectRatio: format.aspect_ratio ?? "",
        resolution: format.resolution ?? "",
        seed: parsed.generation_config?.seed === undefined ? undefined : BigInt(parsed.generation_config.seed),
      },
      // Without it the task is a plain video task: GET /v1/interactions does not show it (store: false).
      storedEcho: store ? videoEcho({ delivery }) : "",
    }),
    stream: parsed.stream ?? false,
    delivery,
  };
}

/** The video entry of `response_format`; any other output beside it is refused, as the task makes a video only. */
function videoFormatOf(format: NonNullable<VideoInteractionBody["response_format"]>): z.output<typeof videoFormatSchema> {
  const entries = Array.isArray(format) ? format : [format];
  const video = entries.filter((entry) => entry.type === "video");
  if (video.length > 1) throw invalidParameter("response_format", "response_format asks for video more than once: give one video entry.");
  const other = entries.findIndex((entry) => entry.type !== "video");
  if (other >= 0) {
    const param = Array.isArray(format) ? `response_format[${other}]` : "response_format";
    throw invalidParameter(param, `${param} asks for ${entries[other].type} output beside video: a video interaction answers its video only.`);
  }
  return video[0] as z.output<typeof videoFormatSchema>;
}

/** The input's text (its pieces joined by a blank line) and the one image's URL; the checks name the entry at fault. */
function promptOf(input: VideoInteractionBody["input"]): { prompt: string; imageUrl: string } {
  const texts: string[] = [];
  let image: { url: string; path: Path } | undefined;
  const take = (content: Content, path: Path) => {
    const param = formatPath(path);
    switch (content.type) {
      case "text":
        texts.push(content.text);
        return;
      case "image": {
        const { uri } = content as z.output<typeof imageContentSchema>;
        if (uri === undefined) {
          throw invalidParameter(param, `${param} gives its image as base64 data: a video task takes its input image by uri (an http or https URL of a JPEG or PNG), which the router fetches.`);
        }
        if (image) throw invalidParameter(param, `${param} is a second image: a video task takes one input image (image-to-video); the first is ${formatPath(image.path)}.`);
        image = { url: uri, path };
        return;
      }
      case "video":
        throw invalidParameter(param, `${param} is a video: video input (video-to-video, edits) is not served; a video task takes a text prompt and at most one image.`);
    }
  };
  if (typeof input === "string") texts.push(input);
  else if (!Array.isArray(input)) take(input, ["input"]);
  else {
    for (const [index, entry] of input.entries()) {
      const path: Path = ["input", index];
      if (!("type" in entry)) {
        // A turn: `{role, content}`.
        const turn = entry as z.output<typeof turnSchema>;
        if (turn.role === "model") throw invalidParameter(formatPath(path), `${formatPath(path)} is a model turn: a video interaction takes the user's input only.`);
        if (typeof turn.content === "string") texts.push(turn.content);
        else turn.content.forEach((content, at) => take(content, [...path, "content", at]));
      } else if (entry.type === "user_input") {
        ((entry as z.output<typeof userInputStepSchema>).content ?? []).forEach((content, at) => take(content, [...path, "content", at]));
      } else if (entry.type === "text" || entry.type === "image" || entry.type === "video") {
        take(entry as Content, path);
      } else {
        throw invalidParameter(formatPath(path), `${formatPath(path)} is a ${entry.type} step: a video interaction takes the user's input only (text and one image).`);
      }
    }
  }
  const prompt = texts.join("\n\n");
  if (prompt.trim() === "") throw invalidParameter("input", "input has no text: a video interaction needs a prompt.");
  return { prompt, imageUrl: image?.url ?? "" };
}
