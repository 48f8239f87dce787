// The semantic cache (docs/cache.md): on when a request carries the
// `cache_key` header (CacheOptions.cache_key), it answers a request with a
// stored answer to the same question, asked in the same partition
// (partition.ts), found exactly or by the similarity of the prompts
// (prompt-selection.ts) above a threshold, with equal guards (the prompt's
// numbers and negations, which an embedding hardly sees).
//
// A request's cache work begins before its admission, so a remote embedding
// runs while the account store is asked, and is scoped once the organisation
// is known. A cache never fails a request: an embedding or index failure is a
// miss (an exact one may still hit), logged once per outage.
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { CachedAnswerSchema, type CachedAnswer, type GenerateRequest, type Warning } from "../../gen/router/v1/inference_pb.js";
import { invalidParameter } from "../errors.ts";
import { warning } from "../warnings.ts";
import { AnswerRecording } from "./answer-recording.ts";
import type { Embedder } from "./embedding/embedder.ts";
import { promptGuard } from "./embedding/prompt-guard.ts";
import type { CacheIndex } from "./index/cache-index.ts";
import { parametersDigest, partitionOf } from "./partition.ts";
import { selectPrompt, type ConversationMode, type SelectedPrompt } from "./prompt-selection.ts";

export interface SemanticCacheSettings {
  /** `expiration_time` when the request gives none. */
  defaultTtlSeconds: number;
  /** The longest `expiration_time` served; a longer one is served as this, with a warning. */
  maxTtlSeconds: number;
  /** A bigger answer is not kept. */
  maxEntryBytes: number;
  /** `similarity_threshold` when the request gives none; absent: the embedder's default. */
  similarityThreshold?: number;
}

export interface SemanticCacheDeps {
  index: CacheIndex;
  embedder: Embedder;
  settings: SemanticCacheSettings;
  /** Unix milliseconds (injected clock). */
  now: () => number;
  logger?: { warn(details: object, message: string): void; info?(details: object, message: string): void };
  /** The answers being kept, for flush (made by createSemanticCache). */
  keeping?: Set<Promise<void>>;
}

/** A stored answer found for a request. */
export interface FoundAnswer {
  answer: CachedAnswer;
  /** 1 exact; else the cosine similarity of the prompts. */
  similarity: number;
  exact: boolean;
}

/** What the cache says of a request before it is admitted: its work, when the cache is on, and what the caller is told. */
export interface CacheStart {
  pending?: PendingCacheRequest;
  warnings: Warning[];
}

export interface SemanticCache {
  /** Undefined when the request does not ask for the cache (nothing is made per request then). */
  begin(request: GenerateRequest): CacheStart | undefined;
  /** Waits for the answers being kept (tests, shutdown). */
  flush(): Promise<void>;
}

const DEFAULT_MODE: ConversationMode = "full_conversation";
const MODES: ReadonlySet<string> = new Set<ConversationMode>(["full_conversation", "last_message_only", "last_n_turns"]);

export function createSemanticCache(deps: SemanticCacheDeps): SemanticCache {
  const health = new OutageLog(deps.logger);
  const keeping = new Set<Promise<void>>();
  deps = { ...deps, keeping };
  return {
    async flush() {
      await Promise.all(keeping);
    },
    begin(request) {
      const options = request.cache;
      if (!options) return undefined;
      if (!options.cacheKey) {
        return { warnings: [warning("unavailable_feature", "cache", "the semantic cache needs the cache_key header; the request was not cached")] };
      }
      const warnings: Warning[] = [];
      const { defaultTtlSeconds, maxTtlSeconds } = deps.settings;
      let ttlSeconds = options.expirationTimeSeconds ?? defaultTtlSeconds;
      if (ttlSeconds > maxTtlSeconds) {
        warnings.push(warning("adjusted_parameter", "cache.expiration_time", `cache.expiration_time ${ttlSeconds} was served as ${maxTtlSeconds} seconds, the longest this gateway keeps an answer`));
        ttlSeconds = maxTtlSeconds;
      }
      const mode = (options.conversationMode || DEFAULT_MODE) as ConversationMode;
      const lastNTurns = options.lastNTurns ?? 1;
      const threshold = options.similarityThreshold ?? deps.settings.similarityThreshold ?? deps.embedder.defaultThreshold;
      // The public formats check these; a gRPC caller's request is checked here.
      if (!MODES.has(mode)) throw invalidParameter("cache.conversation_mode", `cache.conversation_mode must be one of ${[...MODES].join(", ")}.`);
      if (!(threshold >= 0 && threshold <= 1)) throw invalidParameter("cache.similarity_threshold", "cache.similarity_threshold must be between 0 and 1.");
      for (const [param, value] of [["cache.last_n_turns", lastNTurns], ["cache.expiration_time", ttlSeconds]] as const) {
        if (value < 1) throw invalidParameter(param, `${param} must be at least 1.`);
      }
      const prompt = selectPrompt(request.messages, mode, lastNTurns);
      const filterOnModel = options.filterOnModel ?? true;
      const pending = new PendingCacheRequest(deps, health, {
        parameters: parametersDigest(request, filterOnModel),
        prompt,
        mode,
        lastNTurns,
        threshold,
        ttlMs: ttlSeconds * 1000,
        filterOnProvider: options.filterOnProvider ?? false,
        cacheKey: options.cacheKey,
      });
      return { pending, warnings };
    },
  };
}

/** What a request asks of the cache, without the request (which may be a long conversation). */
interface CacheAsk {
  /** parametersDigest of the request. */
  parameters: string;
  prompt: SelectedPrompt;
  mode: ConversationMode;
  lastNTurns: number;
  threshold: number;
  ttlMs: number;
  filterOnProvider: boolean;
  cacheKey: string;
}

/** A request's cache work before its organisation is known: its prompt, and its embedding under way. */
export class PendingCacheRequest {
  private readonly deps: SemanticCacheDeps;
  private readonly health: OutageLog;
  private readonly ask: CacheAsk;
  /** Begun now when a similar entry may match; an exact-only request embeds only to store. */
  private vector: Promise<Float32Array | undefined> | undefined;

  constructor(deps: SemanticCacheDeps, health: OutageLog, ask: CacheAsk) {
    this.deps = deps;
    this.health = health;
    this.ask = ask;
    if (ask.threshold < 1) this.vector = this.embed();
  }

  /** The request's vector, once (undefined when the embedding failed). */
  embedding(): Promise<Float32Array | undefined> {
    return (this.vector ??= this.embed());
  }

  private async embed(): Promise<Float32Array | undefined> {
    try {
      const [vector] = await this.deps.embedder.embed([this.ask.prompt.text]);
      this.health.up("embedding");
      return vector;
    } catch (error) {
      this.health.down("embedding", error, "the semantic cache's embedding failed: exact matches only until it answers again");
      return undefined;
    }
  }

  /** The work scoped to the organisation, with the providers the request may be served by (for `filter_on_provider`). */
  scoped(organizationId: string, providers: readonly string[]): CacheRequest {
    const { ask } = this;
    const partition = partitionOf({
      organizationId,
      cacheKey: ask.cacheKey,
      embedderId: this.deps.embedder.id,
      mode: ask.mode,
      lastNTurns: ask.lastNTurns,
      parameters: ask.parameters,
    });
    const { text, contextDigest } = ask.prompt;
    const guard = contextDigest ? `${promptGuard(text)}|context:${contextDigest}` : promptGuard(text);
    return new CacheRequest(this.deps, this, { partition, guard, providers: ask.filterOnProvider ? new Set(providers) : undefined });
  }

  get threshold() {
    return this.ask.threshold;
  }

  get exactDigest() {
    return this.ask.prompt.exactDigest;
  }

  get ttlMs() {
    return this.ask.ttlMs;
  }
}

/** A request's cache work once admitted: look up before answering, keep the answer after. */
export class CacheRequest {
  private readonly deps: SemanticCacheDeps;
  private readonly pending: PendingCacheRequest;
  private readonly where: { partition: string; guard: string; providers?: ReadonlySet<string> };

  constructor(deps: SemanticCacheDeps, pending: PendingCacheRequest, where: CacheRequest["where"]) {
    this.deps = deps;
    this.pending = pending;
    this.where = where;
  }

  async lookup(): Promise<FoundAnswer | undefined> {
    const { pending, where } = this;
    const vector = pending.threshold < 1 ? await pending.embedding() : undefined;
    const hit = await this.deps.index
      .lookup({ ...where, exactDigest: pending.exactDigest, vector, threshold: pending.threshold, now: this.deps.now() })
      .catch(() => undefined);
    if (!hit) return undefined;
    return { answer: fromBinary(CachedAnswerSchema, hit.payload), similarity: hit.similarity, exact: hit.exact };
  }

  /** Gathers this request's answer as it is relayed, for `keep`. */
  recording(): AnswerRecording {
    return new AnswerRecording(this.deps.settings.maxEntryBytes);
  }

  /** Keeps a finished answer, in the background: never waited for, never failing the request. */
  keep(answer: CachedAnswer): void {
    const payload = toBinary(CachedAnswerSchema, answer);
    if (payload.length > this.deps.settings.maxEntryBytes) return;
    const stored = this.store(payload, answer);
    this.deps.keeping?.add(stored);
    void stored.finally(() => this.deps.keeping?.delete(stored));
  }

  private async store(payload: Uint8Array, answer: CachedAnswer): Promise<void> {
    const vector = await this.pending.embedding();
    // Without its vector an entry could only match exactly, and a later request's similarity would miss it unseen.
    if (!vector) return;
    const entry = {
      exactDigest: this.pending.exactDigest,
      vector,
      guard: this.where.guard,
      provider: answer.provider,
      model: answer.modelId,
      payload,
      ttlMs: this.pending.ttlMs,
    };
    await this.deps.index.put(this.where.partition, entry, this.deps.now()).catch(() => {});
  }
}

/** Logs a dependency's outage once when it starts and once when it ends, not once per request. */
class OutageLog {
  private readonly down_ = new Set<string>();
  private readonly logger: SemanticCacheDeps["logger"];

  constructor(logger: SemanticCacheDeps["logger"]) {
    this.logger = logger;
  }

  down(what: string, error: unknown, message: string) {
    if (this.down_.has(what)) return;
    this.down_.add(what);
    this.logger?.warn({ err: error }, message);
  }

  up(what: string) {
    if (this.down_.delete(what)) this.logger?.warn({}, `the semantic cache's ${what} answers again`);
  }
}
