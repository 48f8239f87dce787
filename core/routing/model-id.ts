// Parses the model strings of a request: `<provider>/<model>` with an optional
// shortcut suffix (`:thinking`, `:free`).
export type ModelSuffix = "thinking" | "free";

export interface ModelReference {
  /** What the caller wrote. */
  requested: string;
  /** The catalogue id without the suffix. */
  baseId: string;
  suffix: ModelSuffix | undefined;
}

const SUFFIXES: readonly ModelSuffix[] = ["thinking", "free"];

/**
 * Splits a known suffix off a model id. Ids that are in the catalogue as written
 * win, so a model whose own name contains a colon is never misread.
 */
export function parseModelReference(requested: string, isKnownId: (id: string) => boolean): ModelReference {
  const colon = requested.lastIndexOf(":");
  if (colon > 0 && !isKnownId(requested)) {
    const suffix = requested.slice(colon + 1) as ModelSuffix;
    if (SUFFIXES.includes(suffix)) return { requested, baseId: requested.slice(0, colon), suffix };
  }
  return { requested, baseId: requested, suffix: undefined };
}

/** The bare model name of a catalogue id: `openai/gpt-4o` -> `gpt-4o`. */
export function bareModelName(id: string): string {
  return id.slice(id.indexOf("/") + 1);
}
