// The cache options a gRPC caller sends are checked in the core (the public
// formats check them first): a bad one is a 400 naming the field, never a crash.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GenerateRequestSchema } from "../../../gen/router/v1/inference_pb.js";
import { errorDetailOf, ConnectError } from "../../../core/errors.ts";
import { createLexicalEmbedder } from "../../../core/cache/embedding/lexical.ts";
import { createMemoryCacheIndex } from "../../../core/cache/index/memory-index.ts";
import { createSemanticCache } from "../../../core/cache/semantic-cache.ts";

const cache = createSemanticCache({
  index: createMemoryCacheIndex({ maxEntriesPerPartition: 10 }),
  embedder: createLexicalEmbedder(),
  settings: { defaultTtlSeconds: 60, maxTtlSeconds: 3600, maxEntryBytes: 1024 },
  now: () => 0,
});

const requestWith = (options: Record<string, unknown>) =>
  create(GenerateRequestSchema, { model: "test/ok", messages: [{ role: 3, content: [{ part: { case: "text", value: { text: "Hi" } } }] }], cache: { cacheKey: "k", ...options } });

function refusal(options: Record<string, unknown>) {
  try {
    cache.begin(requestWith(options));
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    return errorDetailOf(error as ConnectError);
  }
  throw new Error("accepted");
}

describe("the cache options from a gRPC caller", () => {
  it.each([
    [{ conversationMode: "everything" }, "cache.conversation_mode"],
    [{ similarityThreshold: 1.5 }, "cache.similarity_threshold"],
    [{ similarityThreshold: Number.NaN }, "cache.similarity_threshold"],
    [{ conversationMode: "last_n_turns", lastNTurns: 0 }, "cache.last_n_turns"],
    [{ expirationTimeSeconds: 0 }, "cache.expiration_time"],
  ])("refuses %o naming %s", (options, param) => {
    expect(refusal(options)).toMatchObject({ reason: "invalid_parameter", param });
  });

  it("caps a long expiration_time with a warning, and takes the edges", () => {
    expect(cache.begin(requestWith({ expirationTimeSeconds: 3601 }))!.warnings.map((w) => w.param)).toEqual(["cache.expiration_time"]);
    expect(cache.begin(requestWith({ expirationTimeSeconds: 3600, similarityThreshold: 0 }))!.warnings).toEqual([]);
    expect(cache.begin(requestWith({ similarityThreshold: 1, conversationMode: "last_n_turns", lastNTurns: 1 }))!.pending).toBeDefined();
  });

  it("makes nothing for a request without cache options, and says when the header is missing", () => {
    expect(cache.begin(create(GenerateRequestSchema, { model: "test/ok" }))).toBeUndefined();
    expect(cache.begin(requestWith({ cacheKey: "" }))).toMatchObject({ warnings: [{ code: "unavailable_feature", param: "cache" }] });
  });
});
