// The Response object (spec: "Response object"; OpenAI's `Response` schema),
// built from the answer's blocks: for the JSON answer from the fold, for a
// stream's `response.completed` from its own tracker. One output item per
// block: text -> `message` with `output_text`, refusal -> `message` with
// `refusal`, reasoning -> `reasoning`, tool call -> `function_call`; each item's
// id is the block's stable id (BlockStart.id). Media and server tool blocks
// have no item here yet. Where OpenAI's schema is stricter than its own wire,
// the schema wins: a field is left out rather than sent as null (docs/responses.md).
import { cacheFields } from "../../formats/shared/cache-fields.ts";
import { type Annotation, BlockType, FinishReason, type ResponseStart, type Usage } from "../../../gen/router/v1/inference_pb.js";
import type { TrackedBlock } from "../../block-tracker.ts";
import type { FoldedResponse } from "../../fold.ts";
import { exactNumber } from "../../json.ts";
import { declaredName, type Namespace } from "./namespaces.ts";
import type { ResponsesRequestBody } from "./schema.ts";
import type { TurnStatusWord } from "../../formats/shared/turn-status-word.ts";
import { citationFields } from "../../formats/shared/encode-annotations.ts";

export type ResponseStatus = TurnStatusWord;

/** The request settings a Response echoes (kept with a stored turn for GET, `storedEcho`). */
const ECHOED = [
  "model",
  "instructions",
  "max_output_tokens",
  "max_tokens",
  "parallel_tool_calls",
  "previous_response_id",
  "reasoning",
  "store",
  "temperature",
  "text",
  "tool_choice",
  "tools",
  "top_p",
  "metadata",
  "user",
  "top_logprobs",
  "prompt_cache_key",
  "safety_identifier",
] as const satisfies readonly (keyof ResponsesRequestBody)[];

/** The settings a Response echoes, and the request's namespaces (not echoed: they split the calls' names back). */
export type ResponseEcho = Partial<Pick<ResponsesRequestBody, (typeof ECHOED)[number]>> & { namespaces?: Namespace[] };

export function echoOf(body: ResponsesRequestBody): ResponseEcho {
  const echo: ResponseEcho = Object.fromEntries(ECHOED.filter((field) => body[field] !== undefined).map((field) => [field, body[field]]));
  if (body.namespaces.length > 0) echo.namespaces = body.namespaces.map((namespace) => ({ name: namespace.name, functions: namespace.functions.map((tool) => tool.name) }));
  return echo;
}

export interface ResponseState {
  start: ResponseStart;
  body: ResponseEcho;
  status: ResponseStatus;
  /** Whether it ran in the background (false unless said). */
  background?: boolean;
  blocks: readonly TrackedBlock[];
  /** Annotations naming no block: they go with the last text. */
  looseAnnotations?: readonly Annotation[];
  usage?: Usage;
  finishReason?: FinishReason;
  error?: { code: string; message: string };
  /** When it completed (Unix seconds); shown only with status `completed`, as OpenAI does. */
  completedAt?: number;
}

/** Now, in the Unix seconds of `created_at` and `completed_at`. */
export const unixSeconds = (ms: number = Date.now()) => Math.floor(ms / 1000);

/** The status a finished answer has: `incomplete` when a limit or a filter cut it. */
export function statusOf(reason: FinishReason): { status: "completed" | "incomplete"; incomplete?: "max_output_tokens" | "content_filter" } {
  if (reason === FinishReason.LENGTH) return { status: "incomplete", incomplete: "max_output_tokens" };
  if (reason === FinishReason.CONTENT_FILTER) return { status: "incomplete", incomplete: "content_filter" };
  return { status: "completed" };
}

export function encodeResponse(folded: FoldedResponse, body: ResponseEcho, completedAt: number) {
  const loose = folded.annotations.filter((a) => a.blockIndex === undefined);
  return encodeResponseObject({
    start: folded.start,
    body,
    status: statusOf(folded.finishReason).status,
    blocks: folded.blocks,
    looseAnnotations: loose,
    usage: folded.usage,
    finishReason: folded.finishReason,
    completedAt,
  });
}

export function encodeResponseObject(state: ResponseState) {
  const { start, body } = state;
  const incomplete = state.finishReason === undefined ? undefined : statusOf(state.finishReason).incomplete;
  const lastText = state.blocks.findLast((b) => b.type === BlockType.TEXT);
  // The limit or filter cut the last item, as OpenAI marks it.
  const cut = state.status === "incomplete" ? state.blocks.at(-1) : undefined;
  const output = state.blocks.flatMap((block) => {
    const item = encodeOutputItem(block, block === cut ? "incomplete" : "completed", {
      looseAnnotations: block === lastText ? state.looseAnnotations : undefined,
      signedBy: start.protocol,
      namespaces: body.namespaces,
    });
    return item ? [item] : [];
  });
  const response: Record<string, unknown> = {
    id: start.id,
    object: "response",
    created_at: Number(start.created),
    status: state.status,
    ...(state.status === "completed" && state.completedAt !== undefined && { completed_at: state.completedAt }),
    background: state.background ?? false,
    error: state.error ?? null,
    incomplete_details: state.status === "incomplete" && incomplete ? { reason: incomplete } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? body.max_tokens ?? null,
    model: start.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ? { effort: body.reasoning.effort ?? null, summary: body.reasoning.summary ?? null } : null,
    store: body.store ?? true,
    temperature: body.temperature ?? null,
    text: { format: body.text?.format ?? { type: "text" }, ...(body.text?.verbosity !== undefined && { verbosity: body.text.verbosity }) },
    tool_choice: body.tool_choice ?? "auto",
    tools: (body.tools ?? []).map((tool) => ({
      type: "function",
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      parameters: tool.parameters ?? null,
      // OpenAI's schema requires it on an echoed tool; unset is sent on as false.
      strict: tool.strict ?? false,
    })),
    top_p: body.top_p ?? null,
    // Never cut: input longer than the context is refused (docs/responses.md, "Fields real clients send").
    truncation: "disabled",
    // The only tier the gateway serves at.
    service_tier: "default",
    top_logprobs: body.top_logprobs ?? 0,
    metadata: body.metadata ?? {},
    provider: start.provider,
    ...cacheFields(start),
  };
  if (body.user !== undefined) response.user = body.user;
  if (body.prompt_cache_key !== undefined) response.prompt_cache_key = body.prompt_cache_key;
  if (body.safety_identifier !== undefined) response.safety_identifier = body.safety_identifier;
  // The schema's usage is not nullable: left out until the answer has one.
  if (state.usage) response.usage = encodeUsage(state.usage, start);
  return response;
}

export function encodeUsage(usage: Usage, start: ResponseStart) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens, cache_write_tokens: usage.cacheWriteTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
    cost: exactNumber(usage.cost || "0"),
    chat_id: start.id,
    provider: start.provider,
  };
}

/** An item's status: `incomplete` for the last item of an answer a limit or a filter cut. */
export type ItemStatus = "in_progress" | "completed" | "incomplete";

/**
 * The output item of one block: undefined for blocks the Responses API has no
 * item for (audio, video, a server tool's result, server tools other than web search).
 */
/** What an item needs besides its block: sources no block claimed, the reasoning's signer, the request's namespaces. */
export interface ItemContext {
  looseAnnotations?: readonly Annotation[];
  signedBy?: string;
  namespaces?: readonly Namespace[];
}

export function encodeOutputItem(block: TrackedBlock, status: ItemStatus, { looseAnnotations = [], signedBy = "", namespaces }: ItemContext = {}) {
  const id = block.start.id;
  switch (block.type) {
    case BlockType.TEXT:
    case BlockType.REFUSAL:
      return { id, type: "message", role: "assistant", status, content: status === "in_progress" ? [] : [encodeContentPart(block, looseAnnotations)] };
    case BlockType.REASONING:
      return encodeReasoningItem(block, status !== "in_progress", signedBy);
    case BlockType.TOOL_CALL:
      // A namespaced function's call comes back as the client declared it (namespaces.ts).
      return { id, type: "function_call", call_id: block.start.toolCallId, ...declaredName(block.start.toolName, namespaces), arguments: status === "in_progress" ? "" : block.text, status };
    case BlockType.IMAGE:
      // An image the model made (Gemini, OpenAI-compatible image models): the base64 bytes, as OpenAI's image tool answers.
      return { id, type: "image_generation_call", status: status === "in_progress" ? "generating" : "completed", result: status === "in_progress" ? null : Buffer.concat(block.data).toString("base64") };
    case BlockType.SERVER_TOOL_CALL:
      if (block.start.serverToolName !== "web_search") return undefined;
      return { id, type: "web_search_call", status: status === "in_progress" ? "in_progress" : "completed", action: searchActionOf(status === "in_progress" ? "" : block.text) };
    default:
      return undefined;
  }
}

/** A web search's input as OpenAI's search action: Anthropic's `{query}`, Gemini's `{queries}`. */
function searchActionOf(inputJson: string): { type: "search"; query?: string; queries?: string[] } {
  let input: { query?: unknown; queries?: unknown } = {};
  try {
    input = inputJson ? (JSON.parse(inputJson) as typeof input) : {};
  } catch {
    // A provider's malformed input: the action without its query.
  }
  const queries = Array.isArray(input.queries) ? input.queries.filter((q): q is string => typeof q === "string") : typeof input.query === "string" ? [input.query] : [];
  return queries.length === 0 ? { type: "search" } : { type: "search", query: queries[0], queries };
}

/** A message's one content part, whole (or empty, for `content_part.added`). */
export function encodeContentPart(block: TrackedBlock, looseAnnotations: readonly Annotation[] = [], empty = false) {
  if (block.type === BlockType.REFUSAL) return { type: "refusal", refusal: empty ? "" : block.text };
  const text = empty ? "" : block.text;
  const annotations = empty ? [] : [...block.annotations, ...looseAnnotations].map((a) => encodeAnnotation(a, text.length));
  // OpenAI's schema requires logprobs on output_text; none are reported.
  return { type: "output_text", text, annotations, logprobs: [] };
}

/** OpenAI's Responses schema has no place for the cited text itself, so `content` stays out. */
export function encodeAnnotation(annotation: Annotation, textLength: number) {
  return { type: "url_citation", ...citationFields(annotation, textLength) };
}

function encodeReasoningItem(block: TrackedBlock, done: boolean, signedBy: string) {
  const item: Record<string, unknown> = { id: block.start.id, type: "reasoning", summary: done && block.text ? [{ type: "summary_text", text: block.text }] : [] };
  if (done) {
    const sealed = encodeEncryptedReasoning(block, signedBy);
    if (sealed) item.encrypted_content = sealed;
  }
  return item;
}

/**
 * What the provider needs back to accept its reasoning next turn (Anthropic
 * checks it), as `encrypted_content`: the signature (`sig`) or the reasoning
 * it sealed (`redacted`), with the protocol that made it, so that it is never
 * sent to another provider, which would refuse it: `sig@anthropic:<signature>`.
 * decodeEncryptedReasoning reads it back.
 */
function encodeEncryptedReasoning(block: Pick<TrackedBlock, "signature" | "redactedData">, signedBy: string): string | undefined {
  const by = signedBy ? `@${signedBy}` : "";
  if (block.redactedData) return `redacted${by}:${block.redactedData}`;
  if (block.signature) return `sig${by}:${block.signature}`;
  return undefined;
}

const SEALED = /^(sig|redacted)(?:@([a-z0-9-]+))?:/;

export function decodeEncryptedReasoning(value: string): { signature: string; redactedData: string; signedBy: string } {
  const sealed = SEALED.exec(value);
  // Not ours: passed on as a signature of unknown origin, for the provider to judge.
  if (!sealed) return { signature: value, redactedData: "", signedBy: "" };
  const data = value.slice(sealed[0].length);
  const signedBy = sealed[2] ?? "";
  return sealed[1] === "redacted" ? { signature: "", redactedData: data, signedBy } : { signature: data, redactedData: "", signedBy };
}
