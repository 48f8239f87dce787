// Format policy travels as data: each format's decoder states its rules on the
// request (format_policy), the core reads them there and holds no list of
// formats, and the shared contract names no vendor (vendor options travel in
// provider_options, keyed by protocol).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { providerProtocolSchema } from "../../core/config/schema.ts";
import { decodeChatRequest } from "../../gateway/formats/chat-completions/decode-request.ts";
import { decodeMessagesRequest } from "../../gateway/formats/messages/decode-request.ts";
import { decodeResponsesRequest } from "../../gateway/formats/responses/decode-request.ts";

const ROOT = join(import.meta.dirname, "../..");
const context = { apiKey: "k", requestId: "req_1", betas: [] };

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(folder, name));
}

describe("format policy", () => {
  it("is set by each format's decoder", () => {
    const policy = (request: { formatPolicy?: object }) => ({ referenceParam: "", storeByDefault: false, bareModelNames: false, ...request.formatPolicy });
    expect(policy(decodeChatRequest({ model: "p/m", messages: [{ role: "user", content: "Hi" }] }, context).request)).toMatchObject({
      referenceParam: "",
      storeByDefault: false,
      bareModelNames: false,
    });
    expect(policy(decodeResponsesRequest({ model: "p/m", input: "Hi" }, context).request)).toMatchObject({
      referenceParam: "previous_response_id",
      storeByDefault: true,
      bareModelNames: false,
    });
    expect(policy(decodeMessagesRequest({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }, context).request)).toMatchObject({
      referenceParam: "",
      storeByDefault: false,
      bareModelNames: true,
    });
  });

  it("is the core's only knowledge of formats: no file outside core/providers/ names one", () => {
    // A protocol's folder names the format it speaks natively (capabilities.nativeFormat); nothing else in core may.
    const offenders = sourceFiles("core")
      .filter((file) => !file.startsWith(join("core", "providers")))
      .filter((file) => /PublicFormat\.[A-Z]/.test(readFileSync(join(ROOT, file), "utf8")));
    expect(offenders).toEqual([]);
  });
});

describe("the shared contract", () => {
  it("names no vendor in a field: vendor options travel in provider_options, keyed by protocol", () => {
    const proto = readFileSync(join(ROOT, "proto/contracts/router/v1/inference.proto"), "utf8");
    const field = /^\s*(?:repeated\s+|optional\s+)?(?:map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*\d+;/gm;
    const names = [...proto.matchAll(field)].map((match) => match[1]);
    expect(names).toContain("provider_options");
    const vendors = new RegExp(providerProtocolSchema.options.map((name) => name.replace("-", "_")).join("|"));
    expect(names.filter((name) => vendors.test(name))).toEqual([]);
  });
});

describe("native-block fidelity", () => {
  it("is one shared helper: no protocol folder reads a request's originals or native blocks itself", () => {
    const own = /\.original\b|case === "native"|\.native\b/;
    const offenders = sourceFiles(join("core", "providers"))
      .filter((file) => file !== join("core", "providers", "native-blocks.ts"))
      .filter((file) => own.test(readFileSync(join(ROOT, file), "utf8")));
    expect(offenders).toEqual([]);
  });
});
