// What a request in one public format carries for that format's own protocol
// alone (capabilities.ts `nativeFormat`): blocks the hub does not model
// (NativePart), the originals of its blocks and tools, `anthropic-beta`, and
// server tools only that protocol runs. On any other route they are taken out
// here, once, so no adapter has to know about them: the typed parts stand in
// for the originals, and each dropped block is said in a warning.
import type { GenerateRequest, Message, Warning } from "../../gen/router/v1/inference_pb.js";
import type { ProviderRoute } from "../catalogue/catalogue.ts";
import { warning } from "../warnings.ts";

const hasNative = (request: GenerateRequest) =>
  request.anthropicBeta.length > 0 ||
  request.tools.some((tool) => tool.original) ||
  request.messages.some((message) => message.content.some((part) => part.original || part.part.case === "native"));

export function withoutNativeParts(request: GenerateRequest, route: ProviderRoute): { request: GenerateRequest; warnings: Warning[] } {
  if (!hasNative(request)) return { request, warnings: [] };
  const droppedTypes = new Set<string>();
  const messages = request.messages.map((message): Message => {
    if (!message.content.some((part) => part.original || part.part.case === "native")) return message;
    const content = message.content.flatMap((part) => {
      if (part.part.case === "native") {
        droppedTypes.add(String(part.part.value.block?.type ?? "unknown"));
        return [];
      }
      return [part.original ? { ...part, original: undefined } : part];
    });
    return { ...message, content };
  });
  const warnings = [...droppedTypes].map((type) =>
    warning("unsupported_parameter", "messages", `${type} blocks are not supported by ${route.model.id} on ${route.provider.id} and were left out`),
  );
  return {
    request: { ...request, messages, tools: request.tools.map((tool) => (tool.original ? { ...tool, original: undefined } : tool)), anthropicBeta: [] },
    warnings,
  };
}
