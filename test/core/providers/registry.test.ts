// The provider registry holds each protocol's whole entry: its descriptor, its
// chat adapter (the descriptor the catalogue reads is the adapter's), its media
// adapter, and the config schema's protocol names. That nothing else names a
// protocol is protocol-names.test.ts.
import { describe, expect, it } from "vitest";
import { providerProtocolSchema } from "../../../core/config/schema.ts";
import { createHttpClient } from "../../../core/providers/http-client.ts";
import { capabilitiesOf, createChatAdapters, createMediaAdapters, PROTOCOL_NAMES, protocolOf } from "../../../core/providers/registry.ts";

describe("the provider registry", () => {
  it("builds one chat adapter per protocol that serves chat, each carrying its registered descriptor", async () => {
    const http = createHttpClient();
    const adapters = createChatAdapters(http);
    const chatProtocols = providerProtocolSchema.options.filter((protocol) => protocolOf(protocol).chat !== undefined);
    expect(Object.keys(adapters).sort()).toEqual([...chatProtocols].sort());
    for (const protocol of chatProtocols) expect(adapters[protocol].capabilities).toBe(capabilitiesOf(protocol));
    await http.close();
  });

  it("says in each descriptor whether the protocol serves chat, and every protocol serves chat or media jobs", () => {
    const media = createMediaAdapters();
    for (const protocol of providerProtocolSchema.options) {
      const entry = protocolOf(protocol);
      expect(entry.capabilities.chat !== false, protocol).toBe(entry.chat !== undefined);
      expect(entry.chat !== undefined || media[protocol] !== undefined, protocol).toBe(true);
    }
  });

  it("is where the config schema's protocol names come from", () => {
    expect(providerProtocolSchema.options).toEqual(PROTOCOL_NAMES);
  });
});
