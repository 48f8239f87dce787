// A tool call's arguments as JSON text, for a protocol that takes text: a
// Messages tool_use carries them as an object (ToolCallPart.input), which a
// protocol holding an object (Anthropic, Gemini) sends as it is.
import type { ToolCallPart } from "../../gen/router/v1/inference_pb.js";

/** The arguments as JSON text: as the format gave them, or the object stringified (the text a Messages tool_use was given as before). */
export function toolCallArguments(call: Pick<ToolCallPart, "arguments" | "input">): string {
  return call.input ? JSON.stringify(call.input) : call.arguments;
}
