// The public grammar of model strings: `<provider>/<model>` with optional
// shortcut suffixes (`:thinking`, `:free`, `:nitro`, `:floor`, combinable as
// `:thinking:nitro`), and a model's bare name (the part after its provider),
// which the Messages format may send alone.

export type ModelSuffix = "thinking" | "free" | "nitro" | "floor";

export interface ModelReference {
  /** What the caller wrote. */
  requested: string;
  /** The catalogue id without the suffixes. */
  baseId: string;
  /** The first suffix (the only one, mostly); undefined without any. */
  suffix: ModelSuffix | undefined;
  /** Every suffix, as written. */
  suffixes: ModelSuffix[];
}

const SUFFIXES: readonly string[] = ["thinking", "free", "nitro", "floor"] satisfies ModelSuffix[];

/**
 * Splits known suffixes off a model id, last first. Ids that are in the
 * catalogue as written win, so a model whose own name contains a colon is never
 * misread. Whether the suffixes go together is `suffixConflict`'s to say.
 */
export function parseModelReference(requested: string, isKnownId: (id: string) => boolean): ModelReference {
  const suffixes: ModelSuffix[] = [];
  let baseId = requested;
  while (!isKnownId(baseId)) {
    const colon = baseId.lastIndexOf(":");
    if (colon <= 0 || !SUFFIXES.includes(baseId.slice(colon + 1))) break;
    suffixes.unshift(baseId.slice(colon + 1) as ModelSuffix);
    baseId = baseId.slice(0, colon);
  }
  return { requested, baseId, suffix: suffixes[0], suffixes };
}

/** How a sort suffix orders providers: `:nitro` by throughput, `:floor` by price. */
export const SORT_OF_SUFFIX = { nitro: "throughput", floor: "price" } as const;

/**
 * Why these suffixes cannot go together, or undefined when they can: each at
 * most once, one sort (`:nitro` or `:floor`), and `:floor` not with `:free`
 * (free routes cost nothing: there is no price to sort by).
 */
export function suffixConflict(suffixes: readonly ModelSuffix[]): string | undefined {
  const twice = suffixes.find((suffix, index) => suffixes.indexOf(suffix) !== index);
  if (twice) return `the :${twice} suffix is given twice`;
  if (suffixes.includes("nitro") && suffixes.includes("floor")) return ":nitro (fastest first) and :floor (cheapest first) cannot be combined: each sets the provider order";
  if (suffixes.includes("floor") && suffixes.includes("free")) return ":floor (cheapest first) cannot be combined with :free, whose routes all cost nothing";
  return undefined;
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
