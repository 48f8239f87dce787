// The simulator's answer to a request for JSON (`response_format`): its usual
// reply wrapped as `{"reply": ...}` for a JSON object, or, for a JSON Schema,
// the simplest value the schema describes (every property present, strings
// carrying the reply, numbers at their lower bound or 0, the first of an enum
// or of anyOf/oneOf/allOf), so that a client parsing a simple schema's output
// gets a value it can parse. A schema is the caller's: the value built from it
// is bounded (depth, array lengths and values in all), whatever it asks.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { ResponseFormat_Type, type ResponseFormat } from "../../../gen/router/v1/inference_pb.js";

/** Past this depth (a schema that refers to itself) a value is null. */
const MOST_DEPTH = 8;
/** The longest array built (a schema's minItems above it is not met). */
const MOST_ITEMS = 16;
/** The most values built for one answer; past it, null (a schema whose references fan out). */
const MOST_VALUES = 1_000;

/** The reply as the JSON text the format asks for; undefined when it asks for text. */
export function jsonReply(format: ResponseFormat | undefined, reply: string): string | undefined {
  if (format?.type === ResponseFormat_Type.JSON_OBJECT) return JSON.stringify({ reply });
  if (format?.type !== ResponseFormat_Type.JSON_SCHEMA) return undefined;
  const root = format.schema ?? {};
  return JSON.stringify(new SchemaValue(root, reply).of(root, 0));
}

class SchemaValue {
  private built = 0;
  private readonly root: JsonObject;
  private readonly reply: string;

  constructor(root: JsonObject, reply: string) {
    this.root = root;
    this.reply = reply;
  }

  of(schema: JsonValue | undefined, depth: number): JsonValue {
    if (!isObject(schema) || depth > MOST_DEPTH || ++this.built > MOST_VALUES) return null;
    if (typeof schema.$ref === "string") return this.of(this.resolve(schema.$ref), depth + 1);
    if ("const" in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
    for (const choices of [schema.anyOf, schema.oneOf, schema.allOf]) {
      if (Array.isArray(choices) && choices.length > 0) return this.of(choices[0], depth + 1);
    }
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    // Of a nullable type, the other one; null only when it is the only one.
    const type = types.find((t) => t !== "null" && t !== undefined) ?? (types.includes("null") ? "null" : isObject(schema.properties) ? "object" : "string");
    switch (type) {
      case "object": {
        const properties = isObject(schema.properties) ? schema.properties : {};
        return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, this.of(property, depth + 1)]));
      }
      case "array": {
        const wanted = typeof schema.minItems === "number" ? Math.floor(schema.minItems) : 0;
        const count = Math.min(Math.max(wanted, 0), MOST_ITEMS);
        // Tuple items (an array of schemas, or prefixItems) give each place its own schema.
        const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
        return Array.from({ length: tuple ? Math.min(Math.max(count, tuple.length), MOST_ITEMS) : count }, (_, i) =>
          this.of(tuple ? (tuple[i] ?? {}) : (schema.items ?? {}), depth + 1),
        );
      }
      case "number":
      case "integer": {
        const lowest = typeof schema.minimum === "number" ? schema.minimum : typeof schema.exclusiveMinimum === "number" ? schema.exclusiveMinimum + 1 : 0;
        return type === "integer" ? Math.ceil(lowest) : lowest;
      }
      case "boolean":
        return false;
      case "null":
        return null;
      default:
        return this.reply;
    }
  }

  /** A local reference (`#/$defs/name`, `#/definitions/name`); anything else stands for no schema. */
  private resolve(ref: string): JsonValue {
    if (!ref.startsWith("#/") && ref !== "#") return null;
    let node: JsonValue = this.root;
    for (const key of ref.slice(2).split("/").filter(Boolean)) {
      node = isObject(node) ? (node[key.replaceAll("~1", "/").replaceAll("~0", "~")] ?? null) : null;
    }
    return node;
  }
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
