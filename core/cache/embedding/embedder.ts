// What the semantic cache needs of an embedding: unit-length vectors for
// texts, in one named space. The built-in lexical embedding (lexical.ts) needs
// nothing; a configured provider speaking the OpenAI embeddings protocol
// (openai-embeddings.ts) needs the network and costs the gateway money.

export interface Embedder {
  /**
   * Names the embedding space (`lexical-v1`, `openai-embeddings:text-embedding-3-small@256@api.openai.com`):
   * vectors of two spaces are never compared, so it is part of every cache partition.
   */
  readonly id: string;
  /**
   * The cosine similarity at which two prompts are taken for the same question
   * when the request names none (measured for the lexical embedding: docs/cache.md).
   */
  readonly defaultThreshold: number;
  /** One L2-normalised vector per text, in order; all of the same length. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}
