// Conversations the Interactions API keeps on its side. An answer the caller
// keeps is asked `store: true`, and its interaction id becomes the stored
// turn's upstream id. Continuing it (ConversationRef.upstream, which routing
// gives only to the provider that keeps it) sends `previous_interaction_id`
// and, as input, only the request's own messages: the upstream has the rest.
import { Role, type GenerateRequest, type Message } from "../../../gen/router/v1/inference_pb.js";
import { UpstreamError, type UpstreamCall } from "../types.ts";

/** Whether the answer is kept: the caller's `store`, else its format's default. */
export function isStored(request: GenerateRequest): boolean {
  return request.store ?? request.formatPolicy?.storeByDefault ?? false;
}

/**
 * The messages to send, and the stored history the upstream already keeps.
 * The core lays a continuation out as: leading instructions, then
 * `history_messages` of history, then the request's own messages. The
 * instructions are still sent: a system instruction holds for one interaction only.
 */
export function splitKept(request: GenerateRequest): { sent: Message[]; kept: Message[] } {
  const upstream = request.conversation?.upstream;
  if (!upstream) return { sent: request.messages, kept: [] };
  const lead = request.messages.findIndex((message) => message.role !== Role.SYSTEM && message.role !== Role.DEVELOPER);
  const start = lead === -1 ? request.messages.length : lead;
  const end = start + upstream.historyMessages;
  return { sent: [...request.messages.slice(0, start), ...request.messages.slice(end)], kept: request.messages.slice(start, end) };
}

/** The same call without the upstream's copy: the whole history is sent, as for any other provider. */
export function withoutUpstream(call: UpstreamCall): UpstreamCall {
  const { conversation } = call.request;
  return conversation ? { ...call, request: { ...call.request, conversation: { ...conversation, upstream: undefined } } } : call;
}

/**
 * Whether the upstream no longer has the interaction a continuation named
 * (deleted, or past its retention): Google answers a missing resource 404
 * NOT_FOUND; a 400 that names the previous interaction is read the same way.
 */
export function isLostInteraction(error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  return error.status === 404 || (error.status === 400 && /previous_interaction_id|previous interaction/i.test(error.message));
}
