// The router's own request fields, which every generation format accepts
// beside its own (spec: `models`, `provider`, `request_tags`): their schemas,
// for a format's strict body schema, and their GenerateRequest fields.
import { z } from "zod";
import type { PublicFormat } from "../gen/router/v1/inference_pb.js";
import { MAX_ITEMS } from "./limits.ts";
import { list, nonEmptyString } from "./schema-parts.ts";
import { nullMeansAbsent } from "./validation.ts";

/** Fallback models, tried in order after `model`. */
export const modelsSchema = list(nonEmptyString, MAX_ITEMS.models);

export const requestTagsSchema = list(z.string(), MAX_ITEMS.requestTags);

/** Provider preferences: `only` or `order`, and whether to fall back. */
export const providerSchema = nullMeansAbsent(
  z
    .strictObject({
      only: list(nonEmptyString, MAX_ITEMS.providers).min(1).optional(),
      order: list(nonEmptyString, MAX_ITEMS.providers).min(1).optional(),
      allow_fallbacks: z.boolean().optional(),
    })
    .refine((provider) => provider.only === undefined || provider.order === undefined, "must use only or order, not both"),
);

export interface RouterFieldsBody {
  models?: z.infer<typeof modelsSchema>;
  request_tags?: z.infer<typeof requestTagsSchema>;
  provider?: z.infer<typeof providerSchema>;
}

/** The router fields of a validated body, as GenerateRequest fields. */
function decodeRouterFields(body: RouterFieldsBody) {
  return {
    models: body.models ?? [],
    requestTags: body.request_tags ?? [],
    provider: body.provider && { only: body.provider.only ?? [], order: body.provider.order ?? [], allowFallbacks: body.provider.allow_fallbacks },
  };
}

/** What every generation format's request starts with: its format, the caller, the request id, the stream switch, the model and the router fields. */
export function requestHead(format: PublicFormat, body: RouterFieldsBody & { model: string; stream?: boolean }, context: { apiKey: string; requestId: string }) {
  return {
    format,
    caller: { apiKey: context.apiKey },
    requestId: context.requestId,
    stream: body.stream ?? false,
    model: body.model,
    ...decodeRouterFields(body),
  };
}
