// The contract between the router and one upstream protocol. An adapter turns a
// normalised request into upstream bytes and the upstream answer into events;
// it knows nothing of public formats, routing, billing or other protocols.
import type { JsonObject } from "@bufbuild/protobuf";
import type { GenerateRequest, GenerateResponse, Warning } from "../../gen/router/v1/inference_pb.js";
import type { ProviderConfig } from "./provider-config.ts";
import type { ProtocolCapabilities } from "./capabilities.ts";

/** The reasoning efforts a route's reasoning_effort_map maps (the configuration takes these keys). */
export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high"] as const;

/** What an adapter reads of the model's route it serves (the configuration's model provider entry is one). */
export interface UpstreamRoute {
  provider_model_id: string;
  /** The upstream's own effort for each of the hub's; absent ones are the protocol's default mapping. */
  reasoning_effort_map?: Partial<Record<(typeof REASONING_EFFORTS)[number], string>>;
}

export interface UpstreamCall {
  /** The request after routing decisions (suffixes resolved, reasoning mapped). */
  request: GenerateRequest;
  provider: ProviderConfig;
  route: UpstreamRoute;
  /** The upstream's credential, read from the provider's api_key_env. */
  apiKey: string;
  /** Whether the caller reads the answer as a stream (adapters may ask upstream for JSON otherwise). */
  stream: boolean;
  /** This route's completion limit, for protocols that require a max_tokens when the request has none. */
  maxCompletionTokens: number;
  signal: AbortSignal;
}

export interface ProviderAdapter {
  /** What the protocol can carry (capabilities.ts); the catalogue gives it to routing on every route. */
  readonly capabilities: ProtocolCapabilities;
  /**
   * Yields the answer's events, the hub's own (block starts, deltas and stops,
   * annotations, then usage and finish; see block-writer.ts); throws
   * UpstreamError when the upstream fails.
   */
  stream(call: UpstreamCall): UpstreamStream;
  /**
   * The input tokens the provider counts for this call's request, asked of its
   * own counting endpoint (exact); absent where the protocol has none, and the
   * router estimates (core/count-tokens/). Throws UpstreamError as stream() does.
   */
  countTokens?(call: UpstreamCall): Promise<number>;
  /**
   * Deletes an answer the provider keeps on its side under this id of its own
   * (Finish.upstream_id), when the caller deletes the stored turn; absent
   * where the protocol keeps none. Throws when the provider refuses.
   */
  forgetStored?(target: Pick<UpstreamCall, "provider" | "apiKey">, upstreamId: string): Promise<void>;
}

/**
 * The events of one call, and what the adapter left out of the request or
 * changed in it (for example: Anthropic takes no temperature while thinking).
 * The warnings are known as soon as stream() returns, since the body is built
 * then; routing shows them on the answer. Absent: nothing was left out.
 */
export interface UpstreamStream extends AsyncIterable<GenerateResponse> {
  readonly warnings?: readonly Warning[];
}

/** A protocol's request body, and the warnings of what it could not carry: decided once, where the body is built. */
export interface ConvertedRequest {
  body: JsonObject;
  warnings: Warning[];
}

/**
 * A failed upstream attempt. `retryable` decides fallback (docs/contract.md: connect
 * errors, timeouts, 408, 409, 429 and 5xx are; other 4xx are not).
 */
export class UpstreamError extends Error {
  readonly status: number | undefined;
  readonly retryable: boolean;
  /** Short machine-readable cause for the routing trace: `http_503`, `timeout`, `connection_reset`. */
  readonly reason: string;
  /** Whole seconds the upstream asked us to wait (its Retry-After), when it said; the HTTP exchange sets it from the answer's headers. */
  retryAfterSeconds: number | undefined;
  constructor(message: string, options: { status?: number; retryable: boolean; reason: string; retryAfterSeconds?: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = "UpstreamError";
    this.status = options.status;
    this.retryable = options.retryable;
    this.reason = options.reason;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * Only a request the next provider would refuse just the same stops routing:
 * 400, 413 and 422 describe the request. Anything else (401/403/404 included)
 * is this provider's or its configuration's fault, and another may serve.
 */
export function isRetryableStatus(status: number): boolean {
  return status !== 400 && status !== 413 && status !== 422;
}

/** The error of an upstream HTTP answer with a non-2xx status. */
export function upstreamHttpError(status: number, message: string): UpstreamError {
  return new UpstreamError(message, { status, retryable: isRetryableStatus(status), reason: `http_${status}` });
}
