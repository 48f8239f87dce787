// What the three fake upstreams do for a model whose name contains
// "conversation", for the tests of stored conversations: the prompt is counted
// from the request (so a replayed history is as dear as it is long), and each
// thinking answer is signed with a signature of its own request (so a test can
// tell turn 1's signature from turn 2's when both are sent back).

export const isConversationModel = (model: string) => model.includes("conversation");

/** Prompt tokens of a request's conversation (its messages and system prompt): one per 4 characters of JSON, rounded up. */
export function promptTokensOf(conversation: unknown): number {
  return Math.ceil(JSON.stringify(conversation).length / 4);
}

/** The signature of a thinking answer to a request of `messageCount` messages: base64, as both Anthropic and Gemini sign. */
export function signatureOfTurn(messageCount: number): string {
  return Buffer.from(`fake-signature-of-${messageCount}-messages`).toString("base64");
}
