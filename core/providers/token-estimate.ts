// What a token estimate needs to know of a chat protocol, for routes whose
// provider cannot count (core/count-tokens/estimate.ts): the fixed cost of
// media the tokenizer cannot see, and whether the upstream's model ids are
// OpenAI's (so the tokenizer library can pick the model's own encoding).
// Each chat protocol's registry entry holds its own (core/providers/registry.ts).

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
 * counts 1,500 to 3,000 a page). docs/count-tokens.md has the table. A
 * protocol's estimate starts from these and changes what its provider bills
 * differently.
 */
export const DEFAULT_MEDIA_TOKENS: MediaTokens = { image: 765, audio: 1000, file: 1500 };
