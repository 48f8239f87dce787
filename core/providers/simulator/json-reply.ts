// The simulator's answer to a request for JSON (`response_format`): its usual
// reply wrapped as `{"reply": ...}` for a JSON object, or, for a JSON Schema,
// the simplest value the schema describes (every property present, strings
// carrying the reply, numbers at their minimum or 0, the first of an enum), so
// that a client parsing structured output gets a value it can parse.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { ResponseFormat_Type, type ResponseFormat } from "../../../gen/router/v1/inference_pb.js";

/** Past this depth (a schema that refers to itself) a value is null. */
const MOST_DEPTH = 8;

/** The reply as the JSON text the format asks for; undefined when it asks for text. */
export function jsonReply(format: ResponseFormat | undefined, reply: string): string | undefined {
  if (format?.type === ResponseFormat_Type.JSON_OBJECT) return JSON.stringify({ reply });
  if (format?.type === ResponseFormat_Type.JSON_SCHEMA) return JSON.stringify(valueOf(format.schema ?? {}, format.schema ?? {}, reply, 0));
  return undefined;
}

function valueOf(schema: JsonValue, root: JsonObject, reply: string, depth: number): JsonValue {
  if (!isObject(schema) || depth > MOST_DEPTH) return null;
  if (typeof schema.$ref === "string") return valueOf(resolve(schema.$ref, root), root, reply, depth + 1);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const choices of [schema.anyOf, schema.oneOf]) {
    if (Array.isArray(choices) && choices.length > 0) return valueOf(choices[0], root, reply, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type ?? (isObject(schema.properties) ? "object" : "string")) {
    case "object": {
      const properties = isObject(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, valueOf(property, root, reply, depth + 1)]));
    }
    case "array": {
      const count = typeof schema.minItems === "number" ? schema.minItems : 0;
      return Array.from({ length: count }, () => valueOf(schema.items ?? {}, root, reply, depth + 1));
    }
    case "number":
    case "integer":
      return typeof schema.minimum === "number" ? schema.minimum : 0;
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return reply;
  }
}

/** A local reference (`#/$defs/name`, `#/definitions/name`); anything else stands for no schema. */
function resolve(ref: string, root: JsonObject): JsonValue {
  if (!ref.startsWith("#/")) return null;
  let node: JsonValue = root;
  for (const key of ref.slice(2).split("/")) node = isObject(node) ? (node[key.replaceAll("~1", "/").replaceAll("~0", "~")] ?? null) : null;
  return node;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
