// The router's own request fields, which every generation format accepts
// beside its own (spec: `models`, `provider`, `request_tags`): their schemas,
// for a format's strict body schema, and their GenerateRequest fields.
import type { IncomingHttpHeaders } from "node:http";
import { z } from "zod";
import { invalidParameter } from "../core/errors.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { FormatPolicySchema, PublicFormat } from "../gen/router/v1/inference_pb.js";
import { MAX_ITEMS } from "./limits.ts";
import { between, int32, list, nonEmptyString } from "./schema-parts.ts";
import { nullMeansAbsent } from "./validation.ts";

/** Fallback models, tried in order after `model`. */
export const modelsSchema = list(nonEmptyString, MAX_ITEMS.models);

export const requestTagsSchema = list(z.string(), MAX_ITEMS.requestTags);

/** A price in USD: per million tokens (prompt, completion) or per request. */
const maxPriceValue = z.number().finite().nonnegative().max(1e9);

/**
 * Provider preferences (docs/routing.md): `only` or `order`, whether to fall
 * back, providers to `ignore`, how to `sort`, `require_parameters`, `max_price`.
 */
export const providerSchema = nullMeansAbsent(
  z
    .strictObject({
      only: list(nonEmptyString, MAX_ITEMS.providers).min(1).optional(),
      order: list(nonEmptyString, MAX_ITEMS.providers).min(1).optional(),
      allow_fallbacks: z.boolean().optional(),
      ignore: list(nonEmptyString, MAX_ITEMS.providers).min(1).optional(),
      sort: z.enum(["price", "throughput", "latency"]).optional(),
      require_parameters: z.boolean().optional(),
      max_price: nullMeansAbsent(
        z
          .strictObject({ prompt: maxPriceValue.optional(), completion: maxPriceValue.optional(), request: maxPriceValue.optional() })
          .refine((price) => Object.keys(price).length > 0, "must set prompt, completion or request"),
      ).optional(),
    })
    .refine((provider) => provider.only === undefined || provider.order === undefined, "must use only or order, not both"),
);

/** router/auto's options (docs/selection.md): the cost-versus-quality preference, 0 cheapest .. 1 best. */
export const selectionSchema = nullMeansAbsent(z.strictObject({ preference: between(0, 1).optional() }));

/** The semantic cache's options (docs/cache.md); the cache is on only with the `cache_key` header. */
export const cacheSchema = nullMeansAbsent(z
  .strictObject({
    expiration_time: int32().min(1),
    conversation_mode: z.enum(["full_conversation", "last_message_only", "last_n_turns"]),
    last_n_turns: int32().min(1),
    filter_on_provider: z.boolean(),
    filter_on_model: z.boolean(),
    similarity_threshold: between(0, 1),
  })
  .partial()
  .superRefine((cache, ctx) => {
    const usesTurns = cache.conversation_mode === "last_n_turns";
    if (usesTurns && cache.last_n_turns === undefined) {
      ctx.addIssue({ code: "custom", path: ["last_n_turns"], message: "is required when conversation_mode is last_n_turns" });
    }
    if (!usesTurns && cache.last_n_turns !== undefined) {
      ctx.addIssue({ code: "custom", path: ["last_n_turns"], message: "is only used when conversation_mode is last_n_turns" });
    }
  }));

export interface RouterFieldsBody {
  models?: z.infer<typeof modelsSchema>;
  request_tags?: z.infer<typeof requestTagsSchema>;
  provider?: z.infer<typeof providerSchema>;
  selection?: z.infer<typeof selectionSchema>;
  cache?: z.infer<typeof cacheSchema>;
}

/** The router fields of a validated body, as GenerateRequest fields. */
function decodeRouterFields(body: RouterFieldsBody, cacheKey: string | undefined) {
  return {
    cache: decodeCache(body.cache, cacheKey),
    models: body.models ?? [],
    requestTags: body.request_tags ?? [],
    provider: body.provider && {
      only: body.provider.only ?? [],
      order: body.provider.order ?? [],
      allowFallbacks: body.provider.allow_fallbacks,
      ignore: body.provider.ignore ?? [],
      sort: body.provider.sort ?? "",
      requireParameters: body.provider.require_parameters ?? false,
      maxPrice: body.provider.max_price && {
        prompt: decimalOf(body.provider.max_price.prompt),
        completion: decimalOf(body.provider.max_price.completion),
        request: decimalOf(body.provider.max_price.request),
      },
    },
    selection: body.selection && { preference: body.selection.preference },
  };
}

/** The cache is off without the `cache_key` header; the core says so when `cache` came without it. */
function decodeCache(cache: RouterFieldsBody["cache"], cacheKey: string | undefined) {
  if (cache === undefined && cacheKey === undefined) return undefined;
  return {
    cacheKey: cacheKey ?? "",
    expirationTimeSeconds: cache?.expiration_time,
    conversationMode: cache?.conversation_mode ?? "",
    lastNTurns: cache?.last_n_turns,
    filterOnProvider: cache?.filter_on_provider,
    filterOnModel: cache?.filter_on_model,
    similarityThreshold: cache?.similarity_threshold,
  };
}

/** A JSON number as the plain decimal the core reads as money ("" when absent): never exponent notation. */
function decimalOf(value: number | undefined): string {
  if (value === undefined) return "";
  return value.toFixed(12).replace(/0+$/, "").replace(/\.$/, "");
}

/**
 * A public format as the core sees it: its name and the rules the core applies
 * for it (format_policy: the conversation reference's parameter, the `store`
 * default, bare model names), which each format states in its decoder.
 */
export interface RequestFormat {
  format: PublicFormat;
  policy: MessageInitShape<typeof FormatPolicySchema>;
}

/** What every generation format's request starts with: its format and policy, the caller, the request id, the stream switch, the model and the router fields. */
export function requestHead({ format, policy }: RequestFormat, body: RouterFieldsBody & { model: string; stream?: boolean }, context: RequestContext) {
  return {
    format,
    formatPolicy: policy,
    caller: { apiKey: context.apiKey },
    requestId: context.requestId,
    stream: body.stream ?? false,
    model: body.model,
    ...decodeRouterFields(body, context.cacheKey),
  };
}

/** What a request's headers give its decoder. */
export interface RequestContext {
  apiKey: string;
  requestId: string;
  /** The `cache_key` header (cacheKeyOf), which turns the semantic cache on. */
  cacheKey?: string;
}

/** The longest `cache_key` header taken: it names a cache, not a prompt. */
export const MAX_CACHE_KEY_LENGTH = 256;

/** The `cache_key` header, when present and not empty; a longer one than MAX_CACHE_KEY_LENGTH is a 400. */
export function cacheKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.cache_key;
  const value = Array.isArray(header) ? header.join(",") : header;
  if (!value) return undefined;
  if (value.length > MAX_CACHE_KEY_LENGTH) throw invalidParameter("cache_key", `The cache_key header must be at most ${MAX_CACHE_KEY_LENGTH} characters (got ${value.length}).`);
  return value;
}
