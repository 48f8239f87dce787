// The public grammar of model strings: `<provider>/<model>` with an optional
// shortcut suffix (`:thinking`, `:free`), and a model's bare name (the part
// after its provider), which the Messages format may send alone.

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

/**
 * The one model whose bare name `name` is (a name with no provider: `claude-sonnet-4-5`), for
 * the Messages route and Anthropic's GET /v1/models/{id} alike. Several with it: the error
 * `ambiguous` makes of their ids is thrown; none, or a name with a provider: undefined.
 */
export function modelOfBareName<M>(models: readonly M[], idOf: (model: M) => string, name: string, ambiguous: (ids: string[]) => Error): M | undefined {
  if (name.includes("/")) return undefined;
  const matches = models.filter((model) => bareModelName(idOf(model)) === name);
  if (matches.length > 1) throw ambiguous(matches.map(idOf));
  return matches[0];
}
