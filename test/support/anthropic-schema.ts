// Run-time checks of what the Messages format answers against the official
// `@anthropic-ai/sdk`'s types (1.12.0, resources/messages/messages.d.ts and
// resources/shared.d.ts), one zod schema per type the gateway can produce.
// A field the .d.ts declares without `?` is required here, `| null` fields
// included (they must be present, possibly null); `?` fields are optional.
// Objects stay open: the router adds `cost`, `chat_id` and `provider` to usage
// (the spec's fields), and a newer API may add more. Content block types the
// gateway never produces (code execution results, container uploads...) are
// left out, so one of them appearing fails the check.
import { expect } from "vitest";
import { z } from "zod";

const int = z.number().int().min(0);

// ---- Message (messages.d.ts: Message, Usage, ContentBlock) ----

const caller = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("direct") }),
  z.looseObject({ type: z.literal("code_execution_20250825"), tool_id: z.string() }),
  z.looseObject({ type: z.literal("code_execution_20260120"), tool_id: z.string() }),
]);

const documentCitationFields = { cited_text: z.string(), document_index: int, document_title: z.string().nullable(), file_id: z.string().nullable() };

/** TextCitation. */
const citation = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("char_location"), ...documentCitationFields, start_char_index: int, end_char_index: int }),
  z.looseObject({ type: z.literal("page_location"), ...documentCitationFields, start_page_number: int, end_page_number: int }),
  z.looseObject({ type: z.literal("content_block_location"), ...documentCitationFields, start_block_index: int, end_block_index: int }),
  z.looseObject({ type: z.literal("web_search_result_location"), cited_text: z.string(), encrypted_index: z.string(), title: z.string().nullable(), url: z.string() }),
  z.looseObject({
    type: z.literal("search_result_location"),
    cited_text: z.string(),
    search_result_index: int,
    source: z.string(),
    start_block_index: int,
    end_block_index: int,
    title: z.string().nullable(),
  }),
]);

/** `input: unknown` is still a required key: present, whatever its value. */
const present = z.unknown().refine((value) => value !== undefined, "required");

const SERVER_TOOL_NAMES = ["web_search", "web_fetch", "code_execution", "bash_code_execution", "text_editor_code_execution", "tool_search_tool_regex", "tool_search_tool_bm25"] as const;

const contentBlock = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string(), citations: z.array(citation).nullable() }),
  z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() }),
  z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() }),
  z.looseObject({ type: z.literal("tool_use"), id: z.string(), caller, input: present, name: z.string(), toolset_name: z.string().nullish() }),
  z.looseObject({ type: z.literal("server_tool_use"), id: z.string(), caller, input: present, name: z.enum(SERVER_TOOL_NAMES) }),
  z.looseObject({ type: z.literal("web_search_tool_result"), caller, content: present, tool_use_id: z.string() }),
]);

const stopReason = z.enum(["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded"]);

const container = z.looseObject({ id: z.string(), expires_at: z.string(), skills: z.array(z.unknown()).nullable() });
const refusalStopDetails = z.looseObject({
  type: z.literal("refusal"),
  category: z.enum(["cyber", "bio", "frontier_llm", "reasoning_extraction", "general_harms"]).nullable(),
  explanation: z.string().nullable(),
});
const diagnostics = z.looseObject({ cache_miss_reason: z.unknown().refine((value) => value !== undefined, "required") });
const outputTokensDetails = z.looseObject({ thinking_tokens: int });
const serverToolUsage = z.looseObject({ web_fetch_requests: int, web_search_requests: int });

const usage = z.looseObject({
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: int, ephemeral_5m_input_tokens: int }).nullable(),
  cache_creation_input_tokens: int.nullable(),
  cache_read_input_tokens: int.nullable(),
  inference_geo: z.string().nullable(),
  input_tokens: int,
  output_tokens: int,
  output_tokens_details: outputTokensDetails.nullable(),
  server_tool_use: serverToolUsage.nullable(),
  service_tier: z.enum(["standard", "priority", "batch"]).nullable(),
  speed: z.enum(["standard", "fast"]).nullable(),
});

export const messageSchema = z.looseObject({
  id: z.string(),
  container: container.nullable(),
  content: z.array(contentBlock),
  diagnostics: diagnostics.nullable(),
  model: z.string(),
  role: z.literal("assistant"),
  stop_details: refusalStopDetails.nullable(),
  stop_reason: stopReason.nullable(),
  stop_sequence: z.string().nullable(),
  type: z.literal("message"),
  usage,
});

// ---- the stream (RawMessageStreamEvent) ----

const delta = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text_delta"), text: z.string() }),
  z.looseObject({ type: z.literal("input_json_delta"), partial_json: z.string() }),
  z.looseObject({ type: z.literal("citations_delta"), citation }),
  z.looseObject({ type: z.literal("thinking_delta"), thinking: z.string() }),
  z.looseObject({ type: z.literal("signature_delta"), signature: z.string() }),
]);

const messageDeltaUsage = z.looseObject({
  cache_creation_input_tokens: int.nullable(),
  cache_read_input_tokens: int.nullable(),
  input_tokens: int.nullable(),
  output_tokens: int,
  output_tokens_details: outputTokensDetails.nullable(),
  server_tool_use: serverToolUsage.nullable(),
});

export const streamEventSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message_start"), message: messageSchema }),
  z.looseObject({
    type: z.literal("message_delta"),
    delta: z.looseObject({ container: container.nullable(), stop_details: refusalStopDetails.nullable(), stop_reason: stopReason.nullable(), stop_sequence: z.string().nullable() }),
    usage: messageDeltaUsage,
  }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("content_block_start"), index: int, content_block: contentBlock }),
  z.looseObject({ type: z.literal("content_block_delta"), index: int, delta }),
  z.looseObject({ type: z.literal("content_block_stop"), index: int }),
]);

// ---- count_tokens and errors ----

/** MessageTokensCount. */
export const tokensCountSchema = z.looseObject({ input_tokens: int });

const errorType = z.enum([
  "invalid_request_error", "authentication_error", "billing_error", "permission_error", "not_found_error", "rate_limit_error",
  "timeout_error", "api_error", "overloaded_error", "memory_precondition_failed_error", "memory_path_conflict_error", "conflict_error",
]);

/** ErrorResponse (shared.d.ts). */
export const errorResponseSchema = z.looseObject({
  type: z.literal("error"),
  error: z.looseObject({ type: errorType, message: z.string() }),
  request_id: z.string().nullable(),
});

export type AnthropicSchema = "Message" | "RawMessageStreamEvent" | "MessageTokensCount" | "ErrorResponse";

const SCHEMAS: Record<AnthropicSchema, z.ZodType> = {
  Message: messageSchema,
  RawMessageStreamEvent: streamEventSchema,
  MessageTokensCount: tokensCountSchema,
  ErrorResponse: errorResponseSchema,
};

/** Fails the test, naming `what` and every field that breaks the SDK's type. */
export function expectAnthropicValid(name: AnthropicSchema, value: unknown, what: string): void {
  const result = SCHEMAS[name].safeParse(value);
  expect(result.success, result.success ? "" : `${what} is not a valid ${name}:\n${z.prettifyError(result.error)}\n${JSON.stringify(value)}`).toBe(true);
}
