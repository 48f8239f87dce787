// Pooled keep-alive HTTP for upstream calls. Used instead of fetch on the hot
// path: less allocation per request. Each provider gets its own undici Agent
// (one pool per origin inside it), so a provider's connection limit is its own
// even when several providers share an origin.
import { Agent } from "undici";
import { dispatchStreamed, type StreamedResponse } from "./streamed-response.ts";
import { UpstreamError } from "./types.ts";

export interface HttpClient {
  /** Posts JSON; the answer's body is read chunk by chunk as it arrives (no Node stream per request), or whole with `text()`. */
  stream(url: URL, headers: Record<string, string>, body: string, options: PostOptions): Promise<StreamedResponse>;
  close(): Promise<void>;
}

export interface PostOptions {
  signal: AbortSignal;
  /** Time to the response headers. */
  headersTimeoutMs: number;
  /** Longest silence while the body arrives. */
  bodyTimeoutMs: number;
  /** The provider whose connection pool carries the call (its `max_connections` applies); absent: a shared, unbounded pool. */
  provider?: string;
}

export interface HttpClientOptions {
  /**
   * Most connections open at once per provider (per origin it calls), by provider id.
   * A provider not listed has no limit: streams are long-lived, and a bounded pool
   * makes every stream beyond the limit wait for one to end before it even starts.
   */
  maxConnections?: Record<string, number | undefined>;
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const agents = new Map<string, Agent>();
  const SHARED = "";
  const agentFor = (provider = SHARED) => {
    let agent = agents.get(provider);
    if (!agent) {
      // undici reads `connections: null` as no limit.
      agent = new Agent({ connections: options.maxConnections?.[provider] ?? null, keepAliveTimeout: 30_000, pipelining: 1 });
      agents.set(provider, agent);
    }
    return agent;
  };
  return {
    async stream(url, headers, body, { signal, headersTimeoutMs, bodyTimeoutMs, provider }) {
      try {
        return await dispatchStreamed(
          agentFor(provider),
          {
            origin: url.origin,
            path: url.pathname + url.search,
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body,
            headersTimeout: headersTimeoutMs,
            bodyTimeout: bodyTimeoutMs,
          },
          signal,
        );
      } catch (error) {
        throw toUpstreamError(error, signal);
      }
    },
    async close() {
      await Promise.all([...agents.values()].map((agent) => agent.close()));
    },
  };
}

/** Network failures become retryable upstream errors; the caller's own abort stays an abort. */
export function toUpstreamError(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted || error instanceof UpstreamError) return error;
  const code = (error as { code?: string }).code ?? "";
  const reason = code.includes("TIMEOUT") ? "timeout" : code === "ECONNREFUSED" ? "connection_refused" : "connection_reset";
  return new UpstreamError(`upstream connection failed: ${(error as Error).message}`, { retryable: true, reason, cause: error });
}
