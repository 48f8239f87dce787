// Validation against OpenAI's own OpenAPI document (vendor/openai-openapi/openapi.yaml):
// the chat and Responses schemas compiled with Ajv, shared by the wire-compatibility tests.
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { expect } from "vitest";
import { parse } from "yaml";

const SPEC_PATH = fileURLToPath(new URL("../../vendor/openai-openapi/openapi.yaml", import.meta.url));
/** The id the document's components are registered under; `#/components/...` refs resolve against it. */
const SPEC_ID = "https://api.openai.com/openapi.json";

export type SchemaName =
  | "CreateChatCompletionRequest"
  | "CreateChatCompletionResponse"
  | "CreateChatCompletionStreamResponse"
  | "Response"
  | "ResponseStreamEvent";
type Json = Record<string, any>;

/**
 * The document says `openapi: 3.1.0` (JSON Schema 2020-12) but still carries the
 * 3.0 keyword `nullable: true` in places, sometimes beside `$ref` or `oneOf`
 * without a `type` (which Ajv refuses) and once beside an `enum` (where Ajv's
 * own `nullable` would still reject null). Each is rewritten to its 3.1 form:
 * `type: [t, "null"]` (and null in the enum), or `anyOf: [schema, {type: "null"}]`.
 */
function toJsonSchema2020(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema2020);
  if (node === null || typeof node !== "object") return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = toJsonSchema2020(value);
  if (typeof out.nullable !== "boolean") return out;
  const { nullable, ...rest } = out;
  if (!nullable) return rest;
  if (rest.type !== undefined) {
    const types = Array.isArray(rest.type) ? rest.type : [rest.type];
    rest.type = types.includes("null") ? types : [...types, "null"];
    if (Array.isArray(rest.enum) && !rest.enum.includes(null)) rest.enum = [...rest.enum, null];
    return rest;
  }
  return { anyOf: [rest, { type: "null" }] };
}

let ajv: Ajv2020 | undefined;
const validators = new Map<SchemaName, ValidateFunction>();

/** Loads the document once, and compiles each schema on first use. */
export function validatorFor(name: SchemaName): ValidateFunction {
  let validate = validators.get(name);
  if (!validate) {
    validate = specAjv().getSchema(`${SPEC_ID}#/components/schemas/${name}`);
    if (!validate) throw new Error(`${name} is not in ${SPEC_PATH}`);
    validators.set(name, validate);
  }
  return validate;
}

/** `$ref` to one of the document's schemas, for a schema compiled with compileAgainstSpec. */
export const specRef = (name: string) => ({ $ref: `${SPEC_ID}#/components/schemas/${name}` });

/** Compiles a schema of our own that refers into the document (specRef), e.g. one stricter than it. */
export function compileAgainstSpec(schema: Json): ValidateFunction {
  return specAjv().compile(schema);
}

function specAjv(): Ajv2020 {
  if (!ajv) {
    const spec = loadSpec();
    expect(spec.openapi).toMatch(/^3\.1\./);
    // strict: false ignores the document's own keywords (x-oaiTypeLabel, x-stainless-const,
    // discriminator, example, deprecated); the oneOf beside a discriminator is still checked.
    ajv = new Ajv2020({ strict: false, allErrors: true });
    // The formats the schemas use: `uri` must be an absolute URL (a data: URI is),
    // `unixtime` is an integer, which `type` already checks.
    ajv.addFormat("uri", (value: string) => URL.canParse(value));
    ajv.addFormat("unixtime", true);
    // The Responses schemas' `float` (a file search score) is any number.
    ajv.addFormat("float", { type: "number", validate: () => true });
    ajv.addSchema({ $id: SPEC_ID, components: { schemas: toJsonSchema2020(spec.components.schemas) } });
  }
  return ajv;
}

/**
 * The document, parsed. Parsing its 3 MB of YAML takes seconds on a busy machine,
 * and every test file that starts a fake OpenAI upstream needs it, so the parsed
 * form is kept as JSON in the temp directory, keyed by the file's size and mtime.
 */
function loadSpec(): Json {
  const { size, mtimeMs } = statSync(SPEC_PATH);
  const cachePath = join(tmpdir(), `openai-openapi-${size}-${Math.trunc(mtimeMs)}.json`);
  if (existsSync(cachePath)) return JSON.parse(readFileSync(cachePath, "utf8")) as Json;
  const spec = parse(readFileSync(SPEC_PATH, "utf8")) as Json;
  // Written whole and renamed, so a parallel test worker never reads half a file.
  const partPath = `${cachePath}.${process.pid}.part`;
  writeFileSync(partPath, JSON.stringify(spec));
  renameSync(partPath, cachePath);
  return spec;
}

export function describeErrors(errors: ErrorObject[]): string[] {
  return errors.map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)} (schema ${e.schemaPath})`);
}

/** Validates and fails with every error and the offending document. */
export function expectValid(name: SchemaName, data: unknown, label: string) {
  const validate = validatorFor(name);
  const ok = validate(data);
  const errors = ok ? [] : describeErrors(validate.errors ?? []);
  expect(errors, `${label} against ${name}: ${JSON.stringify(data)}`).toEqual([]);
}

