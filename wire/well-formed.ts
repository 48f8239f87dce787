// Text that UTF-8 can carry. JSON's `\ud800` escape gives a JavaScript string a
// lone surrogate, which no UTF-8 encoder can write: protobuf-es refuses such a
// string as "invalid UTF8" when it reads a record back, and Redis, a provider or
// a header would each treat it differently. It becomes U+FFFD, as a decoder
// does with bytes that are not UTF-8 (docs/requests.md).

/**
 * A lone surrogate's JSON escape: a high one's not followed by a low one's, or
 * a low one's not preceded by a high one's that is itself an escape (after an
 * even run of backslashes: `\\ud800` is a backslash and the text "ud800").
 * Text after an escaped backslash can only make a false alarm, never a miss.
 */
const LONE_SURROGATE_ESCAPE =
  /\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|\\u[dD][c-fC-F](?<!(?:^|[^\\])(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F])/;

/**
 * Whether JSON text may hold a lone surrogate once parsed; false means surely
 * not. Only an escape can make one (text decoded from UTF-8 or written by
 * JSON.stringify has none raw), so most text costs one scan for `\u`, and text
 * with escaped pairs (Python's json.dumps writes every emoji as two) one
 * regex, rather than a walk of every string of the parsed value.
 */
export function mayHoldLoneSurrogate(json: string): boolean {
  return json.includes("\\u") && LONE_SURROGATE_ESCAPE.test(json);
}

/**
 * Replaces, in place, every lone surrogate in the strings and object keys of a
 * parsed JSON value by U+FFFD, and returns the value. The walk keeps its own
 * stack: a body is walked before its depth is checked.
 */
export function makeWellFormed<T>(value: T): T {
  if (typeof value === "string") return value.toWellFormed() as T;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const container = pending.pop();
    if (typeof container !== "object" || container === null) continue;
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const item: unknown = container[i];
        if (typeof item === "string") {
          if (!item.isWellFormed()) container[i] = item.toWellFormed();
        } else pending.push(item);
      }
      continue;
    }
    const record = container as Record<string, unknown>;
    const keys = Object.keys(record);
    if (!keys.every((key) => key.isWellFormed())) rekey(record, keys);
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (typeof item === "string") {
        if (!item.isWellFormed()) record[key] = item.toWellFormed();
      } else pending.push(item);
    }
  }
  return value;
}

/** The object's keys made well-formed, their order kept; defined, not assigned, so a `__proto__` key stays plain data. */
function rekey(record: Record<string, unknown>, keys: string[]): void {
  const entries = keys.map((key) => [key.toWellFormed(), record[key]] as const);
  for (const key of keys) delete record[key];
  for (const [key, item] of entries) Object.defineProperty(record, key, { value: item, enumerable: true, writable: true, configurable: true });
}
