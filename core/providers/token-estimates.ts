// What a token estimate needs to know of each protocol, for routes whose
// provider cannot count (core/count-tokens/estimate.ts): the fixed cost of
// media the tokenizer cannot see, and whether the upstream's model ids are
// OpenAI's (so the tokenizer library can pick the model's own encoding).
import type { ProviderProtocol } from "../config/schema.ts";

export interface MediaTokens {
  image: number;
  audio: number;
  /** A file that is not plain text (a PDF). */
  file: number;
}

export interface TokenEstimateProfile {
  media: MediaTokens;
  openAiModelIds: boolean;
}

/**
 * From each provider's documentation: OpenAI bills a 1024x1024 image at high
 * detail 765 tokens; Anthropic about (width x height) / 750, some 1600 at its
 * 1.15-megapixel ceiling; Gemini 258 per image tile. Audio: about 30 seconds
 * at Gemini's 32 tokens a second. A document: about one PDF page (Anthropic
 * counts 1,500 to 3,000 a page). docs/count-tokens.md has the table.
 */
const PROFILES: Record<ProviderProtocol, TokenEstimateProfile> = {
  "openai-compatible": { media: { image: 765, audio: 1000, file: 1500 }, openAiModelIds: true },
  anthropic: { media: { image: 1600, audio: 1000, file: 1500 }, openAiModelIds: false },
  gemini: { media: { image: 258, audio: 1000, file: 1500 }, openAiModelIds: false },
  simulator: { media: { image: 765, audio: 1000, file: 1500 }, openAiModelIds: false },
  // The media-only protocols serve no chat; their lines are never used for an estimate.
  bfl: { media: { image: 765, audio: 1000, file: 1500 }, openAiModelIds: false },
  pollo: { media: { image: 765, audio: 1000, file: 1500 }, openAiModelIds: false },
  kling: { media: { image: 765, audio: 1000, file: 1500 }, openAiModelIds: false },
  vertex: { media: { image: 765, audio: 1000, file: 1500 }, openAiModelIds: false },
};

export const tokenEstimateProfile = (protocol: ProviderProtocol): TokenEstimateProfile => PROFILES[protocol];
