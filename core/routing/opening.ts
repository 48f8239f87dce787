// A request's opening, for prompt-cache stickiness (docs/routing.md): its tool
// definitions, its leading system and developer messages and the first message
// after them. A provider caches a prompt's prefix, and this is the part of it
// every later turn of the conversation repeats unchanged (the prefix up to the
// last cache breakpoint moves on each turn, and automatic caches have no
// breakpoint at all). Breakpoints themselves are left out: clients move them
// to the newest message, and they do not change what the provider cached.
import { createHash } from "node:crypto";
import { toBinary } from "@bufbuild/protobuf";
import type { JsonObject } from "@bufbuild/protobuf";
import { ContentPartSchema, Role, ToolSchema, type ContentPart, type GenerateRequest, type Message, type Tool } from "../../gen/router/v1/inference_pb.js";

/** The opening's parts, kept apart from the request (which may be a long conversation); the digest is taken once, when first asked. */
export interface Opening {
  digest(): string;
}

export function openingOf(request: GenerateRequest): Opening {
  const { tools, messages } = request;
  const leading = messages.findIndex((message) => message.role !== Role.SYSTEM && message.role !== Role.DEVELOPER);
  const opening = leading === -1 ? messages : messages.slice(0, leading + 1);
  let digest: string | undefined;
  return { digest: () => (digest ??= digestOf(tools, opening)) };
}

function digestOf(tools: Tool[], messages: Message[]): string {
  const hash = createHash("sha256");
  // Each piece is preceded by its kind and length, so no two different openings run together into the same bytes.
  const add = (kind: string, bytes: Uint8Array) => hash.update(`${kind}${bytes.length}:`).update(bytes);
  for (const tool of tools) add("t", toBinary(ToolSchema, { ...tool, cacheControl: undefined, original: withoutBreakpoint(tool.original) }));
  for (const message of messages) {
    add(`m${message.role}`, new TextEncoder().encode(message.name));
    for (const part of message.content) add("p", toBinary(ContentPartSchema, withoutPartBreakpoint(part)));
  }
  return hash.digest("base64url");
}

const withoutPartBreakpoint = (part: ContentPart): ContentPart => ({ ...part, cacheControl: undefined, original: withoutBreakpoint(part.original) });

function withoutBreakpoint(original: JsonObject | undefined): JsonObject | undefined {
  if (!original || !("cache_control" in original)) return original;
  const { cache_control: _, ...rest } = original;
  return rest;
}
