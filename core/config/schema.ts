// The shape of the router's configuration file (YAML or JSON), validated at start.
// Field names are snake_case like the public API; see docs/configuration.md.
import { z } from "zod";
import { CACHE_DEFAULTS, cacheSchema } from "./cache-schema.ts";
import { ROUTING_DEFAULTS, routingSchema } from "./routing-schema.ts";
import { WEBSOCKET_DEFAULTS, websocketSchema } from "./websocket-schema.ts";
import { environmentVariable, httpUrl } from "../config-fields.ts";
import { providerProtocolSchema, providerSchema } from "../providers/provider-config.ts";
import { REASONING_EFFORTS } from "../providers/types.ts";
import { reportUnknownAllowedModels } from "./allowed-model.ts";
import { reportUncarriedMediaParameters } from "./configured-media-parameters.ts";
import { preferenceSchema, qualitySchema, selectionSchema } from "./selection.ts";

/** A price in USD per token (or per request), as an exact decimal string. */
const decimalString = z
  .string()
  .regex(/^\d+(\.\d+)?$/, "must be a non-negative decimal string such as \"0.0000025\"");

const modality = z.enum(["text", "image", "file", "audio", "video", "pdf"]);

const supportedParameter = z.string().min(1);

const pricingSchema = z
  .object({
    prompt: decimalString,
    completion: decimalString,
    request: decimalString.default("0"),
    input_cache_read: decimalString.optional(),
    input_cache_write: decimalString.optional(),
    /** Writes kept an hour (Anthropic's `ttl: "1h"`); defaults to twice the prompt price on Anthropic routes (its rate), else to input_cache_write. */
    input_cache_write_1h: decimalString.optional(),
    image: decimalString.optional(),
    /** Per generated image (image tasks: the hold is n of these, charged per image delivered). */
    image_output: decimalString.optional(),
    /** Per megapixel (1024x1024 pixels, whole megapixels rounded up) of each generated image after its first (BFL's FLUX.2); added to image_output. */
    image_output_per_megapixel: decimalString.optional(),
    /** The first megapixel of each generated image, where it costs more than the others; defaults to image_output_per_megapixel. */
    image_output_first_megapixel: decimalString.optional(),
    /** Per megapixel of the input images an image is made from (FLUX.2 editing), all of them together, charged with each image made (the protocols that take input images make one per request). */
    image_input_per_megapixel: decimalString.optional(),
    /** Per second of generated video (video tasks: the hold is the seconds asked for, or the model's longest, at this price). */
    video_output_per_second: decimalString.optional(),
    /**
     * Per output token of an image, audio or video that the model makes as
     * tokens (Gemini reports output tokens by modality): those tokens at this
     * price, the rest of the output at `completion`. Default: `completion`.
     */
    completion_image: decimalString.optional(),
    completion_audio: decimalString.optional(),
    completion_video: decimalString.optional(),
    /** Per input image token, for image tasks priced per token (OpenAI's gpt-image edits); default: `prompt`. */
    prompt_image: decimalString.optional(),
    web_search_per_1000_requests_low: decimalString.optional(),
    web_search_per_1000_requests_medium: decimalString.optional(),
    web_search_per_1000_requests_high: decimalString.optional(),
  })
  .strict();

const reasoningEffortMapSchema = z.partialRecord(
  z.enum(REASONING_EFFORTS),
  z.string(),
);

export const modelProviderSchema = z
  .object({
    provider: z.string().min(1),
    provider_model_id: z.string().min(1),
    pricing: pricingSchema,
    /** Defaults to the model's supported_parameters. */
    supported_parameters: z.array(supportedParameter).optional(),
    reasoning_effort_map: reasoningEffortMapSchema.optional(),
    /** Defaults to the model's context_length. */
    context_length: z.number().int().positive().optional(),
    /** Defaults to the model's max_completion_tokens. */
    max_completion_tokens: z.number().int().positive().optional(),
    supports_web_search: z.boolean().default(false),
    /** Free-tier opt-in: `:free` requests may be served here from the daily quota. */
    free: z
      .object({ enabled: z.boolean(), daily_quota: z.number().int().positive().default(10) })
      .strict()
      .optional(),
    is_active: z.boolean().default(true),
  })
  .strict();

export const modelSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/, "must be <provider>/<model>"),
    name: z.string().min(1),
    description: z.string().default(""),
    created: z.number().int().nonnegative(),
    creator: z.string().min(1),
    context_length: z.number().int().positive(),
    max_completion_tokens: z.number().int().positive(),
    is_moderated: z.boolean().default(false),
    input_modalities: z.array(modality).min(1),
    output_modalities: z.array(modality).min(1),
    tokenizer: z.string().default(""),
    supported_parameters: z.array(supportedParameter),
    supported_params_details: z.record(z.string(), z.unknown()).default({}),
    /** Per task tag, 0..1: how router/auto ranks the model (docs/selection.md). */
    quality: qualitySchema.optional(),
    providers: z.array(modelProviderSchema).min(1),
  })
  .strict();

export const apiKeySchema = z
  .object({
    id: z.string().min(1),
    /** SHA-256 of the key, hex. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    /** Environment variable holding the key in clear (development keys). */
    env: environmentVariable.optional(),
    /** Operator's label; defaults to the id. */
    name: z.string().min(1).optional(),
    disabled: z.boolean().default(false),
    /** Requests and tokens per minute for this key. */
    rpm: z.number().int().positive().optional(),
    tpm: z.number().int().positive().optional(),
    /** Catalogue model ids the key may use; empty: every model. */
    allowed_models: z.array(z.string().min(1)).default([]),
  })
  .strict()
  .refine((key) => Boolean(key.sha256) !== Boolean(key.env), {
    message: "give exactly one of sha256 and env",
  });

export const organizationSchema = z
  .object({
    id: z.string().min(1),
    name: z.string().min(1),
    keys: z.array(apiKeySchema).default([]),
    /** Starting credit balance in USD (1 credit = 1 USD), applied once: when the organisation has no balance yet. */
    credits: z.string().regex(/^\d+(\.\d{1,9})?$/, "a decimal USD amount with at most 9 decimal places").default("0"),
    /** Requests and tokens per minute for the whole organisation, across its keys. */
    rpm: z.number().int().positive().optional(),
    tpm: z.number().int().positive().optional(),
    /** router/auto's cost-versus-quality preference for this organisation's requests (docs/selection.md). */
    selection_preference: preferenceSchema.optional(),
  })
  .strict();

export const conversationsSchema = z
  .object({
    /** How long a stored answer is kept, in seconds; default 30 days. */
    ttl_seconds: z.number().int().positive().default(30 * 24 * 60 * 60),
    /**
     * How long an instance running a background answer vouches for it
     * between renewals (every third of it); an answer whose lease passes is
     * failed. Default 30 s.
     */
    background_lease_seconds: z.number().positive().default(30),
  })
  .strict();

const TASK_DEFAULTS = {
  retention_seconds: 24 * 60 * 60,
  lease_seconds: 30,
  timeout_seconds: 600,
  poll_interval_ms: 1000,
  poll_max_interval_ms: 10_000,
  asset_storage: "directory" as const,
  assets_dir: "",
  webhook_secret_env: "ROUTER_WEBHOOK_SECRET",
  link_secret_env: "ROUTER_LINK_SECRET",
  link_ttl_seconds: 3600,
  webhook_retry_ms: 1000,
  webhook_attempts: 5,
  fetch_private_urls: false,
  attempt_connect_timeout_ms: 10_000,
  attempt_first_byte_timeout_ms: 180_000,
  sync_wait_ms: 60_000,
};


/** An S3-compatible bucket for hosted assets (tasks.asset_storage: s3). */
export const s3AssetsSchema = z
  .object({
    bucket: z.string().min(1),
    region: z.string().min(1).default("us-east-1"),
    /** The server's URL for an S3-compatible service other than AWS (MinIO, R2, ...); unset: AWS S3 of the region. */
    endpoint: httpUrl("http://127.0.0.1:9000").optional(),
    /** Bucket in the path (`<endpoint>/<bucket>/<key>`) instead of the host name; most S3-compatible servers want it. */
    force_path_style: z.boolean().default(false),
    /** A folder of the bucket that holds the assets (`router-assets/`); empty: the bucket's root. */
    key_prefix: z.string().default(""),
    /** Variables holding the credentials; unset: the AWS SDK's default chain (AWS_* variables, profiles, instance roles). */
    access_key_id_env: environmentVariable.optional(),
    secret_access_key_env: environmentVariable.optional(),
    session_token_env: environmentVariable.optional(),
    /**
     * Signed asset links answered with the bucket's own presigned URL, so the bytes do not pass
     * through the gateway: `redirect` (the gateway's signed link answers 302 to it), `direct` (the
     * answers carry it instead of the gateway's link), or `off` (the gateway serves the bytes).
     * Unset: `off`. The bucket's URL (endpoint) must then be one clients reach. docs/tasks.md, "Signed links".
     */
    presigned_urls: z.enum(["off", "redirect", "direct"]).optional(),
  })
  .strict()
  .refine((s3) => !s3.access_key_id_env === !s3.secret_access_key_env, {
    message: "access_key_id_env and secret_access_key_env go together",
    path: ["secret_access_key_env"],
  })
  .refine((s3) => !s3.session_token_env || s3.access_key_id_env, {
    message: "session_token_env needs access_key_id_env and secret_access_key_env",
    path: ["session_token_env"],
  });

export const tasksSchema = z
  .object({
    /** How long a finished task and its hosted assets are kept, in seconds; default a day. */
    retention_seconds: z.number().int().positive().default(TASK_DEFAULTS.retention_seconds),
    /** How long the instance polling a job vouches for it between renewals; a job whose lease passes is taken over. */
    lease_seconds: z.number().positive().default(TASK_DEFAULTS.lease_seconds),
    /** A job unfinished this long after creation ends failed (timeout). */
    timeout_seconds: z.number().positive().default(TASK_DEFAULTS.timeout_seconds),
    /** The first wait between polls; each next one is half again as long (with jitter), up to poll_max_interval_ms. */
    poll_interval_ms: z.number().int().positive().default(TASK_DEFAULTS.poll_interval_ms),
    poll_max_interval_ms: z.number().int().positive().default(TASK_DEFAULTS.poll_max_interval_ms),
    /** Where hosted assets are kept: files under assets_dir, or objects in the bucket `s3` describes (for instances on several machines). */
    asset_storage: z.enum(["directory", "s3"]).default(TASK_DEFAULTS.asset_storage),
    /** Where hosted assets are written (asset_storage: directory); empty: a directory under the system's temporary directory. */
    assets_dir: z.string().default(TASK_DEFAULTS.assets_dir),
    s3: s3AssetsSchema.optional(),
    /** The environment variable holding the webhook signing secret (`whsec_<base64>`); unset: webhook_url is refused. */
    webhook_secret_env: environmentVariable.default(TASK_DEFAULTS.webhook_secret_env),
    /**
     * The environment variable holding the key that signs hosted asset links (at least 32
     * characters, the same on every instance); unset: a key is made at start, and links die with
     * the instance. docs/tasks.md, "Signed links".
     */
    link_secret_env: environmentVariable.default(TASK_DEFAULTS.link_secret_env),
    /** How long a signed asset link handed out works, in seconds (never past its task's retention); default an hour. */
    link_ttl_seconds: z.number().int().positive().default(TASK_DEFAULTS.link_ttl_seconds),
    /** The wait before a webhook's first retry; each next one is four times as long. */
    webhook_retry_ms: z.number().int().positive().default(TASK_DEFAULTS.webhook_retry_ms),
    /** Deliveries tried at most, the first included. */
    webhook_attempts: z.number().int().positive().default(TASK_DEFAULTS.webhook_attempts),
    /**
     * Whether URLs callers give (input images, webhook_url) may reach loopback, private, link-local
     * and unique-local addresses; off, such a connection is refused (deployments on a private network set it).
     */
    fetch_private_urls: z.boolean().default(TASK_DEFAULTS.fetch_private_urls),
    /**
     * One attempt at a synchronous image provider: the most time to connect, and to its answer's
     * first byte (its whole answer: the provider's request_timeout_ms). Past either, the task's next
     * provider is tried (docs/tasks.md, "Fallback").
     */
    attempt_connect_timeout_ms: z.number().int().positive().default(TASK_DEFAULTS.attempt_connect_timeout_ms),
    attempt_first_byte_timeout_ms: z.number().int().positive().default(TASK_DEFAULTS.attempt_first_byte_timeout_ms),
    /**
     * How long `response_type: sync` on a model with only asynchronous image providers waits for the
     * task before answering it as it stands (docs/tasks.md, "Waiting for an asynchronous provider").
     */
    sync_wait_ms: z.number().int().positive().default(TASK_DEFAULTS.sync_wait_ms),
  })
  .strict()
  .refine((tasks) => tasks.asset_storage !== "s3" || tasks.s3, { message: "asset_storage s3 needs the s3 block (bucket, ...)", path: ["s3"] });

export const routerConfigSchema = z
  .object({
    /** Prefix of service-issued ids (`rtr_...`). */
    id_prefix: z.string().regex(/^[a-z][a-z0-9]*$/).default("rtr"),
    providers: z.array(providerSchema).min(1),
    models: z.array(modelSchema),
    organizations: z.array(organizationSchema).default([]),
    /** Stored answers that a later request can continue from (docs/configuration.md). */
    conversations: conversationsSchema.default({ ttl_seconds: 30 * 24 * 60 * 60, background_lease_seconds: 30 }),
    /** Media tasks (images): retention, polling and hosted assets (docs/tasks.md). */
    tasks: tasksSchema.default(TASK_DEFAULTS),
    /** Route measurements and prompt-cache stickiness (docs/routing.md). */
    routing: routingSchema.default(ROUTING_DEFAULTS),
    /** The Responses API over WebSocket, the transport Codex prefers (docs/responses.md). */
    responses_websocket: websocketSchema.default(WEBSOCKET_DEFAULTS),
    /** router/auto and the model selection endpoints (docs/selection.md). */
    selection: selectionSchema.default({ models: [], preference: 0.5 }),
    /** The semantic cache: expiry, sizes, threshold and embedding provider (docs/configuration.md). */
    cache: cacheSchema.default(CACHE_DEFAULTS),
  })
  .strict()
  .superRefine((config, ctx) => {
    reportDuplicates(config.providers.map((p) => p.id), ["providers"], "provider id", ctx);
    reportDuplicates(config.models.map((m) => m.id), ["models"], "model id", ctx);
    const providerIds = new Set(config.providers.map((p) => p.id));
    config.models.forEach((model, modelIndex) => {
      model.providers.forEach((entry, entryIndex) => {
        if (!providerIds.has(entry.provider)) {
          ctx.addIssue({
            code: "custom",
            path: ["models", modelIndex, "providers", entryIndex, "provider"],
            message: `unknown provider "${entry.provider}"`,
          });
        }
      });
    });
    const keyIds = config.organizations.flatMap((org) => org.keys.map((key) => key.id));
    reportDuplicates(keyIds, ["organizations"], "key id", ctx);
    reportUnknownAllowedModels(config, ctx);
    reportUncarriedMediaParameters(config, ctx);
  });

function reportDuplicates(values: string[], path: (string | number)[], what: string, ctx: z.RefinementCtx) {
  const seen = new Set<string>();
  values.forEach((value, index) => {
    if (seen.has(value)) ctx.addIssue({ code: "custom", path: [...path, index], message: `duplicate ${what} "${value}"` });
    seen.add(value);
  });
}

export type RouterConfig = z.infer<typeof routerConfigSchema>;
// A provider's entry is the providers' own (core/providers/provider-config.ts): shown here with the rest of the file.
export { providerProtocolSchema, providerSchema };
export type { ProviderConfig, ProviderProtocol } from "../providers/provider-config.ts";
export type TasksConfig = z.infer<typeof tasksSchema>;
export type S3AssetsConfig = z.infer<typeof s3AssetsSchema>;
export type ModelConfig = z.infer<typeof modelSchema>;
export type ModelProviderConfig = z.infer<typeof modelProviderSchema>;
export type OrganizationConfig = z.infer<typeof organizationSchema>;
