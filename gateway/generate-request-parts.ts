// Parts of the core's GenerateRequest that several public formats spell alike
// once their own field names are read: the tool choice and the output format.
import type { JsonObject } from "@bufbuild/protobuf";
import { ResponseFormat_Type, ToolChoice_Mode } from "../gen/router/v1/inference_pb.js";

/** `auto`, `none`, `required`, or the name of the one tool to call. */
export type ToolChoiceSpec = "auto" | "none" | "required" | { name: string };

const MODES = { auto: ToolChoice_Mode.AUTO, none: ToolChoice_Mode.NONE, required: ToolChoice_Mode.REQUIRED } as const;

export function toolChoiceInit(choice: ToolChoiceSpec | undefined) {
  if (choice === undefined) return undefined;
  if (typeof choice === "string") return { mode: MODES[choice] };
  return { mode: ToolChoice_Mode.NAMED, name: choice.name };
}

export type OutputFormatSpec =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; description?: string; schema: Record<string, unknown>; strict?: boolean };

export function responseFormatInit(format: OutputFormatSpec | undefined) {
  if (format === undefined) return undefined;
  if (format.type === "text") return { type: ResponseFormat_Type.TEXT };
  if (format.type === "json_object") return { type: ResponseFormat_Type.JSON_OBJECT };
  // The format's description has no field of its own upstream: it rides in the schema, which every protocol passes on.
  const schema = format.description && format.schema.description === undefined ? { ...format.schema, description: format.description } : format.schema;
  return { type: ResponseFormat_Type.JSON_SCHEMA, name: format.name, schema: schema as JsonObject, strict: format.strict ?? false };
}
