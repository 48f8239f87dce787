// The catalogue the Claude Code tests run on: one model per fake upstream,
// named as a vendor would (Claude Code sends the id whole or bare), with room
// for what Claude Code asks (max_tokens 32000), and on Anthropic an effort map,
// so Claude Code's adaptive thinking and effort go up as adaptive thinking.
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { protocolConfigDocument, type Protocol } from "./protocol-upstreams.ts";

/** The Anthropic model is a "conversation" one: it signs its thinking per request and refuses a signature it did not give. */
export const UPSTREAM_MODEL: Record<Protocol, string> = { "openai-compatible": "gpt-agent", anthropic: "claude-agent-conversation", gemini: "gemini-agent", "gemini-interactions": "gemini-ix-agent" };
export const MODEL_ID: Record<Protocol, string> = {
  "openai-compatible": "openai/gpt-agent",
  anthropic: "anthropic/claude-agent",
  gemini: "google/gemini-agent",
  "gemini-interactions": "google/gemini-ix-agent",
};

/** The anthropic-beta header Claude Code 2.1.330 sent with its captured requests (test/fixtures/claude-code/). */
export const CLAUDE_CODE_BETAS = [
  "claude-code-20250219",
  "interleaved-thinking-2025-05-14",
  "context-management-2025-06-27",
  "mid-conversation-tool-changes-2026-07-01",
  "thinking-token-count-2026-05-13",
  "advanced-tool-use-2025-11-20",
  "effort-2025-11-24",
];

export function claudeCodeConfig(urls: Record<Protocol, string>): RouterConfig {
  const document = protocolConfigDocument(urls, "cc", UPSTREAM_MODEL);
  for (const model of document.models) {
    const route: { provider: string; reasoning_effort_map?: Record<string, string> } = model.providers[0];
    model.id = MODEL_ID[route.provider as Protocol];
    // Claude models' limits: Claude Code asks for 32000 tokens, which a 4096-token model cannot serve.
    model.context_length = 200_000;
    model.max_completion_tokens = 64_000;
    if (route.provider === "anthropic") route.reasoning_effort_map = { low: "low", medium: "medium", high: "high" };
  }
  return parseConfig(JSON.stringify(document));
}
