// JSON helpers shared by the formats.

declare global {
  interface JSON {
    rawJSON(text: string): unknown;
  }
}

/**
 * An exact decimal string written into JSON as a number literal, so a cost of
 * "0.0000125" is never rounded through a float on its way out.
 */
export function exactNumber(decimal: string): unknown {
  return JSON.rawJSON(decimal);
}
