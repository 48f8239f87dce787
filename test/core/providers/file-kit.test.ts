// Every protocol folder uses the same file names for the same jobs
// (docs/architecture.md, "Adding a provider protocol"), so a reader finds the
// usage conversion or the endpoint of any protocol where they found another's.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROTOCOL_NAMES, protocolOf } from "../../../core/providers/registry.ts";

const PROVIDERS = join(import.meta.dirname, "../../../core/providers");

/** A chat protocol that calls an upstream over HTTP: the request side, where it goes, and the answer side. */
const HTTP_CHAT_KIT = ["adapter.ts", "endpoint.ts", "convert-request.ts", "parse-stream.ts", "convert-usage.ts", "map-finish-reason.ts", "map-error.ts"];

/** Names the kit has replaced: each job has one name. */
const RETIRED = { "parse-response.ts": "parse-stream.ts", "headers.ts": "endpoint.ts" };

describe("each protocol's folder", () => {
  it.each(PROTOCOL_NAMES)("%s has the kit's files for what its registry entry does", (protocol) => {
    const entry = protocolOf(protocol);
    const wanted = [
      ...(entry.chat ? (entry.config.baseUrl ? HTTP_CHAT_KIT : ["adapter.ts"]) : []),
      // A media job adapter is media.ts (split into media-*.ts when long).
      ...(entry.createMediaAdapter ? ["media.ts"] : []),
    ];
    const missing = wanted.filter((file) => !existsSync(join(PROVIDERS, protocol, file)));
    expect(missing).toEqual([]);
  });

  it.each(PROTOCOL_NAMES)("%s uses none of the retired names", (protocol) => {
    const files = readdirSync(join(PROVIDERS, protocol));
    const retired = files.filter((file) => file in RETIRED).map((file) => `${file}: call it ${RETIRED[file as keyof typeof RETIRED]}`);
    expect(retired).toEqual([]);
  });
});
