// Runs the selector over the labelled set and gathers the numbers.
import { createCatalogue, type Catalogue } from "../../core/catalogue/catalogue.ts";
import { loadConfigFile } from "../../core/config/load.ts";
import { selectModel } from "../../core/selection/select.ts";
import { costSummary, type CostSummary } from "./cost.ts";
import type { LabelledSet } from "./labelled-set.ts";
import { difficultyAccuracy, tagScores, topKAccuracy, type Outcome, type TagScore } from "./metrics.ts";

export interface Evaluation {
  /** The preference the selector ran with; undefined: the configuration's. */
  preference?: number;
  outcomes: Outcome[];
  tags: { micro: TagScore; perTag: TagScore[] };
  top1: number;
  top3: number;
  difficulty: number;
  cost: CostSummary;
}

/**
 * The bundled catalogue (config/default.yaml) as an operator with every
 * provider's key sees it: selection is judged on the whole catalogue, not on
 * whichever keys the machine running the evaluation happens to have.
 */
export function bundledCatalogue(): Catalogue {
  const config = loadConfigFile();
  const env = Object.fromEntries(config.providers.flatMap((p) => [p.api_key_env, p.secret_key_env]).filter((name) => name !== undefined).map((name) => [name, "eval"]));
  return createCatalogue(config, env);
}

export function evaluateSelection(set: LabelledSet, catalogue: Catalogue, preference?: number): Evaluation {
  const outcomes = set.prompts.map((prompt) => ({ prompt, selection: selectModel({ messages: prompt.messages, needs: prompt.needs, preference }, catalogue) }));
  return {
    preference,
    outcomes,
    tags: tagScores(outcomes),
    top1: topKAccuracy(outcomes, 1),
    top3: topKAccuracy(outcomes, 3),
    difficulty: difficultyAccuracy(outcomes),
    cost: costSummary(outcomes, catalogue),
  };
}
