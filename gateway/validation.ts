// Validation shared by the public formats: a body is checked against a zod
// schema, and the first problem becomes invalidParameter(param, message) with
// the parameter written the way OpenAI-style clients show it
// (`messages[0].content`) and a message in our own words ("temperature must be
// between 0 and 2"), never zod's.
import { z } from "zod";
import { echoed, invalidParameter } from "../core/errors.ts";
import { MAX_JSON_DEPTH } from "./limits.ts";

/**
 * The body as the schema's output, or an invalidParameter error. `undefined`
 * is a body that was empty (see read-body.ts).
 */
export function validateBody<Schema extends z.ZodType>(schema: Schema, body: unknown): z.output<Schema> {
  if (body === undefined) throw invalidParameter("body", "The request body is empty: send a JSON object");
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidParameter("body", "The request body must be a JSON object");
  }
  checkJsonShape(body);
  const result = schema.safeParse(body, { error: plainWords });
  if (result.success) return result.data;
  const { path, message } = firstProblem(result.error.issues[0]);
  // An unknown field's name is the caller's: quoted bounded.
  const param = echoed(formatPath(path));
  throw invalidParameter(param, `${param} ${message}`);
}

/**
 * Wraps an object schema (or a union of them) so that a field sent as null
 * counts as not sent: OpenAI accepts null for "unset" and some clients send
 * every unset field that way. Only the object's own fields are touched, never
 * free-form JSON inside it (a tool's parameters keep their `"default": null`).
 * A required field sent as null is then reported as missing.
 */
export function nullMeansAbsent<Schema extends z.ZodType>(schema: Schema) {
  return z.preprocess(withoutNullFields, schema);
}

function withoutNullFields(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  if (!hasNullField(value)) return value;
  // fromEntries defines own properties, so even a "__proto__" key stays plain data.
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null));
}

/** Whether an own enumerable field is null, stopping at the first (no array of the values). */
function hasNullField(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key) && (value as Record<string, unknown>)[key] === null) return true;
  return false;
}

// ---- the JSON's shape, before the schema sees it ----

type PathKey = PropertyKey;

/**
 * Refuses nesting deeper than MAX_JSON_DEPTH (zod validates recursively, so a
 * body 2,000 levels deep would overflow the stack) and own `__proto__` keys
 * (a schema copying such a key would change an object's prototype). The walk
 * keeps its own stack so that it cannot overflow itself.
 */
function checkJsonShape(body: object): void {
  const frames: { container: object; keys: string[] | undefined; next: number }[] = [];
  const path: PathKey[] = [];
  const enter = (container: object) => {
    const keys = Array.isArray(container) ? undefined : Object.keys(container);
    if (keys?.includes("__proto__")) {
      const param = formatPath([...path, "__proto__"]);
      throw invalidParameter(param, `${param} is not accepted as a key`);
    }
    frames.push({ container, keys, next: 0 });
  };
  enter(body);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    const size = frame.keys ? frame.keys.length : (frame.container as unknown[]).length;
    if (frame.next === size) {
      frames.pop();
      path.pop();
      continue;
    }
    const key = frame.keys ? frame.keys[frame.next] : frame.next;
    frame.next += 1;
    const child = (frame.container as Record<PathKey, unknown>)[key];
    if (typeof child !== "object" || child === null) continue;
    path.push(key);
    if (frames.length === MAX_JSON_DEPTH) {
      // The full path would be over a hundred segments; the top-level field is enough to act on.
      const param = formatPath(path.slice(0, 1));
      throw invalidParameter(param, `${param} is nested too deeply: a request body may nest objects and arrays at most ${MAX_JSON_DEPTH} levels deep`);
    }
    enter(child);
  }
}

// ---- zod's issues in our words ----

type Issue = z.core.$ZodIssue;

/**
 * Descends into union failures to the branch the caller evidently meant (the
 * one whose failure is not a plain type mismatch at the union itself), so the
 * error names `messages[0].content[1].text` rather than "invalid input".
 */
function firstProblem(issue: Issue, prefix: readonly PathKey[] = []): { path: PathKey[]; message: string } {
  const path = [...prefix, ...issue.path];
  if (issue.code === "unrecognized_keys") {
    return { path: [...path, issue.keys[0]], message: "is not a supported parameter" };
  }
  if (issue.code === "invalid_union") {
    const meant = issue.errors.find((branch) => !isTypeMismatch(branch));
    if (meant) return firstProblem(meant[0], path);
  }
  return { path, message: issue.message };
}

function isTypeMismatch(branch: Issue[]): boolean {
  return branch.every((issue) => issue.path.length === 0 && (issue.code === "invalid_type" || issue.code === "invalid_value"));
}

/** `["messages", 0, "content"]` -> `messages[0].content`. */
export function formatPath(path: readonly PathKey[]): string {
  return path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("");
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  record: "an object",
  null: "null",
};

/**
 * Zod's own messages ("Invalid input: expected int, received number") read
 * like a stack trace; these are predicates the decoder prefixes with the
 * parameter. Messages set on the schema itself take precedence over these.
 * Every issue code has an answer here, so zod's wording never reaches a client.
 */
function plainWords(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      // 1e400 in JSON parses to Infinity.
      if (issue.expected === "number" && typeof issue.input === "number") return "must be a finite number";
      return `must be ${ARTICLE[issue.expected] ?? issue.expected}`;
    case "invalid_value":
      if (issue.values.length === 1) return `must be ${JSON.stringify(issue.values[0])}`;
      return `must be one of ${issue.values.map(String).join(", ")}`;
    case "invalid_union":
      // A discriminated union whose `type` (or other key) matched no option.
      // Its path already ends with the discriminator key.
      if (issue.note === "No matching discriminator") {
        const value = (issue.input as Record<string, unknown>)[String(issue.discriminator)];
        if (value === undefined) return "is required";
        return `must be one of ${(issue.options as unknown[]).map(String).join(", ")}`;
      }
      return "does not match any accepted form";
    case "too_small":
      return bound("at least", "greater than", issue.origin, issue.minimum, issue.inclusive);
    case "too_big":
      return bound("at most", "less than", issue.origin, issue.maximum, issue.inclusive);
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "invalid_format":
      return issue.format === "regex" ? "has an invalid format" : `must be a valid ${issue.format}`;
    case "unrecognized_keys":
      // firstProblem names the key itself; this wording is only a fallback.
      return "has unsupported parameters";
    default:
      // invalid_key, invalid_element and custom refinements without a message.
      return "is not valid";
  }
}

function bound(inclusiveWords: string, exclusiveWords: string, origin: string, limit: number | bigint, inclusive = true): string {
  const words = inclusive ? inclusiveWords : exclusiveWords;
  if (origin === "array" || origin === "set") return `must have ${words} ${limit} item${limit === 1 ? "" : "s"}`;
  if (origin === "string") return limit === 1 && inclusiveWords === "at least" ? "must not be empty" : `must have ${words} ${limit} characters`;
  // number, int (an integer outside the safe range), bigint.
  return `must be ${words} ${limit}`;
}
