// What Anthropic's Messages API refuses of a request, for the fake upstream,
// each rule with the API's own wording where it is known. Sources: the official
// SDK's request types (anthropics/anthropic-sdk-typescript, MessageCreateParams)
// and the documentation of extended thinking and tool use.
//   - 401 without an `x-api-key`; 400 without an `anthropic-version` header, or
//     with a body not declared `application/json`.
//   - 400 for a field the API does not know ("Extra inputs are not permitted";
//     a beta's field only without its anthropic-beta value),
//     a missing model, max_tokens or messages, a role other than user/assistant
//     (the system prompt is the top-level `system`), empty content, and a
//     temperature, top_p or top_k out of range.
//   - Tool use: every tool_use of an assistant turn answered by a tool_result in
//     the very next (user) turn, results before any other block of that turn, and
//     no result without its call in the turn before.
//   - Thinking: `enabled` needs budget_tokens >= 1024 and below max_tokens (unless
//     the interleaved-thinking beta is on); `adaptive` takes no budget; while
//     thinking, temperature may only be 1, top_k must be unset, top_p must be at
//     least 0.95, and the tool choice may not force tool use. With a budget, the
//     last assistant turn of a tool loop must start with its (signed) thinking
//     block; in any assistant turn, thinking blocks come first.
// The API does not insist on alternating roles (consecutive turns of one role are
// combined) nor on a user turn first, so neither is refused here.
import type { IncomingHttpHeaders } from "node:http";
import { declaresJson } from "./recording-server.ts";

export interface Refusal {
  status: number;
  body: { type: "error"; error: { type: string; message: string } };
}

type Json = Record<string, any>;

/** The top-level fields of MessageCreateParams (the SDK's, not beta). */
const REQUEST_FIELDS = new Set([
  "model", "max_tokens", "messages", "cache_control", "container", "inference_geo", "metadata", "output_config",
  "service_tier", "stop_sequences", "stream", "system", "temperature", "thinking", "tool_choice", "tools", "top_k",
  "top_p", "user_profile_id",
]);

/** The content block types a request may carry (ContentBlockParam). */
const BLOCK_TYPES = new Set([
  "text", "image", "document", "search_result", "thinking", "redacted_thinking", "tool_use", "tool_result",
  "server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
  "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result", "container_upload",
]);

/** Fields a beta adds, accepted when the anthropic-beta header names that beta (Claude Code sends context_management so). */
const BETA_FIELDS: Record<string, string> = { context_management: "context-management-" };

const API_VERSIONS = new Set(["2023-06-01", "2023-01-01"]);
export const MIN_THINKING_BUDGET = 1024;
const THINKING_DOCS = "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

/** The first refusal the real API would give this request, or undefined. */
export function refusalOf(headers: IncomingHttpHeaders, body: Json): Refusal | undefined {
  const message = authError(headers);
  if (message) return error(401, "authentication_error", message);
  const invalid = headerError(headers) ?? bodyError(body, String(headers["anthropic-beta"] ?? "")) ?? messagesError(body.messages) ?? thinkingError(headers, body);
  return invalid ? error(400, "invalid_request_error", invalid) : undefined;
}

function authError(headers: IncomingHttpHeaders): string | undefined {
  const key = headers["x-api-key"];
  if (key === undefined) return "x-api-key header is required";
  if (typeof key !== "string" || key.trim() === "") return "invalid x-api-key";
  return undefined;
}

function headerError(headers: IncomingHttpHeaders): string | undefined {
  if (!declaresJson(headers)) return `content-type: expected application/json, got ${JSON.stringify(headers["content-type"] ?? "")}`;
  const version = headers["anthropic-version"];
  if (version === undefined) return "anthropic-version: header is required";
  if (typeof version !== "string" || !API_VERSIONS.has(version)) return `anthropic-version: invalid version ${String(version)}`;
  return undefined;
}

function bodyError(body: Json, betas: string): string | undefined {
  const unknown = Object.keys(body).find((field) => !REQUEST_FIELDS.has(field) && !(field in BETA_FIELDS && betas.includes(BETA_FIELDS[field])));
  if (unknown) return `${unknown}: Extra inputs are not permitted`;
  for (const field of ["model", "max_tokens", "messages"]) if (body[field] === undefined) return `${field}: Field required`;
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return "max_tokens: Input should be a valid integer greater than or equal to 1";
  if (body.temperature !== undefined && !inRange(body.temperature, 0, 1)) return "temperature: Input should be less than or equal to 1";
  if (body.top_p !== undefined && !inRange(body.top_p, 0, 1)) return "top_p: Input should be less than or equal to 1";
  if (body.top_k !== undefined && !(Number.isInteger(body.top_k) && body.top_k >= 0)) return "top_k: Input should be greater than or equal to 0";
  if (body.system !== undefined && typeof body.system !== "string") {
    const index = (body.system as Json[]).findIndex((block) => block.type !== "text" || typeof block.text !== "string" || block.text === "");
    if (index >= 0) return `system.${index}: system blocks must be non-empty text blocks`;
  }
  return toolsError(body);
}

function toolsError(body: Json): string | undefined {
  for (const [index, tool] of ((body.tools ?? []) as Json[]).entries()) {
    const custom = tool.type === undefined || tool.type === null || tool.type === "custom";
    if (custom && typeof tool.name !== "string") return `tools.${index}.custom.name: Field required`;
    if (custom && typeof tool.input_schema !== "object") return `tools.${index}.custom.input_schema: Field required`;
  }
  const choice = body.tool_choice as Json | undefined;
  if (choice === undefined) return undefined;
  if (!["auto", "any", "tool", "none"].includes(choice.type)) return `tool_choice: Input tag '${choice.type}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`;
  if (choice.type === "tool" && typeof choice.name !== "string") return "tool_choice.tool.name: Field required";
  return undefined;
}

function messagesError(messages: Json[]): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return "messages: at least one message is required";
  for (const [index, message] of messages.entries()) {
    if (message.role !== "user" && message.role !== "assistant") return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    const blocks = blocksOf(message);
    const finalAssistant = index === messages.length - 1 && message.role === "assistant";
    if (blocks.length === 0 && !finalAssistant) return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
    for (const [position, block] of blocks.entries()) {
      if (!BLOCK_TYPES.has(block.type)) return `messages.${index}.content.${position}: Input tag '${block.type}' found using 'type' does not match any of the expected tags`;
      if (block.type === "text" && (typeof block.text !== "string" || block.text === "")) return "messages: text content blocks must be non-empty";
    }
    const thinks = blocks.some((block) => block.type === "thinking" || block.type === "redacted_thinking");
    if (thinks && blocks[0].type !== "thinking" && blocks[0].type !== "redacted_thinking") {
      return `messages.${index}.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found ${blocks[0].type}.`;
    }
    const pairing = toolPairingError(messages, index);
    if (pairing) return pairing;
  }
  return undefined;
}

/** Tool results answer the calls of the turn just before, all of them, ahead of anything else in their turn. */
function toolPairingError(messages: Json[], index: number): string | undefined {
  const blocks = blocksOf(messages[index]);
  if (messages[index].role === "assistant") {
    const calls = blocks.filter((block) => block.type === "tool_use").map((block) => String(block.id));
    const next = messages[index + 1];
    if (calls.length === 0 || next === undefined) return undefined;
    const answered = new Set(next.role === "user" ? blocksOf(next).filter((block) => block.type === "tool_result").map((block) => String(block.tool_use_id)) : []);
    const unanswered = calls.filter((id) => !answered.has(id));
    if (unanswered.length > 0) {
      return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    return undefined;
  }
  const results = blocks.filter((block) => block.type === "tool_result");
  if (results.length === 0) return undefined;
  const previous = messages[index - 1];
  const calls = new Set(previous?.role === "assistant" ? blocksOf(previous).filter((block) => block.type === "tool_use").map((block) => String(block.id)) : []);
  const stray = results.map((block) => String(block.tool_use_id)).filter((id) => !calls.has(id));
  if (stray.length > 0) {
    return `messages.${index}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  }
  const firstOther = blocks.findIndex((block) => block.type !== "tool_result");
  if (firstOther >= 0 && firstOther < blocks.findLastIndex((block) => block.type === "tool_result")) {
    return `messages.${index}: \`tool_result\` blocks must come first in the content of a user message, before any other block.`;
  }
  return undefined;
}

function thinkingError(headers: IncomingHttpHeaders, body: Json): string | undefined {
  const thinking = body.thinking as Json | undefined;
  if (thinking === undefined || thinking.type === "disabled") return undefined;
  if (thinking.type === "adaptive") {
    if (thinking.budget_tokens !== undefined) return "thinking.adaptive.budget_tokens: Extra inputs are not permitted";
  } else if (thinking.type === "enabled") {
    if (!Number.isInteger(thinking.budget_tokens)) return "thinking.enabled.budget_tokens: Field required";
    if (thinking.budget_tokens < MIN_THINKING_BUDGET) return `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`;
    // With interleaved thinking the budget may exceed max_tokens (it spans the whole tool loop).
    const interleaved = String(headers["anthropic-beta"] ?? "").includes("interleaved-thinking");
    if (!interleaved && thinking.budget_tokens >= body.max_tokens) return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. ${THINKING_DOCS}`;
  } else {
    return `thinking: Input tag '${thinking.type}' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'`;
  }
  const budgetThinking = thinking.type === "enabled";
  if (body.temperature !== undefined && body.temperature !== 1) return `\`temperature\` may only be set to 1 when thinking is enabled. ${THINKING_DOCS}`;
  if (body.top_k !== undefined) return `\`top_k\` must be unset when thinking is enabled. ${THINKING_DOCS}`;
  if (body.top_p !== undefined && body.top_p < 0.95) return `\`top_p\` must be greater than or equal to 0.95 or unset when thinking is enabled. ${THINKING_DOCS}`;
  const choice = body.tool_choice?.type;
  if (choice === "any" || choice === "tool") return "Thinking may not be enabled when tool_choice forces tool use.";
  // Adaptive thinking may skip thinking on a turn, so only a budget insists on it.
  return budgetThinking ? lastToolTurnError(body.messages as Json[]) : undefined;
}

/** In a tool loop (the last user turn answers tool calls), the assistant turn with the calls must open with its thinking. */
function lastToolTurnError(messages: Json[]): string | undefined {
  const last = messages.at(-1)!;
  if (last.role !== "user" || !blocksOf(last).some((block) => block.type === "tool_result")) return undefined;
  const index = messages.length - 2;
  const first = blocksOf(messages[index])[0];
  if (first?.type === "thinking" || first?.type === "redacted_thinking") return undefined;
  return `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. ${THINKING_DOCS}`;
}

/** A message's content as blocks: a string is one text block. */
function blocksOf(message: Json): Json[] {
  if (typeof message.content === "string") return [{ type: "text", text: message.content }];
  return Array.isArray(message.content) ? (message.content as Json[]) : [];
}

function inRange(value: unknown, min: number, max: number): boolean {
  return typeof value === "number" && value >= min && value <= max;
}

function error(status: number, type: string, message: string): Refusal {
  return { status, body: { type: "error", error: { type, message } } };
}
