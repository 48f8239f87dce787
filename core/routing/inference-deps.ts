// What running a chat inference needs: one interface shared by its steps
// (prepare-inference, fallback, run-inference) and by the services that call them.
import type { Accounts } from "../accounts/accounts.ts";
import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Conversations } from "../conversations/conversations.ts";
import type { ProviderAdapter } from "../providers/types.ts";
import type { CacheAffinity } from "../route-stats/cache-affinity.ts";
import type { RouteMeasurements } from "../route-stats/measurements.ts";
import type { SemanticCache } from "../cache/semantic-cache.ts";

export interface InferenceDeps {
  catalogue: Catalogue;
  accounts: Accounts;
  /** One adapter per wire protocol named in the configuration. */
  adapters: Record<string, ProviderAdapter>;
  /** Stored conversations; absent: none is kept, so none can be continued. */
  conversations?: Conversations;
  now: () => Date;
  /** Draws router/free's model (a number in [0, 1)); injected so tests can fix it. */
  random: () => number;
  /** Each route's measured latency and throughput: routing sorts by them, each answer adds to them. Absent: none kept. */
  measurements?: RouteMeasurements;
  /** Which provider showed prompt-cache activity for an opening (prompt-cache stickiness). Absent: stickiness is off. */
  cacheAffinity?: CacheAffinity;
  /** The semantic cache (docs/cache.md); absent: requests asking for it are answered as without it. */
  semanticCache?: SemanticCache;
}
