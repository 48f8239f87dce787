// Native-block fidelity, for any protocol whose wire is a public format
// (capabilities.nativeFormat: Anthropic's is Messages). Routing leaves a
// request's own definitions on that protocol's routes only
// (routing/native-parts.ts, plan.ts); the protocol's converter asks here for
// each block, tool and field kept as the request wrote it, and sends that, byte
// for byte, instead of what it would build from the typed fields.
import type { JsonObject } from "@bufbuild/protobuf";
import type { ContentPart, GenerateRequest, ServerTool, Tool } from "../../gen/router/v1/inference_pb.js";

/** A content block as the request's format wrote it: the part's `original`, or a block the hub does not model (NativePart). */
export function nativeBlock(part: ContentPart): JsonObject | undefined {
  if (part.original) return part.original;
  if (part.part.case === "native" && part.part.value.block) return part.part.value.block;
  return undefined;
}

/**
 * A block where only a typed part may stand (a system prompt's text): its
 * `original` alone; a NativePart there is not sent.
 */
export const nativeOriginal = (part: ContentPart): JsonObject | undefined => part.original;

/** A tool's definition as the request's format wrote it, when it had fields the hub's Tool does not carry. */
export const nativeTool = (tool: Tool): JsonObject | undefined => tool.original;

/** A server tool's definition as the request's format wrote it. */
export const nativeServerTool = (tool: ServerTool): JsonObject | undefined => tool.native;

/**
 * The pass-through fields routing left: on the native protocol's route every
 * top-level field the format's decoder did not model, each as itself, with the
 * hub's `user` apart (each protocol has its own place for it).
 */
export function nativeFields(request: Pick<GenerateRequest, "passthrough">): { user: string | undefined; fields: JsonObject } {
  const { user, ...fields } = request.passthrough ?? {};
  return { user: typeof user === "string" ? user : undefined, fields };
}
