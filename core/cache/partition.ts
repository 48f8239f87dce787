// A request's cache partition (docs/cache.md, "The key"): the digest of all
// that must be equal for two requests to share an answer. Entries of other
// partitions are never compared, so no similarity can cross it: another
// organisation, another cache_key, endpoint, model, parameter, system message
// or embedding space is another partition.
//
// The parameters are the request minus a list of fields that do not change
// the answer, rather than a list of those that do: a field added to the
// request later is in the partition unless someone decides otherwise.
import { createHash } from "node:crypto";
import { toJson } from "@bufbuild/protobuf";
import { GenerateRequestSchema, type GenerateRequest } from "../../gen/router/v1/inference_pb.js";
import { canonicalJson } from "./canonical-json.ts";
import { isInstruction, type ConversationMode } from "./prompt-selection.ts";

export interface PartitionScope {
  organizationId: string;
  cacheKey: string;
  /** The embedding space (Embedder.id): vectors of two spaces are never compared. */
  embedderId: string;
  mode: ConversationMode;
  lastNTurns: number;
  /** parametersDigest of the request. */
  parameters: string;
}

/**
 * Fields that do not change the answer (who asks, how it is delivered, where
 * it is kept, how it is routed among providers) or are compared apart: the
 * conversation (its instructions join below; the rest is the prompt), the
 * cache options themselves.
 */
const OUTSIDE_THE_PARTITION = {
  caller: undefined,
  requestId: "",
  messages: [],
  provider: undefined,
  cache: undefined,
  requestTags: [],
  stream: false,
  conversation: undefined,
  store: undefined,
  metadata: {},
  storedEcho: "",
  warnings: [],
  formatPolicy: undefined,
} satisfies Partial<GenerateRequest>;

/**
 * The digest of the request's part of the partition: its parameters and
 * instructions, and the model asked for when `filterOnModel` (`model`,
 * `models`, and router/auto's `selection`). Taken before the organisation is
 * known, so nothing of the request is kept until then.
 */
export function parametersDigest(request: GenerateRequest, filterOnModel: boolean): string {
  const parameters = {
    ...request,
    ...OUTSIDE_THE_PARTITION,
    // The instructions, always: the same question under another system prompt is another question.
    messages: request.messages.filter(isInstruction),
    ...(!filterOnModel && { model: "", models: [], selection: undefined }),
  };
  return sha256(canonicalJson(toJson(GenerateRequestSchema, parameters)));
}

export function partitionOf(scope: PartitionScope): string {
  const key = {
    version: 1,
    organization: scope.organizationId,
    cacheKey: scope.cacheKey,
    embedder: scope.embedderId,
    mode: scope.mode,
    turns: scope.mode === "last_n_turns" ? scope.lastNTurns : 0,
    parameters: scope.parameters,
  };
  return sha256(canonicalJson(key));
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
