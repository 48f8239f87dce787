// A configuration file that cannot work, as `npm start` meets it: exit 1
// before any credential is printed, every problem on its own line with its
// path and line in the file, saying what to write instead.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_ENTRY, spawnEntry, stopAllEntries } from "./support/spawn-entry.ts";

const TIMEOUT = 30_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "router-config-errors-"));
});
afterAll(async () => {
  await stopAllEntries();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the gateway on a configuration file and returns what it said on stderr (it must fail). */
async function startFailing(name: string, lines: string[]): Promise<string> {
  const file = join(dir, name);
  writeFileSync(file, lines.join("\n") + "\n");
  const entry = spawnEntry(GATEWAY_ENTRY, { PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "silent", ROUTER_CONFIG: file });
  expect(await entry.exited).toEqual({ code: 1, signal: null });
  expect(entry.stdoutLines.filter((line) => /Development API key|Admin token/.test(line))).toEqual([]);
  const stderr = entry.stderr();
  expect(stderr).not.toMatch(/^\s+at /m);
  return stderr;
}

const SIMULATOR = "  - {id: simulator, label: Simulator, protocol: simulator}";

/** One model on the provider `cloud`, its prices as written (lines 10 to 23 of the files below). */
const MODEL = (prompt: string, completion: string) => [
  "models:",
  "  - id: cloud/big",
  "    name: Big",
  "    created: 1700000000",
  "    creator: cloud",
  "    context_length: 8192",
  "    max_completion_tokens: 1024",
  "    input_modalities: [text]",
  "    output_modalities: [text]",
  "    supported_parameters: []",
  "    providers:",
  "      - provider: cloud",
  "        provider_model_id: big",
  "        pricing:",
  `          prompt: ${prompt}`,
  `          completion: ${completion}`,
];

describe("npm start with a configuration that cannot work", { timeout: TIMEOUT }, () => {
  it("refuses a provider base_url that is not an http(s) URL, naming the path, the line and what is expected", async () => {
    const file = "base-url.yaml";
    const stderr = await startFailing(file, [
      "providers:",
      "  - id: cloud",
      "    label: Cloud",
      "    protocol: openai-compatible",
      "    base_url: ftp://models.example/v1",
      "  - id: local",
      "    label: Local",
      "    protocol: openai-compatible",
      "    base_url: localhost:11434/v1",
      ...MODEL('"0.000001"', '"0.000002"'),
      "tasks:",
      "  asset_storage: s3",
      "  s3: {bucket: assets, endpoint: 'minio:9000'}",
    ]);
    const expected = (path: string, value: string, example: string, line: number) =>
      `  - ${path}: must be an http:// or https:// URL (for example ${example}), got ${JSON.stringify(value)} (line ${line})`;
    expect(stderr).toBe(
      [
        `invalid configuration ${join(dir, file)}:`,
        expected("providers.0.base_url", "ftp://models.example/v1", "https://api.openai.com/v1", 5),
        expected("providers.1.base_url", "localhost:11434/v1", "https://api.openai.com/v1", 9),
        expected("tasks.s3.endpoint", "minio:9000", "http://127.0.0.1:9000", 28),
        "",
      ].join("\n"),
    );
  });

  it("suggests the key meant for a misspelt one, and says to quote a price written as a number", async () => {
    const file = "keys-and-prices.yaml";
    const stderr = await startFailing(file, [
      "providers:",
      SIMULATOR,
      "  - id: cloud",
      "    label: Cloud",
      "    protocol: openai-compatible",
      "    base_url: https://cloud.example/v1",
      "    api-key-env: CLOUD_KEY",
      "    colour: blue",
      "",
      ...MODEL("0.0000025", "1e-7"),
      "organisations:",
      "  - {id: org, name: Org}",
    ]);
    expect(stderr).toBe(
      [
        `invalid configuration ${join(dir, file)}:`,
        '  - providers.1.api-key-env: unknown key; did you mean "api_key_env"? (line 7)',
        "  - providers.1.colour: unknown key (expected one of id, label, protocol, base_url, api_key_env, secret_key_env, timeout_ms, request_timeout_ms, quirks, max_connections, chunk_delay_ms) (line 8)",
        '  - models.0.providers.0.pricing.prompt: expected a string, got the number 0.0000025: put it in quotes, as "0.0000025" (line 24)',
        '  - models.0.providers.0.pricing.completion: expected a string, got the number 1e-7: put it in quotes, as "0.0000001" (line 25)',
        '  - organisations: unknown key; did you mean "organizations"? (line 26)',
        "",
      ].join("\n"),
    );
  });

  it("refuses a key's allowed_models that the file's catalogue does not have, or that carry a suffix, each at its line", async () => {
    const file = "allowed-models.yaml";
    const stderr = await startFailing(file, [
      "providers:",
      "  - {id: cloud, label: Cloud, protocol: openai-compatible, base_url: https://cloud.example/v1}",
      ...MODEL('"0.000001"', '"0.000002"'),
      "organizations:",
      "  - id: org",
      "    name: Org",
      "    keys:",
      "      - id: key_one",
      "        env: ONE_KEY",
      "        allowed_models:",
      "          - cloud/big",
      "          - cloud/bgi",
      "          - cloud/big:free",
      "          - elsewhere/model",
    ]);
    expect(stderr).toBe(
      [
        `invalid configuration ${join(dir, file)}:`,
        '  - organizations.0.keys.0.allowed_models.1: "cloud/bgi" is not a model of the catalogue; did you mean "cloud/big"? (line 27)',
        '  - organizations.0.keys.0.allowed_models.2: "cloud/big:free" carries a suffix: the allow-list takes catalogue ids without one ("cloud/big" allows "cloud/big:free" too) (line 28)',
        '  - organizations.0.keys.0.allowed_models.3: "elsewhere/model" is not a model of the catalogue (line 29)',
        "",
      ].join("\n"),
    );
  });

  it("says in one line that the file is empty, or not there", async () => {
    for (const [name, lines] of [
      ["empty.yaml", []],
      ["comments.yaml", ["# nothing yet", ""]],
    ] as const) {
      expect(await startFailing(name, [...lines])).toBe(`configuration file ${join(dir, name)} is empty\n`);
    }
    const missing = join(dir, "missing.yaml");
    const entry = spawnEntry(GATEWAY_ENTRY, { PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "silent", ROUTER_CONFIG: missing });
    expect(await entry.exited).toEqual({ code: 1, signal: null });
    expect(entry.stderr()).toBe(`configuration file ${missing} not found (ROUTER_CONFIG names the file to use)\n`);
  });

  it("keeps the line and column of a YAML error, one line per error", async () => {
    const file = "syntax.yaml";
    const stderr = await startFailing(file, ["providers:", SIMULATOR, "models: []", "\tid_prefix: rtr"]);
    expect(stderr).toBe(`invalid configuration ${join(dir, file)}:\n  - line 4, column 1: Tabs are not allowed as indentation\n`);
  });

  it("gives the line of an alias to no anchor, and of a tag it cannot read", async () => {
    const file = "alias.yaml";
    const stderr = await startFailing(file, ["providers:", "  - *simulator", "models: []", "id_prefix: !!int rtr"]);
    expect(stderr).toBe(
      [
        `invalid configuration ${join(dir, file)}:`,
        "  - line 4, column 12: Unresolved tag: tag:yaml.org,2002:int",
        "  - line 2, column 5: alias *simulator names no anchor set before it",
        "",
      ].join("\n"),
    );
  });
});
