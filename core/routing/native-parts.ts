// What a request in one public format carries for that format's own protocol
// alone (capabilities.ts `nativeFormat`): blocks the hub does not model
// (NativePart) and the originals of its blocks and tools.
// On any other route they are taken out here, once, so no adapter has to know
// about them: the typed parts stand in for the originals, and each dropped
// block type is said in a warning. A tool result's own blocks are looked at
// too. (Server tools are not taken out: routing only picks a route that runs
// them, capabilities.ts.)
import type { ContentPart, GenerateRequest, Message, Warning } from "../../gen/router/v1/inference_pb.js";
import type { ProviderRoute } from "../catalogue/catalogue.ts";
import { warning } from "../warnings.ts";

const isOwn = (part: ContentPart): boolean =>
  part.original !== undefined || part.part.case === "native" || (part.part.case === "toolResult" && part.part.value.content.some(isOwn));

/** Whether the request carries anything only its own format's protocol takes. */
export const carriesNative = (request: GenerateRequest) =>
  request.tools.some((tool) => tool.original) || request.messages.some((message) => message.content.some(isOwn));

export function withoutNativeParts(request: GenerateRequest, route: ProviderRoute): { request: GenerateRequest; warnings: Warning[] } {
  const droppedTypes = new Set<string>();
  /** The typed parts only: natives dropped (their types noted), originals cleared, inside tool results too. */
  const typedParts = (parts: ContentPart[]): ContentPart[] =>
    parts.flatMap((part) => {
      if (!isOwn(part)) return [part];
      if (part.part.case === "native") {
        droppedTypes.add(String(part.part.value.block?.type ?? "unknown"));
        return [];
      }
      const typed: ContentPart = { ...part, original: undefined };
      if (part.part.case === "toolResult") typed.part = { case: "toolResult", value: { ...part.part.value, content: typedParts(part.part.value.content) } };
      return [typed];
    });
  const messages = request.messages.map((message): Message => (message.content.some(isOwn) ? { ...message, content: typedParts(message.content) } : message));
  const warnings = [...droppedTypes].map((type) =>
    warning("unsupported_parameter", "messages", `${type} blocks are not supported by ${route.model.id} on ${route.provider.id} and were left out`),
  );
  return {
    request: { ...request, messages, tools: request.tools.map((tool) => (tool.original ? { ...tool, original: undefined } : tool)) },
    warnings,
  };
}
