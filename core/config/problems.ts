// Turns what is wrong with a configuration file into lines an operator can act
// on: where (the dotted path and the line in the file) and what to write
// instead (the key meant, the quotes a number needs).
import { isAlias, isMap, isScalar, isSeq, visit, type Document, type LineCounter, type Node, type YAMLError } from "yaml";
import { z } from "zod";

/** A parsed file with what is needed to point into it. */
export interface Source {
  text: string;
  doc: Document;
  lines: LineCounter;
}

/** YAML syntax errors, warnings (an unknown tag, a bad directive) and aliases to no anchor, each at its line. */
export function syntaxProblems(source: Source): string[] {
  const at = (offset: number) => {
    const { line, col } = source.lines.linePos(offset);
    return `line ${line}, column ${col}`;
  };
  const problems = [...source.doc.errors, ...source.doc.warnings].map((error: YAMLError) => `${at(error.pos[0])}: ${error.message}`);
  visit(source.doc, {
    Alias(_key, alias) {
      if (!alias.resolve(source.doc)) problems.push(`${at(alias.range?.[0] ?? 0)}: alias *${alias.source} names no anchor set before it`);
    },
  });
  return problems;
}

/** One line per schema issue: `path: message (line N)`; an unknown key becomes its own problem. */
export function schemaProblems(issues: z.core.$ZodIssue[], schema: z.ZodType, source: Source): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      const known = Object.keys(objectAt(schema, issue.path)?.shape ?? {});
      return issue.keys.map((key) => located(source, [...issue.path, key], unknownKey(key, known)));
    }
    return [located(source, issue.path, messageOf(issue, source))];
  });
}

function located(source: Source, path: PropertyKey[], message: string): string {
  const offset = walk(source, path).anchor?.range?.[0];
  const line = offset === undefined ? "" : ` (line ${source.lines.linePos(offset).line})`;
  return `${path.map(String).join(".") || "(root)"}: ${message}${line}`;
}

function messageOf(issue: z.core.$ZodIssue, source: Source): string {
  // YAML reads 0.0000025 as a float: a price must keep the digits the operator wrote.
  if (issue.code === "invalid_type" && issue.expected === "string") {
    const node = walk(source, issue.path).value;
    if (isScalar(node) && typeof node.value === "number" && node.range) {
      const written = source.text.slice(node.range[0], node.range[1]);
      const decimal = plainDecimal(written);
      return `expected a string, got the number ${written}: put it in quotes` + (decimal === undefined ? "" : `, as "${decimal}"`);
    }
  }
  return issue.message;
}

/**
 * A number as written, as the plain decimal prices take: 0.0000025 as it is,
 * .5 as 0.5, an exponent (1e-7, 2.5E-6) spelt out. Undefined for other forms
 * (negative, hexadecimal, infinite), which no price takes.
 */
function plainDecimal(written: string): string | undefined {
  if (/^\d+(\.\d+)?$/.test(written)) return written;
  if (/^\.\d+$/.test(written)) return "0" + written;
  const parts = /^(\d*)(?:\.(\d*))?[eE]([+-]?\d{1,3})$/.exec(written);
  if (!parts || !/\d/.test(parts[1] + (parts[2] ?? ""))) return undefined;
  const [, whole, fraction = "", exponent] = parts;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  let integer: string;
  let decimals: string;
  if (point <= 0) [integer, decimals] = ["0", "0".repeat(-point) + digits];
  else if (point >= digits.length) [integer, decimals] = [digits + "0".repeat(point - digits.length), ""];
  else [integer, decimals] = [digits.slice(0, point), digits.slice(point)];
  integer = integer.replace(/^0+(?=\d)/, "");
  decimals = decimals.replace(/0+$/, "");
  return decimals ? `${integer}.${decimals}` : integer;
}

function unknownKey(key: string, known: string[]): string {
  const meant = closest(key, known);
  if (meant) return `unknown key; did you mean "${meant}"?`;
  return known.length > 0 ? `unknown key (expected one of ${known.join(", ")})` : "unknown key";
}

/**
 * Where a path leads: `value`, the node there (undefined when the path leads
 * nowhere, as for a missing field), and `anchor`, the deepest node on the way
 * that has a line: a mapping entry's key, a list's item.
 */
function walk(source: Source, path: PropertyKey[]): { value?: unknown; anchor?: Node } {
  let node: unknown = source.doc.contents;
  let anchor = node as Node | undefined;
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(source.doc);
    if (isMap(node)) {
      const pair = node.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === segment);
      if (!pair) return { anchor };
      anchor = (pair.key as Node | null) ?? anchor;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number" && node.items[segment]) {
      node = node.items[segment];
      anchor = node as Node;
    } else {
      return { anchor };
    }
  }
  return { value: node, anchor };
}

/** The object schema a path leads to through arrays, records, defaults and optionals. */
function objectAt(schema: z.ZodType, path: PropertyKey[]): z.ZodObject | undefined {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (current instanceof z.ZodObject) current = current.shape[String(segment)];
    else if (current instanceof z.ZodArray) current = current.element as z.ZodType;
    else if (current instanceof z.ZodRecord) current = current.valueType as z.ZodType;
    else return undefined;
    current = current && unwrap(current);
  }
  return current instanceof z.ZodObject ? current : undefined;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (current instanceof z.ZodDefault || current instanceof z.ZodOptional) current = current.unwrap() as z.ZodType;
  return current;
}

/**
 * The known key nearest to a mistyped one, when it is near enough to be what
 * was meant: a few letters off (organisations, base-url), or cut short (api_key).
 */
export function closest(key: string, known: string[]): string | undefined {
  const typed = key.toLowerCase().replaceAll("-", "_");
  const limit = Math.max(1, Math.floor(typed.length / 3));
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate);
    if (distance <= limit && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key ?? (typed.length >= 4 ? known.find((candidate) => candidate.startsWith(typed)) : undefined);
}

/** Edits (insert, delete, substitute, swap two neighbours) from one string to the other. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
