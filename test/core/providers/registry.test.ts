// The provider registry is the one place that names protocols: each entry's
// adapter carries the descriptor the catalogue reads, and no shared code
// branches on a protocol's name.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { providerProtocolSchema } from "../../../core/config/schema.ts";
import { createHttpClient } from "../../../core/providers/http-client.ts";
import { capabilitiesOf, createAdapters } from "../../../core/providers/registry.ts";

const ROOT = join(import.meta.dirname, "../../..");

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(folder, name));
}

describe("the provider registry", () => {
  it("builds one adapter per configurable protocol, each carrying its registered descriptor", async () => {
    const http = createHttpClient();
    const adapters = createAdapters(http);
    expect(Object.keys(adapters).sort()).toEqual([...providerProtocolSchema.options].sort());
    for (const protocol of providerProtocolSchema.options) expect(adapters[protocol].capabilities).toBe(capabilitiesOf(protocol));
    await http.close();
  });

  it("is the only place outside core/providers/ and the config schema that names a protocol", () => {
    const names = providerProtocolSchema.options.join("|");
    const quoted = new RegExp(`["'\`](${names})["'\`]`);
    const allowed = (file: string) => file.startsWith(join("core", "providers")) || file === join("core", "config", "schema.ts");
    const offenders = [...sourceFiles("core"), ...sourceFiles("gateway")]
      .filter((file) => !allowed(file))
      .filter((file) => quoted.test(readFileSync(join(ROOT, file), "utf8")))
      .map((file) => relative(ROOT, join(ROOT, file)));
    expect(offenders).toEqual([]);
  });
});
