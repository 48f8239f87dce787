// What one request may contain. Every limit is far above what real clients
// send (OpenAI itself allows 4 stop strings and 128 tools), so that a
// multi-provider client never meets one, yet low enough that no request can
// make the gateway work without bound (deep recursion, thousands of fallback
// attempts, huge tag lists in the usage records). docs/requests.md lists them.

/**
 * Largest accepted body; images and PDFs travel inline as base64, hence the
 * room: Anthropic's Messages API takes 32 MB, and a coding agent's long
 * session with screenshots gets there.
 */
export const BODY_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * Largest video a base64-style result carries inline (`bytesBase64Encoded`),
 * 8 MiB: a few seconds of 720p. Each answer of such a task (GET
 * /api/v1/videos/{id}, getAsyncResponse) reads the bytes back and holds them
 * three times over (bytes, base64, JSON); a larger video is left out of the
 * JSON, and its router_assets URL serves it streamed. docs/tasks.md.
 */
export const INLINE_VIDEO_LIMIT_BYTES = 8 * 1024 * 1024;

/** Deepest nesting of objects and arrays in a body; the body object itself is level 1. */
export const MAX_JSON_DEPTH = 128;

/** Most items per array, by the parameter they bound. */
export const MAX_ITEMS = {
  messages: 10_000,
  /** Content blocks in one message. */
  contentBlocks: 1_000,
  /** Tool calls in one assistant message. */
  toolCalls: 1_000,
  /** Reasoning blocks sent back in one message; a client collecting a stream's deltas gets one per chunk. */
  reasoningBlocks: 100_000,
  /** Output echoed back in an assistant message (annotations, images), which is dropped. */
  echoedOutput: 10_000,
  tools: 512,
  stop: 16,
  /** Fallback models: each one may be an attempt. */
  models: 32,
  requestTags: 64,
  /** Providers named in provider.only or provider.order. */
  providers: 64,
  /** Interactions `safety_settings`: one per harm category, and Google has about ten. */
  safetySettings: 32,
} as const;
