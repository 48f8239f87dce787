// What the fake upstreams do for a model whose name contains
// "conversation", for the tests of stored conversations: the prompt is counted
// from the request (so a replayed history is as dear as it is long); each
// thinking answer is signed with a signature of its own request (so a test can
// tell turn 1's signature from turn 2's when both are sent back); and, as the
// real APIs check signatures, a signature the fake did not issue is refused
// (Anthropic: "Invalid `signature` in `thinking` block"; Gemini, by either of
// its protocols: "Corrupted thought signature."), so another provider's
// reasoning sent back shows.

export const isConversationModel = (model: string) => model.includes("conversation");

/** Prompt tokens of a request's conversation (its messages and system prompt): one per 4 characters of JSON, rounded up. */
export function promptTokensOf(conversation: unknown): number {
  return Math.ceil(JSON.stringify(conversation).length / 4);
}

export type Signer = "anthropic" | "gemini" | "gemini-interactions";

/** The signature `signer` gives a thinking answer to a request of `messageCount` messages: base64, as both sign. */
export function signatureOfTurn(signer: Signer, messageCount: number): string {
  return Buffer.from(`${signer}-signature-of-${messageCount}-messages`).toString("base64");
}

/** The sealed reasoning (redacted_thinking data) Anthropic gives a request of `messageCount` messages. */
export function redactedOfTurn(messageCount: number): string {
  return Buffer.from(`anthropic-redacted-of-${messageCount}-messages`).toString("base64");
}

/** Whether `data` is not sealed reasoning the Anthropic fake gave. */
export function isForeignRedacted(data: string): boolean {
  return !Buffer.from(data, "base64").toString("utf8").startsWith("anthropic-redacted-of-");
}

/** Whether `signature` is not one `signer` gave (Google's documented stand-in for a missing one aside). */
export function isForeignSignature(signer: Signer, signature: string): boolean {
  if (signer !== "anthropic" && signature === "skip_thought_signature_validator") return false;
  return !Buffer.from(signature, "base64").toString("utf8").startsWith(`${signer}-signature-of-`);
}
