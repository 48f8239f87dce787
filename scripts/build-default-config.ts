// Builds config/default.yaml, the bundled default configuration, from a snapshot of
// a public pricing table (LiteLLM format) plus the built-in simulator models.
//
//   npm run build:config [-- <model-prices.json> [<output.yaml>]]
//
// The output is deterministic (no clock, models sorted by id), so the committed file
// can be checked against a fresh build.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Document, Scalar, stringify, visit } from "yaml";
import { parseMoney } from "../core/billing/money.ts";
import { cacheSchema } from "../core/config/cache-schema.ts";
import { routerConfigSchema, type RouterConfig } from "../core/config/schema.ts";
import { PLACEHOLDER_PROJECT } from "../core/providers/vertex/media.ts";
import { defaultQuality } from "./default-quality.ts";

export const DEFAULT_PRICES_PATH = fileURLToPath(new URL("../vendor/model-prices/model-prices.json", import.meta.url));
export const DEFAULT_OUTPUT_PATH = fileURLToPath(new URL("../config/default.yaml", import.meta.url));

/** `created` of models whose key carries no full date (2025-01-01T00:00:00Z). */
export const UNDATED_CREATED = Date.UTC(2025, 0, 1) / 1000;

/** One entry of the pricing table; only the fields used here. */
interface PriceEntry {
  litellm_provider?: string;
  mode?: string;
  input_cost_per_token?: number;
  output_cost_per_token?: number;
  cache_read_input_token_cost?: number;
  cache_creation_input_token_cost?: number;
  cache_creation_input_token_cost_above_1hr?: number;
  output_cost_per_image_token?: number;
  output_cost_per_audio_token?: number;
  output_cost_per_video_token?: number;
  search_context_cost_per_query?: { search_context_size_low?: number; search_context_size_medium?: number; search_context_size_high?: number };
  max_input_tokens?: number;
  max_output_tokens?: number;
  max_tokens?: number;
  supported_endpoints?: string[];
  supports_vision?: boolean;
  supports_pdf_input?: boolean;
  supports_audio_input?: boolean;
  supports_audio_output?: boolean;
  supports_function_calling?: boolean;
  supports_response_schema?: boolean;
  supports_reasoning?: boolean;
  supports_sampling_params?: boolean;
  supports_minimal_reasoning_effort?: boolean;
  supports_none_reasoning_effort?: boolean;
  supports_web_search?: boolean;
  supports_adaptive_thinking?: boolean;
  supports_video_input?: boolean;
}

/** The upstreams of the bundled catalogue; `source` is the pricing table's provider name. */
const UPSTREAMS = [
  { id: "openai", source: "openai", label: "OpenAI", protocol: "openai-compatible", base_url: "https://api.openai.com/v1", api_key_env: "OPENAI_API_KEY", quirks: { max_tokens_field: "max_completion_tokens" } },
  { id: "anthropic", source: "anthropic", label: "Anthropic", protocol: "anthropic", base_url: "https://api.anthropic.com/v1", api_key_env: "ANTHROPIC_API_KEY" },
  { id: "google", source: "gemini", label: "Google AI Studio", protocol: "gemini", base_url: "https://generativelanguage.googleapis.com/v1beta", api_key_env: "GEMINI_API_KEY" },
  { id: "xai", source: "xai", label: "xAI", protocol: "openai-compatible", base_url: "https://api.x.ai/v1", api_key_env: "XAI_API_KEY" },
  // In thinking mode both refuse (HTTP 400) a history whose tool-call turns lack their reasoning_content.
  { id: "deepseek", source: "deepseek", label: "DeepSeek", protocol: "openai-compatible", base_url: "https://api.deepseek.com/v1", api_key_env: "DEEPSEEK_API_KEY", quirks: { reasoning_passback: "reasoning_content" } },
  { id: "moonshot", source: "moonshot", label: "Moonshot AI", protocol: "openai-compatible", base_url: "https://api.moonshot.ai/v1", api_key_env: "MOONSHOT_API_KEY", quirks: { reasoning_passback: "reasoning_content" } },
];

const PROVIDERS = [
  ...UPSTREAMS.map(({ id, label, protocol, base_url, api_key_env, quirks }) => ({
    id, label, protocol, base_url, api_key_env, ...(quirks && { quirks }),
  })),
  // Asynchronous image tasks (docs/tasks.md); its models are listed by bflModels, not from the snapshot.
  { id: "bfl", label: "Black Forest Labs", protocol: "bfl", base_url: "https://api.bfl.ai", api_key_env: "BFL_API_KEY" },
  // Asynchronous video tasks; an access key and a secret key (each request is a JWT signed with the secret). Models: klingModels.
  { id: "kling", label: "Kling AI", protocol: "kling", base_url: "https://api-singapore.klingai.com", api_key_env: "KLING_ACCESS_KEY", secret_key_env: "KLING_SECRET_KEY" },
  // Veo on Vertex AI: put your project in base_url. The token is VERTEX_ACCESS_TOKEN, else application default credentials,
  // which enable it only once base_url names a project (not the placeholder). Models: vertexModels.
  { id: "vertex", label: "Vertex AI", protocol: "vertex", base_url: `https://us-central1-aiplatform.googleapis.com/v1/projects/${PLACEHOLDER_PROJECT}/locations/us-central1`, api_key_env: "VERTEX_ACCESS_TOKEN" },
  { id: "simulator", label: "Simulator", protocol: "simulator" },
  { id: "simulator-backup", label: "Simulator (backup)", protocol: "simulator" },
];

const SAMPLING_PARAMETERS = ["temperature", "top_p", "top_k", "frequency_penalty", "presence_penalty"];
const BASE_PARAMETERS = ["max_tokens", "temperature", "top_p", "stop", "seed", "frequency_penalty", "presence_penalty"];

/** The sampling fields each wire protocol carries (Anthropic has no seed or penalties; both it and Gemini take top_k). */
const PARAMETERS_BY_PROTOCOL: Record<string, string[]> = {
  "openai-compatible": BASE_PARAMETERS,
  anthropic: ["max_tokens", "temperature", "top_p", "top_k", "stop"],
  gemini: [...BASE_PARAMETERS, "top_k"],
};

/**
 * OpenAI reasoning models reject the sampling parameters. The snapshot only flags this
 * (`supports_sampling_params: false`) for some Anthropic entries, so OpenAI is matched by
 * id: the o1/o3/o4 families and the gpt-5 family (gpt-5, gpt-5.1, ...), except the
 * gpt-5-chat variants, which take them. The flag is honoured too wherever it is set.
 */
function rejectsSampling(provider: string, key: string, entry: PriceEntry): boolean {
  if (entry.supports_sampling_params === false) return true;
  return provider === "openai" && /^(o[134]|gpt-5)([-.]|$)/.test(key) && !key.startsWith("gpt-5-chat");
}

/**
 * Which reasoning models take `reasoning_effort`, which the router sends only through
 * the route's reasoning_effort_map:
 * - OpenAI: every model the snapshot marks supports_reasoning.
 * - xAI: only the models xAI documents as accepting it on chat completions (grok-3-mini,
 *   not in the snapshot, takes only low/high; grok-4.3 and grok-4.5 take low/medium/high).
 *   grok-4.20-*-reasoning, grok-4.20-multi-agent and grok-build reject it.
 * - Anthropic: the adaptive-thinking models (`output_config.effort`); older ones get a
 *   `budget_tokens` derived by routing, as do all Gemini models (`thinkingBudget`).
 * - DeepSeek and Moonshot: none; their models reason by model choice (deepseek-reasoner,
 *   kimi-k2.x), so they list `reasoning` when the snapshot says supports_reasoning, but get
 *   no map and no effort is ever sent.
 */
function acceptsReasoningEffort(provider: string, key: string, entry: PriceEntry): boolean {
  if (provider === "openai") return true;
  // Anthropic's adaptive-thinking models take an effort; the others a thinking budget (no map).
  if (provider === "anthropic") return entry.supports_adaptive_thinking === true;
  if (provider === "xai") return /^grok-4\.[35]([-.]|$)/.test(key);
  return false;
}

/**
 * Whether the model can be asked for `response_format`. The snapshot says yes for
 * nearly every chat model (LiteLLM emulates JSON schema with a forced tool), but the
 * Anthropic adapter sends `output_config.format`, which Anthropic's structured-outputs
 * docs list only for the Claude 4.5 generation and later (Haiku 4.5, Sonnet 4.5,
 * Opus 4.5, 4.6, ...); Claude 3.x, 4 and Opus 4.1 (beta header only) answer 400.
 * Model generations are read from the id: claude-opus-4-5-20251101, claude-3-7-sonnet-20250219,
 * claude-opus-4-20250514 (a date, not a minor version), claude-sonnet-5.
 */
function acceptsResponseFormat(provider: string, key: string, entry: PriceEntry): boolean {
  if (!entry.supports_response_schema) return false;
  if (provider !== "anthropic") return true;
  const version = claudeVersion(key);
  return version !== undefined && (version.major > 4 || (version.major === 4 && version.minor >= 5));
}

/** The generation of a Claude model id (major, minor), or undefined when the id names none. */
export function claudeVersion(key: string): { major: number; minor: number } | undefined {
  // A minor version is one digit followed by "-" or the end; a date such as 20250514 is not one.
  const match = /^claude-(?:(\d+)(?:-(\d)(?=-|$))?-[a-z]+|[a-z]+-(\d+)(?:-(\d)(?=-|$))?)(?:-|$)/.exec(key);
  if (!match) return undefined;
  const [, major1, minor1, major2, minor2] = match;
  return { major: Number(major1 ?? major2), minor: Number(minor1 ?? minor2 ?? 0) };
}

/**
 * The efforts a model really supports, each sent as itself: low/medium/high, plus
 * minimal and none where the snapshot says so. Efforts left out are not padded or
 * remapped: the router sends a request for one of them without `reasoning_effort`.
 */
function effortMap(supportsNone = false, supportsMinimal = false) {
  return {
    ...(supportsNone && { none: "none" }),
    ...(supportsMinimal && { minimal: "minimal" }),
    low: "low",
    medium: "medium",
    high: "high",
  };
}

const HEADER = `Bundled default configuration of the router.
GENERATED by \`npm run build:config\` (scripts/build-default-config.ts) from the
pricing snapshot vendor/model-prices/model-prices.json: do not hand-edit, regenerate.
See docs/configuration.md for the fields.

Real providers are enabled by their API key environment variable. Anthropic and
Google speak their native protocols (Messages, Gemini generateContent).`;

/**
 * The semantic cache is left at its defaults (the built-in lexical embedding);
 * the file ends with an embedding server's block, commented out, to copy.
 */
const CACHE_EXAMPLE = {
  cache: {
    embedding: {
      base_url: "https://api.openai.com/v1",
      api_key_env: "OPENAI_API_KEY",
      model: "text-embedding-3-small",
      dimensions: 512,
      price_per_million_tokens: "0.02",
      similarity_threshold: 0.9,
    },
  },
};

const CACHE_COMMENT = `The semantic cache keeps its defaults: the built-in lexical embedding, offline and
free. To embed prompts with a server speaking the OpenAI embeddings protocol
(OpenAI, Gemini's OpenAI-compatible endpoint, TEI, vLLM, Ollama), uncomment and
choose similarity_threshold for your model by measuring your own pairs
(docs/configuration.md, "cache"):

${stringify(CACHE_EXAMPLE).trimEnd()}`;

/**
 * The exact decimal string of a JSON number, from its shortest string form
 * (2.5e-06 -> "0.0000025"); `shift` multiplies by 10^shift (3: per 1000).
 */
export function exactDecimal(value: number, shift = 0): string {
  if (!Number.isFinite(value) || value < 0) throw new Error(`not a non-negative price: ${value}`);
  const [mantissa, exponent = "0"] = String(value).split("e");
  const [whole, fraction = ""] = mantissa.split(".");
  const digits = whole + fraction;
  const point = whole.length + Number(exponent) + shift; // decimal point position within `digits`
  const padded = point <= 0 ? "0".repeat(1 - point) + digits : digits.padEnd(point, "0");
  const at = Math.max(point, 1);
  const integer = padded.slice(0, at).replace(/^0+(?=\d)/, "");
  const decimals = padded.slice(at).replace(/0+$/, "");
  return decimals ? `${integer}.${decimals}` : integer;
}

/** Unix time of a YYYY-MM-DD or YYYYMMDD date in the key; MMDD suffixes carry no year and are not guessed. */
export function createdFromKey(key: string): number {
  const match = /(?:^|-)(20\d\d)-?(\d\d)-?(\d\d)(?:-|$)/.exec(key);
  if (!match) return UNDATED_CREATED;
  const [, year, month, day] = match.map(Number);
  const time = Date.UTC(year, month - 1, day);
  const date = new Date(time);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? time / 1000 : UNDATED_CREATED;
}

/** Why a chat entry of the table is left out, or undefined to keep it. */
function exclusion(key: string, entry: PriceEntry): string | undefined {
  if (key.includes("/")) return "provider-prefixed duplicate";
  if (typeof entry.input_cost_per_token !== "number" || typeof entry.output_cost_per_token !== "number") return "no price";
  const endpoints = entry.supported_endpoints;
  if (key.includes("realtime") || (endpoints && !endpoints.includes("/v1/chat/completions"))) return "no chat completions endpoint";
  return undefined;
}

function toModel(key: string, entry: PriceEntry) {
  const provider = UPSTREAMS.find((p) => p.source === entry.litellm_provider)!;
  const parameters = PARAMETERS_BY_PROTOCOL[provider.protocol];
  const search = entry.supports_web_search ? entry.search_context_cost_per_query : undefined;
  const pricing = {
    prompt: exactDecimal(entry.input_cost_per_token!),
    completion: exactDecimal(entry.output_cost_per_token!),
    input_cache_read: optionalDecimal(entry.cache_read_input_token_cost),
    input_cache_write: optionalDecimal(entry.cache_creation_input_token_cost),
    input_cache_write_1h: optionalDecimal(entry.cache_creation_input_token_cost_above_1hr),
    // An image, audio or video the model makes as tokens costs more per token than text.
    completion_image: optionalDecimal(entry.output_cost_per_image_token),
    completion_audio: optionalDecimal(entry.output_cost_per_audio_token),
    completion_video: optionalDecimal(entry.output_cost_per_video_token),
    web_search_per_1000_requests_low: optionalDecimal(search?.search_context_size_low, 3),
    web_search_per_1000_requests_medium: optionalDecimal(search?.search_context_size_medium, 3),
    web_search_per_1000_requests_high: optionalDecimal(search?.search_context_size_high, 3),
  };
  return {
    id: `${provider.id}/${key}`,
    name: `${provider.label}: ${key}`,
    created: createdFromKey(key),
    creator: provider.id,
    context_length: entry.max_input_tokens ?? entry.max_tokens,
    max_completion_tokens: entry.max_output_tokens ?? entry.max_tokens,
    input_modalities: [
      "text",
      ...(entry.supports_vision ? ["image"] : []),
      ...(entry.supports_pdf_input ? ["file"] : []),
      ...(entry.supports_audio_input ? ["audio"] : []),
      ...(entry.supports_video_input ? ["video"] : []),
    ],
    output_modalities: ["text", ...(entry.supports_audio_output ? ["audio"] : [])],
    supported_parameters: [
      ...(rejectsSampling(provider.id, key, entry) ? parameters.filter((p) => !SAMPLING_PARAMETERS.includes(p)) : parameters),
      ...(entry.supports_function_calling ? ["tools", "tool_choice"] : []),
      ...(acceptsResponseFormat(provider.id, key, entry) ? ["response_format"] : []),
      ...(entry.supports_reasoning ? ["reasoning"] : []),
    ],
    providers: [
      {
        provider: provider.id,
        provider_model_id: key,
        pricing: withoutUndefined(pricing),
        ...(entry.supports_reasoning && acceptsReasoningEffort(provider.id, key, entry) && {
          reasoning_effort_map: effortMap(entry.supports_none_reasoning_effort, entry.supports_minimal_reasoning_effort),
        }),
        ...(pricing.web_search_per_1000_requests_low && { supports_web_search: true }),
      },
    ],
  };
}

function optionalDecimal(value: number | undefined, shift = 0): string | undefined {
  return value === undefined ? undefined : exactDecimal(value, shift);
}

function withoutUndefined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}

const CHEAP = { prompt: "0.0000001", completion: "0.0000002" };
const PRICIER = { prompt: "0.0000002", completion: "0.0000004" };

/**
 * A media model (images or videos) served by one provider's route: no chat, so its
 * token prices are 0 and its completion is one token; `context_length` is its
 * prompt's length limit as the provider states it (or a generous one).
 */
function mediaModel(entry: {
  provider: string;
  providerModelId: string;
  id: string;
  name: string;
  description: string;
  created?: number;
  creator: string;
  contextLength: number;
  input: string[];
  output: "image" | "video";
  details: Record<string, unknown>;
  pricing: Record<string, string>;
}) {
  return {
    id: entry.id,
    name: entry.name,
    description: entry.description,
    created: entry.created ?? UNDATED_CREATED,
    creator: entry.creator,
    context_length: entry.contextLength,
    max_completion_tokens: 1,
    input_modalities: entry.input,
    output_modalities: [entry.output],
    supported_parameters: [],
    supported_params_details: entry.details,
    providers: [{ provider: entry.provider, provider_model_id: entry.providerModelId, pricing: { prompt: "0", completion: "0", ...entry.pricing } }],
  };
}

/**
 * Black Forest Labs' image models (BFL's pricing page, docs.bfl.ai/quick_start/pricing,
 * and its own API skill, github.com/black-forest-labs/skills: 1 credit = 0.01 USD).
 * FLUX.1 models cost a flat price per image. FLUX.2 is priced per megapixel of the
 * image made: the first megapixel, each further one, and each megapixel of input
 * images at the further price (BFL's formula: first + (output MP - 1) x MP price +
 * input MP x MP price). FLUX.2 and FLUX1.1 [pro] take a width and height (`size`);
 * Kontext and Ultra an aspect ratio (`aspect_ratio`, between 21:9 and 9:21, listed
 * here as BFL's usual ones). FLUX.2 takes up to 8 input images (klein 4), Kontext
 * one (its further ones are experimental at BFL); Ultra's image prompt is not carried.
 */
const BFL_ASPECT_RATIOS = ["21:9", "16:9", "4:3", "3:2", "1:1", "2:3", "3:4", "9:16", "9:21"];

function bflModels() {
  const model = (id: string, name: string, description: string, pricing: Record<string, string>, details: Record<string, unknown>) =>
    mediaModel({
      provider: "bfl",
      providerModelId: id,
      id: `bfl/${id}`,
      name,
      description,
      creator: "black-forest-labs",
      contextLength: 4096,
      input: details.image ? ["text", "image"] : ["text"],
      output: "image",
      details: { output_format: ["jpeg", "png"], ...details },
      pricing,
    });
  const flat = (price: string) => ({ image_output: price });
  // FLUX.2: first megapixel, each further one, and each input megapixel (at the further price).
  const perMegapixel = (first: string, further: string) => ({ image_output_first_megapixel: first, image_output_per_megapixel: further, image_input_per_megapixel: further });
  const flux2 = (inputs: number) => ({ size: { max_megapixels: 4, multiple_of: 16, min: 64 }, aspect_ratio: [], image: { max: inputs } });
  const ratio = { size: [], aspect_ratio: BFL_ASPECT_RATIOS };
  return [
    model("flux-2-pro", "FLUX.2 [pro]", "Text to image and editing with up to 8 reference images; any size up to 4 megapixels.", perMegapixel("0.03", "0.015"), flux2(8)),
    model("flux-2-max", "FLUX.2 [max]", "BFL's highest quality; text to image and editing with up to 8 reference images, up to 4 megapixels.", perMegapixel("0.07", "0.03"), flux2(8)),
    model("flux-2-flex", "FLUX.2 [flex]", "Typography and fine control; text to image and editing with up to 8 reference images, up to 4 megapixels.", perMegapixel("0.05", "0.05"), flux2(8)),
    model("flux-2-klein-4b", "FLUX.2 [klein] 4B", "Fast and cheap; text to image and editing with up to 4 reference images, up to 4 megapixels.", perMegapixel("0.014", "0.001"), flux2(4)),
    model("flux-2-klein-9b", "FLUX.2 [klein] 9B", "Fast; text to image and editing with up to 4 reference images, up to 4 megapixels.", perMegapixel("0.015", "0.002"), flux2(4)),
    model("flux-pro-1.1", "FLUX1.1 [pro]", "Text to image; width and height multiples of 32 from 256 to 1440.", flat("0.04"), { aspect_ratio: [] }),
    model("flux-pro-1.1-ultra", "FLUX1.1 [pro] Ultra", "Text to image up to 4 megapixels, sized by aspect ratio.", flat("0.06"), ratio),
    model("flux-kontext-pro", "FLUX.1 Kontext [pro]", "Text to image, or an edit of one input image; sized by aspect ratio.", flat("0.04"), { ...ratio, image: { max: 1 } }),
    model("flux-kontext-max", "FLUX.1 Kontext [max]", "Text to image, or an edit of one input image; sized by aspect ratio.", flat("0.08"), { ...ratio, image: { max: 1 } }),
  ];
}

/**
 * OpenAI's image models, answered synchronously on the openai provider (its
 * images API). The pricing snapshot prices them per image token; OpenAI also
 * publishes a price per image by quality and size (the model's page on
 * developers.openai.com), and a route holds one price: gpt-image-1.5 at 0.034 USD,
 * its medium-quality 1024x1024 image. Only that quality and size are listed,
 * and the router sends them when a request leaves them out, so every image
 * made is the one priced (docs/tasks.md, "OpenAI-compatible"). gpt-image-1 is
 * left out: the official SDK says OpenAI shut it down on 2026-10-23.
 */
function openAiImageModels() {
  return [
    mediaModel({
      provider: "openai",
      providerModelId: "gpt-image-1.5",
      id: "openai/gpt-image-1.5",
      name: "OpenAI: gpt-image-1.5",
      description: "Text to image and image edits (up to 16 images and a mask), answered synchronously: 1024x1024 at medium quality, png, jpeg or webp, transparent backgrounds with png or webp; up to 10 images per request.",
      created: createdFromKey("gpt-image-1.5-2025-12-16"),
      creator: "openai",
      contextLength: 32000,
      // Images in: the edits of POST /api/v1/images/edits.
      input: ["text", "image"],
      output: "image",
      details: { size: ["1024x1024"], quality: ["medium"], output_format: ["png", "jpeg", "webp"], background: ["auto", "transparent", "opaque"] },
      pricing: { image_output: "0.034" },
    }),
  ];
}

/**
 * Kling's video models, priced per second of video. Kling sells its API in
 * prepaid units (its developer pricing page, klingai.com/global/dev/pricing:
 * the standard packages at 0.14 USD a unit) and deducts units per task by
 * model, mode and length: Kling 2.5 Turbo in std mode is 1.5 units (0.21 USD)
 * for 5 seconds and 3 units for 10, so 0.042 USD a second (that page's figures
 * as inference.sh lists them, which bills Kling's units at that rate). A route
 * has one price, and the pro mode costs more (2.5 units per 5 s), so only std
 * is listed (Kling's default mode). Kling's `sound` (generateAudio) is priced
 * apart and only Kling 2.6 and later take it; models that take it are left out
 * until the catalogue can price it.
 */
function klingModels() {
  const model = (id: string, name: string, pricePerSecond: string, description: string) =>
    mediaModel({
      provider: "kling",
      providerModelId: id,
      id: `kling/${id}`,
      name,
      description,
      creator: "kling",
      contextLength: 2500,
      input: ["text", "image"],
      output: "video",
      // Kling refuses a prompt over 2500 characters: refused by the router before anything is held (core/tasks/prompt.ts).
      // generateAudio: [] as sound is priced apart and 2.5 Turbo does not take it: hidden in /models and refused at create.
      details: { length: [5, 10], aspectRatio: ["16:9", "9:16", "1:1"], mode: ["std"], generateAudio: [], prompt: { max_length: 2500 } },
      pricing: { video_output_per_second: pricePerSecond },
    });
  return [model("kling-v2-5-turbo", "Kling 2.5 Turbo", "0.042", "Text or image to video, 5 or 10 seconds, 720p (std mode); aspectRatio for text to video only.")];
}

/**
 * Google's Veo models on Vertex AI, priced per second of video as Google's
 * Vertex AI pricing page (cloud.google.com/vertex-ai/generative-ai/pricing, Veo)
 * lists them for video with audio at 720p and 1080p: Veo 3 and Veo 3.1 0.40 USD,
 * their Fast models 0.15 USD (the page itself could not be read here; these are
 * its figures as several public price tables that cite it list them). Video
 * without audio is cheaper and 4K dearer; a route has one price, so the audio
 * price is held and charged (never less than Google's) and 4K is not listed.
 * Each takes 4, 6 or 8 seconds, 16:9 or 9:16, and one sample per request.
 */
function vertexModels() {
  const model = (id: string, name: string, pricePerSecond: string, description: string) =>
    mediaModel({
      provider: "vertex",
      providerModelId: id,
      id: `google/${id}`,
      name,
      description,
      creator: "google",
      contextLength: 1024,
      input: ["text", "image"],
      output: "video",
      details: { length: [4, 6, 8], resolution: ["720p", "1080p"], aspectRatio: ["16:9", "9:16"] },
      pricing: { video_output_per_second: pricePerSecond },
    });
  return [
    model("veo-3.1-generate-001", "Veo 3.1", "0.40", "Text or image to video with audio, 4 to 8 seconds, 720p or 1080p."),
    model("veo-3.1-fast-generate-001", "Veo 3.1 Fast", "0.15", "Faster Veo 3.1: text or image to video with audio, 4 to 8 seconds, 720p or 1080p."),
    model("veo-3.0-generate-001", "Veo 3", "0.40", "Text or image to video with audio, 4 to 8 seconds, 720p or 1080p."),
    model("veo-3.0-fast-generate-001", "Veo 3 Fast", "0.15", "Faster Veo 3: text or image to video with audio, 4 to 8 seconds, 720p or 1080p."),
  ];
}

/** The built-in simulator models; the simulator's behaviour is named by provider_model_id. */
function simulatorModels() {
  const model = (name: string, description: string, providers: object[], extra: { supported_parameters?: string[]; [field: string]: unknown } = {}) => {
    const supported = extra.supported_parameters ?? [...BASE_PARAMETERS, "tools", "tool_choice", "response_format", "reasoning"];
    return {
      id: `simulator/${name}`,
      name: `Simulator: ${name}`,
      description,
      created: UNDATED_CREATED,
      creator: "simulator",
      context_length: 128000,
      max_completion_tokens: 16384,
      input_modalities: ["text", "image"],
      output_modalities: ["text"],
      supported_parameters: supported,
      // An effort map only where the model reasons: elsewhere no effort is ever sent.
      providers: supported.includes("reasoning") ? providers.map((p) => ({ ...p, reasoning_effort_map: effortMap() })) : providers,
      ...extra,
    };
  };
  const served = (behaviour: string, extra: object = {}) => [{ provider: "simulator", provider_model_id: behaviour, pricing: CHEAP, ...extra }];
  return [
    model("echo", "Answers deterministically from the last user message. Free tier: 10 requests a day.", served("echo", { free: { enabled: true, daily_quota: 10 } })),
    model("slow", "Like echo, with a pause between streamed chunks.", served("slow")),
    model("error-429", "Always fails with 429 (rate limited upstream).", served("error-429")),
    model("error-503", "Always fails with 503 (upstream outage).", served("error-503")),
    model("cut-mid-stream", "Drops the connection halfway through the answer.", served("cut-mid-stream")),
    model("tool-call", "Calls the first (or the named) tool offered with the user's text.", served("tool-call")),
    model("reasoning", "Streams a reasoning block before its answer.", served("reasoning")),
    model(
      "audio",
      "Generates a WAV tone from the request's prompt, as long as its duration (1 to 60 seconds, 5 by default), like an audio-generation model.",
      served("audio"),
      { input_modalities: ["text"], output_modalities: ["text", "audio"], supported_parameters: [...BASE_PARAMETERS] },
    ),
    model(
      "image",
      "Image tasks (POST /api/v1/images/generations): a PNG of one colour drawn from the prompt, done at the first poll. Charged 0.001 per image.",
      served("image", { pricing: { ...CHEAP, image_output: "0.001" } }),
      {
        input_modalities: ["text"],
        output_modalities: ["image"],
        supported_parameters: [],
        supported_params_details: { size: ["256x256", "512x512", "1024x1024"] },
      },
    ),
    model(
      "video",
      "Video tasks (POST /api/v1/videos): a tiny MP4 drawn from the prompt and seed, as long as seconds asks (4 by default), done at the first poll, shown in the progress style. Charged 0.001 per second of video.",
      served("video", { pricing: { ...CHEAP, video_output_per_second: "0.001" } }),
      {
        input_modalities: ["text", "image"],
        output_modalities: ["video"],
        supported_parameters: [],
        supported_params_details: { seconds: ["4", "8", "12"], size: ["720x1280", "1280x720"] },
      },
    ),
    model("fallback", "The cheaper provider always fails with 503, so routing falls back to the backup.", [
      { provider: "simulator", provider_model_id: "error-503", pricing: CHEAP },
      { provider: "simulator-backup", provider_model_id: "echo", pricing: PRICIER },
    ]),
  ];
}

/** router/auto's per-tag scores (default-quality.ts), on the text models it may pick. */
function withDefaultQuality<Model extends { id: string; input_modalities: string[]; output_modalities: string[] }>(model: Model): Model {
  const quality = model.output_modalities.includes("text") ? defaultQuality(model.id, model.input_modalities) : undefined;
  return quality ? { ...model, quality } : model;
}

/** The default configuration built from the pricing table's text, validated, and its YAML. */
export function buildDefaultConfig(pricesJson: string): { config: RouterConfig; yaml: string; skipped: string[] } {
  const table = JSON.parse(pricesJson) as Record<string, PriceEntry>;
  const upstreamIds = new Set(UPSTREAMS.map((p) => p.source));
  const chat = Object.entries(table).filter(([, entry]) => upstreamIds.has(entry.litellm_provider ?? "") && entry.mode === "chat");
  const skipped = chat.flatMap(([key, entry]) => exclusion(key, entry) ?? []);
  const priced = chat.filter(([key, entry]) => exclusion(key, entry) === undefined).map(([key, entry]) => toModel(key, entry));
  const models = [...priced, ...bflModels(), ...openAiImageModels(), ...klingModels(), ...vertexModels(), ...simulatorModels()]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(withDefaultQuality);
  const config = {
    id_prefix: "rtr",
    providers: PROVIDERS,
    models,
    // Development credits so paid models answer on a fresh start; free-tier models need none.
    organizations: [{ id: "org_dev", name: "Development", credits: "100", keys: [{ id: "key_dev", env: "ROUTER_DEV_KEY" }] }],
  };

  const result = routerConfigSchema.safeParse(config);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error("generated configuration is invalid:\n  " + problems.join("\n  "));
  }
  // The money code keeps 15 decimal places; a finer price must fail here, not at start.
  for (const model of result.data.models) {
    for (const route of model.providers) Object.values(route.pricing).forEach((price) => price !== undefined && parseMoney(price));
  }

  // Written as built (defaults left implicit); no anchors for the shared price objects.
  const document = new Document(config, { aliasDuplicateObjects: false });
  // Aspect ratios quoted: YAML 1.1 readers take an unquoted 16:9 for a base-60 number (969).
  visit(document, {
    Scalar(_, node) {
      if (typeof node.value === "string" && /^\d+:\d+$/.test(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  document.commentBefore = commentLines(HEADER);
  // The example must be one the start would accept.
  cacheSchema.parse(CACHE_EXAMPLE.cache);
  document.comment = commentLines(CACHE_COMMENT);
  return { config: result.data, yaml: document.toString({ lineWidth: 0 }), skipped };
}

/** Text as YAML comment lines (each line after its `#`, blank lines kept). */
function commentLines(text: string): string {
  return text.split("\n").map((line) => (line ? " " + line : "")).join("\n");
}

export function main(argv: string[]): void {
  const [pricesPath = DEFAULT_PRICES_PATH, outputPath = DEFAULT_OUTPUT_PATH] = argv;
  const { config, yaml, skipped } = buildDefaultConfig(readFileSync(pricesPath, "utf8"));
  mkdirSync(dirname(outputPath), { recursive: true });
  writeFileSync(outputPath, yaml);
  const perProvider = new Map<string, number>();
  for (const model of config.models) for (const route of model.providers) perProvider.set(route.provider, (perProvider.get(route.provider) ?? 0) + 1);
  console.log(`wrote ${outputPath}: ${config.models.length} models (` + [...perProvider].map(([id, n]) => `${id} ${n}`).join(", ") + ")");
  if (skipped.length > 0) console.log(`skipped ${skipped.length} chat entries: ` + [...new Set(skipped)].map((why) => `${skipped.filter((s) => s === why).length} ${why}`).join(", "));
}

if (import.meta.main) main(process.argv.slice(2));
