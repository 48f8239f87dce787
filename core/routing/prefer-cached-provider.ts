// Prompt-cache stickiness (docs/routing.md): once the organisation is known
// (after admission), each model's attempts put first the provider whose answer
// last showed prompt-cache activity for the same opening, so its cache stays
// warm; and an answer that shows cache activity is remembered for the next
// requests. The caller's `order` or `only`, and a conversation's keeper, are
// stronger: then nothing moves (what an answer shows is still remembered).
import type { GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import type { CacheAffinity } from "../route-stats/cache-affinity.ts";
import type { Answering } from "./inference-charge.ts";
import { openingOf, type Opening } from "./opening.ts";
import type { Attempt } from "./plan.ts";

/** The rule's name in the routing trace, on the attempt it put first. */
export const STICKY_RULE = "prompt_cache_sticky";

/** What the end of the answer needs to remember its provider: not the request itself. */
export interface StickyContext {
  organizationId: string;
  opening: Opening;
}

export interface Preferred {
  attempts: Attempt[];
  sticky?: StickyContext;
}

/**
 * The attempts with the remembered provider first. A promise only when a
 * store must be asked (a model with a choice of providers, on Redis): the
 * usual request waits for nothing here.
 */
export function preferCachedProvider(attempts: Attempt[], request: GenerateRequest, organizationId: string, affinity: CacheAffinity | undefined): Preferred | Promise<Preferred> {
  if (!affinity) return { attempts };
  const sticky = { organizationId, opening: openingOf(request) };
  const preferences = request.provider;
  if (preferences && (preferences.order.length > 0 || preferences.only.length > 0)) return { attempts, sticky };
  if (request.conversation?.upstream) return { attempts, sticky };
  // Only a model with a choice of providers can move one first: the others need no lookup (no wait).
  const runs = runsOfModel(attempts);
  const choices = runs.filter((run) => new Set(run.map((attempt) => attempt.route.provider.id)).size > 1);
  if (choices.length === 0) return { attempts, sticky };
  const modelIds = [...new Set(choices.map((run) => run[0].model.config.id))];
  const opening = sticky.opening.digest();
  const found = affinity.lookup(modelIds.map((modelId) => ({ organizationId, modelId, opening })));
  const reorder = (providers: (string | undefined)[]): Preferred => {
    const preferred = new Map(modelIds.map((modelId, index) => [modelId, providers[index]]));
    return { attempts: runs.flatMap((run) => withPreferredFirst(run, preferred.get(run[0].model.config.id))), sticky };
  };
  return found instanceof Promise ? found.then(reorder) : reorder(found);
}

/** Remembers the provider of an answer whose usage shows cached or cache-write input tokens. Never waits. */
export function rememberCachedProvider(affinity: CacheAffinity | undefined, sticky: StickyContext | undefined, answering: Answering | undefined) {
  const tokens = answering?.served?.tokens;
  if (!affinity || !sticky || !tokens || (tokens.cachedInputTokens <= 0 && tokens.cacheWriteTokens <= 0)) return;
  const { model, route } = answering!.attempt;
  affinity.remember({ organizationId: sticky.organizationId, modelId: model.config.id, opening: sticky.opening.digest() }, route.provider.id);
}

/** The attempts as consecutive runs of one model (a plan lists each model's providers together). */
function runsOfModel(attempts: Attempt[]): Attempt[][] {
  const runs: Attempt[][] = [];
  for (const attempt of attempts) {
    const last = runs.at(-1);
    if (last && last[0].model === attempt.model) last.push(attempt);
    else runs.push([attempt]);
  }
  return runs;
}

function withPreferredFirst(run: Attempt[], providerId: string | undefined): Attempt[] {
  const index = providerId === undefined ? -1 : run.findIndex((attempt) => attempt.route.provider.id === providerId);
  if (index === -1) return run;
  return [{ ...run[index], rule: STICKY_RULE }, ...run.slice(0, index), ...run.slice(index + 1)];
}
